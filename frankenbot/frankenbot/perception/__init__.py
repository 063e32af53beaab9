"""FrankenBot perception."""

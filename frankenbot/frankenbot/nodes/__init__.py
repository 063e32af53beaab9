"""FrankenBot nodes."""

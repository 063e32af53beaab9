"""FrankenBot bench."""

"""FrankenBot primitives."""

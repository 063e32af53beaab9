"""FrankenBot motion."""

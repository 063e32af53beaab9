"""FrankenBot memory."""

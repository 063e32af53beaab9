"""FrankenBot sim."""

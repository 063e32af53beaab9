"""FrankenBot program."""

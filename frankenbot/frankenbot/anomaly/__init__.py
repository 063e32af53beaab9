"""FrankenBot anomaly."""

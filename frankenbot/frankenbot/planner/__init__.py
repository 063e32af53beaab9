"""FrankenBot planner."""

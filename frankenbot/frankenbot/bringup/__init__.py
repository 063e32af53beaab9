"""Bring-up: running every node, submitting tasks, the end-to-end demo."""

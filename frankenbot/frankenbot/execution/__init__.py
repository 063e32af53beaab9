"""The in-process executor core: runs one program with the interpreter, the primitives, the monitor
loop and the three-tier escalator (no rclpy; ``nodes/executor_node.py`` adapts it to ROS)."""

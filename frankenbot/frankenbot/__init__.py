"""FrankenBot: a ROS 2 robot brain driven by one VLM call per task.

Layers: a pure core (program, anomaly, primitives, motion, perception, planner, memory, sim) that
never imports rclpy, thin ROS 2 adapters in ``frankenbot.nodes``, and the ``frankenbot`` CLI.
"""

__version__ = "0.1.0"

"""FrankenBot's MuJoCo tabletop: the simulator CI, the demo and the benchmark run on.

Modules (pure Python over mujoco, no rclpy; the ROS front end is ``nodes/sim_node.py``):
``layout`` (fixed geometry, object catalogue), ``model`` (MJCF builder: airo-models UR5e,
2F-85-like gripper, table, objects, drawer, camera), ``controller`` (JTC emulation),
``camera`` (headless RGB-D), ``render_process`` (rendering in a child process), ``tasks``
(families, templates, oracle predicates), ``anomalies`` (injection by kind and phase),
``world`` (``SimWorld``, the in-process API), ``runner`` (``SimRunner``: physics on a thread),
``kinematics`` + ``scripted`` (a small scripted arm), ``selftest``, ``robot_adapter``
(the RobotInterface port over the world), ``config_files`` (camera.yaml,
scene_fixtures.yaml) and ``cli`` (``frankenbot sim ...``).
"""

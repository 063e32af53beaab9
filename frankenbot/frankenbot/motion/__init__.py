"""FrankenBot motion: UR5e kinematics, trajectories, the safety envelope and motion backends.

Modules (pure unless noted):
  kinematics      FK/IK of the TCP in base_link (ur-analytic-ik), grasp poses
  trajectory      timed joint paths within limits, straight-line Cartesian paths by dense IK
  safety          the envelope every trajectory passes before it is sent (config/safety.yaml)
  config          loads config/safety.yaml (safety, planning limits, execution watch)
  backend         MotionBackend protocol and MotionOutcome
  jtc_backend     analytic IK + our trajectories + watched execution (sim and real arm)

The RobotInterface port lives in ``frankenbot.ports``; its adapters are ``sim.robot_adapter``
(in-process simulator) and ``nodes.ros_robot`` (the UR driver's ROS 2 topics and actions).
"""

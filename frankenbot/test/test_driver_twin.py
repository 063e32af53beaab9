"""The driver twin's rules without ROS: the trajectory controller's acceptance rules, its
tolerances and per-cycle verdicts, the gripper controller's stall rule, the cell's program,
safety and controller states, and the sim controller's speed scaling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import SimError
from frankenbot.motion.jtc_rules import PointData, trajectory_problem
from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.sim import driver_twin as dt
from frankenbot.sim.controller import JointTrajectoryController, TrajectoryPoint

Q = (0.0, -1.5, 1.5, -1.5, -1.5, 0.0)


def _points(*times, velocities=()):
    return [PointData(t, Q, velocities if i == len(times) - 1 else ())
            for i, t in enumerate(times)]


def test_joint_names_in_any_order_are_accepted():
    assert trajectory_problem(list(reversed(JOINT_NAMES)), _points(0.5, 1.0), JOINT_NAMES) == ""


@pytest.mark.parametrize("names, points, expected", [
    (JOINT_NAMES[:5], _points(1.0), "don't match the controller joints"),
    ((*JOINT_NAMES[:5], "elbow"), _points(1.0), "Incoming joint elbow doesn't match"),
    ((*JOINT_NAMES[:5], JOINT_NAMES[0]), _points(1.0), "repeat"),
    (JOINT_NAMES, [], "Empty trajectory received."),
    (JOINT_NAMES, _points(1.0, 1.0), "Time between points 0 and 1 is not strictly increasing"),
    (JOINT_NAMES, _points(1.0, 0.5), "not strictly increasing"),
    (JOINT_NAMES, _points(1.0, velocities=(0.1,) * 6), "last trajectory point"),
    (JOINT_NAMES, [PointData(1.0, Q[:5])], "positions (5) at point #0"),
    (JOINT_NAMES, [PointData(1.0, Q, effort=(1.0,) * 6)], "effort"),
    (JOINT_NAMES, [PointData(1.0, (math.nan,) * 6)], "not all finite"),
])
def test_trajectories_the_controller_refuses_say_why(names, points, expected):
    assert expected in trajectory_problem(names, points, JOINT_NAMES)


def test_a_stamped_trajectory_that_already_ended_is_refused():
    assert "ends in the past" in trajectory_problem(JOINT_NAMES, _points(1.0), JOINT_NAMES,
                                                    start_time=10.0, now=12.0)
    assert trajectory_problem(JOINT_NAMES, _points(1.0), JOINT_NAMES,
                              start_time=10.0, now=10.5) == ""


def test_goal_tolerances_override_erase_or_fall_back_to_the_defaults():
    d = dt.ur_default_tolerances()
    assert d.path == (0.2,) * 6 and d.goal == (0.1,) * 6 and d.goal_time == 0.0
    tol = dt.goal_tolerances(d, JOINT_NAMES, [("elbow_joint", 0.05)],
                             [("wrist_3_joint", -1.0)], 2.0)
    assert tol.path[2] == 0.05 and tol.path[0] == 0.2  # 0.2 kept where not given
    assert tol.goal[5] == 0.0 and tol.goal_time == 2.0  # -1 erases the bound
    assert dt.goal_tolerances(d, JOINT_NAMES, [("elbow_joint", -2.0)], [], 0.0) == d
    assert dt.goal_tolerances(d, JOINT_NAMES, [("nope", 0.1)], [], 0.0) == d


def test_the_first_sample_checks_the_start_state():
    sup = dt.GoalSupervisor(JOINT_NAMES, dt.ur_default_tolerances())
    far = np.array(Q) + np.array([0.3, 0, 0, 0, 0, 0])  # the first point is 0.3 rad away
    verdict, text = sup.step(0.0, 1.0, Q, far)
    assert verdict == dt.Verdict.PATH_VIOLATED and "shoulder_pan_joint" in text


def test_path_then_goal_tolerance_and_goal_time():
    tol = dt.Tolerances((0.2,) * 6, (0.1,) * 6, goal_time=0.5)
    sup = dt.GoalSupervisor(JOINT_NAMES, tol)
    q_des = np.array(Q)
    assert sup.step(0.1, 1.0, q_des, q_des)[0] == dt.Verdict.RUNNING
    assert sup.step(0.5, 1.0, q_des + 0.15, q_des)[0] == dt.Verdict.RUNNING  # within 0.2
    assert sup.step(1.2, 1.0, q_des + 0.15, q_des)[0] == dt.Verdict.RUNNING  # late, in time
    verdict, text = sup.step(1.6, 1.0, q_des + 0.15, q_des)
    assert verdict == dt.Verdict.GOAL_VIOLATED and "goal_time_tolerance" in text
    assert sup.step(1.6, 1.0, q_des + 0.05, q_des)[0] == dt.Verdict.SUCCEEDED
    assert dt.GoalSupervisor(JOINT_NAMES, tol).step(
        0.5, 1.0, q_des + 0.25, q_des)[0] == dt.Verdict.PATH_VIOLATED


def test_goal_time_zero_waits_for_the_goal_forever():
    sup = dt.GoalSupervisor(JOINT_NAMES, dt.ur_default_tolerances(), first_sample=False)
    q_des = np.array(Q)
    assert sup.step(100.0, 1.0, q_des + 0.15, q_des)[0] == dt.Verdict.RUNNING


def test_gripper_reaches_or_stalls_as_configured():
    cfg = dt.GripperConfig(goal_tolerance=0.02, allow_stalling=True, stall_timeout=0.05)
    reach = dt.GripperGoal(0.7, 50.0, started=0.0)
    assert reach.step(cfg, 0.1, 0.3, 0.5) is None
    assert reach.step(cfg, 0.5, 0.69, 0.0) == (True, True, False)
    stall = dt.GripperGoal(0.79, 50.0, started=0.0)
    assert stall.step(cfg, 0.02, 0.4, 0.2) is None
    assert stall.step(cfg, 0.05, 0.42, 0.0) is None  # still within the stall timeout
    assert stall.step(cfg, 0.08, 0.42, 0.0) == (True, False, True)
    strict = dt.GripperConfig(goal_tolerance=0.02, allow_stalling=False, stall_timeout=0.05)
    assert dt.GripperGoal(0.79, 50.0, 0.0).step(strict, 0.2, 0.4, 0.0) == (False, False, True)


def test_gripper_config_comes_from_the_robotiq_controllers_file():
    from frankenbot.nodes.driver_twin import gripper_config

    cfg = gripper_config()
    assert cfg.allow_stalling is True and cfg.stall_timeout == pytest.approx(0.05)


def test_stopping_the_program_deactivates_the_trajectory_controller_until_play():
    s = dt.DriverState()
    assert s.trajectory_controller_active and s.program_running
    s.arm("pendant_stop", "now", {})
    assert not s.program_running and not s.trajectory_controller_active
    assert s.controllers["joint_state_broadcaster"] == "active"  # kept by the stopper
    assert s.dashboard("play") == (True, "Starting program")
    assert s.trajectory_controller_active


def test_protective_stop_needs_an_unlock_and_then_play():
    s = dt.DriverState()
    s.arm("protective_stop", "now", {})
    assert s.safety_mode == dt.SAFETY_PROTECTIVE_STOP and s.program == dt.PAUSED
    ok, answer = s.dashboard("play")
    assert not ok and "PROTECTIVE_STOP" in answer
    assert s.dashboard("unlock_protective_stop")[0]
    assert not s.program_running
    assert s.dashboard("play")[0] and s.trajectory_controller_active


def test_an_inactive_controller_stays_inactive_through_play_until_switched():
    s = dt.DriverState()
    s.arm("controller_inactive", "now", {})
    s.dashboard("stop")
    s.dashboard("play")
    assert not s.trajectory_controller_active  # the stopper restarts only what it stopped
    assert s.switch_controllers(["scaled_joint_trajectory_controller"], [])[0]
    assert s.trajectory_controller_active
    assert not s.switch_controllers(["nope"], [])[0]


def test_faults_armed_for_a_motion_fire_after_their_delay_and_bad_ones_are_refused():
    s = dt.DriverState()
    assert "armed" in s.arm("camera_silent", "motion", {"after_s": 0.5})
    assert s.camera_publishing and s.due(0.4) == []
    assert [a.kind for a in s.due(0.6)] == ["camera_silent"]
    s.apply("camera_silent", {})
    assert not s.camera_publishing
    s.apply("clear", {})
    assert s.camera_publishing and s.gripper_activated and s.program_running
    for kind, phase, params in (("meteor", "now", {}), ("pendant_stop", "later", {}),
                                ("speed_slider", "now", {"fraction": 1.5}),
                                ("pendant_stop", "motion", {"after_s": -1})):
        with pytest.raises(SimError):
            s.arm(kind, phase, params)


def test_speed_scaling_slows_trajectory_time_in_the_sim_controller():
    lower, upper = np.full(6, -6.0), np.full(6, 6.0)
    ctrl = JointTrajectoryController(JOINT_NAMES, lower, upper)
    q0 = np.zeros(6)
    ctrl.speed_scaling = 0.5
    ctrl.start(0.0, q0, JOINT_NAMES, [TrajectoryPoint(1.0, [0.5, 0, 0, 0, 0, 0])])
    assert ctrl.desired(1.0)[0][0] == pytest.approx(0.25)  # half way after 1 s at 50 %
    ctrl.speed_scaling = 1.0
    assert ctrl.desired(1.5)[0][0] == pytest.approx(0.5)  # then at full speed
    q, t, end = ctrl.progress(1.5)
    assert t == pytest.approx(1.0) and end == pytest.approx(1.0)


def test_stand_in_interfaces_stay_out_of_a_real_workspace_and_yield_to_the_distro(tmp_path):
    """rosdep/colcon crawling the repository (catkin_pkg) never see the stand-ins; the build
    picks only those no underlay provides."""
    import os
    import subprocess

    from catkin_pkg.packages import find_packages
    from conftest import REPO_ROOT

    names = {p.name for p in find_packages(str(REPO_ROOT)).values()}
    assert {"frankenbot", "frankenbot_interfaces"} <= names
    assert not names & {"control_msgs", "controller_manager_msgs", "ur_dashboard_msgs",
                        "tf2_msgs"}
    script = REPO_ROOT / "scripts" / "compat_packages.sh"
    distro = tmp_path / "opt_ros_jazzy"
    index = distro / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "control_msgs").touch()
    (index / "tf2_msgs").touch()
    own = REPO_ROOT / "install"
    env = dict(os.environ, AMENT_PREFIX_PATH=f"{own}/control_msgs:{distro}")
    out = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["compat_interfaces/controller_manager_msgs",
                   "compat_interfaces/ur_dashboard_msgs"]

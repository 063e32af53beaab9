#!/bin/bash
# Smoke test inside the FrankenBot Docker image (docker/Dockerfile): the real-robot launch file
# with the UR driver's and the Robotiq's mock hardware, no camera. UNTESTED: never run on the
# development machines (no Docker / ROS apt install there).
#
# Expected: `frankenbot doctor --setup real_ur5e` names the External Control program (there is
# none with mock hardware) and the camera topics / pose (no camera) as missing, and finds
# everything else: the brain's nodes, /joint_states, the trajectory action, speed scaling, the
# UR controllers, the knuckle joint on /robotiq/joint_states and the gripper action. A recorded
# camera can stand in: `ros2 bag play <bag with /camera/camera/... topics>` in a second shell.
set -u
source /etc/profile.d/frankenbot.sh
LOG=$(mktemp -d /tmp/frankenbot-smoke.XXXX)
ros2 launch frankenbot real_ur5e.launch.py use_mock_hardware:=true launch_camera:=false \
    planner:=offline > "$LOG/launch.log" 2>&1 &
LAUNCH=$!
trap 'kill -INT $LAUNCH 2>/dev/null; wait $LAUNCH 2>/dev/null' EXIT
sleep "${SMOKE_WAIT_S:-40}"
if ! kill -0 $LAUNCH 2>/dev/null; then
    echo "smoke: the launch exited early; last lines of $LOG/launch.log:"; tail -n 40 "$LOG/launch.log"
    exit 1
fi
frankenbot doctor --setup real_ur5e --timeout 10 | tee "$LOG/doctor.txt"
missing=$(grep -c "MISSING" "$LOG/doctor.txt")
unexpected=$(grep "MISSING" "$LOG/doctor.txt" | grep -v -e "External Control program" \
    -e "camera colour" -e "camera depth" -e "camera info" -e "camera pose")
echo "smoke: $missing missing (logs in $LOG)"
if [ -n "$unexpected" ]; then
    echo "smoke: FAILED, unexpected:"; echo "$unexpected"; exit 1
fi
echo "smoke: OK (only the program and the camera are missing, as expected with mock hardware)"

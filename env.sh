# Source this file (bash) to put FrankenBot's venv and colcon install on the environment:
#   source env.sh
# It works whether or not a system ROS 2 Jazzy is sourced first (see README).
_fb_root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -x "$_fb_root/.venv/bin/python" ]; then
  # shellcheck disable=SC1091
  source "$_fb_root/.venv/bin/activate"
  # the venv prefix acts like /opt/ros/jazzy for ament and CMake
  export AMENT_PREFIX_PATH="$_fb_root/.venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH="$_fb_root/.venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
fi
if [ -f "$_fb_root/install/local_setup.bash" ]; then
  # shellcheck disable=SC1091
  source "$_fb_root/install/local_setup.bash"
fi
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export MUJOCO_GL="${MUJOCO_GL:-egl}"
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-egl}"
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export FRANKENBOT_ROOT="$_fb_root"
case ":$PATH:" in *":$_fb_root/bin:"*) ;; *) export PATH="$_fb_root/bin:$PATH" ;; esac
unset _fb_root

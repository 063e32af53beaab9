#!/usr/bin/env bash
# The ROS 2 wheels' exported CMake targets name the wheel builder's Python paths
# (/opt/python/cp311-cp311/...). Point them at this venv's Python headers and numpy instead, so
# colcon can build frankenbot_interfaces against the venv. Idempotent.
set -eu
venv=$1
py_inc=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
np_inc=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
grep -rlE "/opt/python/cp311-cp311" "$venv/share" --include='*.cmake' 2>/dev/null | while read -r f; do
  sed -i -e "s#/opt/python/cp311-cp311/include/python3.11#${py_inc}#g" \
         -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${np_inc}#g" "$f"
done
# colcon must not crawl the venv's share/ for packages
touch "$venv/COLCON_IGNORE"
echo "setup: venv CMake paths patched (python include: $py_inc)"

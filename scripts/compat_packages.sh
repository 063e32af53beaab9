#!/usr/bin/env bash
# Print the stand-in interface packages (compat_interfaces/<name>) that `make build` must build:
# those that no underlay on AMENT_PREFIX_PATH provides. On a ROS 2 install with the distro's
# control_msgs etc. it prints nothing and the distro's packages are used unchanged.
# The workspace's own install/ is not an underlay: a stand-in built there earlier does not count.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
own="$root/install"
IFS=':' read -r -a prefixes <<< "${AMENT_PREFIX_PATH:-}"
for dir in "$root"/compat_interfaces/*/; do
  [ -f "$dir/package.xml" ] || continue
  name="$(basename "$dir")"
  provided=""
  for prefix in "${prefixes[@]}"; do
    [ -n "$prefix" ] || continue
    case "$prefix" in "$own"|"$own"/*) continue ;; esac
    if [ -e "$prefix/share/ament_index/resource_index/packages/$name" ]; then
      provided="$prefix"
      break
    fi
  done
  [ -n "$provided" ] || printf '%s\n' "compat_interfaces/$name"
done

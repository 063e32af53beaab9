#!/usr/bin/env bash
# Make sure the system prerequisites of `make setup` are present. Missing Debian packages are
# installed with apt-get when we are root; anything still missing is named in one clear message.
# Usage: check_prereqs.sh DEBIAN_PACKAGE...
set -u
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/tmp/frankenbot-apt.log 2>&1 \
      || { tail -n 20 /tmp/frankenbot-apt.log; echo "setup: apt-get could not install: ${missing[*]}"; exit 1; }
  else
    echo "setup: missing Debian packages: ${missing[*]}"
    echo "       install them with: sudo apt-get install ${missing[*]}"
    exit 1
  fi
fi
# Tools the build calls directly. Each missing one is named with the package that provides it.
status=0
for tool in "cc:gcc" "c++:g++" "cmake:cmake" "make:make" "python3.11:python3.11 (Python 3.11)"; do
  cmd=${tool%%:*}
  if ! command -v "$cmd" >/dev/null 2>&1; then
    echo "setup: missing prerequisite: '$cmd' not found on PATH (provided by ${tool#*:})"
    status=1
  fi
done
if command -v python3.11 >/dev/null 2>&1 && ! python3.11 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup: missing prerequisite: python3.11 has no venv/ensurepip (Debian package python3.11-venv)"
  status=1
fi
exit $status

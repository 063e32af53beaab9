#!/usr/bin/env bash
# Builds llama-cpp-python (llama.cpp's Python bindings and OpenAI-compatible server) into the venv.
#
# Why a script of its own: PyPI has only the sdist, which vendors llama.cpp and compiles for ~10-15
# minutes on 2 cores. Its default build uses -march=native, and such a build crashed here on the
# first request with an invalid-opcode trap (the hypervisor advertises AVX-512 it does not run), so
# we build for an explicit, portable x86-64 level: AVX2 + FMA + F16C (x86-64-v3), no AVX-512.
#
# Idempotent: a stamp in the venv records the pinned version and the flags; a wheel built once is
# kept in a cache folder (FRANKENBOT_WHEEL_CACHE, default ~/.cache/frankenbot/wheels) and installed
# from there when present, so a rebuilt venv does not compile again. A fresh machine has no cache and
# builds the wheel itself from the sdist.
set -euo pipefail
VENV=${1:?usage: setup_llm.sh VENV}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY="$VENV/bin/python"
VERSION=$(sed -n 's/^llama-cpp-python==//p' "$ROOT/requirements/llm.txt")
ARCH=$(uname -m)
if [[ "$ARCH" == "x86_64" ]]; then
  FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  FLAGS+=" -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF"
else
  FLAGS="-DGGML_NATIVE=OFF"
fi
FLAGS+=" -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
FLAGS+=" -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_OPENMP=ON"
STAMP="$VENV/.stamps/llm"
WANT="llama-cpp-python==$VERSION $ARCH $FLAGS $(sha256sum "$ROOT/requirements/llm.txt" | cut -c1-16)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] \
   && "$PY" -c "import llama_cpp, llama_cpp.server" 2>/dev/null; then
  echo "setup-llm: llama-cpp-python $VERSION already installed"
  exit 0
fi
CACHE=${FRANKENBOT_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frankenbot/wheels}
# The flags are part of the cache key: a wheel built with other flags is never reused.
KEY=$(printf '%s' "$VERSION $ARCH $FLAGS" | sha256sum | cut -c1-12)
WHEEL_DIR="$CACHE/llama-cpp-python-$KEY"
mkdir -p "$WHEEL_DIR"
# The server extra's wheels first (quick; exact pins from llm.txt and constraints.txt).
grep -v '^llama-cpp-python==' "$ROOT/requirements/llm.txt" > "$WHEEL_DIR/server-reqs.txt"
set -o pipefail
"$PY" -m pip install -q -r "$WHEEL_DIR/server-reqs.txt" -c "$ROOT/requirements/constraints.txt" \
  2>&1 | { grep -v "^WARNING: Location" || true; }
WHEEL=$(ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [[ -z "$WHEEL" ]]; then
  echo "setup-llm: building llama-cpp-python $VERSION from its sdist (~10-15 min on 2 cores;"
  echo "           log: $WHEEL_DIR/build.log)"
  JOBS=${FRANKENBOT_BUILD_JOBS:-$(nproc)}
  if ! CMAKE_ARGS="$FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" nice -n 10 \
      "$PY" -m pip wheel --no-deps --no-binary llama-cpp-python \
      "llama-cpp-python==$VERSION" -w "$WHEEL_DIR.tmp" -v > "$WHEEL_DIR/build.log" 2>&1; then
    tail -n 40 "$WHEEL_DIR/build.log"
    echo "setup-llm: building llama-cpp-python failed (needs cmake and g++; log above)"
    rm -rf "$WHEEL_DIR.tmp"
    exit 1
  fi
  mv "$WHEEL_DIR.tmp"/llama_cpp_python-*.whl "$WHEEL_DIR/" && rm -rf "$WHEEL_DIR.tmp"
  WHEEL=$(ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl | head -n1)
fi
"$PY" -m pip install -q --no-deps --force-reinstall "$WHEEL" 2>&1 \
  | { grep -v "^WARNING: Location" || true; }
"$PY" -c "import llama_cpp, llama_cpp.server; print('setup-llm: llama-cpp-python', llama_cpp.__version__)"
mkdir -p "$(dirname "$STAMP")" && printf '%s' "$WANT" > "$STAMP"

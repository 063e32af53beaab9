# FrankenBot: every target is idempotent and does its own set-up on a fresh machine.
#   make setup   Debian packages (apt-get), .venv with pinned requirements, colcon build
#   make setup-llm  llama-cpp-python built portably into .venv (the local LLM server)
#   make test    setup + setup-llm + the pytest suite (all but `heavy`) + lint
#   make demo    setup + sim and all nodes as separate processes, one task end to end
#   make bench   setup + every benchmark (results in docs/results/), then the README regenerated
#   make lint    ruff, the import contracts (.importlinter) and mypy on the core (mypy.ini)
#   make clean   remove build products (keeps .venv; `make distclean` removes it too)
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3.11
VENV := $(CURDIR)/.venv
STAMP_DIR := $(VENV)/.stamps
REQ := requirements/base.txt requirements/constraints.txt requirements/data.txt
APT_PACKAGES := cmake g++ make libusb-1.0-0 libegl1 libegl-mesa0 libgl1-mesa-dri libgomp1 chromium fonts-dejavu-core postgresql
ENV := source $(CURDIR)/env.sh &&
INSTRUCTION ?= put the red block in the green bowl
PYTEST_ARGS ?=

.PHONY: help setup setup-llm apt venv build test test-fast test-heavy lint demo bench clean distclean

help:
	@echo "targets: setup setup-llm test test-fast lint demo bench clean distclean"

setup: apt venv build

# Debian packages: installed when missing and we are root; otherwise named in a clear message.
apt:
	@echo "setup [1/3]: Debian packages"
	@bash scripts/check_prereqs.sh $(APT_PACKAGES)

venv: $(STAMP_DIR)/requirements

$(STAMP_DIR)/requirements: $(REQ) scripts/patch_venv.sh
	@echo "setup [2/3]: Python packages into .venv (pinned; a few minutes on a fresh machine)"
	@command -v $(PYTHON) >/dev/null || { echo "setup: $(PYTHON) not found (Python 3.11 is required by the ROS 2 Jazzy wheels)"; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	set -o pipefail; $(VENV)/bin/python -m pip install -q --upgrade pip==26.3 2>&1 | { grep -v "^WARNING: Location" || true; }
	set -o pipefail; $(VENV)/bin/python -m pip install -q -r requirements/base.txt -c requirements/constraints.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
	@# data-only packages (LIBERO's task definitions): their declared dependencies are not wanted
	set -o pipefail; $(VENV)/bin/python -m pip install -q --no-deps -r requirements/data.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
	bash scripts/patch_venv.sh $(VENV)
	@mkdir -p $(STAMP_DIR) && touch $@

# The stand-in interface packages (compat_interfaces/: control_msgs, controller_manager_msgs,
# ur_dashboard_msgs, tf2_msgs) are built only where no underlay provides them (PyPI wheels here);
# with a system ROS 2 sourced the distro's are used unchanged.
build: venv
	@echo "setup [3/3]: colcon build of frankenbot_interfaces and frankenbot"
	@mkdir -p log && compat="$$($(ENV) bash scripts/compat_packages.sh | tr '\n' ' ')" && \
	  { [ -z "$$compat" ] || echo "setup: stand-ins for absent interface packages: $$compat"; } && \
	  $(ENV) colcon --log-base log build --symlink-install \
	    --base-paths frankenbot frankenbot_interfaces $$compat \
	    --event-handlers console_cohesion- summary- status- \
	    --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE=$(VENV)/bin/python \
	  > log/colcon-build.txt 2>&1 || { tail -n 60 log/colcon-build.txt; echo "setup: colcon build failed (full log: log/colcon-build.txt)"; exit 1; }
	@echo "setup: built frankenbot_interfaces and frankenbot (and the stand-ins) into install/"

# llama.cpp's Python bindings and server, built from source portably (scripts/setup_llm.sh says why);
# ~10-15 min the first time on 2 cores, a no-op after (stamp in the venv, wheel kept in a cache).
setup-llm: venv
	@bash scripts/setup_llm.sh $(VENV)

test: setup setup-llm
	@$(ENV) python -m pytest frankenbot/test -m "not heavy" $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory lint

test-fast: setup
	@$(ENV) python -m pytest frankenbot/test -m "not slow and not heavy" $(PYTEST_ARGS)

test-heavy: setup setup-llm
	@$(ENV) python -m pytest frankenbot/test -m heavy $(PYTEST_ARGS)

lint: venv
	@$(ENV) ruff check frankenbot && echo "lint: ruff clean"
	@$(ENV) lint-imports --config .importlinter --no-cache && echo "lint: import contracts kept"
	@$(ENV) mypy --config-file mypy.ini && echo "lint: mypy clean on the core"

demo: setup
	@$(ENV) frankenbot demo --instruction "$(INSTRUCTION)"

bench: setup
	@$(ENV) frankenbot bench --all-benchmarks --out docs/results && frankenbot report

clean:
	rm -rf build install log .pytest_cache results
	find . -name __pycache__ -type d -prune -not -path './.venv/*' -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# Two entry points: `make demo` and `make test`. Both create .venv on first use: `make demo`
# with the runtime only (what the table runs), `make test` adds the development tools to it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
DEV := $(VENV)/.dev
CI ?=

# Python's compiled modules kept under .venv (pycache/), never beside the sources. The suite
# starts hundreds of Python processes (the service, the commands, the simulators), and where the
# environment says PYTHONDONTWRITEBYTECODE (a container's usual setting) each one compiled the
# project's modules anew: a quarter of the suite's time. Its own folder honours what that
# setting is for (no files written into the checkout).
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
unexport PYTHONDONTWRITEBYTECODE

# The project's npm packages (tools/package.json and its lock): MicroPython's WebAssembly port and
# rp2040js, the RP2040 emulator.
NPM_STAMP := tools/node_modules/.installed

# `make wheelhouse`: the wheels for the table's Raspberry Pi (64-bit Raspberry Pi OS: Bookworm
# has CPython 3.11 and glibc 2.36, Trixie CPython 3.13 and a newer glibc), taken from the lock.
WHEELHOUSE := wheelhouse
PI_PYTHONS := 3.11 3.13
# manylinux2014 is the older name of manylinux_2_17, which some wheels carry alone.
PI_PLATFORMS := --platform manylinux2014_aarch64 \
	$(foreach n,17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36,\
	--platform manylinux_2_$(n)_aarch64)
PI_TARGET = --only-binary=:all: $(PI_PLATFORMS) --implementation cp --python-version $$v

# $(call need,CHECK,PROGRAM,WHAT TO INSTALL) succeeds when PROGRAM is on PATH. Otherwise it
# prints one line saying what to install and fails, so that CHECK is skipped; under CI=true
# the whole run fails.
need = { command -v $(2) >/dev/null 2>&1 || { \
	if [ "$(CI)" = true ]; then echo "make $(1): FAILED: $(2) not found: install $(3)" >&2; exit 1; fi; \
	echo "make $(1): SKIPPED: $(2) not found: install $(3)" >&2; false; }; }

.PHONY: demo test checks test-all lint typecheck mpy npm micropython micropython-run unit once pythons \
	pythons-rest chip-long chip-image bench lock \
	wheelhouse pi-wheels pi-check clean

# The environment itself, with pip (the packaging tests and the wheelhouse use this
# environment's pip).
$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
		echo "make: $(PYTHON) is older than Python 3.11: run make PYTHON=python3.11 (or newer)" >&2; \
		exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The runtime alone, through pip (uv is a development tool).
$(RUNTIME): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The runtime and the development tools through uv (one of them): it resolves and installs the
# lot in seconds where pip takes about a minute; the runtime comes with them, so its stamp too.
$(DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet "$$(grep -o '"uv[^"]*"' pyproject.toml | tr -d '"')"
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	touch $(RUNTIME) $@

demo: $(RUNTIME)
	$(BIN)/mjtable demo

# Every check, in three lanes side by side (each line under its lane's name,
# tools/side_by_side.py): the static checks, then the tests that do not depend on the
# interpreter (once); the rest of the suite under this venv's Python (unit); the same under the
# Pi's other Python (pythons). The two suites are then the same work, and the static checks'
# lane, done in under a minute, takes the tests run once: the three end close together. The
# npm packages first, which the checks and the suite both use.
test: $(DEV) npm
	$(BIN)/python tools/side_by_side.py "checks=$(MAKE) --no-print-directory checks once" \
		"unit=$(MAKE) --no-print-directory unit UNIT_MARK='not chip_long and not once'" \
		"pythons=$(MAKE) --no-print-directory pythons"

checks: lint typecheck mpy micropython

# What CI runs (`.ci/run`): every check, and the suite under the supported Pythons that are not
# the Pi's too.
test-all: test pythons-rest

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV)
	$(BIN)/mypy
	$(BIN)/python tools/mpcheck.py --stubs

mpy: $(DEV)
	$(BIN)/python tools/mpcheck.py --compile

# The project's npm packages, installed from the lock file.
npm:
	@if $(call need,npm,node,Node.js and npm (Debian: apt-get install nodejs npm)) && \
		$(call need,npm,npm,npm (Debian: apt-get install npm)); then \
		$(MAKE) --no-print-directory $(NPM_STAMP); fi

# The protocol run by the real MicroPython (its WebAssembly port, from the npm registry).
micropython:
	@if $(call need,micropython,node,Node.js and npm (Debian: apt-get install nodejs npm)) && \
		$(call need,micropython,npm,npm (Debian: apt-get install npm)); then \
		$(MAKE) --no-print-directory micropython-run; fi

micropython-run: $(NPM_STAMP)
	node tools/micropython/run.mjs tools/micropython/check_protocol.py
	node tools/micropython/run.mjs tools/micropython/check_firmware.py

$(NPM_STAMP): tools/package.json tools/package-lock.json
	cd tools && npm ci --silent --no-audit --no-fund
	touch $@

# The suite under this venv's Python (the wheel's tests share one worker: loadgroup), less the
# chip at length (make chip-long). The npm packages first when Node.js is here: tests/chip runs
# the firmware on the emulated RP2040. UNIT_MARK: pytest's -m instead (make test leaves out the
# tests marked once there: its checks' lane runs them).
UNIT_MARK ?= not chip_long
unit: $(DEV)
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(NPM_STAMP); fi
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q -m "$(UNIT_MARK)"

# The tests that do not depend on the interpreter alone (marked once, tests/conftest.py: the
# wheel, the wheelhouse, the docs, the schemas, the error detection's sweeps, the firmware and
# the chip's short checks), under this venv's Python.
once: $(DEV)
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(NPM_STAMP); fi
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q -m "once and not chip_long"

# The suite under the Pi's other Python (noxfile.py), less the tests that do not depend on the
# interpreter (marked once: `make unit` and `make once` have them); a missing Python is one
# loud line.
# PYTHONS_ARGS: pytest's arguments there instead (e.g. PYTHONS_ARGS='-n 2 -q tests/api').
PYTHONS_ARGS ?=
pythons: $(DEV)
	$(BIN)/python noxfile.py $(PYTHONS_ARGS)

# The same under the supported Pythons that are not the Pi's (3.12).
pythons-rest: $(DEV)
	$(BIN)/python noxfile.py --rest $(PYTHONS_ARGS)

# The emulated chip at length (marked chip_long): whole deal cycles through `mjtable run` (108,
# 136 and 144 tiles, a jam, a power cut, a watchdog reset), a build under a host that sends
# without pause, and the board's hardware truths, the image, the heap and the line kept full
# (tests/chip): tens of seconds to minutes each, so not part of `make test`, which keeps the
# chip's short checks; `.ci/run` runs them after it, two at a time (each chip takes a core;
# docs/chip.md), the deal cycles first (minutes each, the longest: the others fill in at the
# end). The image comes first (make chip-image). Without Node.js and npm: one line saying what
# to install.
chip-long: $(DEV)
	@if $(call need,chip-long,node,Node.js and npm (Debian: apt-get install nodejs npm)) && \
		$(call need,chip-long,npm,npm (Debian: apt-get install npm)); then \
		$(MAKE) --no-print-directory $(NPM_STAMP) && \
		$(BIN)/python -m pytest -n 2 --dist load -q -p no:randomly --durations=0 -m chip_long \
			tests/chipcycles tests/chip; \
	fi

# The image the chip tests boot (`mjtable firmware image` of the sources: MicroPython built with
# Debian's Arm toolchain, minutes), into the tests' cache outside the checkout; nothing to do
# when the cache holds it for these sources (tests/support/chip_image.py).
chip-image: $(DEV)
	$(BIN)/python -m tests.support.chip_image

bench: $(DEV)
	$(BIN)/python -m bench.protocol
	$(BIN)/python -m bench.rules
	$(BIN)/python -m bench.simulator
	$(BIN)/python -m bench.cycle
	$(BIN)/python -m bench.service

# requirements/runtime.lock: the runtime dependencies pinned, with every file's hash.
lock: $(DEV)
	$(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes --output-file requirements/runtime.lock

# Everything the Pi needs to install offline (docs/install.md, "Offline install"), then the
# proof: the install resolves from the wheelhouse alone, for each of the Pi's Pythons.
wheelhouse: $(RUNTIME)
	rm -rf build $(WHEELHOUSE)
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir $(WHEELHOUSE) .
	rm -rf build
	@$(MAKE) --no-print-directory pi-wheels pi-check
	ls $(WHEELHOUSE)

# The two halves of the above (tests/packaging/test_wheelhouse.py runs them with its own
# WHEELHOUSE and BIN): the locked wheels for the Pi, checked against their hashes; and
# mjtable installed from $(WHEELHOUSE) alone, without network, for each of the Pi's Pythons.
pi-wheels:
	@for v in $(PI_PYTHONS); do \
		echo "pip download: the locked wheels for CPython $$v on manylinux aarch64"; \
		$(BIN)/python -m pip download --quiet $(PI_TARGET) --require-hashes \
			--requirement requirements/runtime.lock --dest $(WHEELHOUSE) || exit 1; \
	done

pi-check:
	@for v in $(PI_PYTHONS); do \
		echo "pip install --dry-run --no-index: mjtable from $(WHEELHOUSE)/ alone, CPython $$v"; \
		$(BIN)/python -m pip install --quiet --dry-run --ignore-installed --no-index \
			--find-links $(WHEELHOUSE) $(PI_TARGET) --target $(WHEELHOUSE)/.check mjtable \
			|| exit 1; \
	done
	@rm -rf $(WHEELHOUSE)/.check

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .nox build *.egg-info $(WHEELHOUSE) \
		tools/node_modules

# Two entry points: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

NPM_STAMP := tools/micropython/node_modules/.installed

.PHONY: demo test lint typecheck mpy micropython unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mjtable demo

test: $(STAMP) lint typecheck mpy micropython unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/python tools/mpcheck.py --stubs

mpy: $(STAMP)
	$(BIN)/python tools/mpcheck.py --compile

# The protocol run by the real MicroPython (its WebAssembly port, from the npm registry).
$(NPM_STAMP): tools/micropython/package.json tools/micropython/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		echo "make micropython: Node.js and npm are needed to run MicroPython's WebAssembly port"; exit 1; }
	cd tools/micropython && npm ci --silent --no-audit --no-fund
	touch $(NPM_STAMP)

micropython: $(NPM_STAMP)
	node tools/micropython/run.mjs tools/micropython/check_protocol.py

unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python -m bench.protocol
	$(BIN)/python -m bench.rules
	$(BIN)/python -m bench.simulator
	$(BIN)/python -m bench.cycle
	$(BIN)/python -m bench.service

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build *.egg-info tools/micropython/node_modules

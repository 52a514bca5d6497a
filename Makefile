# The two commands of the README: `make demo` and `make test`.
# Each sets up .venv from nothing (Python >= 3.11 on PATH is all it needs).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/tavolo play random random --game tressette --seed demo --record demo-record.jsonl
	$(BIN)/tavolo verify demo-record.jsonl

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check referee tournaments tests
	$(BIN)/ruff format --check referee tournaments tests

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) demo-record.jsonl .pytest_cache .mypy_cache .ruff_cache .hypothesis

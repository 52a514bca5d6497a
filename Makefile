# The two commands of the README: `make demo` and `make test`.
# Each sets up .venv from nothing (Python >= 3.11 on PATH is all it needs).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit setup clean proto proto-lint proto-baseline clients clients-available

# pip's output goes to a log, shown only if the install fails. The tavolo distribution
# ships the Python SDK (clients/python/tavolo_bot) its built-in bots run from; a .venv made
# before it did also has the tavolo-bot distribution, which is removed (one owner per package).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@echo "installing tavolo and its dependencies into $(VENV) (log: $(VENV)/pip.log)"
	@$(BIN)/python -m pip install --upgrade pip > $(VENV)/pip.log 2>&1 \
		&& $(BIN)/python -m pip install -e '.[dev]' >> $(VENV)/pip.log 2>&1 \
		&& $(BIN)/python -m pip uninstall -y tavolo-bot >> $(VENV)/pip.log 2>&1 \
		|| { cat $(VENV)/pip.log; exit 1; }
	@touch $(STAMP)

setup: $(STAMP)

# A round robin of the built-in bots over real gRPC, ending in the Elo table. Results go
# to demo.db: run it again after an interruption and it resumes; `make clean` starts over.
demo: $(STAMP)
	$(BIN)/tavolo tournament run tournaments/examples/quick.toml --db demo.db

test: lint typecheck proto-lint clients-available unit

# buf lint (STANDARD) on proto/, and buf breaking (FILE) against protocol v1 as released
# (proto/baseline/tavolo-v1.binpb), with the buf CLI from npm (@bufbuild/buf, pinned).
# The baseline must also hold everything proto/ has: checked the other way round, a field
# added since would show as deleted. `make proto-baseline` records an addition.
BUF := proto/node_modules/.bin/buf
$(BUF): proto/package.json proto/package-lock.json
	npm ci --prefix proto --no-fund --no-audit --loglevel=error
	@touch $(BUF)

proto-lint: $(BUF)
	$(BUF) lint proto
	$(BUF) breaking proto --against proto/baseline/tavolo-v1.binpb
	@now=$$(mktemp --suffix=.binpb) && $(BUF) build proto -o $$now && \
	  { $(BUF) breaking proto/baseline/tavolo-v1.binpb --against $$now; ok=$$?; rm -f $$now; \
	    [ $$ok -eq 0 ] || { echo "error: proto/ has what proto/baseline/tavolo-v1.binpb" \
	      "lacks (above): run make proto-baseline to record it"; exit 1; }; }

# Record what proto/ adds to v1 in its baseline, once it breaks nothing.
proto-baseline: $(BUF)
	$(BUF) breaking proto --against proto/baseline/tavolo-v1.binpb
	$(BUF) build proto -o proto/baseline/tavolo-v1.binpb

# The bot clients of clients/<lang>, each built from proto/ by its own toolchain.
# `make clients` must build all five; the tests build those this machine has the
# toolchain for and say which they skip (CI sets TAVOLO_REQUIRE_CLIENTS=1: no skipping).
clients: $(BUF)
	clients/build-all --all

clients-available: $(BUF)
	clients/build-all

# Regenerate the Python code in clients/python/tavolo_bot/proto (the referee imports it too).
proto: $(STAMP)
	$(BIN)/python proto/generate.py

lint: $(STAMP)
	$(BIN)/ruff check referee tournaments clients/python tests docs/examples
	$(BIN)/ruff format --check referee tournaments clients/python tests docs/examples

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/mypy --strict clients/python/tavolo_bot

unit: $(STAMP)
	$(BIN)/pytest -q --durations=25

clean:
	rm -rf $(VENV) proto/node_modules demo-record.jsonl demo.db demo.db-wal demo.db-shm demo.logs .pytest_cache .mypy_cache .ruff_cache .hypothesis

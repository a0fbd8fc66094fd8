# starfeed: `make run` runs it locally on an embedded AWS; `make test` runs the tests.
# Both set everything up from a fresh clone. Python 3.11+ is all they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# aws-sam-cli pins its own dependencies, so it lives in a venv of its own.
SAM_VENV := .tools/sam
SAM := SAM_CLI_TELEMETRY=0 PATH=$(CURDIR)/$(BIN):$$PATH $(SAM_VENV)/bin/sam
SAM_CLI_VERSION := 1.170.0

CHECKOV := .tools/checkov
CHECKOV_VERSION := 3.3.30

# The tests run on three workers for the two cores of a developer's machine and CI's: an integration
# test waits part of its time (a loopback origin's delay, a started process, moto's replies), and a
# third worker computes meanwhile. A worker that runs out of tests takes some of another's, so none
# waits idle at the end.
WORKERS ?= 3
# The package's line coverage in `make coverage` may not drop below this (percent).
COVERAGE_FLOOR := 80
# The shuffled run's order; SEED=N repeats one.
SEED ?= $(shell date +%s)

.PHONY: run test coverage test-fast test-shuffled lint build validate checkov bench cost clean

# RESET=1 starts clean, after moving the saved state aside.
run: $(VENV)/.installed
	$(if $(RESET),$(BIN)/starfeed local reset &&) $(BIN)/starfeed local run

# Everything.
test: $(VENV)/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal $(PYTEST_ARGS)

# Everything again, with the package's line coverage (CI runs it after `make test`). Python 3.11's
# tracer turns off the interpreter's fast paths, so this run takes about twice as long.
coverage: $(VENV)/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal --cov=starfeed --cov-report=term:skip-covered \
		--cov-fail-under=$(COVERAGE_FLOOR) $(PYTEST_ARGS)

# While editing: the pure and unit tests, without moto and the slow sweeps (`-m slow`).
test-fast: $(VENV)/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal -m "not slow" tests/unit $(PYTEST_ARGS)

# The integration tests in a random order (its seed is printed): each starts from a stack of its own.
test-shuffled: $(VENV)/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal --random-order-bucket=global --random-order-seed=$(SEED) \
		tests/integration $(PYTEST_ARGS)

# ruff over the code and the tests, mypy strict over the pure core: pyproject.toml says which.
lint: $(VENV)/.installed
	$(BIN)/ruff check layers functions tests
	$(BIN)/mypy

# sam build without Docker and without Python 3.13: the layer's Makefile cross-installs wheels.
build: $(VENV)/.installed $(SAM_VENV)/.installed
	$(SAM) build

validate: $(SAM_VENV)/.installed
	$(SAM) validate --lint

# Every finding is fixed or skipped with its reason in the resource's Metadata: none may appear.
checkov: $(CHECKOV)/.installed
	$(CHECKOV)/bin/checkov --quiet --compact --framework cloudformation -f template.yaml

bench: $(VENV)/.installed
	$(BIN)/python -m starfeed.bench.ingest
	$(BIN)/python -m starfeed.bench.serve
	$(BIN)/python -m starfeed.bench.freshness
	$(BIN)/python -m starfeed.bench.snapshot
	$(BIN)/python -m starfeed.bench.schedule_scale
	$(BIN)/python -m starfeed.bench.github
	$(BIN)/python -m starfeed.bench.aws_requests
	$(BIN)/python -m starfeed.bench.extract
	$(BIN)/python -m starfeed.bench.enrich
	mkdir -p .starfeed
	$(BIN)/python -m starfeed.bench.schedsim --generate .starfeed/bench-population.jsonl --feeds 1000 --seed 1
	$(BIN)/python -m starfeed.bench.schedsim --population .starfeed/bench-population.jsonl

# The monthly bill from measured request counts and durations, and dated list prices (docs/design.md#target-cost).
cost: $(VENV)/.installed
	$(BIN)/python -m starfeed.bench.cost

# Compiled to bytecode once here: each test worker and `starfeed local run` process would compile
# moto's and botocore's modules anew where Python writes no bytecode (PYTHONDONTWRITEBYTECODE).
$(VENV)/.installed: pyproject.toml layers/starfeed/requirements.txt layers/starfeed/provided-by-lambda.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	touch $@

$(CHECKOV)/.installed:
	test -x $(CHECKOV)/bin/python || $(PYTHON) -m venv $(CHECKOV)
	$(CHECKOV)/bin/python -m pip install --quiet --disable-pip-version-check uv
	$(CHECKOV)/bin/uv pip install --quiet --python $(CHECKOV)/bin/python checkov==$(CHECKOV_VERSION)
	touch $@

$(SAM_VENV)/.installed:
	test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv
	$(SAM_VENV)/bin/uv pip install --quiet --python $(SAM_VENV)/bin/python aws-sam-cli==$(SAM_CLI_VERSION)
	touch $@

clean:
	rm -rf $(VENV) .tools .aws-sam .starfeed .pytest_cache

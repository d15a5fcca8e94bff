# Entry points: `make reproduce` (re-run the paper), `make test` (lint + tests).
# `make setup` is idempotent and is run by both.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PROFILE ?= paper
RUN_ID ?=
BOMBARDIER_VERSION := v1.2.6

APP_SOURCES := $(wildcard testapp/dotnet/*.cs testapp/dotnet/*.csproj testapp/dotnet/*/*.cs testapp/dotnet/Views/*/*.cshtml testapp/dotnet/Views/*.cshtml)

.PHONY: setup system-packages test lint reproduce clean

# Python >= 3.11.5 (the pins need it; Debian 12's python3 is 3.11.2), checked when
# make starts, before anything runs, whenever the venv is still to be built: a
# wrong Python stops here with one line saying which Python to use and how.
ifneq ($(filter setup test lint reproduce $(VENV)/.installed,$(or $(MAKECMDGOALS),setup)),)
PYTHON_PROBLEM := $(shell test -f $(VENV)/.installed -a ! requirements.txt -nt $(VENV)/.installed || scripts/check-python.sh '$(PYTHON)' '$(or $(firstword $(MAKECMDGOALS)),setup)' 2>&1)
$(if $(PYTHON_PROBLEM),$(error $(PYTHON_PROBLEM)))
endif

setup: system-packages $(VENV)/.installed build/testapp/TestApp build/bin/bombardier

system-packages:
	@scripts/install-system-packages.sh

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	@# hostbench importable from the venv (tests, notebooks) without a build step
	$(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' | xargs -I{} sh -c 'echo "$(CURDIR)" > {}/hostbench.pth'
	@touch $@

build/testapp/TestApp: $(APP_SOURCES)
	dotnet publish testapp/dotnet -c Release -o build/testapp --nologo -v quiet
	@touch $@

# Go is looked up when this recipe runs, not when make starts: on a first
# `make setup` it is installed by the system-packages step that ran just before.
build/bin/bombardier: testapp/go/go.mod testapp/go/go.sum Makefile | system-packages
	@command -v /usr/lib/go-1.23/bin/go >/dev/null || command -v go >/dev/null || { echo "Go >= 1.22 not found: run 'make system-packages' (see README, Prerequisites)"; exit 1; }
	cd testapp/go && $$(command -v /usr/lib/go-1.23/bin/go || command -v go) build -ldflags "-X main.version=$(BOMBARDIER_VERSION)" -o ../../build/bin/bombardier github.com/codesenberg/bombardier

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check hostbench tests scripts benchmarks
	$(VENV)/bin/ruff format --check hostbench tests scripts benchmarks

test: setup lint
	$(PY) -m pytest

reproduce: setup
	$(PY) -m hostbench reproduce --profile $(PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID))

clean:
	rm -rf build testapp/dotnet/bin testapp/dotnet/obj

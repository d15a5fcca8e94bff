# Entry points: `make reproduce` (re-run a study; default the JCSI 2018 paper),
# `make reproduce-all` (every study in one batch), `make test` (lint + tests).
# `make setup` is idempotent and is run by all of them.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STUDY ?= jcsi2018
PROFILE ?= paper
RUN_ID ?=
BATCH_ID ?=
GO := $(shell command -v /usr/lib/go-1.23/bin/go || command -v go)
BOMBARDIER_VERSION := v1.2.6

APP_SOURCES := $(wildcard testapp/dotnet/*.cs testapp/dotnet/*.csproj testapp/dotnet/*/*.cs testapp/dotnet/Views/*/*.cshtml testapp/dotnet/Views/*.cshtml)
GOSERVER_SOURCES := $(wildcard testapp/go/cmd/goserver/*.go testapp/go/cmd/goserver/views/*.html testapp/go/cmd/goserver/views/*/*.html)

.PHONY: setup system-packages test lint reproduce reproduce-all clean

setup: system-packages $(VENV)/.installed build/testapp/TestApp build/bin/bombardier build/bin/goserver

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

build/bin/bombardier: testapp/go/go.mod testapp/go/go.sum Makefile
	@test -n "$(GO)" || { echo "Go >= 1.22 not found: run 'make system-packages' (see README, Setup)"; exit 1; }
	cd testapp/go && $(GO) build -ldflags "-X main.version=$(BOMBARDIER_VERSION)" -o ../../build/bin/bombardier github.com/codesenberg/bombardier

# The Go peers of the Go-vs-.NET study (Iris MVC, Iris, net/http): testapp/go/README.md.
build/bin/goserver: $(GOSERVER_SOURCES) testapp/go/go.mod testapp/go/go.sum Makefile
	@test -n "$(GO)" || { echo "Go >= 1.22 not found: run 'make system-packages' (see README, Setup)"; exit 1; }
	cd testapp/go && $(GO) build -trimpath -o ../../build/bin/goserver ./cmd/goserver

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check hostbench tests scripts benchmarks
	$(VENV)/bin/ruff format --check hostbench tests scripts benchmarks

test: setup lint
	$(PY) -m pytest

reproduce: setup
	$(PY) -m hostbench reproduce --study $(STUDY) --profile $(PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID))

reproduce-all: setup
	$(PY) -m hostbench reproduce-all --profile $(PROFILE) $(if $(BATCH_ID),--batch-id $(BATCH_ID))

clean:
	rm -rf build testapp/dotnet/bin testapp/dotnet/obj

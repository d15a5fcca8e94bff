# Entry points: `make reproduce` (re-run a study; default the JCSI 2018 paper),
# `make reproduce-all` (every study in one batch), `make plan` (how long a reproduce would
# take, measuring nothing), `make test` (lint + tests).
# `make setup` is idempotent and is run by all of them.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# STUDY empty: the default study (the one whose study.yaml says `default: true`).
STUDY ?=
PROFILE ?= paper
RUN_ID ?=
BATCH_ID ?=
# Params keys over the profile, KEY=VALUE separated by spaces (a value without spaces), e.g.
# SET="duration_s=5 repetitions=2": python -m hostbench reproduce --set (docs/running.md).
SET ?=
BOMBARDIER_VERSION := v1.2.6

APP_SOURCES := $(wildcard testapp/dotnet/*.cs testapp/dotnet/*.csproj testapp/dotnet/*/*.cs testapp/dotnet/Views/*/*.cshtml testapp/dotnet/Views/*.cshtml)
YARP_SOURCES := $(wildcard testapp/yarp/*.cs testapp/yarp/*.csproj)
GOSERVER_SOURCES := $(wildcard testapp/go/cmd/goserver/*.go testapp/go/cmd/goserver/views/*.html testapp/go/cmd/goserver/views/*/*.html)

.PHONY: setup system-packages test check lint reproduce reproduce-all plan compare lab clean aot

# Python >= 3.11.5 (the pins need it; Debian 12's python3 is 3.11.2), checked when
# make starts, before anything runs, whenever the venv is still to be built: a
# wrong Python stops here with one line saying which Python to use and how.
ifneq ($(filter setup test check lint reproduce reproduce-all plan compare lab $(VENV)/.installed,$(or $(MAKECMDGOALS),setup)),)
PYTHON_PROBLEM := $(shell test -f $(VENV)/.installed -a ! requirements.txt -nt $(VENV)/.installed || scripts/check-python.sh '$(PYTHON)' '$(or $(firstword $(MAKECMDGOALS)),setup)' 2>&1)
$(if $(PYTHON_PROBLEM),$(error $(PYTHON_PROBLEM)))
endif

KERNELSPEC := $(VENV)/share/jupyter/kernels/.net-csharp/kernel.json

setup: system-packages $(VENV)/.installed build/testapp/TestApp build/yarp/YarpProxy build/bin/bombardier build/bin/goserver $(KERNELSPEC)

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

# The `yarp` mode's reverse proxy (testapp/yarp): restores Yarp.ReverseProxy from NuGet.
build/yarp/YarpProxy: $(YARP_SOURCES)
	dotnet publish testapp/yarp -c Release -o build/yarp --nologo -v quiet
	@touch $@

# The `aot` runtime variant's build (hostbench/runtime_variants.py, testapp/aot/README.md):
# testapp/aot published Native AOT for .NET 10 into build/testappaot-aot-net10.0/, when missing
# or older than its sources (about a minute and a half). It links with clang and lld
# (apt-get install clang lld zlib1g-dev). Not part of setup: a study that runs the variant
# publishes it itself, as this does.
aot: $(VENV)/.installed
	$(PY) -c 'from hostbench.harness.notebook import ensure_variant; print(ensure_variant("aot"))'

# The C# tour's Jupyter kernel: Microsoft.dotnet-interactive as pinned in
# .config/dotnet-tools.json (`dotnet tool restore`), its kernelspec in the venv. Where it
# cannot be had, one line says what is missing and setup goes on (the studies run without
# the tour), and the next setup tries again.
$(KERNELSPEC): .config/dotnet-tools.json $(VENV)/.installed
	@$(PY) -m hostbench.harness.dotnet_kernel

# Go is looked up when a recipe runs, not when make starts: on a first `make setup`
# it is installed by the system-packages step that ran just before.
GO_FIND := command -v /usr/lib/go-1.23/bin/go || command -v go
GO_CHECK := @{ $(GO_FIND); } >/dev/null || { echo "Go >= 1.22 not found: run 'make system-packages' (see README, Prerequisites)"; exit 1; }

build/bin/bombardier: testapp/go/go.mod testapp/go/go.sum Makefile | system-packages
	$(GO_CHECK)
	cd testapp/go && $$($(GO_FIND)) build -ldflags "-X main.version=$(BOMBARDIER_VERSION)" -o ../../build/bin/bombardier github.com/codesenberg/bombardier

# The Go peers of the Go-vs-.NET study (Iris MVC, Iris, net/http): testapp/go/README.md.
build/bin/goserver: $(GOSERVER_SOURCES) testapp/go/go.mod testapp/go/go.sum Makefile | system-packages
	$(GO_CHECK)
	cd testapp/go && $$($(GO_FIND)) build -trimpath -o ../../build/bin/goserver ./cmd/goserver

# --no-cache: what is first-party (isort) depends on files, not only on settings; a fresh
# clone, as CI has, must see what this checkout sees.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check --no-cache hostbench studies tests scripts benchmarks conftest.py
	$(VENV)/bin/ruff format --no-cache --check hostbench studies tests scripts benchmarks conftest.py

# `make test` in two parts (docs/testing.md). First three pytest processes at once, each given
# tests of about the same time: TEST_LANE_2 (the ssh topology, interleaved and alternating
# windows, the runtimes, the runtime variants, the TLS modes' runs), TEST_LANE_3 (the other
# live tests that read no quick batch) and everything else (the quick batch and what reads
# it, the tests that start no process). Their live tests run
# smoke windows, whose checks hold on a busy machine, and much of a test's time is waiting (a
# server starting, a slice ending): three share 2 cores better than two. Each background one
# gets a TMPDIR of its own, so its pytest folders and its machine-wide measuring lock
# (quiet.MACHINE_LOCK) are its own, and a short --basetemp (a Unix socket's path is at most 107
# bytes). Then the tests marked `alone`, by themselves: their checks read the machine's speed or
# spare CPU, which the others' load would decide. A background job ignores Ctrl-C: on the way
# out the recipe stops them, if they still run (what they started stops with them: setpriv
# --pdeathsig).
TEST_LANE_2 := tests/test_ssh.py tests/test_interleave_live.py tests/test_alternate_live.py \
	tests/test_runtimes_live.py tests/test_runtime_variants_live.py \
	tests/test_runtime_variants_hosts.py tests/test_tls.py
TEST_LANE_3 := tests/test_schedule.py tests/test_study.py tests/test_run.py tests/test_quiet.py \
	tests/test_until_decided_live.py tests/test_limits.py tests/test_netns.py tests/test_modes.py \
	tests/test_loadgen_live.py tests/test_proxies.py tests/test_yarp.py tests/test_goservers.py \
	tests/test_testapp.py tests/test_processes.py tests/test_connections.py tests/test_lab_live.py \
	tests/test_batch_resume.py tests/test_remote_stop.py tests/test_printable.py tests/test_tour.py \
	tests/test_command_line_set.py tests/test_cpumonitor.py tests/test_render_only.py
test: setup lint
	@tmp=$$(mktemp -d); pids=; trap '[ -z "$$pids" ] || kill $$pids 2>/dev/null; rm -rf $$tmp' EXIT; \
	$(foreach lane,2 3,mkdir $$tmp/$(lane); TMPDIR=$$tmp/$(lane) $(PY) -m pytest -m "not alone" \
		--basetemp=$$tmp/$(lane)/t $(TEST_LANE_$(lane)) >$$tmp/$(lane)/out 2>&1 & pids="$$pids $$!";) \
	$(PY) -m pytest -m "not alone" $(addprefix --ignore=,$(TEST_LANE_2) $(TEST_LANE_3)); ok=$$?; \
	for p in $$pids; do wait $$p || ok=1; done; pids=; cat $$tmp/2/out $$tmp/3/out; \
	$(PY) -m pytest -m alone || ok=1; \
	exit $$ok

# The edit-test loop: lint and the tests that start no process (pytest marker `live`), in two
# pytest processes at once, one a core (docs/testing.md): CHECK_FIRST, the tests that judge and
# render the committed runs or plan from them (about half the CPU; they share what they read,
# kept.py: the generated docs, every claims run's table and verdict picture), and every other
# test. The first's output is printed after the second's. A background job ignores Ctrl-C
# (SIGINT): on the way out the recipe stops it, if it still runs.
# Python keeps what it compiled (__pycache__, git-ignored) for these targets even where the
# environment says not to (PYTHONDONTWRITEBYTECODE): pytest rewrites and compiles every test
# file on each run otherwise: 1-3 s a pytest process on 2 cores (docs/testing.md).
check test: export PYTHONDONTWRITEBYTECODE =
CHECK_FIRST := tests/test_compare.py tests/test_docs.py tests/test_findings.py \
	tests/test_results_schema.py tests/test_gallery.py \
	tests/test_differences.py tests/test_render_only.py studies/jcsi2018/test_jcsi2018_tables.py \
	studies/jcsi2018/test_jcsi2018_prose.py tests/test_claims.py tests/test_machines.py \
	tests/test_verdict_card.py tests/test_verdict_picture.py tests/test_plan.py \
	studies/go-vs-dotnet-2017/test_go_claims.py
check: $(VENV)/.installed lint
	@first=$$(mktemp); trap '[ -z "$$pid" ] || kill $$pid; rm -f $$first' EXIT; \
	$(PY) -m pytest -q -m "not live" $(CHECK_FIRST) >$$first 2>&1 & pid=$$!; \
	$(PY) -m pytest -q -m "not live" $(addprefix --ignore=,$(CHECK_FIRST)); rest=$$?; \
	wait $$pid; own=$$?; pid=; cat $$first; test $$rest -eq 0 -a $$own -eq 0

# PLAN=1 (or `make plan`): how long the run would take here, from the committed runs on record
# and the profile's budget, measuring nothing (python -m hostbench reproduce --plan).
PLAN ?=
reproduce: $(if $(PLAN),$(VENV)/.installed,setup)
	$(PY) -m hostbench reproduce $(if $(STUDY),--study $(STUDY)) --profile $(PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID)) \
		$(foreach s,$(SET),--set '$(s)') $(if $(PLAN),--plan)

reproduce-all: $(if $(PLAN),$(VENV)/.installed,setup)
	$(PY) -m hostbench reproduce-all --profile $(PROFILE) $(if $(BATCH_ID),--batch-id $(BATCH_ID)) \
		$(foreach s,$(SET),--set '$(s)') $(if $(PLAN),--plan)

plan: $(VENV)/.installed
	$(PY) -m hostbench reproduce $(if $(STUDY),--study $(STUDY)) --profile $(PROFILE) \
		$(foreach s,$(SET),--set '$(s)') --plan

# Did a re-run reproduce? RUN=<run folder>: against the committed paper run of its study
# (python -m hostbench compare RUN_A RUN_B ... for any runs of one study).
RUN ?=
compare: $(VENV)/.installed
	@test -n "$(RUN)" || { echo "make compare needs RUN=<a run folder under data/runs, or its path>"; exit 2; }
	$(PY) -m hostbench compare $(RUN)

# The hosting lab for a class (docs/teaching.md): LAB_PROFILE=quick (a few minutes) or class;
# WHAT_IF="nginx_workers=1 log_level=Debug" sets the notebook's what-ifs; SET, any params key.
LAB_PROFILE ?= quick
WHAT_IF ?=
lab: setup
	$(PY) -m hostbench lab --profile $(LAB_PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID)) \
		$(foreach w,$(WHAT_IF),--what-if '$(w)') $(foreach s,$(SET),--set '$(s)')

clean:
	rm -rf build testapp/dotnet/bin testapp/dotnet/obj testapp/yarp/bin testapp/yarp/obj
	rm -rf $(dir $(KERNELSPEC))

# A complete image for the reproduction: .NET 10 SDK + Python 3.11 + Go (to build bombardier
# and the Go peer servers) + the programs' and load tools' Debian packages (nginx, caddy, wrk,
# ab...), as deploy/packages.yml lists them (generated from their declarations:
# hostbench/packages.py; scripts/packages.sh reads it).
#
#   docker build -t hostbench .
#   docker run --rm -v "$PWD/data/runs:/hostbench/data/runs" hostbench            # make reproduce
#   docker run --rm hostbench make test
#
# Not built on the development machines (they have no Docker engine and no access
# to mcr.microsoft.com); tests/test_packaging.py lints it with hadolint.
#
# Base: the official .NET 10 SDK image. Microsoft publishes .NET 10 images on
# Ubuntu 24.04 "noble" (the default for the `10.0` tag), Alpine and Azure Linux,
# and no Debian (bookworm/trixie) ones, so the apt lines below are for noble:
#  - golang-go is Go 1.22, enough for testapp/go/go.mod (go 1.22);
#  - nginx, caddy (2.6), wrk and apache2-utils (ab), openssl, and clang, lld and zlib1g-dev
#    (Native AOT's linker), the groups `server`, `loadgen`, `host` and `build` of
#    deploy/packages.yml, are in noble's main/universe;
#  - noble's python3 is 3.12, but requirements.txt pins the closure for CPython
#    3.11, so Python 3.11 comes from the deadsnakes PPA (the usual source of
#    other Python versions on Ubuntu) and the Makefile is pointed at it (PYTHON).
FROM mcr.microsoft.com/dotnet/sdk:10.0-noble

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

ENV DEBIAN_FRONTEND=noninteractive \
    DOTNET_CLI_TELEMETRY_OPTOUT=1 \
    DOTNET_NOLOGO=1 \
    PYTHON=python3.11

WORKDIR /hostbench

# The package list and its reader first, so that code changes don't reinstall the packages.
COPY scripts/packages.sh scripts/
COPY deploy/packages.yml deploy/

# Versions are not pinned (DL3008): the Ubuntu archive keeps only the current
# version of each package, so exact pins break the build at the next security
# update; what was installed is recorded per run by hostbench (tool versions).
# The list's words are split into packages on purpose (SC2046).
# hadolint ignore=DL3008,SC2046
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        ca-certificates gpg-agent software-properties-common \
    && add-apt-repository -y ppa:deadsnakes/ppa \
    && apt-get update \
    && apt-get install -y --no-install-recommends \
        git \
        golang-go \
        make \
        python3.11 \
        python3.11-venv \
        $(scripts/packages.sh server loadgen host build) \
    && rm -rf /var/lib/apt/lists/*

# Python environment first, so that code changes don't reinstall the wheels.
COPY Makefile requirements.txt ./
RUN make .venv/.installed

COPY . .
# Builds the test app and the yarp proxy (dotnet publish, YARP from NuGet) and
# bombardier (go build); checks the system packages above are present.
RUN make setup

CMD ["make", "reproduce"]

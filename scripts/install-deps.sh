#!/usr/bin/env bash
# Install the Debian packages Basalt builds and tests with.
# Idempotent: checks each package with dpkg first and runs apt-get only for
# the missing ones, so it returns in well under a second when all are present.
set -euo pipefail

PACKAGES=(
    build-essential cmake pkg-config git
    libzmq3-dev libczmq-dev
    libprotobuf-c-dev protobuf-c-compiler
    libcurl4-openssl-dev
    libcmocka-dev
    libcjson-dev
    libyaml-dev
    libmicrohttpd-dev
    # the allocator (CMakeLists.txt says why)
    libjemalloc-dev
    # make fuzz: clang and its libFuzzer runtime (fuzz/README.md)
    clang libclang-rt-14-dev
    # scripts/format-check.sh (CI)
    clang-format
    curl
    # test_kube_tls and test_apisim_ctl make their TLS certificates with it.
    openssl
)
# kubectl is used by the API-fidelity tests (test_kubectl) as a client nobody
# here wrote; they run whichever kubectl is first on PATH. Any kubectl will do,
# so one already there is kept; otherwise Debian's kubernetes-client provides
# /usr/bin/kubectl (1.20.2 in Debian 12).
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)
# The official Kubernetes Python client is the second client nobody here
# wrote (test_python_client): Debian's package, for Debian's /usr/bin/python3
# (it brings python3 with it).
PACKAGES+=(python3-kubernetes)
# scripts/run-manifests.py (test_e2e_deploy) reads the rendered manifests.
PACKAGES+=(python3-yaml)
# test_e2e_ui opens cache-svc's status page (/ui) in a real browser:
# headless Chromium renders it, dumps its DOM and takes a screenshot.
PACKAGES+=(chromium)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

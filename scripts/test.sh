#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test with CTest (unit, integration on PoCL,
# fault and deploy tests; the integration tests start their own tracker and agents on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
# PoCL compiles kernels on the CPU; its cache keeps CI from compiling the same kernel twice. A cache made here is
# removed on exit.
if [ -z "${POCL_CACHE_DIR:-}" ]; then
  POCL_CACHE_DIR=$(mktemp -d)
  trap 'rm -rf "$POCL_CACHE_DIR"' EXIT
fi
export POCL_CACHE_DIR
ctest --output-on-failure --timeout 900 -j 2

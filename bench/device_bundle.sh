#!/usr/bin/env bash
# Packs what the GPU benchmarks need on a machine where nothing can be installed: the tracker, agent and tuner with
# their shared libraries (deploy/bundle --all, stripped) and, when installed here, CLBlast's GEMM tuner with its own
# libraries, into OUT_DIR (default dist). Then on the GPU machine:
#   CLBLAST=dist/extra/clblast_tuner_xgemm bash bench/gpu_vs_vendor.sh dist OUT
#   usage: bench/device_bundle.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}; OUT=${2:-dist}
rm -rf "$OUT"
deploy/bundle "$BUILD" "$OUT" --all --bin tunefleet_runtime_example >/dev/null
strip "$OUT"/bin/* 2>/dev/null || true
if command -v clblast_tuner_xgemm >/dev/null; then
  stage=$(mktemp -d)
  mkdir -p "$stage/bin"
  ln -s "$(command -v clblast_tuner_xgemm)" "$stage/bin/clblast_tuner_xgemm"
  deploy/bundle "$stage" "$OUT/extra" --bin clblast_tuner_xgemm >/dev/null
  rm -rf "$stage"
fi
du -sh "$OUT"

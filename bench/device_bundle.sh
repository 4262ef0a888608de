#!/usr/bin/env bash
# Packs what the GPU benchmarks need on a machine where nothing can be installed: the tracker, agent and tuner with
# their shared libraries (deploy/bundle --all, stripped) and, when installed here, CLBlast's GEMM tuner with its own
# libraries, into OUT_DIR (default dist). Then on the GPU machine:
#   CLBLAST=dist/extra/clblast_tuner_xgemm bash bench/gpu_vs_vendor.sh dist OUT
#   usage: bench/device_bundle.sh [BUILD_DIR] [OUT_DIR]
# BUILD_DIR and OUT_DIR are taken from the calling folder (defaults: the repository's build and dist). OUT_DIR must be
# new, empty or a bundle made before: deploy/bundle refuses any other folder, and nothing is deleted here first.
set -euo pipefail
usage="usage: bench/device_bundle.sh [BUILD_DIR] [OUT_DIR]"
for arg in "$@"; do
  case "$arg" in
    -h | --help) echo "$usage"; exit 0 ;;
    -*) echo "device_bundle.sh: error: unknown option '$arg' ($usage)" >&2; exit 2 ;;
  esac
done
if [ $# -gt 2 ]; then echo "device_bundle.sh: error: expected at most BUILD_DIR and OUT_DIR ($usage)" >&2; exit 2; fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}; OUT=${2:-$ROOT/dist}
"$ROOT/deploy/bundle" "$BUILD" "$OUT" --all --bin tunefleet_runtime_example >/dev/null
strip "$OUT"/bin/* 2>/dev/null || true
if command -v clblast_tuner_xgemm >/dev/null; then
  stage=$(mktemp -d)
  mkdir -p "$stage/bin"
  ln -s "$(command -v clblast_tuner_xgemm)" "$stage/bin/clblast_tuner_xgemm"
  "$ROOT/deploy/bundle" "$stage" "$OUT/extra" --bin clblast_tuner_xgemm >/dev/null
  rm -rf "$stage"
elif [ -f "$OUT/extra/MANIFEST" ]; then
  # An earlier bundle's CLBlast, which this host no longer has: not left to pass for this build's.
  rm -rf "$OUT/extra"
  echo "device_bundle.sh: removed $OUT/extra (CLBlast's tuner of an earlier bundle; this host has none)" >&2
fi
du -sh "$OUT"

#!/usr/bin/env bash
# Installs the Debian 12 packages tunefleet builds and runs with, when any is missing. Needs root (or sudo).
set -euo pipefail
PKGS=(cmake g++ ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev
  libxgboost-dev libsqlite3-dev sqlite3 ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libspdlog-dev libboost-dev libgtest-dev libonnx-dev libcli11-dev nlohmann-json3-dev prometheus-cpp-dev
  jq bc openssl python3
  clang)  # the tests compile float16 kernels with it (no device here has cl_khr_fp16)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

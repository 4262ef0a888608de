#!/usr/bin/env bash
# deploy/systemd_test.sh BUILD_DIR: checks deploy/systemd/tunefleet-tracker.service with deploy/tracker.conf.
#
# No systemd runs services on a build machine, so the test does what the unit says by hand: it reads tracker.conf
# as an EnvironmentFile, expands ExecStart the way systemd does (${VAR} one argument, $VAR split on blanks), points
# /opt/tunefleet at a fresh bundle, and starts that exact command line with the conf's variables in the
# environment. Given the shipped conf with HOST/PORTs moved to free loopback ports and a token set, we should get
# a tracker that answers `tunefleet query` with the token and refuses it without.
# `systemd-analyze verify` checks the unit's syntax when available.
# Exit: 0 pass; 1 a check failed; 77 skipped (tracker or tuner not built).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:?usage: systemd_test.sh BUILD_DIR}" && pwd)"
unit="${here}/systemd/tunefleet-tracker.service"
conf="${here}/tracker.conf"
work="$(mktemp -d "${TMPDIR:-/tmp}/systemd_test.XXXXXX")"
tracker_pid=""
failures=0
Cleanup() {
  if [[ -n "${tracker_pid}" ]]; then
    kill "${tracker_pid}" 2>/dev/null
    wait "${tracker_pid}" 2>/dev/null
  fi
  rm -rf "${work}"
}
trap Cleanup EXIT

Check() {
  local what="$1"
  shift
  if "$@"; then echo "PASS: ${what}"; else echo "FAIL: ${what}"; failures=$((failures + 1)); fi
}
Quiet() { "$@" >"${work}/last.out" 2>&1 || { sed 's/^/  | /' "${work}/last.out"; return 1; }; }
Fails() { ! "$@" >/dev/null 2>&1; }
FreePort() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/${p}") 2>/dev/null || { echo "${p}"; return 0; }
  done
  return 1
}

echo "== the unit and its EnvironmentFile =="
Check "the unit reads /etc/tunefleet/tracker.conf" grep -q '^EnvironmentFile=/etc/tunefleet/tracker.conf$' "${unit}"
for v in HOST PORT HTTP_PORT TUNEFLEET_TOKEN OPTIONS; do
  Check "tracker.conf defines ${v}" grep -q "^${v}=" "${conf}"
done

for b in tunefleet-tracker tunefleet; do
  if [[ ! -x "${build_dir}/bin/${b}" ]]; then
    echo "SKIP: starting the unit's command line: ${build_dir}/bin/${b} is not built"
    ((failures == 0)) || exit 1
    exit 77
  fi
done

bundle="${work}/opt/tunefleet"
Quiet "${here}/bundle" "${build_dir}" "${bundle}" --bin tunefleet-tracker --bin tunefleet || exit 1
if command -v systemd-analyze >/dev/null 2>&1; then
  sed "s|/opt/tunefleet|${bundle}|g; s|^EnvironmentFile=.*|EnvironmentFile=${conf}|" "${unit}" \
    >"${work}/tunefleet-tracker.service"
  Check "systemd-analyze verify accepts the unit" Quiet systemd-analyze verify "${work}/tunefleet-tracker.service"
else
  echo "SKIP: systemd-analyze not installed: the unit's syntax is not verified"
fi

# The environment systemd would give the daemon: the shipped conf, with ports moved and a token set.
port="$(FreePort)" http_port="$(FreePort)"
declare -A env=()
while IFS= read -r line; do
  [[ "${line}" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] && env[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"
done <"${conf}"
env[HOST]=127.0.0.1 env[PORT]="${port}" env[HTTP_PORT]="${http_port}" env[TUNEFLEET_TOKEN]=s3cret

# ExecStart expanded as systemd does.
exec_start="$(sed -n 's/^ExecStart=//p' "${unit}")"
exec_start="${exec_start//\/opt\/tunefleet/${bundle}}"
argv=()
read -r -a words <<<"${exec_start}"
for w in "${words[@]}"; do
  if [[ "${w}" =~ ^\$\{([A-Za-z_0-9]+)\}$ ]]; then argv+=("${env[${BASH_REMATCH[1]}]:-}")
  elif [[ "${w}" =~ ^\$([A-Za-z_0-9]+)$ ]]; then read -r -a split <<<"${env[${BASH_REMATCH[1]}]:-}"; argv+=("${split[@]}")
  else argv+=("${w}"); fi
done
echo "ExecStart expands to: ${argv[*]}"
env_args=()
for k in "${!env[@]}"; do env_args+=("${k}=${env[${k}]}"); done
env -i "${env_args[@]}" "${argv[@]}" >"${work}/tracker.log" 2>&1 &
tracker_pid=$!

tf="${bundle}/tunefleet"
for _ in $(seq 100); do
  env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --rpc-tracker "127.0.0.1:${port}" >/dev/null 2>&1 && break
  kill -0 "${tracker_pid}" 2>/dev/null || break
  sleep 0.2
done
Check "the tracker started from the unit's command line is running" kill -0 "${tracker_pid}"
Check "it answers tunefleet query with the conf's token" \
  Quiet env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --json --rpc-tracker "127.0.0.1:${port}"
Check "it refuses tunefleet query without the token" \
  Fails env -i "${tf}" query --rpc-tracker "127.0.0.1:${port}" --timeout 3
Check "the token is not on the daemon's command line" \
  Fails grep -q s3cret "/proc/${tracker_pid}/cmdline"
Check "the HTTP status port from the conf is listening" \
  bash -c "exec 3<>/dev/tcp/127.0.0.1/${http_port}"
if ((failures > 0)); then
  echo "tracker log:"
  sed 's/^/  | /' "${work}/tracker.log"
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"

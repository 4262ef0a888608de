#!/usr/bin/env bash
# deploy/systemd_test.sh BUILD_DIR: checks deploy/systemd/tunefleet-tracker.service with deploy/tracker.conf.
#
# No systemd runs services on a build machine, so the test does what the unit says by hand: it reads tracker.conf
# as an EnvironmentFile, expands ExecStart the way systemd does (${VAR} one argument, $VAR split on blanks), points
# /opt/tunefleet at a fresh bundle, and starts that exact command line with the conf's variables in the
# environment. Given the shipped conf with HOST/PORTs moved to free loopback ports and a token set, we should get
# a tracker that answers `tunefleet query` with the token and refuses it without; given an empty HTTP_OPTIONS, a
# tracker without a status page. Given the TLS drop-in (systemd/tls.conf) and a root-only key, run as another user
# (as DynamicUser= does; only when this test runs as root), the tracker should serve TLS from the credential copy
# of the key, where it could not read the key itself. `systemd-analyze verify` checks the unit's syntax (with the
# drop-in) when available.
# Exit: 0 pass; 1 a check failed; 77 skipped (tracker or tuner not built).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:?usage: systemd_test.sh BUILD_DIR}" && pwd)"
unit="${here}/systemd/tunefleet-tracker.service"
tls_dropin="${here}/systemd/tls.conf"
conf="${here}/tracker.conf"
work="$(mktemp -d "${TMPDIR:-/tmp}/systemd_test.XXXXXX")"
tracker_pid=""
all_pids=""
failures=0
Cleanup() {
  local p
  for p in ${all_pids}; do
    kill "${p}" 2>/dev/null
    wait "${p}" 2>/dev/null
  done
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
FreePort() {  # prints a TCP port nobody listens on, from $DEPLOY_TEST_PORTS (LOW-HIGH; default 20000-49999)
  local p lo=20000 hi=49999
  [[ "${DEPLOY_TEST_PORTS:-}" =~ ^([0-9]+)-([0-9]+)$ ]] && lo="${BASH_REMATCH[1]}" hi="${BASH_REMATCH[2]}"
  for _ in $(seq 50); do
    p=$((lo + RANDOM % (hi - lo + 1)))
    (exec 3<>"/dev/tcp/127.0.0.1/${p}") 2>/dev/null || { echo "${p}"; return 0; }
  done
  return 1
}

echo "== the unit and its EnvironmentFile =="
Check "the unit reads /etc/tunefleet/tracker.conf" grep -q '^EnvironmentFile=/etc/tunefleet/tracker.conf$' "${unit}"
for v in HOST PORT HTTP_OPTIONS TUNEFLEET_TOKEN OPTIONS; do
  Check "tracker.conf defines ${v}" grep -q "^${v}=" "${conf}"
done
Check "tracker.conf leaves TLS_OPTIONS to the drop-in (a value there would override it)" \
  Fails grep -q "^TLS_OPTIONS=" "${conf}"
Check "a bad configuration (exit 2) does not restart the unit in a loop" \
  grep -q '^RestartPreventExitStatus=2$' "${unit}"
Check "the TLS drop-in hands the key to the daemon as a credential" \
  grep -q '^LoadCredential=tracker.key:/etc/tunefleet/tracker.key$' "${tls_dropin}"
Check "... and the certificate" grep -q '^LoadCredential=tracker.crt:/etc/tunefleet/tracker.crt$' "${tls_dropin}"
Check "... and names their credential copies in TLS_OPTIONS" \
  grep -q '^Environment="TLS_OPTIONS=--tls-cert %d/tracker.crt --tls-key %d/tracker.key"$' "${tls_dropin}"

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
  mkdir -p "${work}/units/tunefleet-tracker.service.d"
  sed "s|/opt/tunefleet|${bundle}|g; s|^EnvironmentFile=.*|EnvironmentFile=${conf}|" "${unit}" \
    >"${work}/units/tunefleet-tracker.service"
  Check "systemd-analyze verify accepts the unit" Quiet systemd-analyze verify "${work}/units/tunefleet-tracker.service"
  cp "${tls_dropin}" "${work}/units/tunefleet-tracker.service.d/tls.conf"
  Check "systemd-analyze verify accepts the unit with the TLS drop-in" \
    Quiet systemd-analyze verify "${work}/units/tunefleet-tracker.service"
else
  echo "SKIP: systemd-analyze not installed: the unit's syntax is not verified"
fi

# The environment systemd would give the daemon: the shipped conf, with ports moved and a token set.
port="$(FreePort)" http_port="$(FreePort)"
declare -A conf_env=()
while IFS= read -r line; do
  [[ "${line}" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] && conf_env[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"
done <"${conf}"
declare -A env=()
ResetEnv() {  # env = the conf's variables
  local k
  env=()
  for k in "${!conf_env[@]}"; do env[${k}]="${conf_env[${k}]}"; done
}
# StartUnit LOG [RUNNER...]: starts ExecStart expanded as systemd does (${VAR} one argument, $VAR split on blanks,
# nothing when empty) with env[] as the environment, under RUNNER (e.g. setpriv) when given; pid in tracker_pid.
StartUnit() {
  local log="$1" w k
  shift
  local exec_start argv=() words=() split=() env_args=()
  exec_start="$(sed -n 's/^ExecStart=//p' "${unit}")"
  exec_start="${exec_start//\/opt\/tunefleet/${bundle}}"
  read -r -a words <<<"${exec_start}"
  for w in "${words[@]}"; do
    if [[ "${w}" =~ ^\$\{([A-Za-z_0-9]+)\}$ ]]; then argv+=("${env[${BASH_REMATCH[1]}]:-}")
    elif [[ "${w}" =~ ^\$([A-Za-z_0-9]+)$ ]]; then
      read -r -a split <<<"${env[${BASH_REMATCH[1]}]:-}"
      argv+=("${split[@]}")
    else argv+=("${w}"); fi
  done
  echo "ExecStart expands to: ${argv[*]}"
  for k in "${!env[@]}"; do env_args+=("${k}=${env[${k}]}"); done
  "$@" env -i "${env_args[@]}" "${argv[@]}" >"${log}" 2>&1 &
  tracker_pid=$!
  all_pids+=" ${tracker_pid}"
}
WaitAnswers() {  # WaitAnswers PORT [query options]: until the tracker answers or exits
  local p="$1"
  shift
  for _ in $(seq 100); do
    env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --rpc-tracker "127.0.0.1:${p}" "$@" >/dev/null 2>&1 && return 0
    kill -0 "${tracker_pid}" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
Running() { kill -0 "$1" 2>/dev/null || { echo "  exited:"; sed 's/^/  | /' "$2"; return 1; }; }
tf="${bundle}/tunefleet"

ResetEnv
env[HOST]=127.0.0.1 env[PORT]="${port}" env[TUNEFLEET_TOKEN]=s3cret
env[HTTP_OPTIONS]="${conf_env[HTTP_OPTIONS]:-}"
env[HTTP_OPTIONS]="${env[HTTP_OPTIONS]//9191/${http_port}}"
StartUnit "${work}/tracker.log"
main_pid="${tracker_pid}"
WaitAnswers "${port}"
Check "the tracker started from the unit's command line is running" Running "${main_pid}" "${work}/tracker.log"
Check "it answers tunefleet query with the conf's token" \
  Quiet env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --json --rpc-tracker "127.0.0.1:${port}"
Check "it refuses tunefleet query without the token" \
  Fails env -i "${tf}" query --rpc-tracker "127.0.0.1:${port}" --timeout 3
Check "the token is not on the daemon's command line" \
  Fails grep -q s3cret "/proc/${main_pid}/cmdline"
Check "the HTTP status port from the conf is listening" \
  bash -c "exec 3<>/dev/tcp/127.0.0.1/${http_port}"

# The status page is optional: an empty HTTP_OPTIONS starts a tracker without one.
port2="$(FreePort)"
env[PORT]="${port2}" env[HTTP_OPTIONS]=""
StartUnit "${work}/tracker-nohttp.log"
nohttp_pid="${tracker_pid}"
WaitAnswers "${port2}"
Check "with an empty HTTP_OPTIONS the tracker starts (no status page)" Running "${nohttp_pid}" "${work}/tracker-nohttp.log"
Check "... and answers tunefleet query" \
  Quiet env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --json --rpc-tracker "127.0.0.1:${port2}"
Check "... with no --http-port on its command line" Fails grep -q -a -- --http-port "/proc/${nohttp_pid}/cmdline"

# A bad configuration exits 2, the status RestartPreventExitStatus= names.
env[OPTIONS]="--no-such-option"
StartUnit "${work}/tracker-bad.log"
wait "${tracker_pid}"
bad_rc=$?
Check "a bad option in OPTIONS makes the tracker exit 2 (got ${bad_rc})" test "${bad_rc}" = 2

# TLS as the unit with the drop-in runs it: a transient user, the key root-only, its credential copy readable.
if [[ "$(id -u)" != 0 ]] || ! command -v openssl >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1; then
  echo "SKIP: TLS through LoadCredential= (needs root, openssl and setpriv to run the tracker as another user)"
else
  svc_uid=65534
  chmod 0755 "${work}"
  mkdir -p "${work}/etc" "${work}/credentials/tunefleet-tracker.service"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "${work}/etc/tracker.key" -out "${work}/etc/tracker.crt" >/dev/null 2>&1
  chmod 0600 "${work}/etc/tracker.key"
  chmod 0644 "${work}/etc/tracker.crt"
  # What LoadCredential= does: a copy in the unit's credentials folder, owned by the unit's user, read-only.
  creds="${work}/credentials/tunefleet-tracker.service"
  for id in $(sed -n 's/^LoadCredential=\([^:]*\):.*/\1/p' "${tls_dropin}"); do
    src="$(sed -n "s|^LoadCredential=${id}:||p" "${tls_dropin}")"
    cp "${work}/etc/${src##*/}" "${creds}/${id}"
  done
  chown -R "${svc_uid}" "${creds}"
  chmod 0500 "${creds}"
  chmod 0400 "${creds}"/*
  tls_value="$(sed -n 's/^Environment="TLS_OPTIONS=\(.*\)"$/\1/p' "${tls_dropin}")"
  # exec: StartUnit runs it in the background subshell whose pid it keeps (and Cleanup kills).
  AsService() { exec setpriv --reuid="${svc_uid}" --regid="${svc_uid}" --clear-groups "$@"; }
  port3="$(FreePort)"
  ResetEnv
  env[HOST]=127.0.0.1 env[PORT]="${port3}" env[TUNEFLEET_TOKEN]=s3cret env[HTTP_OPTIONS]=""
  env[OPTIONS]="--tls-cert ${work}/etc/tracker.crt --tls-key ${work}/etc/tracker.key"
  StartUnit "${work}/tracker-tls-direct.log" AsService
  wait "${tracker_pid}"
  direct_rc=$?
  Check "as the unit's user, a tracker given the root-only key itself fails (the old conf's TLS example) with exit 2, \
which the unit does not restart (got ${direct_rc})" \
    test "${direct_rc}" = 2
  Check "... saying it cannot read the key" grep -q "tracker.key" "${work}/tracker-tls-direct.log"
  port4="$(FreePort)"
  env[PORT]="${port4}" env[OPTIONS]="" env[TLS_OPTIONS]="${tls_value//%d/${creds}}"
  StartUnit "${work}/tracker-tls.log" AsService
  tls_pid="${tracker_pid}"
  WaitAnswers "${port4}" --tls-ca "${work}/etc/tracker.crt"
  Check "with the drop-in's credentials the tracker runs as the unit's user" Running "${tls_pid}" "${work}/tracker-tls.log"
  Check "... and answers tunefleet query over TLS" \
    Quiet env -i TUNEFLEET_TOKEN=s3cret "${tf}" query --json --rpc-tracker "127.0.0.1:${port4}" \
    --tls-ca "${work}/etc/tracker.crt"
fi
if ((failures > 0)); then
  echo "tracker log:"
  sed 's/^/  | /' "${work}/tracker.log"
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"

#!/usr/bin/env bash
# deploy/fleet_test.sh BUILD_DIR: checks deploy/fleet against a stand-in adb (deploy/testing/adb).
#
# A phone is the one thing this machine does not have: the stand-in adb plays two attached devices, each a
# folder with its own /data/local/tmp, whose `adb shell` commands run on this host (same loopback, so
# `adb reverse tcp:P tcp:P` is an identity). Everything else is real: the bundle, the agent (on PoCL), the
# tracker on 127.0.0.1 and the tuner CLI's `tunefleet query --json`.
#
# Part 1 (always): usage, errors, and status/logs/down of devices where nothing runs.
# Part 2 (when tunefleet-agent, tunefleet-tracker and tunefleet are built in BUILD_DIR/bin): given a tracker on
#   loopback and two devices, `fleet up` should start both agents and wait until the tracker lists them,
#   `fleet status` should show them running and registered, a second `up` should leave them alone, `fleet logs`
#   should show their logs, and `fleet down` should stop them.
# Exit: 0 pass; 1 a check failed; 77 part 2 skipped because a binary is not built (part 1 passed).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:?usage: fleet_test.sh BUILD_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fleet_test.XXXXXX")"
fleet="${here}/fleet"
tracker_pid=""
export ADB="${here}/testing/adb"
export FAKE_ADB_ROOT="${work}/devices"
export FAKE_ADB_DEVICES="fake-0 fake-1"
failures=0

Cleanup() {
  "${fleet}" down >/dev/null 2>&1 || true
  if [[ -n "${tracker_pid}" ]]; then
    kill "${tracker_pid}" 2>/dev/null
    wait "${tracker_pid}" 2>/dev/null
  fi
  rm -rf "${work}"
}
trap Cleanup EXIT

Indent() { sed 's/^/  | /'; }
Check() {  # Check "what" command...: runs the command, prints PASS/FAIL with what was checked.
  local what="$1"
  shift
  if "$@"; then echo "PASS: ${what}"; else echo "FAIL: ${what}"; failures=$((failures + 1)); fi
}
ExitsWith() {  # ExitsWith CODE command...
  local want="$1" got
  shift
  "$@" >"${work}/last.out" 2>&1
  got=$?
  [[ "${got}" == "${want}" ]] || { echo "  exit ${got}, wanted ${want}:"; sed 's/^/  | /' "${work}/last.out"; return 1; }
}
OutputMatches() {  # OutputMatches REGEX command...: the command succeeds and its output matches REGEX
  local re="$1" out
  shift
  out="$("$@" 2>&1)" || { echo "  exit $?:"; Indent <<<"${out}"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output does not match /${re}/:"; Indent <<<"${out}"; return 1; }
}
Fails() { ! "$@" >/dev/null 2>&1; }
FailsSaying() {  # FailsSaying REGEX command...: the command exits 1 and its output matches REGEX
  local re="$1" out
  shift
  out="$("$@" 2>&1)" && { echo "  succeeded, wanted a failure"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output does not match /${re}/:"; Indent <<<"${out}"; return 1; }
}
Gone() {  # Gone PID: no such process, or a zombie nobody reaped (containers whose init does not reap)
  ! kill -0 "$1" 2>/dev/null || [[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" == Z ]]
}
StatusRow() {  # StatusRow SERIAL REGEX: the status line of SERIAL matches REGEX
  local row
  row="$(grep "^$1 " "${work}/status.out")" || { echo "  no status row for $1"; return 1; }
  [[ "${row}" =~ $2 ]] || { echo "  status row '${row}' does not match /$2/"; return 1; }
}
FreePort() {  # prints a TCP port nobody listens on
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/${p}") 2>/dev/null || { echo "${p}"; return 0; }
  done
  return 1
}

echo "== part 1: fleet's plumbing against two stand-in devices, nothing running =="
Check "--help explains the commands" OutputMatches "up .*down .*status .*logs" "${fleet}" --help
Check "no command is a usage error (exit 2)" ExitsWith 2 "${fleet}"
Check "an unknown command is a usage error (exit 2)" ExitsWith 2 "${fleet}" launch
Check "up without --key is a usage error (exit 2)" ExitsWith 2 "${fleet}" up
Check "a bad port is a usage error (exit 2)" ExitsWith 2 "${fleet}" status --tracker-port nine
Check "a device that is not attached fails with exit 1" ExitsWith 1 "${fleet}" status -d no-such-phone
Check "up with a folder that is not a bundle fails with exit 1" \
  ExitsWith 1 "${fleet}" up --key k --bundle "${work}/nothing" --wait 0
Check "status lists both devices, nothing installed" \
  OutputMatches "fake-0 +not installed.*fake-1 +not installed" "${fleet}" status --tracker-port "$(FreePort)"
Check "down where nothing was installed succeeds and says so" OutputMatches "fake-1: not installed" "${fleet}" down
Check "logs before any up fails" ExitsWith 1 "${fleet}" logs
Check "with no device attached, fleet fails and says so" \
  FailsSaying "no device attached" env FAKE_ADB_DEVICES="" "${fleet}" status

missing=""
for b in tunefleet-agent tunefleet-tracker tunefleet; do
  [[ -x "${build_dir}/bin/${b}" ]] || missing+=" ${b}"
done
if [[ -n "${missing}" ]]; then
  echo "SKIP: part 2 (real agents on stand-in devices, real tracker): not built in ${build_dir}/bin:${missing}"
  ((failures == 0)) || exit 1
  exit 77
fi

echo "== part 2: real agents on the stand-in devices, real tracker on 127.0.0.1 =="
port="$(FreePort)" || { echo "FAIL: no free port"; exit 1; }
"${here}/bundle" "${build_dir}" "${work}/bundle" --all >/dev/null || { echo "FAIL: deploy/bundle"; exit 1; }
env -u TUNEFLEET_TOKEN "${work}/bundle/tunefleet-tracker" --host 127.0.0.1 --port "${port}" >"${work}/tracker.log" 2>&1 &
tracker_pid=$!
export TUNEFLEET="${work}/bundle/tunefleet"
for _ in $(seq 100); do
  "${TUNEFLEET}" query --json --rpc-tracker "127.0.0.1:${port}" >/dev/null 2>&1 && break
  kill -0 "${tracker_pid}" 2>/dev/null || break
  sleep 0.2
done
Check "the tracker answers tunefleet query --json" \
  ExitsWith 0 "${TUNEFLEET}" query --json --rpc-tracker "127.0.0.1:${port}"

Check "up starts both agents and waits until the tracker lists them" \
  OutputMatches "all 2 device\(s\) registered" \
  "${fleet}" up --key fleet-test --tracker-port "${port}" --bundle "${work}/bundle" --wait 60
Check "the bundle and agentctl were pushed to each device's /data/local/tmp/tunefleet" \
  test -x "${FAKE_ADB_ROOT}/fake-1/data/local/tmp/tunefleet/bin/tunefleet-agent" -a \
       -f "${FAKE_ADB_ROOT}/fake-0/data/local/tmp/tunefleet/agentctl"
Check "adb reverse was set for the tracker port" \
  OutputMatches "tcp:${port} tcp:${port}" "${ADB}" -s fake-0 reverse --list
"${fleet}" status --tracker-port "${port}" >"${work}/status.out" 2>&1
sed 's/^/  | /' "${work}/status.out"
Check "status shows fake-0 running and registered" StatusRow fake-0 "running [0-9]+ +yes"
Check "status shows fake-1 running and registered" StatusRow fake-1 "running [0-9]+ +yes"
Check "the tracker lists two agents under the key" \
  OutputMatches "^2$" sh -c "'${TUNEFLEET}' query --json --rpc-tracker 127.0.0.1:${port} |
    jq '[.agents[] | select(.key == \"fleet-test\")] | length'"
pid0="$(cat "${FAKE_ADB_ROOT}/fake-0/data/local/tmp/tunefleet/agent.pid")"
Check "a second up leaves the running agents alone" \
  OutputMatches "fake-0: already running ${pid0}" \
  "${fleet}" up --key fleet-test --tracker-port "${port}" --bundle "${work}/bundle" --wait 10
Check "logs shows each device's agent log" \
  OutputMatches "==> fake-0.*agentctl start.*==> fake-1.*agentctl start" "${fleet}" logs -n 20
Check "down stops both agents" OutputMatches "fake-0: (stopped|killed).*fake-1: (stopped|killed)" "${fleet}" down
Check "the agent process is gone" Gone "${pid0}"
Check "status shows both stopped after down" \
  OutputMatches "fake-0 +stopped.*fake-1 +stopped" "${fleet}" status --tracker-port "${port}"

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"

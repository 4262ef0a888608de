#!/usr/bin/env bash
# deploy/fleet_test.sh BUILD_DIR: checks deploy/fleet against a stand-in adb (deploy/testing/adb).
#
# A phone is the one thing this machine does not have: the stand-in adb plays two attached devices, each a
# folder with its own /data/local/tmp, whose `adb shell` commands run on this host (same loopback, so
# `adb reverse tcp:P tcp:P` is an identity). Everything else is real: the bundle, the agent (on PoCL), the
# tracker on 127.0.0.1 and the tuner CLI's `tunefleet query --json`.
#
# Needs tunefleet-agent, tunefleet-tracker and tunefleet built in BUILD_DIR/bin (exit 77 when one is not).
# Part 1: usage, errors, and status/logs/down of devices where nothing runs (the real tuner CLI's query fails: no
#   tracker listens).
# Part 2: given a tracker on loopback and two devices, `fleet up` should start both agents and wait until the tracker
#   lists them, `fleet status` should show them running and registered, a second `up` should leave them alone,
#   `fleet logs` should show their logs, and `fleet down` should stop them.
#   With a token, no command line holds it (adb's on this host, agentctl's and the agent's on the device): the agent
#   gets it as $TUNEFLEET_TOKEN.
# Part 3: agentctl alone, on a folder holding a real bundle: start, status, same, stop, and stale pid files; the
#   token on stdin; an agent that exits at once is reported with this start's last lines only.
# Exit: 0 pass; 1 a check failed; 77 a binary is not built.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:?usage: fleet_test.sh BUILD_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fleet_test.XXXXXX")"
fleet="${here}/fleet"
tracker_pid=""
extra_pids=""  # processes the test started besides the tracker (agents started by agentctl, stale-pid stand-ins)
export ADB="${here}/testing/adb"
export FAKE_ADB_ROOT="${work}/devices"
export FAKE_ADB_DEVICES="fake-0 fake-1"
failures=0

Cleanup() {
  "${fleet}" down >/dev/null 2>&1 || true
  local p
  for p in ${extra_pids}; do kill "${p}" 2>/dev/null; done
  # Stand-in agents an agentctl lost track of (they run in a folder under ${work}).
  for p in /proc/[0-9]*; do
    [[ "$(readlink "${p}/cwd" 2>/dev/null)" != "${work}/"* ]] || kill "${p#/proc/}" 2>/dev/null
  done
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
OneLineExit() {  # OneLineExit CODE REGEX command...: exits CODE, printing one line (stdout and stderr) matching REGEX
  local want="$1" re="$2" out got
  shift 2
  out="$("$@" 2>&1)"
  got=$?
  [[ "${got}" == "${want}" ]] || { echo "  exit ${got}, wanted ${want}:"; Indent <<<"${out}"; return 1; }
  [[ "${out}" != *$'\n'* ]] || { echo "  more than one line:"; Indent <<<"${out}"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output does not match /${re}/:"; Indent <<<"${out}"; return 1; }
}
HasEntry() {  # HasEntry FILE ENTRY: FILE (a /proc/PID/cmdline or environ) holds ENTRY as one of its NUL-ended items
  local item
  while IFS= read -r -d '' item; do [[ "${item}" != "$2" ]] || return 0; done <"$1"
  echo "  no '$2' in $1"
  return 1
}
NeverSays() {  # NeverSays TEXT command...: the command's output (stdout and stderr) does not hold TEXT
  local text="$1" out
  shift
  out="$("$@" 2>&1)"
  [[ "${out}" != *"${text}"* ]] || { echo "  output holds '${text}':"; Indent <<<"${out}"; return 1; }
}
FailsSaying() {  # FailsSaying REGEX command...: the command exits 1 and its output matches REGEX
  local re="$1" out
  shift
  out="$("$@" 2>&1)" && { echo "  succeeded, wanted a failure"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output does not match /${re}/:"; Indent <<<"${out}"; return 1; }
}
Gone() {  # Gone PID: no such process, or a zombie nobody reaped (containers whose init does not reap)
  ! kill -0 "$1" 2>/dev/null || [[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" == Z ]]
}
# shellcheck disable=SC2069  # the order is meant: stderr to the captured stdout, then stdout dropped
StderrOnly() { "$@" 2>&1 >/dev/null; }  # StderrOnly command...: its stderr on stdout, its stdout dropped
StatusRow() {  # StatusRow SERIAL REGEX: the status line of SERIAL matches REGEX
  local row
  row="$(grep "^$1 " "${work}/status.out")" || { echo "  no status row for $1"; return 1; }
  [[ "${row}" =~ $2 ]] || { echo "  status row '${row}' does not match /$2/"; return 1; }
}
FreePort() {  # prints a TCP port nobody listens on, from $DEPLOY_TEST_PORTS (LOW-HIGH; default 20000-49999)
  local p lo=20000 hi=49999
  [[ "${DEPLOY_TEST_PORTS:-}" =~ ^([0-9]+)-([0-9]+)$ ]] && lo="${BASH_REMATCH[1]}" hi="${BASH_REMATCH[2]}"
  for _ in $(seq 50); do
    p=$((lo + RANDOM % (hi - lo + 1)))
    (exec 3<>"/dev/tcp/127.0.0.1/${p}") 2>/dev/null || { echo "${p}"; return 0; }
  done
  return 1
}

missing=""
for b in tunefleet-agent tunefleet-tracker tunefleet; do
  [[ -x "${build_dir}/bin/${b}" ]] || missing+=" ${b}"
done
if [[ -n "${missing}" ]]; then
  echo "SKIP: not built in ${build_dir}/bin:${missing}"
  exit 77
fi

echo "== part 1: fleet's plumbing against two stand-in devices, nothing running =="
# The real tuner CLI: no tracker listens, so its query fails, saying why on stderr (fleet must show that line).
export TUNEFLEET="${build_dir}/bin/tunefleet"
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

# Options: an empty -d (an unset "$SERIAL") must not mean every phone; an option given twice is refused.
Check "down -d '' is a usage error (exit 2, one line)" OneLineExit 2 "error: -d needs a SERIAL" "${fleet}" down -d ""
Check "up -d '' too" OneLineExit 2 "error: -d needs a SERIAL" "${fleet}" up -d "" --key k --wait 0
Check "status --device= too" OneLineExit 2 "error: -d needs a SERIAL" "${fleet}" status --device=
Check "-d twice is refused (exit 2, one line)" \
  OneLineExit 2 "error: -d is given 2 times" "${fleet}" status -d fake-0 -d fake-1
for twice in "--key a --key b" "--tracker-port 9190 --tracker-port 9191" "--bundle a --bundle b" \
  "--wait 1 --wait 2" "--tracker 127.0.0.1:1 --tracker 127.0.0.1:2" "-n 1 --lines 2" \
  "-d fake-0 --device fake-0 -d fake-1"; do
  read -r -a twice_args <<<"${twice}"
  Check "${twice}: refused, saying how often (exit 2, one line)" \
    OneLineExit 2 "error: (${twice_args[0]}|-d|-n) is given $((${#twice_args[@]} / 2)) times" \
    "${fleet}" up "${twice_args[@]}"
done
Check "--bundle=a --bundle b too" OneLineExit 2 "error: --bundle is given 2 times" "${fleet}" up --bundle=a --bundle b
Check "--token twice is refused without printing either" \
  NeverSays s3cr3t-v4l "${fleet}" status --token s3cr3t-v4l --token=s3cr3t-v4l2
Check "... (exit 2)" ExitsWith 2 "${fleet}" status --token s3cr3t-v4l --token=s3cr3t-v4l2
Check "--token '' is refused (exit 2, one line), not taken for no token" \
  OneLineExit 2 "error: --token needs a value" "${fleet}" status --token ""
Check "--token= too" OneLineExit 2 "error: --token needs a value" "${fleet}" status --token=
Check "--token=VALUE is taken (status runs)" \
  ExitsWith 0 "${fleet}" status --token=s3cr3t-v4l --tracker-port "$(FreePort)"
Check "... and the value never printed" \
  NeverSays s3cr3t-v4l "${fleet}" status --token=s3cr3t-v4l --tracker-port "$(FreePort)"
Check "an unknown --option=VALUE is refused without printing the value" \
  NeverSays s3cr3t-v4l "${fleet}" status --tokne=s3cr3t-v4l
Check "... (exit 2, one line, naming the option)" \
  OneLineExit 2 "unknown option --tokne \(" "${fleet}" status --tokne=s3cr3t-v4l
Check "a stray argument is refused without printing it" NeverSays s3cr3t-v4l "${fleet}" status s3cr3t-v4l
Check "... (exit 2, one line)" OneLineExit 2 "unexpected argument #1 after status" "${fleet}" status s3cr3t-v4l
# Numbers: decimal without leading zeros, within bounds (045 dialed port 45, --wait 08 was a bash error).
for bad in "--tracker-port 045" "--tracker-port 0" "--tracker-port 65536" "--tracker-port nine" "--wait 08" \
  "--wait 010" "--wait 86401" "--wait -1" "-n 99999999999999999999" "-n 0" "--lines 1e3"; do
  read -r -a bad_args <<<"${bad}"
  Check "${bad} is a usage error (exit 2, one line)" \
    OneLineExit 2 "error: ${bad_args[0]/-n/--lines} .*: not a whole number from [0-9]+ to [0-9]+" \
    "${fleet}" logs "${bad_args[@]}"
done
Check "--tracker-port 65535 and --wait 0 are fine" \
  ExitsWith 0 "${fleet}" status --tracker-port 65535 --wait 0
# Values that reach the phone's shell and agent.args: no control characters (a $'...' quote changed them there).
Check "a key with a tab is refused (exit 2, one line)" \
  OneLineExit 2 "error: --key holds a control character" "${fleet}" up --key $'k\tx' --wait 0
Check "an agent argument with a newline is refused (exit 2, one line)" \
  OneLineExit 2 "error: agent argument 2 \(after --\) holds a control character" \
  "${fleet}" up --key k --wait 0 -- --device-lock $'a\nb'
Check "a token with an escape is refused (exit 2, one line), without printing it" \
  OneLineExit 2 "error: the token holds a control character" \
  env TUNEFLEET_TOKEN=$'s3cr3t-v4l\e[0m' "${fleet}" up --key k --wait 0

# Token: one place (fleet --token or $TUNEFLEET_TOKEN), for the agents and the query.
Check "--help no longer suggests the token after --" Fails OutputMatches "-- --token" "${fleet}" --help
Check "--token among the agent arguments is refused (exit 2), naming fleet's --token" \
  ExitsWith 2 "${fleet}" up --key k --bundle "${work}/nothing" --wait 0 -- --platform 0 --token T
Check "... saying to use fleet's --token or TUNEFLEET_TOKEN" \
  FailsSaying "--token after --.*fleet's --token.*TUNEFLEET_TOKEN" \
  "${fleet}" up --key k --bundle "${work}/nothing" --wait 0 -- --token=T
Check "--tls-ca among the agent arguments is refused (exit 2), naming fleet's --tls-ca" \
  OneLineExit 2 "--tls-ca after --: give fleet --tls-ca FILE" \
  "${fleet}" up --key k --bundle "${work}/nothing" --wait 0 -- --tls-ca ca.pem
Check "a --tls-ca that names no readable file is refused (exit 2)" \
  ExitsWith 2 "${fleet}" up --key k --bundle "${work}/nothing" --wait 0 --tls-ca "${work}/no-such-ca.pem"
Check "a missing tuner CLI is said up front (exit 1)" \
  FailsSaying "tuner CLI .*no-such-tunefleet not found" env TUNEFLEET="${work}/no-such-tunefleet" "${fleet}" status
Check "status shows the first line of the failed query's error" \
  OutputMatches "did not answer .*: tunefleet query: error: cannot reach tracker at 127\.0\.0\.1:[0-9]+" \
  "${fleet}" status --tracker-port "$(FreePort)"
# adb failing for one device: an error row and exit 1, not "stopped".
cat >"${work}/flaky-adb" <<FLAKY
#!/usr/bin/env bash
if [[ "\$*" == *"-s fake-1 shell"* ]]; then echo "error: device offline" >&2; exit 1; fi
exec "${ADB}" "\$@"
FLAKY
chmod +x "${work}/flaky-adb"
"${fleet}" status >/dev/null 2>&1  # creates nothing; the stand-in devices exist from here on
Check "status fails (exit 1) when adb fails for a device" \
  ExitsWith 1 env ADB="${work}/flaky-adb" "${fleet}" status --tracker-port "$(FreePort)"
Check "... with an error row and adb's message, not 'stopped'" \
  FailsSaying "fake-1: error: error: device offline.*fake-1 +error" \
  env ADB="${work}/flaky-adb" "${fleet}" status --tracker-port "$(FreePort)"

echo "== part 2: real agents on the stand-in devices, real tracker on 127.0.0.1 =="
port="$(FreePort)" || { echo "FAIL: no free port"; exit 1; }
"${here}/bundle" "${build_dir}" "${work}/bundle" --all >/dev/null || { echo "FAIL: deploy/bundle"; exit 1; }
env -u TUNEFLEET_TOKEN "${work}/bundle/tunefleet-tracker" --host 127.0.0.1 --port "${port}" >"${work}/tracker.log" 2>&1 &
tracker_pid=$!
export TUNEFLEET="${work}/bundle/tunefleet"
Fleet() { "${fleet}" "$1" --tracker-port "${port}" --bundle "${work}/bundle" "${@:2}"; }  # with this test's tracker
AgentPidOf() { cat "${FAKE_ADB_ROOT}/$1/data/local/tmp/tunefleet/agent.pid" 2>/dev/null; }
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

# A second up with other arguments restarts the agent, and says so; with the same ones it keeps it.
Check "up with another key restarts the running agents, saying the key differs" \
  OutputMatches "fake-0: restarting the agent \(running ${pid0}\): key .*all 2 device\(s\) registered" \
  Fleet up --key fleet-test2 --wait 60
pid1="$(AgentPidOf fake-0)"
Check "... the agent was replaced" test "${pid1}" != "${pid0}"
Check "... the old one is gone" Gone "${pid0}"
# The token is on no command line: an adb stand-in that logs every command line fleet gives adb (the one the
# device's shell runs included), and the agent's /proc/PID/cmdline.
cat >"${work}/logging-adb" <<LOGGING
#!/usr/bin/env bash
printf '%s\n' "\$*" >>"${work}/adb-argv.log"
exec "${ADB}" "\$@"
LOGGING
chmod +x "${work}/logging-adb"
Check "up with a token restarts it, saying the token differs" \
  OutputMatches "fake-0: restarting the agent .*token" \
  env ADB="${work}/logging-adb" "${fleet}" up -d fake-0 --key fleet-test2 --tracker-port "${port}" \
  --bundle "${work}/bundle" --token t0k3n-x --wait 0
Check "... agent.args holds no token in clear" \
  Fails grep -q t0k3n-x "${FAKE_ADB_ROOT}/fake-0/data/local/tmp/tunefleet/agent.args"
Check "... no adb command line held it" \
  Fails grep -q t0k3n-x "${work}/adb-argv.log"
Check "... agentctl read it from adb shell's stdin" grep -q -e "agentctl start --token-stdin" "${work}/adb-argv.log"
Check "... the agent's command line holds neither the token nor --token" \
  Fails grep -a -q -e t0k3n-x -e --token "/proc/$(AgentPidOf fake-0)/cmdline"
Check "... the agent has it in its environment as TUNEFLEET_TOKEN" \
  HasEntry "/proc/$(AgentPidOf fake-0)/environ" TUNEFLEET_TOKEN=t0k3n-x
Check "TUNEFLEET_TOKEN and the same arguments: the agent is kept" \
  OutputMatches "fake-0: already running" env TUNEFLEET_TOKEN=t0k3n-x "${fleet}" up -d fake-0 --key fleet-test2 \
  --tracker-port "${port}" --bundle "${work}/bundle" --wait 0
Check "up with another token restarts it, saying the token differs" \
  OutputMatches "fake-0: restarting the agent .*: token differ" \
  Fleet up -d fake-0 --key fleet-test2 --token t0k3n-y --wait 0
Check "up without a token restarts it, saying the token differs" \
  OutputMatches "fake-0: restarting the agent .*: token differ" Fleet up -d fake-0 --key fleet-test2 --wait 0
Check "... and the agent has no TUNEFLEET_TOKEN" \
  Fails grep -a -q TUNEFLEET_TOKEN "/proc/$(AgentPidOf fake-0)/environ"
Check "up with other agent arguments restarts it, saying so" \
  OutputMatches "fake-0: restarting the agent .*arguments" \
  Fleet up -d fake-0 --key fleet-test2 --wait 0 -- --job-timeout 77
# Quoted for the device's POSIX sh: quotes, blanks, $, \ and * reach the agent unchanged.
odd="${work}/it's a \$lock \\*\"x\""
Check "an agent argument with quotes, blanks, \$ and \\ restarts it" \
  OutputMatches "fake-0: restarting the agent .*arguments" \
  Fleet up -d fake-0 --key fleet-test2 --wait 0 -- --job-timeout 77 --device-lock "${odd}"
Check "... and reaches the agent unchanged" HasEntry "/proc/$(AgentPidOf fake-0)/cmdline" "${odd}"
Check "... an up with the same arguments keeps it" \
  OutputMatches "fake-0: already running" \
  Fleet up -d fake-0 --key fleet-test2 --wait 0 -- --job-timeout 77 --device-lock "${odd}"
Check "up with --job-timeout 77 alone restarts it again" \
  OutputMatches "fake-0: restarting the agent .*arguments" \
  Fleet up -d fake-0 --key fleet-test2 --wait 0 -- --job-timeout 77
# An old adb runs the shell command on a pty, which echoes its stdin (the token) back: a stand-in that does so.
cat >"${work}/echoing-adb" <<ECHOING
#!/usr/bin/env bash
if [[ "\$*" == *--token-stdin* ]]; then
  IFS= read -r line
  printf '%s\r\n' "\$line"
  printf '%s\n' "\$line" | exec "${ADB}" "\$@"
fi
exec "${ADB}" "\$@"
ECHOING
chmod +x "${work}/echoing-adb"
Check "a pty's echo of the token is not printed by up (which restarts the agent with the token)" \
  NeverSays t0k3n-x env ADB="${work}/echoing-adb" TUNEFLEET_TOKEN=t0k3n-x "${fleet}" up -d fake-0 \
  --key fleet-test2 --tracker-port "${port}" --bundle "${work}/bundle" --wait 0 -- --job-timeout 77
Check "... and the up still starts the agent with it" \
  HasEntry "/proc/$(AgentPidOf fake-0)/environ" TUNEFLEET_TOKEN=t0k3n-x
cp -r "${work}/bundle" "${work}/bundle2"
echo "another build" >"${work}/bundle2/NOTE"
Check "up with another bundle restarts it, saying so" \
  OutputMatches "fake-0: restarting the agent .*bundle" "${fleet}" up -d fake-0 --key fleet-test2 \
  --tracker-port "${port}" --bundle "${work}/bundle2" --wait 0 -- --job-timeout 77
Check "up with the first arguments again restarts it and waits until it is registered" \
  OutputMatches "fake-0: restarting.*all 1 device\(s\) registered" Fleet up -d fake-0 --key fleet-test --wait 60
Check "... a further up with those keeps it" \
  OutputMatches "fake-0: already running" Fleet up -d fake-0 --key fleet-test --wait 10

# A new phone whose agent dies while another phone's agent runs under the same key: not registered.
"${fleet}" down -d fake-1 >/dev/null 2>&1
cp -r "${work}/bundle" "${work}/dying"
printf '#!/bin/sh\nsleep 3\nexit 1\n' >"${work}/dying/tunefleet-agent"
Check "up -d of a phone whose agent dies fails, though another phone's agent has the key" \
  FailsSaying "fake-1: error: the agent is not running" \
  "${fleet}" up -d fake-1 --key fleet-test --tracker-port "${port}" --bundle "${work}/dying" --wait 20
"${fleet}" down -d fake-1 >/dev/null 2>&1
Check "up -d fake-1 with the real bundle registers it again" \
  OutputMatches "all 1 device\(s\) registered" Fleet up -d fake-1 --key fleet-test --wait 60

# An empty -d stops nothing (it stopped every phone).
Check "down -d '' is refused (exit 2)" ExitsWith 2 "${fleet}" down -d ""
Check "... and both agents still run" \
  OutputMatches "fake-0 +running .*fake-1 +running" "${fleet}" status --tracker-port "${port}"

# An agent that exits at once: its error line shows what this start wrote, not the earlier runs' log.
Check "an agent that exits at once fails up with one short line, without earlier runs' lines" \
  OneLineExit 1 "^fleet: fake-1: error: agent did not start: .*the agent exited at once.*unknown option.{0,300}$" \
  StderrOnly Fleet up -d fake-1 --key fleet-test --wait 0 -- --no-such-agent-option
Check "... (the log holds earlier runs)" \
  grep -q "registered with tracker" "${FAKE_ADB_ROOT}/fake-1/data/local/tmp/tunefleet/agent.log"
Check "... of which the error line shows none" \
  NeverSays "registered with tracker" Fleet up -d fake-1 --key fleet-test --wait 0 -- --no-such-agent-option

# Agents that never log their id (output discarded): registered by key, counting only agents no device logged.
"${fleet}" down >/dev/null 2>&1
rm -f "${FAKE_ADB_ROOT}"/fake-*/data/local/tmp/tunefleet/agent.log
cp -r "${work}/bundle" "${work}/mute"
sed -i 's|^exec "\$here/bin/tunefleet-agent" "\$@"$|exec "$here/bin/tunefleet-agent" "$@" >/dev/null 2>\&1|' \
  "${work}/mute/tunefleet-agent"
Check "the mute bundle's wrapper discards the agent's output" grep -q '>/dev/null 2>&1$' "${work}/mute/tunefleet-agent"
Check "up with agents that never log an id waits until the tracker lists as many under the key" \
  OutputMatches "all 2 device\(s\) registered" \
  "${fleet}" up --key fleet-mute --tracker-port "${port}" --bundle "${work}/mute" --wait 60
"${fleet}" status --tracker-port "${port}" >"${work}/status.out" 2>&1
Indent <"${work}/status.out"
Check "status shows fake-0 registered by key" StatusRow fake-0 "running [0-9]+ +yes \(by key\)"
Check "status shows fake-1 registered by key" StatusRow fake-1 "running [0-9]+ +yes \(by key\)"

Check "logs shows each device's agent log" \
  OutputMatches "==> fake-0.*agentctl start.*==> fake-1.*agentctl start" "${fleet}" logs -n 20
pid_a="$(AgentPidOf fake-0)"
pid_b="$(AgentPidOf fake-1)"
Check "both agents run before down" test -n "${pid_a}" -a -n "${pid_b}"
Check "down stops both agents" OutputMatches "fake-0: (stopped|killed).*fake-1: (stopped|killed)" "${fleet}" down
Check "... fake-0's agent process is gone" Gone "${pid_a}"
Check "... fake-1's agent process is gone" Gone "${pid_b}"
Check "status shows both stopped after down" \
  OutputMatches "fake-0 +stopped.*fake-1 +stopped" "${fleet}" status --tracker-port "${port}"
# down removes the adb reverse of the port it is given (the default 9190 when none), as README says.
Check "the adb reverse of the test's port is still set after a plain down" \
  OutputMatches "tcp:${port} tcp:${port}" "${ADB}" -s fake-0 reverse --list
Check "down --tracker-port PORT removes it" ExitsWith 0 Fleet down
Check "... the reverse list has no tcp:${port} any more" \
  Fails OutputMatches "tcp:${port}" "${ADB}" -s fake-0 reverse --list

# A TLS tracker: fleet's query and the agents use the certificate given with --tls-ca (pushed to the device; the
# agent dials 127.0.0.1 through adb reverse, which the certificate names).
if command -v openssl >/dev/null 2>&1; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "${work}/tls.key" -out "${work}/tls.crt" >/dev/null 2>&1
  tls_port="$(FreePort)"
  env -u TUNEFLEET_TOKEN "${work}/bundle/tunefleet-tracker" --host 127.0.0.1 --port "${tls_port}" \
    --tls-cert "${work}/tls.crt" --tls-key "${work}/tls.key" >"${work}/tracker-tls.log" 2>&1 &
  extra_pids+=" $!"
  Check "up --tls-ca registers the agent with a TLS tracker" \
    OutputMatches "all 1 device\(s\) registered" "${fleet}" up -d fake-0 --key fleet-tls --tracker-port "${tls_port}" \
    --bundle "${work}/bundle" --tls-ca "${work}/tls.crt" --wait 60
  Check "... the certificate was pushed to the device" \
    cmp "${work}/tls.crt" "${FAKE_ADB_ROOT}/fake-0/data/local/tmp/tunefleet/tracker-ca.pem"
  Check "status --tls-ca shows it registered" \
    OutputMatches "fake-0 +running [0-9]+ +yes" "${fleet}" status -d fake-0 --tracker-port "${tls_port}" \
    --tls-ca "${work}/tls.crt"
  Check "... without --tls-ca the query fails, saying to give it" \
    OutputMatches "give --tls-ca" "${fleet}" status -d fake-0 --tracker-port "${tls_port}"
  "${fleet}" down -d fake-0 --tracker-port "${tls_port}" >/dev/null 2>&1
else
  echo "SKIP: fleet with a TLS tracker (needs openssl)"
fi

echo "== part 3: agentctl alone, on a folder holding the real bundle (its agent dials a port nobody listens on) =="
dev="${work}/agentctl-dev"
mkdir -p "${dev}"
cp -a "${work}/bundle" "${dev}/tf"
cp "${here}/agentctl" "${dev}/tf/agentctl"
AgentPid() { cat "${dev}/tf/agent.pid" 2>/dev/null; }
Check "agentctl start with a relative DIR and the token on stdin succeeds" \
  OutputMatches "^started [0-9]+$" \
  sh -c "cd '${dev}' && echo s3cr3t-t0ken | sh tf/agentctl start --token-stdin tf 127.0.0.1:1 k --platform 0"
rel_pid="$(AgentPid)"
extra_pids+=" ${rel_pid}"
Check "... and the agent it started is the one agent.pid names, running" \
  OutputMatches "^running ${rel_pid}$" sh "${dev}/tf/agentctl" status "${dev}/tf"
Check "agentctl records the start arguments in agent.args" \
  OutputMatches "key=k" cat "${dev}/tf/agent.args"
Check "... the token hashed, never in clear" Fails grep -q s3cr3t-t0ken "${dev}/tf/agent.args"
Check "... the agent has the token in its environment, not on its command line" \
  HasEntry "/proc/${rel_pid}/environ" TUNEFLEET_TOKEN=s3cr3t-t0ken
Check "... (its command line)" Fails grep -a -q -e s3cr3t-t0ken -e --token "/proc/${rel_pid}/cmdline"
Check "agentctl same: the same arguments and token match" \
  sh -c "echo s3cr3t-t0ken | sh '${dev}/tf/agentctl' same --token-stdin '${dev}/tf' 127.0.0.1:1 k --platform 0"
Check "agentctl same: another key and token are named" \
  FailsSaying "differs: key token" \
  sh -c "echo other | sh '${dev}/tf/agentctl' same --token-stdin '${dev}/tf' 127.0.0.1:1 k2 --platform 0"
Check "agentctl same: no token differs from one" \
  FailsSaying "differs: token" sh "${dev}/tf/agentctl" same "${dev}/tf" 127.0.0.1:1 k --platform 0
Check "agentctl refuses --token among the agent arguments (exit 2)" \
  ExitsWith 2 sh "${dev}/tf/agentctl" same "${dev}/tf" 127.0.0.1:1 k --platform 0 --token s3cr3t-t0ken
Check "agentctl logs DIR abc is a usage error (exit 2, one line)" \
  OneLineExit 2 "agentctl: error: logs LINES abc: not a whole number" sh "${dev}/tf/agentctl" logs "${dev}/tf" abc
Check "agentctl stop stops it" \
  OutputMatches "stopped ${rel_pid}|killed ${rel_pid}" sh "${dev}/tf/agentctl" stop "${dev}/tf"
Check "... the agent is gone" Gone "${rel_pid}"
# A stale pid file: the number now belongs to an unrelated process (after a reboot).
sleep 300 &
stranger=$!
extra_pids+=" ${stranger}"
echo "${stranger}" >"${dev}/tf/agent.pid"
Check "a pid file naming an unrelated process is not a running agent (status: stopped, exit 3)" \
  ExitsWith 3 sh "${dev}/tf/agentctl" status "${dev}/tf"
Check "... and the stale pid file is removed" test ! -e "${dev}/tf/agent.pid"
echo "${stranger}" >"${dev}/tf/agent.pid"
Check "agentctl stop with a stale pid file kills nothing" \
  OutputMatches "^stopped$" sh "${dev}/tf/agentctl" stop "${dev}/tf"
Check "... the unrelated process still runs" kill -0 "${stranger}"
echo "${stranger}" >"${dev}/tf/agent.pid"
Check "agentctl start with a stale pid file starts the agent" \
  OutputMatches "^started [0-9]+$" sh "${dev}/tf/agentctl" start "${dev}/tf" 127.0.0.1:1 k
extra_pids+=" $(AgentPid)"
sh "${dev}/tf/agentctl" stop "${dev}/tf" >/dev/null 2>&1
Check "... the unrelated process still runs after that agent's stop" kill -0 "${stranger}"
# An agent that exits at once: only the lines of this start, the last few, each cut short.
for i in $(seq 30); do echo "old run line ${i} $(printf 'x%.0s' $(seq 300))"; done >>"${dev}/tf/agent.log"
printf 'cut mid-line' >>"${dev}/tf/agent.log"
sh "${dev}/tf/agentctl" start "${dev}/tf" 127.0.0.1:1 k --no-such-agent-option >"${work}/start.out" 2>&1
Check "agentctl start of an agent that exits at once fails" \
  grep -q "the agent exited at once" "${work}/start.out"
Check "... showing what it said" grep -q "unknown option" "${work}/start.out"
Check "... and none of the earlier runs' lines" Fails grep -q "old run line" "${work}/start.out"
Check "... in a few short lines" test "$(wc -l <"${work}/start.out")" -le 6 -a "$(wc -c <"${work}/start.out")" -le 1200
Check "... its start line is a line of its own in the log" grep -q -x "cut mid-line" "${dev}/tf/agent.log"

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"

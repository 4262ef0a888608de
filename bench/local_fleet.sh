# Sourced by the bench scripts: a tracker and agents on loopback, stopped when the script exits.
#   start_local_fleet BIN LOG_DIR KEY NUM_AGENTS PLATFORM DEVICE [PORT]
# BIN holds tunefleet-tracker, tunefleet-agent and tunefleet (build/bin or a bundle). PORT defaults to a free one.
# Sets FLEET_ADDR (host:port); returns once NUM_AGENTS agents are registered (or after 30 s); logs go to
# LOG_DIR/tracker.log and LOG_DIR/agent-I.log. Several agents on one device share it through its device lock.
# AGENT_ARGS (optional): more arguments for every agent, split at spaces.
#   first_gpu_platform LIST_FILE
# Prints the index of the first platform with a GPU device in LIST_FILE (`tunefleet-agent --list-devices` output),
# else 0.
#   log_records LOG
# Prints how many records the tuning log LOG holds (0 while it does not exist yet; read-only, so it never creates it).
source "$(dirname "${BASH_SOURCE[0]}")/require_binaries.sh"
FLEET_PIDS=()
FLEET_ADDR=

stop_local_fleet() {
  local p
  for p in "${FLEET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

first_gpu_platform() {
  local p
  p=$(awk '/^platform/ {p=$2; sub(":","",p)} /\[GPU/ {print p; exit}' "$1")
  echo "${p:-0}"
}

log_records() {
  python3 -c "import sqlite3, sys, urllib.parse; print(sqlite3.connect('file:' + urllib.parse.quote(sys.argv[1]) +
'?mode=ro', uri=True).execute('SELECT count(*) FROM records').fetchone()[0])" "$1" 2>/dev/null || echo 0
}

start_local_fleet() {
  local bin=$1 logs=$2 key=$3 agents=$4 platform=$5 device=$6
  require_binaries "$bin" tunefleet-tracker tunefleet-agent tunefleet
  local port=${7:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
  FLEET_ADDR=127.0.0.1:$port
  trap stop_local_fleet EXIT
  "$bin/tunefleet-tracker" --host 127.0.0.1 --port "$port" >"$logs/tracker.log" 2>&1 &
  FLEET_PIDS+=($!)
  local i
  for i in $(seq 1 "$agents"); do
    # shellcheck disable=SC2086  # AGENT_ARGS is a list of words
    "$bin/tunefleet-agent" --tracker "$FLEET_ADDR" --key "$key" --platform "$platform" --device "$device" \
      ${AGENT_ARGS:-} >"$logs/agent-$i.log" 2>&1 &
    FLEET_PIDS+=($!)
  done
  for _ in $(seq 1 100); do
    [ "$("$bin/tunefleet" query --json --rpc-tracker "$FLEET_ADDR" 2>/dev/null | grep -o '"agent_id"' | wc -l)" \
      -ge "$agents" ] && return 0
    sleep 0.3
  done
  return 0
}

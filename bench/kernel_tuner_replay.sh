#!/usr/bin/env bash
# Kernel Tuner's search strategies against tunefleet's on the recorded spaces of bench/data/ (no device needed).
#
# For every task of every recorded space, runs `tunefleet simulate --tuner xgb --baseline random` without history
# (its last line: trials-to-95%: xgb <median> random <median> ratio <r>), then bench/kernel_tuner_replay.py, which
# replays Kernel Tuner's strategies (simulation mode, a cache file of the whole space) counted the same way, and
# prints one line per (task, strategy) and a table with tunefleet's xgb and random beside Kernel Tuner's.
#   usage: bench/kernel_tuner_replay.sh [BUILD_DIR]      (tunefleet is BUILD_DIR/bin/tunefleet; default build)
#   env:   SEEDS (10)  TARGET (0.95)  STRATEGIES (the .py's default: random_sample, genetic_algorithm,
#          simulated_annealing, mls, greedy_ils, pso, bayes_opt)  KT_EXTRA (more options for the .py)
#          DATA (bench/data: the .db or .db.xz files)
#          VENV (${TMPDIR:-/tmp}/tunefleet-kernel-tuner-1.5.0: a virtualenv with kernel_tuner==1.5.0; made with
#          `python3 -m venv` and pip when it has no kernel_tuner)
# Writes only to VENV and a temporary folder (removed at exit): the unpacked logs and Kernel Tuner's cache files.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin
SEEDS=${SEEDS:-10}; TARGET=${TARGET:-0.95}; DATA=${DATA:-bench/data}
VENV=${VENV:-${TMPDIR:-/tmp}/tunefleet-kernel-tuner-1.5.0}
if [[ ! -x $BIN/tunefleet ]]; then
  echo "no tunefleet at $BIN/tunefleet (usage: bench/kernel_tuner_replay.sh BUILD_DIR)" >&2
  exit 1
fi
if ! "$VENV/bin/python" -c 'import kernel_tuner' 2>/dev/null; then
  echo "making $VENV (pip install kernel_tuner==1.5.0)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q kernel_tuner==1.5.0
fi
# shellcheck source=bench/recorded_space.sh
source bench/recorded_space.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

dbs=()
for f in "$DATA"/*.db.xz "$DATA"/*.db; do
  [[ -f $f ]] || continue
  stem=$(basename "${f%.xz}" .db)
  [[ -f $TMP/$stem.db ]] && continue
  recorded_space "$f" "$TMP/$stem.db"
  dbs+=("$TMP/$stem.db")
done
[[ ${#dbs[@]} -gt 0 ]] || { echo "no recorded spaces in $DATA" >&2; exit 1; }

echo "date $(date -u +%Y-%m-%dT%H:%MZ); tunefleet $(git rev-parse --short HEAD 2>/dev/null || echo '?');" \
  "$("$VENV/bin/python" --version); kernel_tuner $("$VENV/bin/python" -c \
  'import importlib.metadata as m; print(m.version("kernel_tuner"))'); seeds $SEEDS; target $TARGET"
echo "== tunefleet simulate --tuner xgb --baseline random --seeds $SEEDS --target $TARGET (without history)"
: >"$TMP/tunefleet.tsv"
python3 bench/kernel_tuner_replay.py --list "${dbs[@]}" | while read -r stem tmpl task; do
  start=$(date +%s.%N)
  out=$("$BIN/tunefleet" simulate --db "$TMP/$stem.db" --template "$tmpl" --task "$task" --tuner xgb \
        --baseline random --seeds "$SEEDS" --target "$TARGET" 2>&1) || true  # a failed replay prints its error last
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  printf '%s\t%s\t%s\n' "$stem" "$task" "$(tail -n 1 <<<"$out")" >>"$TMP/tunefleet.tsv"
  printf '%s %s %s   [%.1f s]\n' "$stem" "$task" "$(tail -n 1 <<<"$out")" "$secs"
done
echo "== Kernel Tuner (bench/kernel_tuner_replay.py)"
# shellcheck disable=SC2086
"$VENV/bin/python" bench/kernel_tuner_replay.py --seeds "$SEEDS" --target "$TARGET" \
  ${STRATEGIES:+--strategies "$STRATEGIES"} --tunefleet "$TMP/tunefleet.tsv" ${KT_EXTRA:-} "${dbs[@]}"

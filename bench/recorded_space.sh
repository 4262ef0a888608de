#!/usr/bin/env bash
# Sourced by the bench scripts that read bench/data/: the recorded spaces are kept there as xz-compressed SQLite
# tuning logs (NAME.db.xz, a tenth of their size), and a script unpacks the one it needs next to its other output.
#   recorded_space PATH DEST: PATH is NAME.db or NAME.db.xz (for NAME.db, NAME.db.xz is taken when only it exists);
#   writes the log to DEST and returns non-zero, with one line on stderr, when neither file is there.
# New recordings (bench/record_spaces.sh writes NAME.db) go in with `xz -9 NAME.db` (xz-utils, or Python's lzma).

recorded_space() {
  local src=$1 dest=$2
  [[ $src == *.xz || -f $src || ! -f $src.xz ]] || src=$src.xz
  if [[ ! -f $src ]]; then
    echo "no recorded space at $1 (nor $1.xz)" >&2
    return 1
  fi
  if [[ $src == *.xz ]]; then
    python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o: shutil.copyfileobj(i, o)' "$src" "$dest"
  else
    cp "$src" "$dest"
  fi
}

# Sourced by the bench scripts, before their first use of the binaries:
#   require_binaries DIR NAME...
# Exits (status 2) with one line when DIR holds no executable NAME: a wrong BUILD_DIR or BIN_DIR gave a silent exit
# 127 after a 30 s wait, Python tracebacks, or exit 0 with every row missing.
require_binaries() {
  local dir=$1 name
  shift
  for name in "$@"; do
    if [ ! -x "$dir/$name" ]; then
      echo "$(basename "$0"): error: no executable $name in $dir (build first, or name the folder that holds it)" >&2
      exit 2
    fi
  done
}

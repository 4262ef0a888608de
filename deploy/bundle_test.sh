#!/usr/bin/env bash
# deploy/bundle_test.sh BUILD_DIR: checks deploy/bundle.
#
# Part 1 (always): given a host binary that links gRPC and protobuf (the build's own grpc_cpp_plugin), we should
#   pack it with its whole non-glibc closure, and it should load only bundled libraries.
# Part 2 (when BUILD_DIR/bin/tunefleet-agent is built): given the real agent, we should pack it so that
#   `env -i bundle/tunefleet-agent --version` works, ldd of the bundled binary resolves every non-glibc library
#   inside the bundle, OpenCL is not bundled, and the --tar archive works from another folder.
# Part 1 also checks what bundle refuses: an OUT_DIR that is neither new, empty nor a previous bundle (a home folder,
#   the build folder, ".", ".."), a --bin NAME that is a path, an empty --search-path; each in one line.
# Exit: 0 pass; 1 a check failed; 77 part 2 skipped because the agent is not built (part 1 passed).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:?usage: bundle_test.sh BUILD_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/bundle_test.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
failures=0

Check() {  # Check "what" command...: runs the command, prints PASS/FAIL with what was checked.
  local what="$1"
  shift
  if "$@"; then echo "PASS: ${what}"; else echo "FAIL: ${what}"; failures=$((failures + 1)); fi
}

# True when every library ldd resolves for binary $2 (run with the bundle's lib/ $1 and its runtime/ first) is
# inside $1 or is a glibc core library of the host; prints offenders.
ResolvesInside() {
  local lib_dir="$1" bin="$2" out line name path bad=0
  out="$(env -i LD_LIBRARY_PATH="${lib_dir}:${lib_dir}/runtime" ldd "${bin}" 2>&1)" ||
    { echo "  ldd failed: ${out}"; return 1; }
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "${line}" in
      *"not found"*) echo "  unresolved: ${line}"; bad=1 ;;
      *" => "*)
        name="${line%% => *}"
        path="${line#* => }"
        path="${path%% (*}"
        case "${name}" in
          libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
          *) [[ "${path}" == "${lib_dir}/"* ]] || { echo "  outside the bundle: ${name} => ${path}"; bad=1; } ;;
        esac
        ;;
    esac
  done <<<"${out}"
  return "${bad}"
}

HasNoHostLibs() {  # no glibc core, no OpenCL loader or ICD in lib/ $1
  local found
  found="$(find "$1" -maxdepth 1 \( -name 'libc.so*' -o -name 'libm.so*' -o -name 'libpthread.so*' \
    -o -name 'libdl.so*' -o -name 'librt.so*' -o -name 'ld-linux*' -o -name 'libOpenCL*' -o -name 'libpocl*' \) \
    -printf '%f ')"
  [[ -z "${found}" ]] || { echo "  must not be bundled: ${found}"; return 1; }
}

Has() { [[ -e "$1" ]] || { echo "  missing: $1"; return 1; }; }
OutputMatches() {  # OutputMatches REGEX command...: the command succeeds and its output matches REGEX
  local re="$1" out
  shift
  out="$("$@" 2>&1)" || { echo "  exit $?: ${out}"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output '${out}' does not match /${re}/"; return 1; }
}
Fails() { ! "$@" >/dev/null 2>&1; }
OneLineExit() {  # OneLineExit CODE REGEX command...: exits CODE, printing one line (stdout and stderr) matching REGEX
  local want="$1" re="$2" out got
  shift 2
  out="$("$@" 2>&1)"
  got=$?
  [[ "${got}" == "${want}" ]] || { echo "  exit ${got}, wanted ${want}: ${out}"; return 1; }
  [[ "${out}" != *$'\n'* ]] || { echo "  more than one line:"; echo "  | ${out//$'\n'/$'\n'  | }"; return 1; }
  [[ "${out}" =~ ${re} ]] || { echo "  output '${out}' does not match /${re}/"; return 1; }
}

echo "== part 1: bundling a gRPC-linked host binary (grpc_cpp_plugin) =="
plugin="$(command -v grpc_cpp_plugin || true)"
if [[ -z "${plugin}" ]]; then
  echo "FAIL: grpc_cpp_plugin not found (it is a build dependency)"
  exit 1
fi
mkdir -p "${work}/fake_build/bin"
cp "${plugin}" "${work}/fake_build/bin/grpc_cpp_plugin"
Check "bundle packs a named binary" "${here}/bundle" "${work}/fake_build" "${work}/p1" --bin grpc_cpp_plugin
Check "the wrapper and the real binary are in place" Has "${work}/p1/bin/grpc_cpp_plugin"
Check "libstdc++ is bundled, apart in lib/runtime/" Has "${work}/p1/lib/runtime/libstdc++.so.6"
Check "so is libgcc_s" Has "${work}/p1/lib/runtime/libgcc_s.so.1"
Check "libprotobuf is bundled" Has "${work}/p1/lib/libprotobuf.so.32"
Check "no glibc core library nor OpenCL is bundled" HasNoHostLibs "${work}/p1/lib"
Check "ldd resolves every non-glibc library inside the bundle" \
  ResolvesInside "${work}/p1/lib" "${work}/p1/bin/grpc_cpp_plugin"
Check "bundled libraries are real files, not links into the build machine" \
  test -z "$(find "${work}/p1/lib" -type l)"
# The wrapper's choice of C++ runtime, seen through a stand-in binary that prints its library path. This host's
# libstdc++ is the one bundled, so it provides the version the wrapper asks for: lib/runtime/ stays off the path,
# and the host's OpenCL drivers see the host's libstdc++. A host without that version gets lib/runtime/.
cp -r "${work}/p1" "${work}/probe"
# shellcheck disable=SC2016  # the stand-in prints the variable when it runs
printf '#!/bin/sh\necho "$LD_LIBRARY_PATH"\n' >"${work}/probe/bin/grpc_cpp_plugin"
Check "the wrapper names the newest GLIBCXX version of the bundled libstdc++" \
  grep -q -E '^need="GLIBCXX_3\.4\.[0-9]+"$' "${work}/probe/grpc_cpp_plugin"
Check "on a host whose libstdc++ is as new, the bundled C++ runtime stays off the path" \
  Fails OutputMatches "lib/runtime" env -i "${work}/probe/grpc_cpp_plugin"
Check "... and the bundle's lib/ is first" \
  OutputMatches "^${work}/probe/lib(:|$)" env -i "${work}/probe/grpc_cpp_plugin"
sed -i 's/^need="GLIBCXX_[0-9.]*"$/need="GLIBCXX_3.4.999"/' "${work}/probe/grpc_cpp_plugin"
Check "on a host whose libstdc++ is older, the bundled C++ runtime is on the path" \
  OutputMatches "^${work}/probe/lib:${work}/probe/lib/runtime(:|$)" env -i "${work}/probe/grpc_cpp_plugin"
Check "bundle refuses a BUILD_DIR without the binary" Fails "${here}/bundle" "${work}/fake_build" "${work}/p_x"

# A failed re-run leaves a working bundle as it was (closures first, then a fresh folder moved into place).
cp "${work}/p1/MANIFEST" "${work}/p1.MANIFEST"
echo "kept" >"${work}/p1/NOTES.txt"  # not part of the bundle: a re-run keeps it
SameBundle() {  # the bundle p1 is the one built above, and it still works
  cmp -s "${work}/p1/MANIFEST" "${work}/p1.MANIFEST" || { echo "  MANIFEST changed:"; head -3 "${work}/p1/MANIFEST"; return 1; }
  ResolvesInside "${work}/p1/lib" "${work}/p1/bin/grpc_cpp_plugin"
}
Check "a re-run whose library is not found (--search-path) fails" \
  Fails "${here}/bundle" "${work}/fake_build" "${work}/p1" --bin grpc_cpp_plugin --search-path "${work}/no-libs"
Check "... and leaves the previous bundle as it was" SameBundle
Check "... with no stray folder beside it" test -z "$(find "${work}" -maxdepth 1 -name '.p1.*')"
if command -v cc >/dev/null 2>&1; then
  # A binary whose library ldd cannot find: the closure of every binary is computed before anything is copied.
  mkdir -p "${work}/gone"
  echo 'int tf_gone(void) { return 0; }' >"${work}/gone/gone.c"
  echo 'int tf_gone(void); int main(void) { return tf_gone(); }' >"${work}/gone/main.c"
  if cc -shared -fPIC -o "${work}/gone/libtfgone.so" "${work}/gone/gone.c" &&
     cc -o "${work}/fake_build/bin/needs-gone" "${work}/gone/main.c" -L"${work}/gone" -ltfgone; then
    rm -f "${work}/gone/libtfgone.so"
    Check "a re-run with a binary whose library is missing (ldd: not found) fails" \
      Fails "${here}/bundle" "${work}/fake_build" "${work}/p1" --bin grpc_cpp_plugin --bin needs-gone
    Check "... and leaves the previous bundle as it was" SameBundle
    Check "... without the new binary in it" test ! -e "${work}/p1/bin/needs-gone"
    rm -f "${work}/fake_build/bin/needs-gone"
  else
    echo "SKIP: cannot compile a binary with a missing library (cc failed)"
  fi
fi
echo "kept" >"${work}/p1/..notes"  # a name the glob .[!.]* misses
chmod 0750 "${work}/p1"             # the folder's own mode: a re-run keeps it
Check "a successful re-run replaces the bundle" "${here}/bundle" "${work}/fake_build" "${work}/p1" --bin grpc_cpp_plugin
Check "... keeps files that are no part of the bundle" grep -q kept "${work}/p1/NOTES.txt"
Check "... also one whose name starts with '..'" grep -q kept "${work}/p1/..notes"
Check "... and the folder keeps its mode (got $(stat -c %a "${work}/p1"))" test "$(stat -c %a "${work}/p1")" = 750
Check "... and the bundle works" ResolvesInside "${work}/p1/lib" "${work}/p1/bin/grpc_cpp_plugin"
# A link to a previous bundle (/opt/tunefleet -> tunefleet-1.2) stays a link, and the bundle it names is replaced.
ln -s p1 "${work}/current"
touch "${work}/p1/lib/stale-marker"  # the previous bundle's lib/ is replaced: the marker goes with it
Check "a re-run through a link to a previous bundle succeeds" \
  "${here}/bundle" "${work}/fake_build" "${work}/current" --bin grpc_cpp_plugin --tar
Check "... the link stays a link to it" test "$(readlink "${work}/current")" = p1
Check "... which holds the new bundle" test ! -e "${work}/p1/lib/stale-marker"
Check "... and it works" ResolvesInside "${work}/p1/lib" "${work}/p1/bin/grpc_cpp_plugin"
Check "... its tar is named after the link, and so is its top folder" \
  test "$(tar -tzf "${work}/current.tar.gz" | cut -d/ -f1 | sort -u)" = current
touch "${work}/p1/lib/stale-marker"
Check "... also given with a trailing slash (current/)" \
  "${here}/bundle" "${work}/fake_build" "${work}/current/" --bin grpc_cpp_plugin
Check "... which holds the new bundle" test ! -e "${work}/p1/lib/stale-marker"
Check "... with no stray folder beside them" test -z "$(find "${work}" -maxdepth 1 -name '.p1.*' -o -maxdepth 1 \
  -name '.current.*')"
# --search-path walks DT_NEEDED with readelf: without it nothing would be found, and the bundle would be empty.
mkdir -p "${work}/no-readelf"
for f in /usr/bin/* /bin/*; do
  case "$(basename "${f}")" in *readelf*) continue ;; esac
  [[ -e "${work}/no-readelf/$(basename "${f}")" ]] || ln -s "${f}" "${work}/no-readelf/"
done
Check "--search-path without readelf on PATH is refused" \
  Fails env PATH="${work}/no-readelf" bash "${here}/bundle" "${work}/fake_build" "${work}/p_r" --bin grpc_cpp_plugin \
  --search-path "/usr/lib/$(uname -m)-linux-gnu:/lib/$(uname -m)-linux-gnu"
Check "... and packs nothing" test ! -e "${work}/p_r"
Check "bundle exits 2 on bad usage" test "$("${here}/bundle" >/dev/null 2>&1; echo $?)" = 2

# OUT_DIR: a bundle replaces OUT_DIR's bin/ and lib/, so only a new or empty folder or a previous bundle will do.
mkdir -p "${work}/home/bin"
echo "mine" >"${work}/home/bin/backup.sh"
Check "a folder that is not empty and holds no bundle MANIFEST is refused (exit 2, one line)" \
  OneLineExit 2 "OUT_DIR .*home is not empty and holds no bundle MANIFEST" \
  "${here}/bundle" "${work}/fake_build" "${work}/home" --bin grpc_cpp_plugin
Check "... and its bin/ is kept" grep -q mine "${work}/home/bin/backup.sh"
echo "not ours" >"${work}/home/MANIFEST"
Check "... also when it has a MANIFEST that deploy/bundle did not write" \
  OneLineExit 2 "holds no bundle MANIFEST" "${here}/bundle" "${work}/fake_build" "${work}/home" --bin grpc_cpp_plugin
Check "the build folder itself is refused (exit 2, one line)" \
  OneLineExit 2 "is the build folder" "${here}/bundle" "${work}/fake_build" "${work}/fake_build" --bin grpc_cpp_plugin
Check "... and left as it was" test -x "${work}/fake_build/bin/grpc_cpp_plugin" -a ! -e "${work}/fake_build/MANIFEST"
ln -s fake_build "${work}/build-link"
Check "so is a symlink to the build folder" \
  OneLineExit 2 "is the build folder" "${here}/bundle" "${work}/fake_build" "${work}/build-link" --bin grpc_cpp_plugin
Check "so is a folder inside the build folder's bin/" \
  OneLineExit 2 "inside the build folder's bin/" \
  "${here}/bundle" "${work}/fake_build" "${work}/fake_build/bin/out" --bin grpc_cpp_plugin
Check "so is a folder holding the build folder" \
  OneLineExit 2 "holds the build folder" "${here}/bundle" "${work}/fake_build/bin/.." "${work}" --bin grpc_cpp_plugin
Check "OUT_DIR . is refused (exit 2, one line)" OneLineExit 2 "OUT_DIR \.: name a folder" \
  sh -c "cd '${work}/p1' && '${here}/bundle' '${work}/fake_build' . --bin grpc_cpp_plugin"
Check "OUT_DIR .. is refused (exit 2, one line)" OneLineExit 2 "OUT_DIR \.\.: name a folder" \
  sh -c "cd '${work}/p1/lib' && '${here}/bundle' '${work}/fake_build' .. --bin grpc_cpp_plugin"
Check "... and the bundle there is as it was" SameBundle
mkdir -p "${work}/empty"
Check "an empty folder is fine" "${here}/bundle" "${work}/fake_build" "${work}/empty" --bin grpc_cpp_plugin
Check "... and holds the bundle" Has "${work}/empty/bin/grpc_cpp_plugin"
Check "OUT_DIR under a file is one line (exit 1)" \
  OneLineExit 1 "cannot create .*home/MANIFEST/sub: .*home/MANIFEST is not a folder" \
  "${here}/bundle" "${work}/fake_build" "${work}/home/MANIFEST/sub" --bin grpc_cpp_plugin
Check "OUT_DIR where no folder can be made (/proc/x) is one line (exit 1)" \
  OneLineExit 1 "^deploy/bundle: error: cannot create a folder in /proc" \
  "${here}/bundle" "${work}/fake_build" /proc/tunefleet-bundle-test --bin grpc_cpp_plugin
# --bin NAME: a file of BUILD_DIR/bin, never a path.
Check "--bin '' is refused (exit 2, one line)" \
  OneLineExit 2 "--bin '': not a file name" "${here}/bundle" "${work}/fake_build" "${work}/p_b" --bin ""
mkdir -p "${work}/p_b_sub"
Check "--bin ../bin/NAME is refused (exit 2, one line)" \
  OneLineExit 2 "--bin '\.\./bin/grpc_cpp_plugin': not a file name" \
  "${here}/bundle" "${work}/fake_build" "${work}/p_b_sub/b" --bin ../bin/grpc_cpp_plugin
Check "... and writes nothing" test -z "$(ls -A "${work}/p_b_sub")" -a ! -e "${work}/p_b"
Check "--search-path '' is refused (exit 2, one line)" \
  OneLineExit 2 "--search-path needs DIRS" \
  "${here}/bundle" "${work}/fake_build" "${work}/p_s" --bin grpc_cpp_plugin --search-path ""

agent="${build_dir}/bin/tunefleet-agent"
if [[ ! -x "${agent}" ]]; then
  echo "SKIP: part 2: ${agent} is not built (build target tunefleet-agent)"
  ((failures == 0)) || exit 1
  exit 77
fi

echo "== part 2: bundling the real agent =="
b="${work}/bundle"
Check "bundle packs the agent with --tar" "${here}/bundle" "${build_dir}" "${b}" --tar
Check "env -i bundle/tunefleet-agent --version prints the version" \
  OutputMatches "tunefleet" env -i "${b}/tunefleet-agent" --version
Check "env -i bundle/tunefleet-agent --list-devices finds the host's OpenCL (PoCL) through the wrapper" \
  OutputMatches "platform [0-9]+: .*device [0-9]+: " env -i "${b}/tunefleet-agent" --list-devices
Check "ldd of the bundled agent resolves every non-glibc library inside the bundle" \
  ResolvesInside "${b}/lib" "${b}/bin/tunefleet-agent"
Check "no glibc core library nor OpenCL is bundled" HasNoHostLibs "${b}/lib"
Check "libstdc++ is bundled, apart in lib/runtime/" Has "${b}/lib/runtime/libstdc++.so.6"
Check "gRPC is bundled" test -n "$(find "${b}/lib" -name 'libgrpc++.so*')"
cp -r "${b}" "${work}/old_host"
sed -i 's/^need="GLIBCXX_[0-9.]*"$/need="GLIBCXX_3.4.999"/' "${work}/old_host/tunefleet-agent"
Check "where the host's libstdc++ is too old, the agent runs on the bundled one" \
  OutputMatches "tunefleet" env -i "${work}/old_host/tunefleet-agent" --version
mkdir -p "${work}/elsewhere" "${work}/path"
Check "the tarball unpacks" tar -C "${work}/elsewhere" -xzf "${work}/bundle.tar.gz"
Check "the unpacked agent runs from another folder with an empty environment" \
  OutputMatches "tunefleet" env -i "${work}/elsewhere/bundle/tunefleet-agent" --version
ln -s "${work}/elsewhere/bundle/tunefleet-agent" "${work}/path/tunefleet-agent"
Check "the wrapper works through a symlink (e.g. from /usr/local/bin)" \
  OutputMatches "tunefleet" env -i "${work}/path/tunefleet-agent" --version

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"

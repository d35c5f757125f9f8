# tests/install/lib.sh - helpers shared by the install tests (sourced).
#
# The environment (set by tests/install/CMakeLists.txt):
#   ONNXSLIM_SRC          the source tree
#   ONNXSLIM_BUILD        the build tree to install from
#   ONNXSLIM_CLI          the build tree's onnxslim tool
#   ONNXSLIM_MODELS       the real-model cache (scripts/fetch-models.sh)
#   ONNXSLIM_CMAKE        the cmake that configured the build
#   ONNXSLIM_CTEST        its ctest
#   ONNXSLIM_CXX          its C++ compiler
#   ONNXSLIM_BUILD_TYPE   its build type
#   ONNXSLIM_LAUNCHER     its compiler launcher (ccache), or empty
#
# Every test works in a temporary directory of its own ($tmp), removed on
# exit whatever happens.
set -euo pipefail

for v in ONNXSLIM_SRC ONNXSLIM_BUILD ONNXSLIM_CMAKE ONNXSLIM_CTEST ONNXSLIM_CXX; do
  [ -n "${!v:-}" ] || { echo "error: $v is not set (run this test through ctest)" >&2; exit 1; }
done
: "${ONNXSLIM_BUILD_TYPE:=}" "${ONNXSLIM_LAUNCHER:=${CMAKE_CXX_COMPILER_LAUNCHER:-}}"
# The real model the end-to-end checks run on (small, with Conv, BatchNorm
# and shape chains for the default pipeline to fold).
ONNXSLIM_TEST_MODEL="${ONNXSLIM_MODELS:-$ONNXSLIM_SRC/.cache/models}/ppocr_cls.onnx"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/onnxslim-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Given a command, Execute: runs it with its output in $tmp/log.txt, printed
# only if it fails.
quiet() {
  if ! "$@" >"$tmp/log.txt" 2>&1; then
    cat "$tmp/log.txt" >&2
    fail "$* (exit status above)"
  fi
}

# Given the model path, Execute: fails with how to get it when it is missing.
require_model() {
  [ -f "$1" ] || fail "$1 missing: run scripts/fetch-models.sh (or set ONNXSLIM_MODEL_CACHE)"
}

# Given a build tree and a prefix, Execute: installs the build tree there.
install_to() {
  quiet "$ONNXSLIM_CMAKE" --install "$1" --prefix "$2"
}

# Given a prefix and the library's file name, Execute: checks that the
# installed tree has the library, the tool, the headers and the CMake
# package, and that nothing in the package or headers points back at the
# source or build tree.
check_installed_tree() {
  local p="$1" lib="$2" f
  for f in "lib/$lib" bin/onnxslim include/onnxslim/onnxslim.h include/onnxslim/passes.h \
           include/onnxslim/ir/IR.h include/onnxslim/transforms/PassRegistry.h \
           lib/cmake/onnxslim/onnxslimConfig.cmake lib/cmake/onnxslim/onnxslimConfigVersion.cmake \
           lib/cmake/onnxslim/onnxslimTargets.cmake; do
    [ -e "$p/$f" ] || fail "the installed tree lacks $f (cmake --install $ONNXSLIM_BUILD --prefix P; configured with ONNXSLIM_INSTALL=ON?)"
  done
  [ -x "$p/bin/onnxslim" ] || fail "$p/bin/onnxslim is not executable"
  for f in "$ONNXSLIM_SRC" "$ONNXSLIM_BUILD"; do
    if grep -rlF "$f" "$p/lib/cmake" "$p/include"; then
      fail "the installed package or headers name $f (listed above)"
    fi
  done
}

# Given an example's name, a prefix and a build dir, Execute: copies
# examples/NAME out of the source tree, configures it with only the prefix
# to find onnxslim in, builds it warning-free, and checks that its build
# files name neither the source nor the build tree.
build_example() {
  local name="$1" p="$2" b="$3"
  cp -r "$ONNXSLIM_SRC/examples/$name" "$tmp/$name-src"
  local args=(-S "$tmp/$name-src" -B "$b" -DCMAKE_PREFIX_PATH="$p"
              -DCMAKE_CXX_COMPILER="$ONNXSLIM_CXX" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror")
  [ -z "$ONNXSLIM_BUILD_TYPE" ] || args+=(-DCMAKE_BUILD_TYPE="$ONNXSLIM_BUILD_TYPE")
  [ -z "$ONNXSLIM_LAUNCHER" ] || args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$ONNXSLIM_LAUNCHER")
  quiet "$ONNXSLIM_CMAKE" "${args[@]}"
  quiet "$ONNXSLIM_CMAKE" --build "$b"
  local f
  for f in "$ONNXSLIM_SRC" "$ONNXSLIM_BUILD"; do
    if grep -rIlF "$f" "$b"; then
      fail "examples/$name's build files name $f (listed above): it must find onnxslim in $p only"
    fi
  done
}

# Given the installed prefix and a built consumer, Execute: runs it on the
# test model and checks that it writes byte for byte the model that the
# given command line writes (default options both), and a smaller graph.
check_consumer_matches_cli() {
  local consumer="$1" cli="$2" out="$tmp/run-$RANDOM"
  mkdir -p "$out"
  "$consumer" "$ONNXSLIM_TEST_MODEL" "$out/api.onnx" >"$out/stdout" 2>"$out/stderr" ||
    { cat "$out/stderr" >&2; fail "$consumer $ONNXSLIM_TEST_MODEL failed"; }
  quiet "$cli" "$ONNXSLIM_TEST_MODEL" "$out/cli.onnx"
  cmp "$out/api.onnx" "$out/cli.onnx" ||
    fail "the consumer's output differs from $cli's for $ONNXSLIM_TEST_MODEL"
  ! cmp -s "$ONNXSLIM_TEST_MODEL" "$out/api.onnx" || fail "the consumer's output is its input, unoptimized"
  local line before after
  line="$(cat "$out/stdout")"
  [[ "$line" =~ ^nodes:\ ([0-9]+)\ -\>\ ([0-9]+)$ ]] || fail "consumer printed '$line', not 'nodes: N -> M'"
  before="${BASH_REMATCH[1]}" after="${BASH_REMATCH[2]}"
  [ "$after" -lt "$before" ] || fail "consumer: nodes $before -> $after: the default pipeline removed nothing"
  echo "consumer: $line, byte-identical to $cli's output"
}

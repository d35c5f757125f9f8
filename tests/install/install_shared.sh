#!/usr/bin/env bash
# install_shared (slow: a full build of the library and the tool):
# configures the source with -DBUILD_SHARED_LIBS=ON (tests and benchmarks
# off), builds and installs it into a temporary prefix, then builds
# examples/consumer against it (find_package(onnxslim)) and checks that
#  - the consumer and the installed tool load P/lib/libonnxslim.so (ldd),
#  - the protobuf schema's generated code is in libonnxslim.so only,
#  - the consumer and the shared tool write byte for byte the model that
#    the static build's tool writes (default options).
# The compiler launcher (ccache) of the enclosing build is used if it has one.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_model "$ONNXSLIM_TEST_MODEL"
[ -x "${ONNXSLIM_CLI:-}" ] || fail "ONNXSLIM_CLI (the static build's tool) is not set or not built"
p="$tmp/p" b="$tmp/build"

args=(-S "$ONNXSLIM_SRC" -B "$b" -DBUILD_SHARED_LIBS=ON -DONNXSLIM_BUILD_TESTS=OFF -DONNXSLIM_BUILD_BENCH=OFF
      -DCMAKE_CXX_COMPILER="$ONNXSLIM_CXX")
[ -z "${CMAKE_GENERATOR:-}" ] || args+=(-G "$CMAKE_GENERATOR")
[ -z "$ONNXSLIM_BUILD_TYPE" ] || args+=(-DCMAKE_BUILD_TYPE="$ONNXSLIM_BUILD_TYPE")
[ -z "$ONNXSLIM_LAUNCHER" ] || args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$ONNXSLIM_LAUNCHER"
                                      -DCMAKE_C_COMPILER_LAUNCHER="$ONNXSLIM_LAUNCHER")
quiet "$ONNXSLIM_CMAKE" "${args[@]}"
start=$SECONDS
quiet "$ONNXSLIM_CMAKE" --build "$b" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
echo "shared build: $((SECONDS - start)) s"
install_to "$b" "$p"
ONNXSLIM_BUILD="$b" check_installed_tree "$p" libonnxslim.so
[ ! -e "$p/lib/libonnxslim.a" ] || fail "a shared build installed lib/libonnxslim.a"

# The schema's generated code (its descriptor table) is defined once: in
# the library, not in the tool.
sym=descriptor_table_schema_2fonnx_2eproto
nm -D --defined-only "$p/lib/libonnxslim.so" | grep -qw "$sym" ||
  fail "libonnxslim.so does not define the schema's $sym"
if nm --defined-only "$p/bin/onnxslim" | grep -w "$sym"; then
  fail "the shared build's tool defines the schema's $sym itself (a second copy of the generated code)"
fi

build_example consumer "$p" "$tmp/consumer-build"
for exe in "$tmp/consumer-build/consumer" "$p/bin/onnxslim"; do
  ldd "$exe" >"$tmp/ldd.txt"
  # "libonnxslim.so.0.1 => P/bin/../lib/libonnxslim.so.0.1 (0x...)" for the tool.
  lib="$(sed -n 's/^[[:space:]]*libonnxslim\.so[.0-9]* => \(.*\) (0x[0-9a-f]*)$/\1/p' "$tmp/ldd.txt")"
  [ -n "$lib" ] && [ "$(realpath "$lib")" = "$(realpath "$p/lib/libonnxslim.so")" ] ||
    { cat "$tmp/ldd.txt" >&2; fail "$exe does not load $p/lib/libonnxslim.so"; }
done
check_consumer_matches_cli "$tmp/consumer-build/consumer" "$ONNXSLIM_CLI"
check_consumer_matches_cli "$tmp/consumer-build/consumer" "$p/bin/onnxslim"
echo "install_shared: ok"

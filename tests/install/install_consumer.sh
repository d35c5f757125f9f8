#!/usr/bin/env bash
# install_consumer: `cmake --install` into a temporary prefix, then
# examples/consumer and examples/custom_pass, copied out of the source
# tree, are configured with only that prefix (find_package(onnxslim)),
# built and run on a real model:
#  - consumer's output is byte for byte what the installed bin/onnxslim
#    writes for the same model (default options both);
#  - custom_pass runs its own pass in a pipeline with a built-in one, and
#    the model it saved carries the pass's node names;
#  - the same consumer built by a Makefile with only
#    `pkg-config --cflags --libs onnxslim` writes the same bytes;
#  - the documents the headers point to are installed.
# Also: the static library holds the protobuf schema's code once.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_model "$ONNXSLIM_TEST_MODEL"
p="$tmp/p"

install_to "$ONNXSLIM_BUILD" "$p"
check_installed_tree "$p" libonnxslim.a
[ ! -e "$p/lib/libonnxslim.so" ] || fail "a static build installed lib/libonnxslim.so"
n="$(ar t "$p/lib/libonnxslim.a" | grep -c '^onnx\.pb\.cc\.o$' || true)"
[ "$n" = 1 ] || fail "lib/libonnxslim.a holds onnx.pb.cc.o $n times, not once"

build_example consumer "$p" "$tmp/consumer-build"
check_consumer_matches_cli "$tmp/consumer-build/consumer" "$p/bin/onnxslim"

build_example custom_pass "$p" "$tmp/custom-build"
"$tmp/custom-build/custom_pass" "$ONNXSLIM_TEST_MODEL" "$tmp/custom.onnx" >"$tmp/custom.txt" 2>&1 ||
  { cat "$tmp/custom.txt" >&2; fail "custom_pass $ONNXSLIM_TEST_MODEL failed"; }
cat "$tmp/custom.txt"
grep -qx 'pipeline: name-nodes,eliminate-dead-nodes' "$tmp/custom.txt" ||
  fail "custom_pass did not run the pipeline name-nodes,eliminate-dead-nodes"
renamed="$(sed -n 's/^name-nodes: nodes-named=\([0-9]*\)$/\1/p' "$tmp/custom.txt")"
[ -n "$renamed" ] && [ "$renamed" -gt 0 ] || fail "the custom pass name-nodes renamed no node"
saved="$(grep '^saved: ' "$tmp/custom.txt")"
[[ "$saved" =~ ^saved:\ ([0-9]+)\ nodes,\ ([0-9]+)\ named$ ]] || fail "custom_pass printed '$saved'"
[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
  fail "custom_pass: the saved model has nodes without the pass's names ($saved)"
# Its output is a valid model for the installed tool too.
quiet "$p/bin/onnxslim" check "$tmp/custom.onnx"

# A Makefile-only consumer: pkg-config is all it knows.
command -v pkg-config >/dev/null || fail "pkg-config missing: run scripts/setup.sh (apt-get install pkg-config)"
[ -f "$p/lib/pkgconfig/onnxslim.pc" ] || fail "the installed tree lacks lib/pkgconfig/onnxslim.pc"
mkdir -p "$tmp/make-consumer"
cp "$ONNXSLIM_SRC/examples/consumer/main.cpp" "$tmp/make-consumer/"
{
  echo 'CXXFLAGS += $(shell pkg-config --cflags onnxslim)'
  echo 'LDLIBS += $(shell pkg-config --libs onnxslim)'
  echo 'consumer: main.cpp'
  printf '\t$(CXX) $(CXXFLAGS) -o $@ $< $(LDLIBS)\n'
} >"$tmp/make-consumer/Makefile"
PKG_CONFIG_PATH="$p/lib/pkgconfig" make -s -C "$tmp/make-consumer" CXX="$ONNXSLIM_CXX" >"$tmp/make.txt" 2>&1 ||
  { cat "$tmp/make.txt" >&2; fail "a Makefile consumer with pkg-config --cflags --libs onnxslim did not build"; }
check_consumer_matches_cli "$tmp/make-consumer/consumer" "$p/bin/onnxslim"
for f in API.md ARCHITECTURE.md Report.md TextFormat.md; do
  [ -f "$p/share/doc/onnxslim/$f" ] || fail "the installed tree lacks share/doc/onnxslim/$f"
done
echo "install_consumer: ok"

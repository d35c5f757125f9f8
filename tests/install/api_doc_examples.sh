#!/usr/bin/env bash
# api_doc_examples: every ```cpp block of docs/API.md that is a complete
# program (it has `int main`) compiles and links against the installed
# package: one downstream project (find_package(onnxslim)) with an
# executable per block, built from a copy outside the source tree. The
# programs are not run (they name models of the reader's).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
doc="$ONNXSLIM_SRC/docs/API.md"
[ -f "$doc" ] || fail "$doc missing"
p="$tmp/p" src="$tmp/examples"
mkdir -p "$src"

# Given the doc, Execute: writes each ```cpp block with `int main` to
# $src/exampleN.cpp (N from 1, in document order, with its first line in
# the doc as a comment); Result: how many.
n="$(awk -v dir="$src" '
  /^[ \t]*```/ {
    if (!inside && $0 ~ /^[ \t]*```[ \t]*(cpp|c\+\+)[ \t]*$/) { inside = 1; body = ""; start = NR + 1; next }
    if (inside) {
      inside = 0
      if (body ~ /int[ \t]+main[ \t]*\(/) {
        n++
        f = dir "/example" n ".cpp"
        printf "// docs/API.md:%d\n%s", start, body > f
        close(f)
      }
      next
    }
  }
  inside { body = body $0 "\n" }
  END { print n + 0 }' "$doc")"
[ "$n" -gt 0 ] || fail "$doc has no \`\`\`cpp block with 'int main' (complete programs are what this test builds)"

{
  echo 'cmake_minimum_required(VERSION 3.21)'
  echo 'project(onnxslim_api_doc_examples LANGUAGES CXX)'
  echo 'set(CMAKE_CXX_STANDARD 20)'
  echo 'find_package(onnxslim REQUIRED)'
  for i in $(seq 1 "$n"); do
    echo "add_executable(example$i example$i.cpp)"
    echo "target_link_libraries(example$i PRIVATE onnxslim::onnxslim)"
  done
} >"$src/CMakeLists.txt"

install_to "$ONNXSLIM_BUILD" "$p"
args=(-S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_CXX_COMPILER="$ONNXSLIM_CXX")
[ -z "$ONNXSLIM_BUILD_TYPE" ] || args+=(-DCMAKE_BUILD_TYPE="$ONNXSLIM_BUILD_TYPE")
[ -z "$ONNXSLIM_LAUNCHER" ] || args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$ONNXSLIM_LAUNCHER")
quiet "$ONNXSLIM_CMAKE" "${args[@]}"
# Keep going: every block that fails is reported, not only the first.
keep=(-k)
[ ! -f "$tmp/build/build.ninja" ] || keep=(-k 0)
if ! "$ONNXSLIM_CMAKE" --build "$tmp/build" -- "${keep[@]}" >"$tmp/build.txt" 2>&1; then
  cat "$tmp/build.txt" >&2
  broken=()
  for i in $(seq 1 "$n"); do
    [ -x "$tmp/build/example$i" ] || broken+=("$(head -1 "$src/example$i.cpp" | sed 's|^// ||')")
  done
  fail "${#broken[@]} of $n docs/API.md programs do not build: the blocks starting at ${broken[*]}"
fi
echo "api_doc_examples: all $n complete programs of docs/API.md build against the installed package"

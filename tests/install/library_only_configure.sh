#!/usr/bin/env bash
# library_only_configure (configure only, nothing is built):
#  - the source configures with the tests and benchmarks off and GoogleTest
#    made unfindable: nothing of the tests' tools (GoogleTest, llvm-14's
#    lit and FileCheck) is looked for;
#  - a parent project that enables testing and add_subdirectory()s the
#    source keeps its build type in its cache (none, then Debug: onnxslim's
#    top-level default Release is not forced on it) and gets none of
#    onnxslim's tests nor its install rules.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gen=()
[ -z "${CMAKE_GENERATOR:-}" ] || gen=(-G "$CMAKE_GENERATOR")

# Library only, top level.
quiet "$ONNXSLIM_CMAKE" "${gen[@]}" -S "$ONNXSLIM_SRC" -B "$tmp/lib" -DCMAKE_CXX_COMPILER="$ONNXSLIM_CXX" \
  -DONNXSLIM_BUILD_TESTS=OFF -DONNXSLIM_BUILD_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
cache="$tmp/lib/CMakeCache.txt"
if grep -nE 'llvm-14|ONNXSLIM_LIT|ONNXSLIM_FILECHECK|GTest_DIR|benchmark_DIR' "$cache"; then
  fail "a library-only configure looked for the tests' tools (cache entries above)"
fi
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$cache" ||
  fail "a top-level configure without a build type did not default to Release (what installs should be)"
echo "library only: configured without GoogleTest, lit or FileCheck"

# As a subproject of a Debug parent.
mkdir -p "$tmp/parent"
cat >"$tmp/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.21)
project(parent LANGUAGES C CXX)
enable_testing()
add_subdirectory("$ONNXSLIM_SRC" onnxslim)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE onnxslim::onnxslim)
CMAKE
printf '#include <onnxslim/onnxslim.h>\nint main() { return onnxslim::version().empty(); }\n' >"$tmp/parent/main.cpp"
cache="$tmp/parent-build/CMakeCache.txt"
# Given the build type the parent is configured with ("" for none),
# Execute: configures it, and checks that its cache keeps that build type.
configure_parent() {
  quiet "$ONNXSLIM_CMAKE" "${gen[@]}" -S "$tmp/parent" -B "$tmp/parent-build" -DCMAKE_BUILD_TYPE="$1" \
    -DCMAKE_CXX_COMPILER="$ONNXSLIM_CXX" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
  local type
  type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")"
  [ "$type" = "$1" ] || fail "the parent's CMAKE_BUILD_TYPE is '$type' after configuring with '$1'"
}
configure_parent ""
configure_parent Debug
(cd "$tmp/parent-build" && "$ONNXSLIM_CTEST" -N) >"$tmp/tests.txt" ||
  fail "ctest -N failed in the parent's build tree"
grep -q '^Total Tests: 0$' "$tmp/tests.txt" ||
  { cat "$tmp/tests.txt" >&2; fail "onnxslim added tests to its parent project"; }
if grep -q 'onnxslimTargets' "$tmp/parent-build/onnxslim/cmake_install.cmake" 2>/dev/null; then
  fail "onnxslim added its install rules to its parent project"
fi
echo "subproject: the parent keeps its build type (none, Debug), gets no tests and no install rules"
echo "library_only_configure: ok"

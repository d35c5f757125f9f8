#!/usr/bin/env bash
# Configures and builds onnxslim into build/ (or $ONNXSLIM_BUILD_DIR).
# Extra arguments are passed to cmake's configure step, e.g. -DONNXSLIM_SANITIZE=ON.
# ONNXSLIM_BUILD_TARGETS="onnxslim_cli" builds only those targets (the demo
# needs just the tool; the test command builds everything).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ONNXSLIM_BUILD_DIR:-$root/build}"
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXSLIM_WERROR="$werror" "$@" >/dev/null
targets=()
for t in ${ONNXSLIM_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"

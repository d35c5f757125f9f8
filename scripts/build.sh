#!/usr/bin/env bash
# Configures and builds onnxslim into build/ (or $ONNXSLIM_BUILD_DIR).
# Extra arguments are passed to cmake's configure step, e.g. -DONNXSLIM_SANITIZE=ON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ONNXSLIM_BUILD_DIR:-$root/build}"
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXSLIM_WERROR="$werror" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"

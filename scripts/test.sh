#!/usr/bin/env bash
# Sets up what is missing, builds, fetches the real models and runs every
# test, then each fuzzer for a minute.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
# The Python module and its tests too, for Debian's interpreter (python/).
"$root/scripts/build.sh" -DONNXSLIM_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3
"$root/scripts/fetch-models.sh"
cd "${ONNXSLIM_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 1800 -j"$(nproc)"
# The fuzzers (tests/fuzz/): a bounded run of each on every submission, in
# a build dir of their own (clang, ASan+UBSan); non-zero on any finding.
# A fixed seed, so that a submission's run explores what the same run did
# before it (long runs with fresh seeds are for finding new bugs).
FUZZ_SEED="${FUZZ_SEED:-1}" "$root/tests/fuzz/run.sh" "${ONNXSLIM_FUZZ_SECONDS:-60}"

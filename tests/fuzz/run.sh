#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] — build the fuzzers and run each for SECONDS.
#
# Configures and builds build-fuzz/ (clang-14, -DONNXSLIM_FUZZ=ON: libFuzzer
# with ASan+UBSan, -O1; ccache when present), then runs fuzz_load_pipeline,
# fuzz_text_roundtrip and fuzz_differential one after another, each for
# SECONDS (default 60) over a fresh copy of its checked-in seed corpus
# (tests/fuzz/corpus/<fuzzer>/) and regression inputs
# (tests/fuzz/regressions/<fuzzer>/), which are never written to. Every
# regression input runs first. Exit status non-zero when any fuzzer found
# something; its input is saved under build-fuzz/findings/<fuzzer>/ and the
# log under build-fuzz/run/<fuzzer>.log.
#
# Environment: ONNXSLIM_FUZZ_BUILD_DIR (default <repo>/build-fuzz),
# JOBS (build parallelism, default nproc), FUZZERS (names to run, default all),
# FUZZ_SEED (libFuzzer's -seed; 0, the default, draws one), FUZZ_ARGS (extra
# libFuzzer flags).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
build="${ONNXSLIM_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-$(nproc)}"
fuzzers=(${FUZZERS:-fuzz_load_pipeline fuzz_text_roundtrip fuzz_differential})

die() { echo "fuzz: error: $*" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number (got '$seconds')"

cc="$(command -v clang-14 || command -v clang || true)"
cxx="$(command -v clang++-14 || command -v clang++ || true)"
[[ -n "$cc" && -n "$cxx" ]] || die "clang not found: install clang and libclang-rt-14-dev (scripts/setup.sh)"

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# No -Werror here: clang warns where gcc (the -Werror CI build) does not,
# e.g. -Wunused-value on a fold expression in runtime/Gemm.cpp.
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Fuzz \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS_FUZZ="-O1 -g" -DCMAKE_CXX_FLAGS_FUZZ="-O1 -g" \
    -DONNXSLIM_FUZZ=ON -DONNXSLIM_BUILD_TESTS=OFF -DONNXSLIM_BUILD_BENCH=OFF \
    "${launcher[@]}" >/dev/null
fi
start=$SECONDS
cmake --build "$build" -j"$jobs" --target "${fuzzers[@]}"
echo "fuzz: build took $((SECONDS - start)) s"

# Halt at the first report; libFuzzer saves the input that caused it.
# Options already in the environment come first (e.g. suppressions=FILE
# while a known report awaits its fix elsewhere); ours override the rest.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}halt_on_error=1:abort_on_error=1:detect_leaks=1:symbolize=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:abort_on_error=1:print_stacktrace=1:symbolize=1"

max_len() {
  case "$1" in
    fuzz_load_pipeline) echo 16384 ;;
    fuzz_text_roundtrip) echo 8192 ;;
    *) echo 2048 ;;
  esac
}

failed=()
for f in "${fuzzers[@]}"; do
  work="$build/run/$f"
  findings="$build/findings/$f"
  rm -rf "$work" "$findings"
  mkdir -p "$work/corpus" "$findings"
  # Copies: libFuzzer adds new inputs to the first corpus directory.
  for src in "$root/tests/fuzz/corpus/$f" "$root/tests/fuzz/regressions/$f"; do
    [[ -d "$src" ]] && cp -r "$src/." "$work/corpus/"
  done
  args=(-max_total_time="$seconds" -max_len="$(max_len "$f")" -timeout=30 -rss_limit_mb=2560
        -print_final_stats=1 -artifact_prefix="$findings/" -seed="${FUZZ_SEED:-0}")
  [[ "$f" != fuzz_differential ]] && args+=(-dict="$root/tests/fuzz/onnx.dict")
  log="$build/run/$f.log"
  echo "fuzz: running $f for $seconds s (log: $log)"
  set +e
  # shellcheck disable=SC2086
  "$build/tests/fuzz/$f" "${args[@]}" ${FUZZ_ARGS:-} "$work/corpus" >"$log" 2>&1
  status=$?
  set -e
  { grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$log" || true; } | tail -n 2 | sed "s/^/fuzz: $f: /"
  grep -E '^stat::number_of_executed_units|^fuzz_differential: [0-9]+ random|^  skipped' "$log" | sed "s/^/fuzz: $f: /" || true
  if ((status != 0)); then
    echo "fuzz: $f: FINDING (exit $status); input(s) in $findings:" >&2
    ls -1 "$findings" >&2 || true
    grep -E -A40 'ERROR: |runtime error|onnxslim fuzz finding|deadly signal' "$log" | head -n 80 >&2 || true
    failed+=("$f")
  fi
done

# A closing line in the plain form test runners print: one per fuzzer.
echo "fuzz: $((${#fuzzers[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi

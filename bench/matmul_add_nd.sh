#!/usr/bin/env bash
# A linear layer with an N-D input in ONNX Runtime: MatMul + Add against
# Reshape -> Gemm -> Reshape, the two forms fuse-matmul-add could leave
# (transforms/fusion/FuseMatMulAdd.cpp keeps MatMul + Add when the input is not
# 2-D; this measures that choice).
#
# For each transformer shape x [B, S, K] x W [K, N] (+ b [N]), both forms are
# written by bench/matmul_add_models.js (same seeded weights), checked to
# give the same outputs in ORT, and timed in ONNX Runtime with one intra-op
# thread, its graph optimizer off ('disabled') and on ('all', its default),
# the four (form, level) sessions timed in one process by
# bench/ort_interleaved.js, RUNS runs each after 2 warm-ups, run by run in
# turn (so that load from other processes hits all alike). Columns: median
# latencies (ms), ratio = Gemm form / MatMul form of the medians and of the
# fastest runs (min; the robust figure when other processes share the
# cores); > 1: MatMul + Add is faster. With the optimizer on, ORT turns the
# MatMul + Add into the Reshape/Gemm/Reshape form itself, so both run the
# same graph there (the 'on' ratio shows the noise).
#
# usage: bench/matmul_add_nd.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-30}"
compare="$build/tests/transforms/onnxslim_compare_outputs"
source "$root/tests/oracle/oracle_env.sh"
[ -x "$compare" ] || { echo "error: $compare not built (target onnxslim_compare_outputs)" >&2; exit 1; }

# "median min" (ms) per LEVEL:MODEL session, timed together: times INPUTS_DIR LEVEL:MODEL...
times() {
  local inputs="$1"; shift
  node "$root/bench/ort_interleaved.js" --runs "$runs" --threads 1 --inputs "$inputs" "$@" |
    sed 's/.*"median_ms":\([^,]*\),"min_ms":\([^}]*\)}.*/\1 \2/'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

shapes="1x128x768x768 1x128x768x3072 1x128x3072x768 8x197x768x768 8x197x768x3072 8x197x3072x768 1x1x768x3072"
printf "%-24s | %-21s %7s | %-21s %7s | %15s\n" "x [B,S,K] x W [K,N]" "off: MatMul+Add/Gemm" "ratio" "on: MatMul+Add/Gemm" "ratio" "min ratio off on"
for s in $shapes; do
  IFS=x read -r B S K N <<<"$s"
  out="$tmp/$s"
  node "$root/bench/matmul_add_models.js" "$B" "$S" "$K" "$N" "$out"
  node "$oracle" "$out/matmul.onnx" --out "$out/a" --seed 3 --quiet >/dev/null
  node "$oracle" "$out/gemm.onnx" --out "$out/b" --input "$out/a/inputs/x.pb" --quiet >/dev/null
  "$compare" "$out/a" "$out/b" --rtol 1e-4 --atol 1e-6 >"$out/cmp" ||
    { echo "error: $s: the two forms differ in ONNX Runtime: $(cat "$out/cmp")" >&2; exit 1; }
  { read -r m0 mm0; read -r g0 mg0; read -r m1 mm1; read -r g1 mg1; } < <(times "$out/a/inputs" \
    "disabled:$out/matmul.onnx" "disabled:$out/gemm.onnx" "all:$out/matmul.onnx" "all:$out/gemm.onnx")
  printf "%-24s | %-21s %6sx | %-21s %6sx | %6sx %6sx\n" "[$B,$S,$K]x[$K,$N]" "$m0 / $g0" "$(ratio "$g0" "$m0")" \
    "$m1 / $g1" "$(ratio "$g1" "$m1")" "$(ratio "$mg0" "$mm0")" "$(ratio "$mg1" "$mm1")"
done
echo "(ORT $(node -e 'console.log(require(process.argv[1]+"/tools/oracle/node_modules/onnxruntime-node/package.json").version)' "$root"), one intra-op thread, $runs interleaved runs each, ms; ratio = Gemm form / MatMul form)"

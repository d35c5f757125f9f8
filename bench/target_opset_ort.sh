#!/usr/bin/env bash
# The real models through --target-opset, timed in ONNX Runtime. For every
# fetched real model (tests/models/models.json), in one run:
#   ours@23 = onnxslim MODEL OUT --target-opset 23
#   ours@13 = onnxslim MODEL OUT --target-opset 13
# and the original are timed in ONNX Runtime with one intra-op thread, its
# graph optimizer off ('disabled': what the file itself gives) and on ('all',
# its default), on the model's seeded inputs (tools/oracle --spec). The six
# (model, level) sessions are timed in one process by bench/ort_interleaved.js,
# RUNS runs each after 2 warm-ups, run by run in turn (so that load from
# other processes hits all alike). Columns: median latencies (ms) and ratios
# ours / original (lower is better) of the medians, and of the fastest runs
# (min: the robust figure when other processes share the cores). Node counts (subgraphs included) come from onnxslim's
# summary. tests/transforms/ort_target_opset.sh checks the outputs.
#
# usage: bench/target_opset_ort.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-20}"
onnxslim="$build/tools/onnxslim"
oracle="$root/tools/oracle/oracle.js"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# "median min" (ms) per LEVEL:MODEL session, timed together: times INPUTS_DIR LEVEL:MODEL...
times() {
  local inputs="$1"; shift
  node "$root/bench/ort_interleaved.js" --runs "$runs" --threads 1 --inputs "$inputs" "$@" |
    sed 's/.*"median_ms":\([^,]*\),"min_ms":\([^}]*\)}.*/\1 \2/'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# Node counts before and after from onnxslim's summary table (file: its stdout).
nodes_before() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $3); print $3}' "$1"; }
nodes_after() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $4); print $4}' "$1"; }
opset_of() {
  "$onnxslim" dump "$1" 2>/dev/null | sed -n '1,5s/.*opset_import: \[[^]]*"" : \([0-9]*\).*/\1/p' | head -1
}

printf "%-11s %5s %15s | %-26s %13s | %-26s %13s | %31s\n" model opset "nodes" \
  "ORT off: orig / @23 / @13" "ratio @23 @13" "ORT on: orig / @23 / @13" "ratio @23 @13" "min ratio off @23 @13 on @23 @13"
printf "%-11s %5s %15s |\n" "" "" "orig @23 @13"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  "$onnxslim" "$model" "$out/t23.onnx" --target-opset 23 >"$out/s23"
  "$onnxslim" "$model" "$out/t13.onnx" --target-opset 13 >"$out/s13"
  node "$oracle" "$model" --out "$out/in" --spec "$spec:$name" --seed 7 --quiet >/dev/null
  { read -r o0 mo0; read -r a0 ma0; read -r b0 mb0; read -r o1 mo1; read -r a1 ma1; read -r b1 mb1; } < <(times "$out/in/inputs" \
    "disabled:$model" "disabled:$out/t23.onnx" "disabled:$out/t13.onnx" "all:$model" "all:$out/t23.onnx" "all:$out/t13.onnx")
  printf "%-11s %5s %15s | %-26s %5sx %5sx | %-26s %5sx %5sx | %5sx %5sx %5sx %5sx\n" "$name" "$(opset_of "$model")" \
    "$(nodes_before "$out/s23") $(nodes_after "$out/s23") $(nodes_after "$out/s13")" \
    "$o0 / $a0 / $b0" "$(ratio "$a0" "$o0")" "$(ratio "$b0" "$o0")" \
    "$o1 / $a1 / $b1" "$(ratio "$a1" "$o1")" "$(ratio "$b1" "$o1")" \
    "$(ratio "$ma0" "$mo0")" "$(ratio "$mb0" "$mo0")" "$(ratio "$ma1" "$mo1")" "$(ratio "$mb1" "$mo1")"
done
echo "(ORT $(node -e 'console.log(require(process.argv[1]+"/tools/oracle/node_modules/onnxruntime-node/package.json").version)' "$root"), one intra-op thread, $runs interleaved runs each, ms)"

#!/usr/bin/env bash
# The real models through --target-opset, timed in ONNX Runtime. For every
# fetched real model (tests/models/models.json), in one run:
#   ours@23 = onnxslim MODEL OUT --target-opset 23
#   ours@13 = onnxslim MODEL OUT --target-opset 13
# and the original are timed in ONNX Runtime with one intra-op thread, its
# graph optimizer off ('disabled': what the file itself gives) and on ('all',
# its default), each by tools/oracle --bench RUNS (2 warm-ups) on the
# model's seeded inputs. The models are timed in turn, ROUNDS times
# (interleaved, so that load from other processes hits all alike); a column
# is the median of the rounds' medians (ms). Ratios are ours / original
# (lower is better). Node counts (subgraphs included) come from onnxslim's
# summary. tests/transforms/ort_target_opset.sh checks the outputs.
#
# usage: bench/target_opset_ort.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-10}"
rounds="${3:-3}"
onnxslim="$build/tools/onnxslim"
oracle="$root/tools/oracle/oracle.js"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Median latency (ms) in ORT, one thread: bench MODEL LEVEL OUTDIR NAME
bench() {
  node "$oracle" "$1" --out "$3" --spec "$spec:$4" --seed 7 --threads 1 --opt-level "$2" --bench "$runs" --quiet |
    node -e 'const l=require("fs").readFileSync(0,"utf8");console.log(JSON.parse(l.trim().split("\n").pop()).median_ms)'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# Node counts before and after from onnxslim's summary table (file: its stdout).
nodes_before() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $3); print $3}' "$1"; }
nodes_after() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $4); print $4}' "$1"; }
opset_of() {
  "$onnxslim" dump "$1" 2>/dev/null | sed -n '1,5s/.*opset_import: \[[^]]*"" : \([0-9]*\).*/\1/p' | head -1
}

printf "%-11s %5s %15s | %-26s %11s | %-26s %11s\n" model opset "nodes" \
  "ORT off: orig / @23 / @13" "ratio @23 @13" "ORT on: orig / @23 / @13" "ratio @23 @13"
printf "%-11s %5s %15s |\n" "" "" "orig @23 @13"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  "$onnxslim" "$model" "$out/t23.onnx" --target-opset 23 >"$out/s23"
  "$onnxslim" "$model" "$out/t13.onnx" --target-opset 13 >"$out/s13"
  declare -A t=()
  for ((r = 0; r < rounds; r++)); do
    for level in disabled all; do
      t[o$level]+=" $(bench "$model" $level "$out/r" "$name")"
      t[a$level]+=" $(bench "$out/t23.onnx" $level "$out/r" "$name")"
      t[b$level]+=" $(bench "$out/t13.onnx" $level "$out/r" "$name")"
    done
  done
  for k in "${!t[@]}"; do t[$k]=$(median <<<"${t[$k]}"); done
  printf "%-11s %5s %15s | %-26s %5sx %5sx | %-26s %5sx %5sx\n" "$name" "$(opset_of "$model")" \
    "$(nodes_before "$out/s23") $(nodes_after "$out/s23") $(nodes_after "$out/s13")" \
    "${t[odisabled]} / ${t[adisabled]} / ${t[bdisabled]}" "$(ratio "${t[adisabled]}" "${t[odisabled]}")" \
    "$(ratio "${t[bdisabled]}" "${t[odisabled]}")" \
    "${t[oall]} / ${t[aall]} / ${t[ball]}" "$(ratio "${t[aall]}" "${t[oall]}")" "$(ratio "${t[ball]}" "${t[oall]}")"
  unset t
done
echo "(ORT $(node -e 'console.log(require(process.argv[1]+"/tools/oracle/node_modules/onnxruntime-node/package.json").version)' "$root"), one intra-op thread, $runs runs x $rounds rounds, medians of medians, ms)"

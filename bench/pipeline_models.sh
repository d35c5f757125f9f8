#!/usr/bin/env bash
# The default pipeline on every fetched real model: nodes, initializers,
# Constant nodes, constant bytes and file size before -> after, and the
# end-to-end time of `onnxslim IN OUT` against a bare load+save of the same
# model (`onnxslim IN OUT --passes=`), both measured in this run (median of
# RUNS, interleaved so that machine noise hits both alike).
#
# usage: bench/pipeline_models.sh [BUILD_DIR] [RUNS] [extra onnxslim flags...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
shift $(( $# > 2 ? 2 : $# ))
onnxslim="$build/tools/onnxslim"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# row NAME: the before/after columns of one line of the summary table.
row() { awk -F'|' -v k="$1" '$2 ~ "^ *"k" *$" {gsub(/ /,"",$3); gsub(/ /,"",$4); print $3 "->" $4}' "$tmp/summary"; }

printf "%-12s %12s %10s %10s %22s %22s %9s %9s %7s\n" model nodes inits Constant "constant bytes" "file size" "pipe ms" "l+s ms" ratio
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  "$onnxslim" "$model" "$tmp/out.onnx" "$@" >"$tmp/summary"
  : >"$tmp/pipe"; : >"$tmp/ls"
  for _ in $(seq "$runs"); do
    t0=$(now); "$onnxslim" "$model" "$tmp/out.onnx" -q "$@"; t1=$(now)
    "$onnxslim" "$model" "$tmp/rt.onnx" -q --passes=; t2=$(now)
    echo $(( (t1 - t0) / 1000 )) >>"$tmp/pipe"; echo $(( (t2 - t1) / 1000 )) >>"$tmp/ls"
  done
  p=$(median <"$tmp/pipe"); l=$(median <"$tmp/ls")
  printf "%-12s %12s %10s %10s %22s %22s " "$name" "$(row nodes)" "$(row initializers)" \
    "$(row Constant)" "$(row 'constant bytes')" "$(row 'file size')"
  awk -v p="$p" -v l="$l" 'BEGIN { printf "%9.1f %9.1f %6.2fx\n", p / 1000, l / 1000, p / l }'

done

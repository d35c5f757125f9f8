#!/usr/bin/env bash
# --target-opset on the real models, checked in ONNX Runtime.
#
# For every fetched real model (tests/models/models.json) and each target T
# in 23 and 13 (up from every model; down from the opset-16 Silero VAD
# models; 13 is hello_deepa's own opset, where the run is the default
# pipeline alone):
#   onnxslim MODEL OUT --target-opset T --verify-each
# must succeed (convert-opset refuses, naming the node, what it cannot
# convert), OUT must import the default domain at opset T, load in ONNX
# Runtime (tools/oracle, CPU) and give the original's outputs on the same
# seeded inputs: |a - b| <= atol + rtol * |b| with rtol 1e-4 and atol 1e-6
# (float32; the optimizer of ORT off for both, so that what runs is the
# file as written). Prints nodes before -> after and the max differences
# per model and target.
#
# usage: ort_target_opset.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
source "$root/tests/oracle/oracle_env.sh"
rtol=1e-4 atol=1e-6
targets="23 13"

passed=0 failed=0 failures=()
fail() { failed=$((failed + 1)); failures+=("$1"); }
# The default domain's opset of MODEL (onnxslim dump's header).
opset_of() {
  "$onnxslim" dump "$1" 2>/dev/null | sed -n '1,5s/.*opset_import: \[[^]]*"" : \([0-9]*\).*/\1/p' | head -1
}
# "before -> after" node counts from onnxslim's summary table (file: its stdout).
nodes() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $3); gsub(/ /, "", $4); print $3 " -> " $4}' "$1"; }

for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/a"
  if ! node "$oracle" "$model" --out "$out/a" --spec "$spec:$name" --seed 7 --no-optimize --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the original: $(head -c 400 "$out/err")"; continue
  fi
  from="$(opset_of "$model")"
  for t in $targets; do
    what="$name (opset $from -> $t)"
    conv="$out/t$t.onnx"; mkdir -p "$out/b$t"
    if ! "$onnxslim" "$model" "$conv" --target-opset "$t" --verify-each >"$out/slim$t" 2>"$out/err"; then
      fail "$what: onnxslim: $(head -c 400 "$out/err")"; continue
    fi
    got="$(opset_of "$conv")"
    [ "$got" = "$t" ] || { fail "$what: the output imports opset '$got'"; continue; }
    if ! node "$oracle" "$conv" --out "$out/b$t" --spec "$spec:$name" --seed 7 --no-optimize --quiet >/dev/null 2>"$out/err"; then
      fail "$what: ONNX Runtime cannot run the converted model: $(head -c 400 "$out/err")"; continue
    fi
    if "$compare" "$out/a" "$out/b$t" --rtol $rtol --atol $atol >"$out/cmp$t"; then
      passed=$((passed + 1)); echo "ok   $what: nodes $(nodes "$out/slim$t")"; sed 's/^/     /' "$out/cmp$t"
    else
      fail "$what: outputs differ: $(cat "$out/cmp$t")"
    fi
  done
done

for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "ort target opset: $passed passed, $failed failed"
[ "$failed" = 0 ]

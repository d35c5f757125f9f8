#!/usr/bin/env bash
# End-to-end check of `onnxslim --dtype fp16` against ONNX Runtime.
#
# Every fetched real model: `onnxslim IN OUT --dtype fp16 --verify-each`
# (the default pipeline, then convert-float-type); the float16 model must
# load and run in ONNX Runtime (tools/oracle, CPU), and its outputs must be
# within the float16 tolerance of the original model's ONNX Runtime outputs
# on the same seeded inputs (tests/models/models.json):
#
#   |fp16 - fp32| <= 1e-2 * |fp32| + 1e-2 * max|fp32 output| + 1e-6
#
# float16 keeps 11 significant bits (2^-11 ~ 5e-4 relative per rounding);
# rounding errors of a few dozen layers add up to ~1e-3..1e-2 of an output's
# scale (measured: at most 5e-3 of it, ppocr_rec), and a
# result near 0 can only be as exact as the scale of the values it was
# computed from, hence the term in max|fp32 output|; 1e-6 is 16 float16
# subnormal steps, for outputs that are all tiny (ppocr_det on random input).
#
# A constant beyond the float16 range stays float32 with the nodes that
# compute with it (vad_legacy multiplies by 2^20 before a Log; onnxslim
# warns, naming it). Where the interpreter finds the float16 outputs beyond
# this same tolerance on the check's inputs (the spec below), onnxslim keeps
# in float32 the nodes deciding comparisons and the shortest prefix of the
# graph that brings them back (mlsd_tiny and mlsd_large: their error grows
# with depth, 7e-2 of the scale at `offsets`, and `scores` is masked by
# Equal(MaxPool(s), s), whose peaks move when neighbours round to the same
# float16); the table shows the bytes that then remain. Every model must be
# within tolerance.
#
# Inputs: the models.json entries, except that mlsd's image input gets the
# 8-bit pixel range [0, 255] it expects (the model computes x / 127.5 - 1;
# on the default [0, 1) inputs the whole signal would sit in the last bits
# of a float16 near -1).
#
# The float16 model must also pass the ONNX checker of python3-onnx
# (full_check), and its weights take at most 55% of the float32 bytes unless
# the fallback kept nodes in float32 (mlsd: their outputs move by 0.5% of
# their scale for a 1e-4 relative change of one depthwise weight even in
# float32, so float16's rounding of the weights alone takes them past the
# tolerance on these inputs).
#
# Prints the table: model, constant bytes before (default pipeline, float32)
# -> after (--dtype fp16) and their ratio, max abs / rel diff, result.
#
# usage: ort_convert_float16.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
source "$root/tests/oracle/oracle_env.sh"
spec="$tmp/models.json"
node -e '
  const s = require(process.argv[1]);
  for (const m of s.models)
    if (m.name.startsWith("mlsd_"))
      for (const i of m.inputs) i.range = [0, 255];
  require("fs").writeFileSync(process.argv[2], JSON.stringify(s));' "$root/tests/models/models.json" "$spec" ||
  { echo "error: cannot read tests/models/models.json" >&2; exit 1; }

# "constant bytes" after optimizing, in bytes, from onnxslim's summary table.
constBytes() {
  awk -F'|' '/constant bytes/ { v = $4; gsub(/ /, "", v);
    u = 1; if (v ~ /KiB$/) u = 1024; if (v ~ /MiB$/) u = 1048576; if (v ~ /GiB$/) u = 1073741824;
    gsub(/[A-Za-z]/, "", v); printf "%d\n", v * u }' "$1"
}

passed=0 failed=0 failures=() rows=()
fail() { failed=$((failed + 1)); failures+=("$1"); }
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/fp32.onnx" --no-model-check >"$out/sum32" 2>"$out/err32"; then
    fail "$name: onnxslim: $(cat "$out/err32")"; continue
  fi
  if ! "$onnxslim" "$model" "$out/fp16.onnx" --dtype fp16 --verify-each --input-specs "$spec:$name" >"$out/sum16" 2>"$out/err16"; then
    fail "$name: onnxslim --dtype fp16: $(cat "$out/err16")"; continue
  fi
  b32=$(constBytes "$out/sum32") b16=$(constBytes "$out/sum16")
  ratio=$(awk -v a="$b16" -v b="$b32" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
  if ! /usr/bin/python3 -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' \
       "$out/fp16.onnx" >"$out/onnxchk" 2>&1; then
    fail "$name: the ONNX checker rejects the float16 model: $(tail -c 400 "$out/onnxchk")"; continue
  fi
  if ! grep -q "^float32 kept for" "$out/err16" && awk -v r="$ratio" 'BEGIN { exit !(r > 0.55) }'; then
    fail "$name: float16 weights are $ratio of float32's (expected about half)"; continue
  fi
  if ! node "$oracle" "$model" --out "$out/a" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the original: $(head -c 400 "$out/err")"; continue
  fi
  if ! node "$oracle" "$out/fp16.onnx" --out "$out/b" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot load or run the float16 model: $(head -c 400 "$out/err")"; continue
  fi
  "$compare" "$out/a" "$out/b" --rtol 1e-2 --atol 1e-6 --scaled-atol 1e-2 >"$out/cmp"
  status=$?
  diffs=$(awk '{ for (i = 1; i <= NF; i++) { if ($i == "abs") a = $(i + 2); if ($i == "rel") r = $(i + 2) }
                 gsub(/,/, "", a); gsub(/,/, "", r); if (a + 0 > ma) ma = a + 0; if (r + 0 > mr) mr = r + 0 }
               END { printf "%.3g / %.3g", ma, mr }' "$out/cmp")
  kept=$(sed -n 's/^float32 kept for \([0-9]*\) node(s) deciding comparisons and the first \([0-9]*\) of \([0-9]*\) nodes$/\1+\2 of \3 nodes kept/p' "$out/err16")
  if [ "$status" = 0 ]; then
    result="ok${kept:+ ($kept)}"; passed=$((passed + 1))
  else
    result=MISMATCH; fail "$name: outputs differ beyond the float16 tolerance: $(cat "$out/cmp")"
  fi
  rows+=("$(printf '%-12s %10s -> %10s  %6s   %-22s %s' "$name" "$b32" "$b16" "$ratio" "$diffs" "$result")")
  sed 's/^/     /' "$out/cmp"
  sed 's/^/     /' "$out/err16"
done

printf '%-12s %10s    %10s  %6s   %-22s %s\n' model "fp32 bytes" "fp16 bytes" ratio "max abs / rel diff" result
for r in "${rows[@]}"; do echo "$r"; done
for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "ort convert float16: $passed within tolerance, $failed failed"
[ "$failed" = 0 ]

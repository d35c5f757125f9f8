#!/usr/bin/env bash
# End-to-end check of the default pipeline against ONNX Runtime.
#
#  - Every fetched real model: `onnxslim IN OUT --verify-each` (the default
#    pipeline, IR verifier after every pass); `onnxslim verify IN OUT` with
#    no flags must say they are equivalent (its inputs sized as the model
#    check sizes them); then the original and the
#    optimized model run in ONNX Runtime (tools/oracle) on the same seeded
#    inputs (tests/models/models.json); every output must match within a
#    relative difference of 1e-6.
#  - Every conformance model (libonnx-testdata): the same pipeline must
#    succeed; when it changed the model (its output differs from a pure
#    load+save), both run in ONNX Runtime on test_data_set_0 and must match.
#    A model ONNX Runtime cannot run in its original form is skipped.
#
# usage: ort_default_pipeline.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE] [TESTDATA]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
testdata="${4:-/usr/share/libonnx-testdata/data}"
source "$root/tests/oracle/oracle_env.sh"
# ONNX Runtime optimizes the original and the optimized model differently
# (its own fusions apply once shapes and constants are static; BatchNorm
# folded into Conv weights rounds differently): measured up to 6e-6
# relative (ppocr_rec) with ORT optimizations on, 0 with them off.
rtol=1e-5 atol=1e-6

passed=0 failed=0 skipped=0 unchanged=0 failures=()
fail() { failed=$((failed + 1)); failures+=("$1"); }

# Real models.
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/opt.onnx" -q --verify-each 2>"$out/err"; then
    fail "$name: onnxslim: $(cat "$out/err")"; continue
  fi
  if ! "$onnxslim" verify "$model" "$out/opt.onnx" >"$out/verify" 2>&1; then
    fail "$name: onnxslim verify with no flags: $(tail -3 "$out/verify")"; continue
  fi
  if ! node "$oracle" "$model" --out "$out/a" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>"$out/err" ||
     ! node "$oracle" "$out/opt.onnx" --out "$out/b" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>>"$out/err"; then
    fail "$name: onnxruntime: $(cat "$out/err")"; continue
  fi
  if "$compare" "$out/a" "$out/b" --rtol $rtol --atol $atol >"$out/cmp"; then
    passed=$((passed + 1)); echo "ok   $name"; sed 's/^/     /' "$out/cmp"
  else
    fail "$name: outputs differ: $(cat "$out/cmp")"
  fi
done

# Conformance models.
for dir in "$testdata"/{node,pytorch-converted,pytorch-operator,simple}/*/; do
  model="$dir/model.onnx"
  [ -f "$model" ] || continue
  case_name="$(basename "$(dirname "$dir")")/$(basename "$dir")"
  out="$tmp/conf"; rm -rf "$out"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/opt.onnx" -q --verify-each 2>"$out/err"; then
    fail "$case_name: onnxslim: $(cat "$out/err")"; continue
  fi
  if ! "$onnxslim" "$model" "$out/rt.onnx" -q --passes= 2>"$out/err"; then
    fail "$case_name: load+save: $(cat "$out/err")"; continue
  fi
  if cmp -s "$out/opt.onnx" "$out/rt.onnx"; then
    unchanged=$((unchanged + 1)); continue
  fi
  # Random ops (kept, never folded) give different outputs on every run.
  if "$onnxslim" dump "$model" 2>/dev/null | grep -qE '= (Random[A-Za-z]*|Bernoulli|Multinomial)[ (<]'; then
    skipped=$((skipped + 1)); echo "skip $case_name (random outputs)"; continue
  fi
  inputs=()
  for f in "$dir"/test_data_set_0/input_*.pb; do [ -f "$f" ] && inputs+=(--input "$f"); done
  if ! node "$oracle" "$model" --out "$out/a" "${inputs[@]}" --quiet >/dev/null 2>"$out/err"; then
    skipped=$((skipped + 1)); echo "skip $case_name (ONNX Runtime cannot run the original)"; continue
  fi
  if ! node "$oracle" "$out/opt.onnx" --out "$out/b" "${inputs[@]}" --quiet >/dev/null 2>"$out/err"; then
    fail "$case_name: ONNX Runtime cannot run the optimized model: $(head -c 400 "$out/err")"; continue
  fi
  if "$compare" "$out/a" "$out/b" --rtol $rtol --atol $atol >"$out/cmp"; then
    passed=$((passed + 1)); echo "ok   $case_name"
  else
    fail "$case_name: outputs differ: $(cat "$out/cmp")"
  fi
done

for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "ort default pipeline: $passed passed (changed models run in ONNX Runtime), $unchanged conformance models unchanged, $skipped skipped, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# End-to-end check of --target=onnxruntime against ONNX Runtime: for every
# fetched real model, `onnxslim IN OUT --target=onnxruntime --verify-each`
# (the default pipeline plus fuse-conv-relu), then the original and the
# output run in ONNX Runtime (tools/oracle, graph optimizer off for both, so
# that the com.microsoft.FusedConv nodes we wrote are the ones that run and
# ORT's own fusions, which round differently, do not blur the comparison)
# on the same seeded inputs; outputs must match within rtol/atol (see
# below). Prints
# the FusedConv count per model and requires at least one on the models
# with Conv + activation (blazeface, mlsd, PaddleOCR).
#
# Tolerance: fusions reassociate float arithmetic (BatchNormalization folded
# into weights in double, a bias added inside the convolution), so elements
# may move by a few float ulps of the partial sums per layer: |a - b| <=
# atol + rtol * |b| with rtol 1e-4 and atol 1e-6 (measured: at most 2e-5
# relative, on PaddleOCR rec's softmax). Outputs near zero (sigmoid tails,
# recurrent states), where any rounding is a huge relative change, are
# judged by the absolute term.
#
# usage: ort_target_onnxruntime.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
source "$root/tests/oracle/oracle_env.sh"
rtol=1e-4 atol=1e-6
expect_fused="face_front face_back mlsd_tiny mlsd_large ppocr_det ppocr_rec ppocr_cls"

passed=0 failed=0 failures=()
fail() { failed=$((failed + 1)); failures+=("$1"); }

for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/opt.onnx" -q --verify-each --target=onnxruntime 2>"$out/err"; then
    fail "$name: onnxslim: $(cat "$out/err")"; continue
  fi
  fused=$("$onnxslim" "$out/opt.onnx" - --passes= --emit=text | grep -c 'com.microsoft.FusedConv' || true)
  case " $expect_fused " in
    *" $name "*) [ "$fused" -gt 0 ] || { fail "$name: no FusedConv in the output"; continue; } ;;
  esac
  if ! node "$oracle" "$model" --out "$out/a" --spec "$spec:$name" --seed 7 --no-optimize --quiet >/dev/null 2>"$out/err" ||
     ! node "$oracle" "$out/opt.onnx" --out "$out/b" --spec "$spec:$name" --seed 7 --no-optimize --quiet >/dev/null 2>>"$out/err"; then
    fail "$name: onnxruntime: $(cat "$out/err")"; continue
  fi
  if "$compare" "$out/a" "$out/b" --rtol $rtol --atol $atol >"$out/cmp"; then
    passed=$((passed + 1)); echo "ok   $name ($fused FusedConv)"; sed 's/^/     /' "$out/cmp"
  else
    fail "$name: outputs differ: $(cat "$out/cmp")"
  fi
done

for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "ort target onnxruntime: $passed passed, $failed failed"
[ "$failed" = 0 ]

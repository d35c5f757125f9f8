#!/usr/bin/env bash
# convert-opset on the ONNX conformance suite, checked in ONNX Runtime.
#
# Every conformance model (Debian's libonnx-testdata: node, pytorch-converted,
# pytorch-operator, simple) is converted with
#   onnxslim MODEL OUT --passes='convert-opset{target=T}' --stats
# for T = 24 (the newest opset), 13, 11 and 9 (down from newer models, up
# from older ones; TARGETS="13" runs fewer). Each conversion is one of:
#   converted  the pass converted it: the original and the converted model
#              then run in ONNX Runtime (tools/oracle, CPU) on the test case's
#              inputs (test_data_set_0) and must give the same outputs
#              (floats within rtol 1e-4, atol 1e-5)
#   declined   the pass declined it, naming the node and what the target
#              cannot express (listed, grouped by reason); the declining
#              models must be exactly those listed for T in
#              convert_opset_declines.expect (UPDATE_EXPECT=1 rewrites it)
#   at target  the model is at T already (nothing to do)
#   refused    onnxslim refuses the input as invalid (not the pass's business)
# When ONNX Runtime cannot run the original (opset 6 kernels are gone, for
# instance), the converted model is compared with the test case's expected
# outputs (output_N.pb, rtol 1e-3, atol 1e-4) and the count is printed.
# Fails on any mismatch, on a converted model that ONNX Runtime cannot load
# or run while the original runs, on an onnxslim crash or error, and on an
# invalid converted model (onnxslim validates what it writes).
#
# Prints, per target: converted / declined / at target / refused, the ORT
# comparison (same / mismatches / original not runnable in ORT), and the
# declines grouped by reason.
#
# MODELS=REGEX converts only the models whose name (e.g. node/test_stft)
# matches, and compares only their lines of the expect file.
#
# usage: ort_convert_opset.sh ONNXSLIM [TESTDATA_DIR]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
data="${2:-/usr/share/libonnx-testdata/data}"
source "$root/tests/oracle/oracle_env.sh"
expect="$root/tests/transforms/convert_opset_declines.expect"
[ -d "$data/node" ] ||
  { echo "error: $data/node missing: apt-get install libonnx-testdata" >&2; exit 1; }

# One conversion: writes "STATUS<TAB>NAME<TAB>DETAIL" to $tmp/status/NAME.T.
convert_one() {
  local dir="$1" target="$2" name out err
  name="$(basename "$(dirname "$dir")")/$(basename "$dir")"
  out="$tmp/$(echo "$name" | tr / _).$target.onnx"
  err="$out.err"
  local status detail=""
  if ! "$onnxslim" "$dir/model.onnx" "$out" -q --stats --no-model-check --passes="convert-opset{target=$target}" \
    >"$out.stats" 2>"$err"; then
    if grep -q "invalid model" "$err"; then status=refused; else status=error; detail="$(head -c 400 "$err" | tr '\n\t' '  ')"; fi
  elif grep -q "declined:" "$err"; then
    status=declined; detail="$(sed -n 's/.*declined: //p' "$err" | head -1)"
  elif grep -q "convert-opset" "$out.stats" "$err"; then
    status=converted
  else
    status=attarget
  fi
  printf '%s\t%s\t%s\n' "$status" "$name" "$detail" >"$tmp/status/$(echo "$name" | tr / _).$target"
}
export -f convert_one
export onnxslim tmp
mkdir -p "$tmp/status"
for d in "$data"/node/*/ "$data"/pytorch-converted/*/ "$data"/pytorch-operator/*/ "$data"/simple/*/; do
  [ -f "$d/model.onnx" ] && [ -d "$d/test_data_set_0" ] && echo "${d%/}"
done | grep -E "/(${MODELS:-.*})\$" >"$tmp/models"
if [ -n "${MODELS:-}" ] && [ -n "${UPDATE_EXPECT:-}" ]; then
  echo "error: UPDATE_EXPECT rewrites the whole expect file: run it without MODELS" >&2; exit 1
fi
[ -s "$tmp/models" ] || { echo "error: no model matches MODELS='${MODELS:-}'" >&2; exit 1; }

failed=0
for target in ${TARGETS:-24 13 11 9}; do
  xargs -P 2 -I{} bash -c 'convert_one "$1" "$2"' _ {} "$target" <"$tmp/models"
  cat "$tmp"/status/*."$target" >"$tmp/all.$target"
  converted=$(grep -c '^converted' "$tmp/all.$target")
  declined=$(grep -c '^declined' "$tmp/all.$target")
  attarget=$(grep -c '^attarget' "$tmp/all.$target")
  refused=$(grep -c '^refused' "$tmp/all.$target")
  errors=$(grep -c '^error' "$tmp/all.$target")
  grep '^error' "$tmp/all.$target" | sed "s/^error\t/FAIL (target $target) onnxslim: /"
  [ "$errors" = 0 ] || failed=1
  : >"$tmp/jobs"
  while IFS=$'\t' read -r status name _; do
    [ "$status" = converted ] || continue
    dir="$data/$name"
    # A model that draws random numbers: only types and shapes compare.
    random=""
    if grep -qaE 'Bernoulli|RandomUniform|RandomNormal|Multinomial' "$dir/model.onnx"; then random=random; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$dir/model.onnx" "$tmp/$(echo "$name" | tr / _).$target.onnx" \
      "$dir/test_data_set_0" "$random" >>"$tmp/jobs"
  done <"$tmp/all.$target"
  node "$root/tests/transforms/ort_convert_opset.js" "$tmp/jobs" >"$tmp/results" 2>"$tmp/node.err" ||
    { echo "FAIL target $target: ort_convert_opset.js: $(head -c 400 "$tmp/node.err")"; failed=1; }
  same=$(grep -c $'\tsame\t' "$tmp/results")
  expected=$(grep -c $'\texpected\t' "$tmp/results")
  differ=$(grep -c $'\tdiffer\t' "$tmp/results")
  # ONNX Runtime without a kernel for an op version the converted model
  # uses (RandomUniformLike-22, inside Bernoulli's function body): the
  # model is valid ONNX; listed, not a failure of the conversion.
  nokernel=$(grep -P '\tconv-fails\t' "$tmp/results" | grep -c 'Could not find an implementation for')
  convfails=$(grep -P '\tconv-fails\t' "$tmp/results" | grep -vc 'Could not find an implementation for')
  origfails=$(grep -c $'\torig-fails\t' "$tmp/results")
  grep -P '\t(differ|conv-fails)\t' "$tmp/results" | grep -v 'Could not find an implementation for' |
    sed "s/^/FAIL (target $target) /"
  [ "$differ" = 0 ] && [ "$convfails" = 0 ] || failed=1
  echo "target $target: converted $converted, declined $declined, at target $attarget, refused (invalid input) $refused, onnxslim errors $errors"
  echo "  in ONNX Runtime: $same same, $expected matching the test case's expected outputs where ORT's own kernel rounds differently, mismatches $differ, converted model fails $convfails, original not runnable $origfails, no ORT kernel for the new version $nokernel"
  grep -P '\tconv-fails\t' "$tmp/results" | grep 'Could not find an implementation for' |
    sed 's/^\([^\t]*\)\t[^\t]*\t.*\(Could not find an implementation for [^ ]*\).*/   no ORT kernel: \1 (\2)/'
  expsame=$(grep -P '\torig-fails\t' "$tmp/results" | grep -c $'\texpected-same$')
  expdiffer=$(grep -P '\torig-fails\t' "$tmp/results" | grep -c $'\texpected-differ')
  echo "  of those, the converted model runs and matches the test case's expected outputs: $expsame; differs: $expdiffer"
  grep -P '\torig-fails\t' "$tmp/results" | grep $'\texpected-differ' | cut -f1,4 | sed 's/^/   expected-differ (not a failure: no ORT reference) /'
  if [ "$origfails" != 0 ]; then
    echo "  original not runnable in ONNX Runtime (nothing to compare), by reason:"
    grep -P '\torig-fails\t' "$tmp/results" | cut -f3 | sed 's/.*\(Could not find an implementation for [^ ]*\).*/\1/' |
      cut -c1-90 | sort | uniq -c | sort -rn | head -12 | sed 's/^/   /'
  fi
  if [ "$declined" != 0 ]; then
    echo "  declined, by reason (node names elided):"
    grep '^declined' "$tmp/all.$target" | cut -f3 |
      sed 's/^node [^:]*: //; s/; the model stays.*//' | sed "s/'[^']*'/'..'/g" | sort | uniq -c | sort -rn | sed 's/^/   /'
    if [ -n "${VERBOSE:-}" ]; then grep '^declined' "$tmp/all.$target" | cut -f2,3 | sed 's/^/    /'; fi
  fi
  # The declines are exactly the expected ones (each with no exact form at
  # the target): a new one is a regression, a listed one that converts
  # now is a stale line.
  grep '^declined' "$tmp/all.$target" | cut -f2 | sort >"$tmp/declined.$target"
  awk -v t="$target" '$1 == t { print $2 }' "$expect" | grep -E "(^|/)(${MODELS:-.*})\$" | sort >"$tmp/expected.$target"
  comm -23 "$tmp/declined.$target" "$tmp/expected.$target" | while read -r name; do
    echo "FAIL (target $target) $name declines and is not in $(basename "$expect"): $(grep -P "^declined\t$name\t" "$tmp/all.$target" | cut -f3)"
  done | tee "$tmp/newdeclines.$target"
  comm -13 "$tmp/declined.$target" "$tmp/expected.$target" | sed "s|^|FAIL (target $target) no longer declines: remove it from $(basename "$expect"): |" |
    tee "$tmp/stale.$target"
  [ ! -s "$tmp/newdeclines.$target" ] && [ ! -s "$tmp/stale.$target" ] || failed=1
  if [ -n "${UPDATE_EXPECT:-}" ]; then
    sed "s/^/$target /" "$tmp/declined.$target" >>"$tmp/expect.new"
  fi
done
if [ -n "${UPDATE_EXPECT:-}" ]; then
  { sed -n '/^#/p' "$expect"; sort -k1,1nr -k2 "$tmp/expect.new"; } >"$expect.tmp" && mv "$expect.tmp" "$expect"
  echo "updated $expect"
fi
[ "$failed" = 0 ]

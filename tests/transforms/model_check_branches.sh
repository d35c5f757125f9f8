#!/usr/bin/env bash
# The default command checks the silero VAD models (vad_legacy, vad_v5 and
# the spox export vad_v6: If branches picked by comparing the `sr` input
# with 16000, unnamed dims, a 128-tap filter, a state whose dim must be 1)
# with no help: the model check's input search (runtime/InputSearch.h) runs
# each on both sides of the sample-rate comparison, and the summary says so.
# Before, it invented a random sr and small sizes and skipped the check.
#
# usage: model_check_branches.sh ONNXSLIM [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
cache="${2:-$root/.cache/models}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
for name in vad_legacy vad_v5 vad_v6; do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  line=$("$onnxslim" "$model" "$tmp/$name.onnx" 2>&1 | grep '^model check')
  echo "$name: $line"
  case "$line" in
    *"output(s) match"*"sr=16000;"*"| sr=15999;"*) ;;
    *) echo "FAIL $name: not checked on both sample-rate branches"; failed=$((failed + 1)) ;;
  esac
done
[ "$failed" = 0 ]

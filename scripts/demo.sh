#!/usr/bin/env bash
# The main job: set up, build, fetch the default real model and optimize it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:-ppocr_rec}"
"$root/scripts/setup.sh"
# Only the tool: the first result on a fresh machine in a few minutes
# (scripts/test.sh builds the tests).
ONNXSLIM_BUILD_TARGETS=onnxslim_cli "$root/scripts/build.sh"
"$root/scripts/fetch-models.sh" "$model"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
out="$root/build/$model.slim.onnx"
"${ONNXSLIM_BUILD_DIR:-$root/build}/tools/onnxslim" "$cache/$model.onnx" "$out"

#!/usr/bin/env bash
# The main job: set up, build, fetch the default real model and optimize it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:-ppocr_rec}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/scripts/fetch-models.sh" "$model"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
out="$root/build/$model.slim.onnx"
"${ONNXSLIM_BUILD_DIR:-$root/build}/tools/onnxslim" "$cache/$model.onnx" "$out"

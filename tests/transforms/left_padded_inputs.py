#!/usr/bin/env python3
"""left_padded_inputs.py SRC DST: when the inputs in SRC (input_N.pb
TensorProtos) include an `attention_mask`, writes a copy of them to DST
with the mask's first 5 positions set to 0 (a left-padded batch, the case
where masked attention rows differ); writes nothing otherwise. The
transformer export tests (ort_transformer_exports.sh,
ort_transformer_downgrade.sh) run every model on both sets."""
import glob
import os
import sys

import onnx
from onnx import numpy_helper

src, dst = sys.argv[1], sys.argv[2]
tensors = []
for path in sorted(glob.glob(os.path.join(src, "*.pb"))):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    tensors.append((os.path.basename(path), t))
if any(t.name == "attention_mask" for _, t in tensors):
    os.makedirs(dst)
    for file, t in tensors:
        if t.name == "attention_mask":
            a = numpy_helper.to_array(t).copy()
            a[..., :5] = 0
            t = numpy_helper.from_array(a, t.name)
        with open(os.path.join(dst, file), "wb") as f:
            f.write(t.SerializeToString())

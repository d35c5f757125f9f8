#!/usr/bin/python3
"""Export torchvision models to ONNX for the benchmark corpus.

A corpus nobody tuned on: the classification, detection and segmentation
models of torchvision, randomly initialized (weights=None: nothing is
downloaded), seeded with torch.manual_seed(0) so that a second export writes
the same files, in eval mode, batch 1, one fixed input shape, exported by
torch.onnx.export (the TorchScript exporter) at opset 17.

Writes CACHE/<name>.onnx for each model and CACHE/corpus.json, a manifest in
the format of tests/models/models.json (name, file, source, inputs with
name, dtype and shape), so that tools/oracle/oracle.js --spec
CACHE/corpus.json:NAME and onnxslim --input-specs can make the inputs. A
model's "file" is relative to the manifest's directory. scripts/bench-corpus.sh
runs this and adds the rest of the corpus to the manifest.

A model that fails to export is reported (the first line of the reason;
EXPORT_TRACEBACK=1 prints the traceback) and skipped; one already exported
is kept unless --force.

usage: /usr/bin/python3 bench/corpus/export_torchvision.py [CACHE] [--force]
                                                           [--only NAME,...]
  (Debian's python3: it has python3-torch 1.13 and python3-torchvision 0.14)
"""

import argparse
import json
import os
import sys
import time
import traceback
import warnings

OPSET = 17
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CACHE = os.path.join(REPO, ".cache", "bench-models")

# (name, torchvision builder, builder keyword arguments beyond weights=None,
# input height and width). Detection and segmentation models also get
# weights_backbone=None (their backbone would otherwise be downloaded).
CLASSIFICATION = [
    ("resnet18", "resnet18", {}, 224),
    ("resnet50", "resnet50", {}, 224),
    ("mobilenet_v2", "mobilenet_v2", {}, 224),
    ("mobilenet_v3_large", "mobilenet_v3_large", {}, 224),
    ("efficientnet_b0", "efficientnet_b0", {}, 224),
    ("efficientnet_b3", "efficientnet_b3", {}, 224),
    ("shufflenet_v2_x1_0", "shufflenet_v2_x1_0", {}, 224),
    ("squeezenet1_1", "squeezenet1_1", {}, 224),
    ("regnet_y_400mf", "regnet_y_400mf", {}, 224),
    ("mnasnet1_0", "mnasnet1_0", {}, 224),
    ("densenet121", "densenet121", {}, 224),
    ("googlenet", "googlenet", {"aux_logits": False, "init_weights": True}, 224),
    ("inception_v3", "inception_v3", {"aux_logits": False, "init_weights": True}, 299),
    ("convnext_tiny", "convnext_tiny", {}, 224),
    ("swin_t", "swin_t", {}, 224),
    ("vit_b_16", "vit_b_16", {}, 224),
]
DETECTION = [
    ("ssdlite320_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large", {}, 320),
]
SEGMENTATION = [
    ("fcn_resnet50", "fcn_resnet50", {"aux_loss": False}, 224),
    ("deeplabv3_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", {"aux_loss": False}, 224),
    ("lraspp_mobilenet_v3_large", "lraspp_mobilenet_v3_large", {}, 224),
]


class Wrapped:
    """Adapters so that every model takes one [1, 3, H, W] tensor."""

    @staticmethod
    def detection(model):
        import torch

        class Detection(torch.nn.Module):
            # The detection models take a list of [3, H, W] images and return
            # a list of dicts; export one image and its boxes, scores, labels.
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                out = self.m([x[0]])[0]
                return out["boxes"], out["scores"], out["labels"]

        return Detection(model)

    @staticmethod
    def segmentation(model):
        import torch

        class Segmentation(torch.nn.Module):
            # The segmentation models return {"out": ...}.
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]

        return Segmentation(model)


def build(kind, builder, kwargs):
    import torchvision

    module = {
        "classification": torchvision.models,
        "detection": torchvision.models.detection,
        "segmentation": torchvision.models.segmentation,
    }[kind]
    args = dict(kwargs, weights=None)
    if kind != "classification":
        args["weights_backbone"] = None
    model = getattr(module, builder)(**args)
    if kind == "detection":
        model = Wrapped.detection(model)
    elif kind == "segmentation":
        model = Wrapped.segmentation(model)
    return model.eval()


def export(kind, name, builder, kwargs, size, path):
    """Exports one model to PATH (through a temporary file, so that an
    interrupted export leaves no file that looks done)."""
    import torch

    torch.manual_seed(0)
    model = build(kind, builder, kwargs)
    x = torch.rand(1, 3, size, size)
    outputs = ["boxes", "scores", "labels"] if kind == "detection" else ["output"]
    tmp = path + ".tmp"
    try:
        # Not under torch.no_grad(): without grad, nn.MultiheadAttention
        # (vit_b_16) in eval mode takes its fused fast path,
        # aten::_native_multi_head_attention, which the exporter lacks.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), tmp, opset_version=OPSET, input_names=["input"],
                              output_names=outputs, do_constant_folding=True)
        import onnx

        onnx.checker.check_model(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def entry(kind, name, builder, kwargs, size, versions):
    args = ", ".join(["weights=None"] + (["weights_backbone=None"] if kind != "classification" else [])
                     + [f"{k}={v}" for k, v in kwargs.items()])
    return {
        "name": name,
        "file": name + ".onnx",
        "source": (f"torchvision {versions[1]} {builder}({args}), torch.manual_seed(0), eval, "
                   f"torch {versions[0]} torch.onnx.export opset {OPSET}, static shapes "
                   f"(bench/corpus/export_torchvision.py)"),
        "inputs": [{"name": "input", "dtype": "float", "shape": [1, 3, size, size], "range": [0, 1]}],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cache", nargs="?", default=DEFAULT_CACHE, help="output directory (default %(default)s)")
    p.add_argument("--force", action="store_true", help="export again the models already exported")
    p.add_argument("--only", default="", help="comma-separated model names (default: all)")
    a = p.parse_args()

    cache = os.path.abspath(a.cache)
    inside = lambda d: os.path.commonpath([cache, d]) == d
    if inside(REPO) and not inside(os.path.join(REPO, ".cache")):
        sys.exit(f"error: {cache} is inside the repository; use a directory under .cache/ or outside it")
    os.makedirs(cache, exist_ok=True)

    import torch
    import torchvision

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    versions = (torch.__version__, torchvision.__version__)
    only = set(filter(None, a.only.split(",")))
    models = ([("classification",) + m for m in CLASSIFICATION] + [("detection",) + m for m in DETECTION]
              + [("segmentation",) + m for m in SEGMENTATION])
    unknown = only - {m[1] for m in models}
    if unknown:
        sys.exit(f"error: unknown model(s): {', '.join(sorted(unknown))}")

    entries, failed = [], []
    start = time.monotonic()
    for kind, name, builder, kwargs, size in models:
        if only and name not in only:
            continue
        path = os.path.join(cache, name + ".onnx")
        if os.path.exists(path) and not a.force:
            print(f"{name:<30} kept      (exists; --force to export again)", flush=True)
            continue
        t0 = time.monotonic()
        try:
            export(kind, name, builder, kwargs, size, path)
        except Exception as e:  # any exporter failure: report and go on
            reason = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"{name:<30} FAILED    {time.monotonic() - t0:6.1f} s  {reason}", flush=True)
            if os.environ.get("EXPORT_TRACEBACK"):
                traceback.print_exc()
            failed.append((name, reason))
            continue
        mb = os.path.getsize(path) / 1e6
        print(f"{name:<30} exported  {time.monotonic() - t0:6.1f} s  {mb:7.1f} MB", flush=True)

    # The manifest lists every model of the corpus whose file is there (also
    # those --only left alone).
    for kind, name, builder, kwargs, size in models:
        if os.path.exists(os.path.join(cache, name + ".onnx")):
            entries.append(entry(kind, name, builder, kwargs, size, versions))

    manifest = {
        "about": ("Benchmark corpus (bench/corpus/README.md). Entries as in tests/models/models.json: "
                  "name, file (relative to this file's directory, or absolute), source, inputs "
                  "(name, dtype, shape, and value or range); input_files, where present, are "
                  "TensorProto files to feed instead (relative like file)."),
        "version": 1,
        "models": entries,
    }
    with open(os.path.join(cache, "corpus.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"{len(entries)} models in {os.path.join(cache, 'corpus.json')}, {len(failed)} failed, "
          f"{time.monotonic() - start:.0f} s")
    for name, reason in failed:
        print(f"  failed: {name}: {reason}")


if __name__ == "__main__":
    main()

"""What the Python module's tests share: where the command line, the real
models and the ONNX Runtime oracle are, and small helpers.

Everything missing fails the test with a message saying how to get it (never
a silent skip): the module (build with -DONNXSLIM_PYTHON=ON), python3-onnx and
the oracle (scripts/setup.sh), the real models (scripts/fetch-models.sh).
"""

import json
import os
import subprocess
import sys

SOURCE_DIR = os.environ.get("ONNXSLIM_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLI = os.environ.get("ONNXSLIM_CLI", os.path.join(SOURCE_DIR, "build", "tools", "onnxslim"))
MODEL_CACHE = os.environ.get("ONNXSLIM_MODEL_CACHE", os.path.join(SOURCE_DIR, ".cache", "models"))
MODELS_JSON = os.path.join(SOURCE_DIR, "tests", "models", "models.json")
ORACLE = os.path.join(SOURCE_DIR, "tools", "oracle", "oracle.js")


class MissingData(AssertionError):
    """A test's data or tool is missing; the message says how to get it."""


try:
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError:  # pragma: no cover - the message is the point
    raise MissingData("the tests need python3-onnx for /usr/bin/python3: run scripts/setup.sh "
                      "(or apt-get install python3-onnx)") from None

try:
    import onnxslim
except ImportError as e:  # pragma: no cover
    raise MissingData(f"cannot import onnxslim ({e}): build with -DONNXSLIM_PYTHON=ON "
                      f"-DPython3_EXECUTABLE=/usr/bin/python3 and run with PYTHONPATH=build/python") from None


def cli():
    if not os.access(CLI, os.X_OK):
        raise MissingData(f"{CLI} missing: build the onnxslim_cli target (scripts/build.sh)")
    return CLI


def real_models():
    """(name, path) of every real model of tests/models/models.json; fails when one is missing."""
    with open(MODELS_JSON) as f:
        names = [m["name"] for m in json.load(f)["models"]]
    models = []
    for name in names:
        path = os.path.join(MODEL_CACHE, name + ".onnx")
        if not os.path.isfile(path):
            raise MissingData(f"{path} missing: run scripts/fetch-models.sh")
        models.append((name, path))
    return models


def real_model(name):
    return dict(real_models())[name]


def run_cli(*args):
    proc = subprocess.run([cli(), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"onnxslim {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def count_nodes(graph):
    """Nodes of a GraphProto and of every subgraph in it (as ModelCounts counts them)."""
    total = 0
    for node in graph.node:
        total += 1
        for attr in node.attribute:
            if attr.HasField("g"):
                total += count_nodes(attr.g)
            for g in attr.graphs:
                total += count_nodes(g)
    return total


def oracle_run(model_path, out_dir, spec_name, seed=7):
    """Runs a model in ONNX Runtime (tools/oracle); Result: {output name: numpy array}."""
    if not os.path.isdir(os.path.join(SOURCE_DIR, "tools", "oracle", "node_modules", "onnxruntime-node")):
        raise MissingData("ONNX Runtime oracle not installed: run scripts/setup.sh")
    os.makedirs(out_dir, exist_ok=True)
    args = ["node", ORACLE, model_path, "--out", out_dir, "--seed", str(seed), "--quiet"]
    if spec_name:
        args += ["--spec", f"{MODELS_JSON}:{spec_name}"]
    try:
        proc = subprocess.run(args, capture_output=True, text=True)
    except FileNotFoundError:
        raise MissingData("node not found: run scripts/setup.sh") from None
    if proc.returncode != 0:
        raise AssertionError(f"ONNX Runtime could not run {model_path}: {proc.stderr.strip()[:600]}")
    result = json.loads(proc.stdout.strip().splitlines()[0])
    outputs = {}
    for out in result["outputs"]:
        tensor = onnx.load_tensor(out["file"])
        outputs[out["name"]] = numpy_helper.to_array(tensor)
    return outputs


def compare_outputs(reference, candidate, rtol=1e-5, atol=1e-6):
    """Problems found comparing two {name: array} maps ([] when they agree):
    |c - r| <= atol + rtol * |r| elementwise, NaN where the reference has NaN."""
    import numpy as np

    problems = []
    if list(reference) != list(candidate):
        return [f"outputs differ: {list(reference)} vs {list(candidate)}"]
    for name, r in reference.items():
        c = candidate[name]
        if r.dtype != c.dtype or r.shape != c.shape:
            problems.append(f"{name}: {r.dtype}{list(r.shape)} vs {c.dtype}{list(c.shape)}")
            continue
        if r.dtype.kind not in "fc":
            if not np.array_equal(r, c):
                problems.append(f"{name}: {int(np.sum(r != c))} element(s) differ")
            continue
        r64, c64 = r.astype(np.float64), c.astype(np.float64)
        nan = np.isnan(r64)
        bad = (np.abs(c64 - r64) > atol + rtol * np.abs(r64)) & ~nan
        bad |= nan != np.isnan(c64)
        if bad.any():
            diff = np.nanmax(np.abs(c64 - r64))
            problems.append(f"{name}: {int(bad.sum())} element(s) out of tolerance, max abs diff {diff:.3g}")
    return problems

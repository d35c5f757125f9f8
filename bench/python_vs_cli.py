#!/usr/bin/python3
"""What the Python binding costs: for every fetched real model, the wall time
of the command line `onnxslim IN OUT -q` (a process: start-up, read,
optimize, write) against `onnxslim.slim(IN, OUT)` in this process
(perf_counter), runs alternated in this one run, medians of RUNS. The
binding passes the paths to the same C++ calls, so it should add nothing
but the call itself; the rule (checked, exit status 1 when broken): the
Python call may not be slower than the command line by 5 % or more AND by
5 ms or more on any model. The command line pays a process start and cold
caches on every run, which the Python call pays once, so the Python call is
usually faster; the column "binding ms" is therefore also shown and ruled
the same way: the Python call's wall time minus the library's own time
inside it (read, optimize, write, as the report measures it), which is
exactly what the binding adds. A model slower than a second gets fewer
timed runs (the whole run stays near a minute); with fewer than 3 its
command-line comparison is noise on a shared machine and is shown, not
ruled (its binding ms still is).

The ModelProto round trip (SerializeToString, slim(), ModelProto parsed back)
is measured separately and only reported: it copies the model through
Python twice, which the command line does not do.

usage: /usr/bin/python3 bench/python_vs_cli.py [--build build] [--runs 5] [MODEL...]
(with PYTHONPATH=build/python, or after cmake --install; Debian's python3,
the interpreter the module is built for; python3-onnx for the round trip)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_PERCENT = 5.0
MAX_MS = 5.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory (default: build)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5)")
    parser.add_argument("models", nargs="*", help="model names of tests/models/models.json (default: all)")
    args = parser.parse_args()

    sys.path.insert(0, os.path.join(args.build, "python"))
    try:
        import onnxslim
    except ImportError as e:
        sys.exit(f"error: cannot import onnxslim ({e}): build with -DONNXSLIM_PYTHON=ON "
                 f"-DPython3_EXECUTABLE=/usr/bin/python3 (scripts/build.sh does)")
    cli = os.path.join(args.build, "tools", "onnxslim")
    if not os.access(cli, os.X_OK):
        sys.exit(f"error: {cli} not built: run scripts/build.sh")
    try:
        import onnx
    except ImportError:
        onnx = None
    cache = os.environ.get("ONNXSLIM_MODEL_CACHE", os.path.join(ROOT, ".cache", "models"))
    with open(os.path.join(ROOT, "tests", "models", "models.json")) as f:
        names = args.models or [m["name"] for m in json.load(f)["models"]]

    print(f"onnxslim {onnxslim.__version__}: {cli} vs onnxslim.slim() in {sys.executable}, median of {args.runs}")
    print(f"rule: the binding may not add >= {MAX_PERCENT:g} % and >= {MAX_MS:g} ms: python ms against cli ms "
          f"(models timed 3+ times), binding ms against the library's own time (every model)")
    print(f"{'model':<12} {'cli ms':>9} {'python ms':>10} {'added ms':>9} {'added %':>8} {'binding ms':>10} "
          f"{'runs':>5}   {'proto ms':>9} {'proto +ms':>9}")
    broken = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.onnx")
        for name in names:
            model = os.path.join(cache, name + ".onnx")
            if not os.path.isfile(model):
                sys.exit(f"error: {model} missing: run scripts/fetch-models.sh")

            def run_cli():
                start = time.perf_counter()
                subprocess.run([cli, model, out, "-q"], check=True)
                return time.perf_counter() - start

            binding = []

            def run_python():
                start = time.perf_counter()
                _, report = onnxslim.optimize(model, out)  # slim() and the report
                wall = time.perf_counter() - start
                binding.append(wall - report["seconds"])
                return wall

            # Warm the page cache and the allocator; a slow model gets fewer
            # runs so that the whole benchmark stays near a minute.
            warm = run_cli()
            if warm < 2.0:
                run_python()
            runs = args.runs if warm < 1.0 else max(1, min(args.runs, int(2.0 / warm)))
            cli_times, py_times = [], []
            binding.clear()
            for _ in range(runs):
                cli_times.append(run_cli())
                py_times.append(run_python())
            cli_ms = statistics.median(cli_times) * 1e3
            py_ms = statistics.median(py_times) * 1e3
            binding_ms = statistics.median(binding) * 1e3
            added = py_ms - cli_ms
            percent = 100.0 * added / cli_ms
            binding_percent = 100.0 * binding_ms / (py_ms - binding_ms)

            proto_text = "-", "-"
            if onnx is not None and warm < 2.0:
                proto = onnx.load(model)
                proto_times = []
                for _ in range(max(1, args.runs // 2)):
                    start = time.perf_counter()
                    onnxslim.slim(proto)  # SerializeToString, slim, ParseFromString
                    proto_times.append(time.perf_counter() - start)
                proto_ms = statistics.median(proto_times) * 1e3
                proto_text = f"{proto_ms:.1f}", f"{proto_ms - py_ms:+.1f}"
            flag = ""
            if binding_ms >= MAX_MS and binding_percent >= MAX_PERCENT:
                broken.append(name)
                flag = "  <- the binding is over the limit"
            elif added >= MAX_MS and percent >= MAX_PERCENT:
                if runs >= 3:
                    broken.append(name)
                    flag = "  <- over the limit against the command line"
                else:
                    flag = f"  (over, but {runs} run(s): not ruled)"
            print(f"{name:<12} {cli_ms:9.1f} {py_ms:10.1f} {added:+9.1f} {percent:+7.1f}% {binding_ms:10.2f} "
                  f"{runs:5d}   {proto_text[0]:>9} {proto_text[1]:>9}{flag}", flush=True)
    print("(binding ms: the Python call's wall time minus the library's time inside it; proto: onnx.ModelProto\n"
          " in and out (SerializeToString, slim, parse back) vs the path call, reported, not ruled; '-': a model\n"
          " slower than 2 s is not round-tripped, to keep the run short)")
    if broken:
        print(f"FAIL: the binding adds >= {MAX_PERCENT:g} % and >= {MAX_MS:g} ms on {', '.join(broken)}")
        return 1
    print(f"ok: the binding adds less than {MAX_PERCENT:g} % or less than {MAX_MS:g} ms on every model")
    return 0


if __name__ == "__main__":
    sys.exit(main())

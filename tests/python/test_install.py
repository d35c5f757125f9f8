"""`cmake --install BUILD --component python` gives an importable package:
installed under a staging root (DESTDIR), imported from there, not from
the build tree, and slim() works."""

import os
import subprocess
import sys
import tempfile
import unittest

from support import MissingData


class InstallTest(unittest.TestCase):
    def test_installed_package_imports_and_slims(self):
        build = os.environ.get("ONNXSLIM_BUILD_DIR")
        cmake = os.environ.get("CMAKE_COMMAND", "cmake")
        if not build:
            raise MissingData("ONNXSLIM_BUILD_DIR not set: run this test through ctest")
        with tempfile.TemporaryDirectory() as stage:
            env = dict(os.environ, DESTDIR=stage)
            proc = subprocess.run([cmake, "--install", build, "--component", "python"], env=env,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            inits = [os.path.join(d, "__init__.py") for d, _, files in os.walk(stage)
                     if os.path.basename(d) == "onnxslim" and "__init__.py" in files]
            self.assertEqual(len(inits), 1, f"installed: {proc.stdout}")
            site = os.path.dirname(os.path.dirname(inits[0]))
            self.assertTrue(any(f.startswith("_onnxslim.") and f.endswith(".so")
                                for f in os.listdir(os.path.join(site, "onnxslim"))))
            code = ("import onnxslim, sys\n"
                    "print(onnxslim.__file__)\n"
                    "out, report = onnxslim.optimize(sys.argv[1])\n"
                    "assert report['after']['op_counts'] == {'Relu': 1}, report['after']\n")
            # Any small model will do: build one with the text syntax.
            text = os.path.join(stage, "m.onnxtxt")
            with open(text, "w") as f:
                f.write('<ir_version: 8, opset_import: ["" : 13]>\n'
                        'g (float[2] x) => (float[2] y) {\n  y = Relu(x)\n}\n')
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["PYTHONPATH"] = site
            proc = subprocess.run([sys.executable, "-c", code, text], env=env, cwd=stage,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(proc.stdout.strip().startswith(stage), proc.stdout)


if __name__ == "__main__":
    unittest.main()

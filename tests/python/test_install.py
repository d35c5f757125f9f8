"""`cmake --install BUILD --component python` gives an importable package:
installed under a staging root (DESTDIR), imported from there, not from
the build tree, and slim() works; `python3 -m onnxslim IN OUT` works from
it; an install into the user base ($HOME/.local) and into /usr/local is
where Debian's python3 looks, without PYTHONPATH."""

import os
import subprocess
import sys
import tempfile
import unittest

from support import MissingData


TEXT_MODEL = ('<ir_version: 8, opset_import: ["" : 13]>\n'
              'g (float[2] x) => (float[2] y) {\n  y = Relu(x)\n}\n')


def _build_and_cmake():
    build = os.environ.get("ONNXSLIM_BUILD_DIR")
    if not build:
        raise MissingData("ONNXSLIM_BUILD_DIR not set: run this test through ctest")
    return build, os.environ.get("CMAKE_COMMAND", "cmake")


def _env_without_pythonpath(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE")}
    env.update(extra)
    return env


class InstallTest(unittest.TestCase):
    def test_user_base_install_imports_without_pythonpath(self):
        build, cmake = _build_and_cmake()
        with tempfile.TemporaryDirectory() as home:
            env = _env_without_pythonpath(HOME=home)
            prefix = os.path.join(home, ".local")
            proc = subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", prefix], env=env,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            proc = subprocess.run([sys.executable, "-c", "import onnxslim; print(onnxslim.__file__)"], env=env,
                                  cwd=home, capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(proc.stdout.strip().startswith(prefix), proc.stdout)

    def test_usr_local_install_is_on_the_default_path(self):
        build, cmake = _build_and_cmake()
        with tempfile.TemporaryDirectory() as stage:
            env = dict(os.environ, DESTDIR=stage)
            proc = subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", "/usr/local"],
                                  env=env, capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            dirs = [d[len(stage):] for d, _, files in os.walk(stage)
                    if os.path.basename(d) == "onnxslim" and "__init__.py" in files]
            self.assertEqual(len(dirs), 1, dirs)
            proc = subprocess.run([sys.executable, "-c", "import sys; print('\\n'.join(sys.path))"],
                                  env=_env_without_pythonpath(), capture_output=True, text=True)
            self.assertIn(os.path.dirname(dirs[0]), proc.stdout.split("\n"),
                          f"{dirs[0]} is not on {sys.executable}'s default path")

    def test_installed_package_imports_and_slims(self):
        build, cmake = _build_and_cmake()
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
                f.write(TEXT_MODEL)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["PYTHONPATH"] = site
            proc = subprocess.run([sys.executable, "-c", code, text], env=env, cwd=stage,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(proc.stdout.strip().startswith(stage), proc.stdout)
            # python3 -m onnxslim IN OUT, from the installed package.
            out = os.path.join(stage, "out.onnx")
            proc = subprocess.run([sys.executable, "-m", "onnxslim", text, out], env=env, cwd=stage,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(os.path.getsize(out) > 0)
            self.assertIn("nodes 1 -> 1", proc.stderr)
            proc = subprocess.run([sys.executable, "-m", "onnxslim", text, out, "--dtype", "float17"], env=env,
                                  cwd=stage, capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("--dtype", proc.stderr)


if __name__ == "__main__":
    unittest.main()

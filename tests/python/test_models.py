"""slim() on the real models (scripts/fetch-models.sh): the same output as the
command line, the same outputs as the input in ONNX Runtime, and a model with
external data through paths.
"""

import os
import tempfile
import unittest

from support import (compare_outputs, count_nodes, onnx, onnxslim, oracle_run, real_model, real_models,
                     run_cli)


class ModelTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, *names):
        return os.path.join(self.dir, *names)


class CliParityTest(ModelTestCase):
    def test_same_output_as_cli(self):
        for name, model in real_models():
            with self.subTest(model=name):
                cli_out, py_out = self.path(name + ".cli.onnx"), self.path(name + ".py.onnx")
                run_cli(model, cli_out, "-q")
                # A path call reads and writes through the C++ library as the
                # command line does: the same bytes.
                self.assertIsNone(onnxslim.slim(model, py_out))
                with open(cli_out, "rb") as a, open(py_out, "rb") as b:
                    self.assertTrue(a.read() == b.read(), f"{name}: slim(path, out) differs from `onnxslim IN OUT`")
                # A ModelProto call: the same nodes.
                cli_model = onnx.load(cli_out)
                proto = onnxslim.slim(onnx.load(model))
                self.assertIsInstance(proto, onnx.ModelProto)
                self.assertEqual(count_nodes(proto.graph), count_nodes(cli_model.graph), name)
                self.assertEqual(sorted(n.op_type for n in proto.graph.node),
                                 sorted(n.op_type for n in cli_model.graph.node), name)
                self.assertLess(count_nodes(proto.graph), count_nodes(onnx.load(model).graph) + 1, name)


class OrtOutputsTest(ModelTestCase):
    def test_modelproto_out_computes_the_same_in_onnxruntime(self):
        for name, model in real_models():
            with self.subTest(model=name):
                optimized = onnxslim.slim(onnx.load(model))
                self.assertIsInstance(optimized, onnx.ModelProto)
                opt_path = self.path(name + ".opt.onnx")
                onnx.save(optimized, opt_path)
                reference = oracle_run(model, self.path(name, "a"), name)
                candidate = oracle_run(opt_path, self.path(name, "b"), name)
                self.assertTrue(reference, f"{name}: no outputs")
                problems = compare_outputs(reference, candidate)
                self.assertEqual(problems, [], f"{name}: outputs differ in ONNX Runtime")


class ExternalDataTest(ModelTestCase):
    NAME = "mlsd_tiny"  # weights in initializers (ppocr_* keep theirs in Constant nodes)

    def test_external_data_model_through_paths(self):
        model = real_model(self.NAME)
        # An input whose weights are in ext.onnx.data (the command line writes it).
        ext = self.path("ext.onnx")
        run_cli(model, ext, "--passes=", "--save-as-external-data", "-q")
        self.assertTrue(os.path.isfile(ext + ".data"), "no external data file written")
        self.assertLess(os.path.getsize(ext), os.path.getsize(model) // 4, "weights still inline")

        # Path in, path out: what the command line writes for the same input
        # (the output keeps external data; same file names, since the model
        # names its data file).
        os.makedirs(self.path("cli")), os.makedirs(self.path("py"))
        cli_out, py_out = self.path("cli", "out.onnx"), self.path("py", "out.onnx")
        run_cli(ext, cli_out, "-q")
        self.assertIsNone(onnxslim.slim(ext, py_out))
        for suffix in ("", ".data"):
            self.assertTrue(os.path.isfile(py_out + suffix), py_out + suffix)
            with open(cli_out + suffix, "rb") as a, open(py_out + suffix, "rb") as b:
                self.assertTrue(a.read() == b.read(), f"slim(path with external data, out) wrote another out.onnx{suffix} "
                                                      "than the command line")

        # Path in, external data out.
        split = self.path("split.onnx")
        self.assertIsNone(onnxslim.slim(ext, split, save_as_external_data=True))
        self.assertTrue(os.path.isfile(split + ".data"), "save_as_external_data wrote no .data file")
        loaded = onnx.load(split)  # reads split.onnx.data
        self.assertEqual(count_nodes(loaded.graph), count_nodes(onnx.load(cli_out).graph))

        # Path in, ModelProto out: the weights come back inline.
        proto = onnxslim.slim(ext)
        self.assertIsInstance(proto, onnx.ModelProto)
        self.assertFalse(any(t.external_data for t in proto.graph.initializer), "external references returned")
        self.assertEqual(count_nodes(proto.graph), count_nodes(loaded.graph))

        # And the split model computes what the original did.
        reference = oracle_run(model, self.path("a"), self.NAME)
        candidate = oracle_run(split, self.path("b"), self.NAME)
        self.assertEqual(compare_outputs(reference, candidate), [])


if __name__ == "__main__":
    unittest.main()

"""slim() called the way scripts written for OnnxSlim 0.1.96 call it: each
of its keywords, with the behaviour docs/OnnxSlim.md states for it (same,
alias, or differs: then a failure whose message says how and what to use).
"""

import contextlib
import functools
import io
import os
import pathlib
import re
import tempfile
import unittest
from unittest import mock

import numpy as np

from support import SOURCE_DIR, TensorProto, helper, numpy_helper, onnx, onnxslim

# OnnxSlim 0.1.96's slim() keywords (its OnnxSlimKwargs, plus model and
# output_model) and its command-line flags.
ONNXSLIM_KEYWORDS = ["model", "output_model", "model_check", "model_check_inputs", "input_shapes", "inputs", "outputs",
                     "no_shape_infer", "skip_optimizations", "skip_fusion_patterns", "size_threshold", "dtype",
                     "save_as_external_data", "inspect", "dump_to_disk", "verbose"]
ONNXSLIM_FLAGS = ["--model-check", "--model-check-inputs", "--input-shapes", "--inputs", "--outputs",
                  "--no-shape-infer", "--skip-optimizations", "--skip-fusion-patterns", "--size-threshold",
                  "--dtype", "--save-as-external-data", "--inspect", "--dump-to-disk", "--verbose"]


def model(weight_elems=4):
    """Y = Relu(X @ W + B), X: [N, 4] (N symbolic), with an Identity and a
    foldable Add of two constants."""
    w = numpy_helper.from_array(np.eye(4, weight_elems, dtype=np.float32), "W")
    b1 = numpy_helper.from_array(np.full((weight_elems,), 0.5, np.float32), "b1")
    b2 = numpy_helper.from_array(np.full((weight_elems,), 0.25, np.float32), "b2")
    nodes = [helper.make_node("Identity", ["X"], ["x1"], name="identity"),
             helper.make_node("MatMul", ["x1", "W"], ["m"], name="matmul"),
             helper.make_node("Add", ["b1", "b2"], ["b"], name="bias"),
             helper.make_node("Add", ["m", "b"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["Y"], name="relu")]
    graph = helper.make_graph(nodes, "compat", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", weight_elems])],
                              initializer=[w, b1, b2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def ops(m):
    return [n.op_type for n in m.graph.node]


class OnnxSlimKeywordsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.src = os.path.join(self.dir, "in.onnx")
        onnx.save(model(), self.src)

    def tearDown(self):
        self.tmp.cleanup()

    def test_model_forms(self):
        original = model()
        before = original.SerializeToString()
        out = onnxslim.slim(original)
        self.assertEqual(original.SerializeToString(), before, "the ModelProto given must not change")
        self.assertNotIn("Identity", ops(out))
        self.assertEqual(ops(onnxslim.slim(self.src)), ops(out))
        self.assertEqual(ops(onnxslim.slim(pathlib.Path(self.src))), ops(out))
        self.assertEqual(ops(onnxslim.slim(before)), ops(out))
        with self.assertRaisesRegex(TypeError, "inspect mode.*--inspect"):
            onnxslim.slim([self.src, self.src])

    def test_output_model_positional_and_keyword(self):
        a, b = os.path.join(self.dir, "a.onnx"), os.path.join(self.dir, "b.onnx")
        self.assertIsNone(onnxslim.slim(self.src, a))
        self.assertIsNone(onnxslim.slim(self.src, output_model=b))
        self.assertEqual(pathlib.Path(a).read_bytes(), pathlib.Path(b).read_bytes())

    def test_model_check(self):
        _, report = onnxslim.optimize(self.src)
        self.assertTrue(report["model_checked"])  # differs: checked by default when cheap
        _, report = onnxslim.optimize(self.src, model_check=False)
        self.assertFalse(report["model_checked"])
        _, report = onnxslim.optimize(self.src, model_check=True)
        self.assertTrue(report["model_checked"])

    def test_model_check_mismatch(self):
        # A pass that changes the outputs (a deliberately wrong test pass):
        # OnnxSlim prints the mismatch and returns None; here the check
        # undoes that rewrite, warns and returns the model without it.
        wrong = functools.partial(onnxslim._slim_model, test_passes=True)
        with mock.patch.object(onnxslim, "_slim_model", wrong):
            with self.assertWarnsRegex(onnxslim.OnnxSlimWarning, "undid test-negate-first-output.*changed the outputs"):
                out = onnxslim.slim(self.src, passes="test-negate-first-output", model_check=True)
            self.assertNotIn("Neg", ops(out))
            with self.assertWarnsRegex(onnxslim.OnnxSlimWarning, "rolled back test-negate-first-output"):
                out = onnxslim.slim(self.src, passes="test-negate-first-output", model_check="each-pass")
            self.assertNotIn("Neg", ops(out))
        # What the check cannot undo raises, and the message says how
        # OnnxSlim differs and which keyword gives its behaviour.
        error = onnxslim._model_check_error(onnxslim.OnnxSlimError("model check failed: the outputs differ"))
        self.assertRegex(str(error), r"(?s)^model check failed.*returns None.*model_check=False")
        other = onnxslim.OnnxSlimError("m.onnx: node 'n' (Foo): unknown op")
        self.assertIs(onnxslim._model_check_error(other), other)

    def test_model_check_inputs(self):
        _, report = onnxslim.optimize(self.src, model_check_inputs=["X:3,4"])
        self.assertTrue(report["model_checked"])
        npy = os.path.join(self.dir, "x.npy")
        np.save(npy, np.arange(8, dtype=np.float32).reshape(2, 4))
        _, report = onnxslim.optimize(self.src, model_check_inputs=[f"X:{npy}"])
        self.assertTrue(report["model_checked"])
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "'nope', which is not an input"):
            onnxslim.slim(self.src, model_check_inputs=["nope:3,4"])
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "model_check_inputs"):
            onnxslim.slim(self.src, model_check_inputs=["X"])

    def test_input_shapes(self):
        out = onnxslim.slim(self.src, input_shapes=["X:2,4"])
        dims = [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, [2, 4])

    def test_inputs_and_outputs(self):
        out = onnxslim.slim(self.src, outputs=["m"])
        self.assertEqual([o.name for o in out.graph.output], ["m"])
        out = onnxslim.slim(self.src, inputs=["m"])
        self.assertEqual([i.name for i in out.graph.input], ["m"])
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "OnnxSlim relabels it without a Cast.*dtype"):
            onnxslim.slim(self.src, inputs=["X:fp16"])  # differs: a relabel there, an error here

    def test_no_shape_infer(self):
        self.assertTrue(onnxslim.slim(self.src).graph.value_info)
        self.assertFalse(onnxslim.slim(self.src, no_shape_infer=True).graph.value_info)

    def test_skip_optimizations(self):
        self.assertIn("Add", ops(onnxslim.slim(self.src, skip_optimizations=["constant_folding"])))
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "unknown optimization 'nope'.*constant_folding"):
            onnxslim.slim(self.src, skip_optimizations=["nope"])

    def test_skip_fusion_patterns(self):
        self.assertNotIn("Gemm", ops(onnxslim.slim(self.src, input_shapes=["X:2,4"], skip_fusion_patterns=["FusionGemm"])))
        self.assertIn("Gemm", ops(onnxslim.slim(self.src, input_shapes=["X:2,4"])))
        with self.assertRaisesRegex(ValueError, "EliminationSlice.*FusionGemm"):
            onnxslim.slim(self.src, skip_fusion_patterns=["EliminationSlice"])

    def test_size_threshold(self):
        # Y = X + (c1 + c2), c1: [4, 1], c2: [1, 4]: the folded sum is 64 bytes
        # from 32. A threshold of 32 keeps the Add, 0 is no limit.
        inits = [numpy_helper.from_array(np.ones((4, 1), np.float32), "c1"),
                 numpy_helper.from_array(np.ones((1, 4), np.float32), "c2")]
        nodes = [helper.make_node("Add", ["c1", "c2"], ["c"], name="sum"),
                 helper.make_node("Add", ["X", "c"], ["Y"], name="add")]
        graph = helper.make_graph(nodes, "grow", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 4])],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 4])], initializer=inits)
        grow = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        self.assertEqual(ops(onnxslim.slim(grow, size_threshold=32)), ["Add", "Add"])
        self.assertEqual(ops(onnxslim.slim(grow, size_threshold=64)), ["Add"])
        self.assertEqual(ops(onnxslim.slim(grow, size_threshold=0)), ["Add"])

    def test_dtype(self):
        for name in ("fp16", "float16"):
            out = onnxslim.slim(self.src, dtype=name)  # OnnxSlim's meaning: the interface is converted too
            self.assertEqual(out.graph.input[0].type.tensor_type.elem_type, TensorProto.FLOAT16)
            self.assertEqual(out.graph.output[0].type.tensor_type.elem_type, TensorProto.FLOAT16)
            out = onnxslim.slim(self.src, dtype=name, keep_io_types=True)  # ours, as the command line's default
            self.assertEqual(out.graph.input[0].type.tensor_type.elem_type, TensorProto.FLOAT)
        out = onnxslim.slim(self.src, dtype="bf16")  # ours (OnnxSlim ignores it): bfloat16, interface too
        self.assertEqual(out.graph.input[0].type.tensor_type.elem_type, TensorProto.BFLOAT16)
        with self.assertRaisesRegex(ValueError, "dtype"):
            onnxslim.slim(self.src, dtype="int8")  # differs: ignored there

    def test_save_as_external_data(self):
        big = os.path.join(self.dir, "big.onnx")
        onnx.save(model(weight_elems=256), big)
        out = os.path.join(self.dir, "out.onnx")
        onnxslim.slim(big, out, save_as_external_data=True)
        self.assertTrue(os.path.exists(out + ".data"))
        with self.assertRaisesRegex(ValueError, "needs output_model"):
            onnxslim.slim(big, save_as_external_data=True)

    def test_inspect_and_dump_to_disk(self):
        with self.assertRaisesRegex(NotImplementedError, "--inspect"):
            onnxslim.slim(self.src, inspect=True)
        with self.assertRaisesRegex(NotImplementedError, "dump_to_disk"):
            onnxslim.slim(self.src, dump_to_disk=True)
        onnxslim.slim(self.src, inspect=False, dump_to_disk=False)  # their defaults are accepted

    def test_verbose(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            onnxslim.slim(self.src, verbose=True)
        self.assertRegex(err.getvalue(), r"nodes 5 -> \d")

    def test_messages_name_slims_keywords(self):
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, r"input_shapes: no input 'images' \(inputs: X\)"):
            onnxslim.slim(self.src, input_shapes=["images:1,4"])
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, r"see onnxslim\.list_passes\(\)"):
            onnxslim.slim(self.src, passes="no-such-pass")
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "skip_optimizations: unknown optimization"):
            onnxslim.slim(self.src, skip_optimizations=["nope"])

    def test_a_modelproto_is_named_by_its_graph(self):
        bad = model()
        bad.graph.node[1].input[1] = "missing"
        with self.assertRaisesRegex(onnxslim.OnnxSlimError, "model 'compat'"):
            onnxslim.slim(bad)


class OnnxSlimTableTest(unittest.TestCase):
    def test_every_keyword_and_flag_is_in_the_table(self):
        text = pathlib.Path(SOURCE_DIR, "docs", "OnnxSlim.md").read_text()
        for name in ONNXSLIM_KEYWORDS:
            self.assertRegex(text, rf"(?m)^\| [^|]*`{name}`", f"docs/OnnxSlim.md has no row for slim()'s {name}")
        for flag in ONNXSLIM_FLAGS:
            self.assertRegex(text, rf"(?m)^\| [^|]*`{flag}[ `]", f"docs/OnnxSlim.md has no row for {flag}")

    def test_help_lists_the_differences(self):
        doc = onnxslim.slim.__doc__
        differs = re.findall(r"^\| `([a-z_]+)`[^|]*\|[^|]*\|[^|]*\*\*differs\*\*", pathlib.Path(
            SOURCE_DIR, "docs", "OnnxSlim.md").read_text().split("## Command-line flags")[0], re.M)
        self.assertTrue(differs)
        for name in differs:
            if name in ("model",):
                self.assertIn("list of models", doc)
            else:
                self.assertIn(name, doc, f"help(onnxslim.slim) does not mention how {name} differs")


if __name__ == "__main__":
    unittest.main()

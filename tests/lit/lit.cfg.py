# lit configuration for onnxslim's text-IR tests: each test is ONNX textual
# syntax with RUN lines that pipe it through `onnxslim` and FileCheck.
import os
import lit.formats

config.name = "onnxslim"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".onnxtxt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.onnxslim_build_dir, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.onnxslim_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%onnxslim", os.path.join(config.onnxslim_tools_dir, "onnxslim")))
config.substitutions.append(("%FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck")))
config.substitutions.append(("%not", os.path.join(config.llvm_tools_dir, "not")))
# ONNX Runtime (tools/oracle; installed by scripts/setup.sh) and the ONNX
# conformance data (Debian's libonnx-testdata), for tests that check what a
# written model does in a real runtime.
config.substitutions.append(("%oracle", "node " + os.path.join(
    os.path.dirname(os.path.dirname(config.test_source_root)), "tools", "oracle", "oracle.js")))
config.substitutions.append(("%testdata", config.onnxslim_testdata_dir))
# Compares two folders of outputs the oracle wrote (tests/transforms/CompareOutputs.cpp).
config.substitutions.append(("%compare", os.path.join(
    config.onnxslim_build_dir, "tests", "transforms", "onnxslim_compare_outputs")))

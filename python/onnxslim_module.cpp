//===- python/onnxslim_module.cpp - The _onnxslim extension ---------------===//
//
// A thin pybind11 layer over the library's API (include/onnxslim/onnxslim.h):
// one call that reads a model (from a path, by the C++ loader, or from
// bytes), optimizes it and writes it (to a path, atomically, or to bytes),
// and returns the report as a dict; and the library's tables the Python
// layer reads instead of keeping copies: the built-in passes and OnnxSlim's
// fusion names (onnxslimFusionNames(), whence FUSION_PATTERNS). The
// pure-Python layer (onnxslim/__init__.py) turns OnnxSlim-style arguments
// into this call.
//
// The GIL is released while the model is read, optimized and written, so
// other Python threads run meanwhile. A failure raises onnxslim.OnnxSlimError
// (a RuntimeError) carrying the library's one-line message, which names the
// file and, where there is one, the node and op.
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"
#include "onnxslim/passes.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace onnxslim;

namespace {

/// Thrown (and mapped to onnxslim.OnnxSlimError) with the library's message.
struct OnnxSlimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ModelCheckMode modelCheckMode(const std::string &mode) {
  if (mode == "auto")
    return ModelCheckMode::Auto;
  if (mode == "require")
    return ModelCheckMode::Require;
  if (mode == "off")
    return ModelCheckMode::Off;
  if (mode == "each-pass")
    return ModelCheckMode::EachPass;
  throw py::value_error("model_check: '" + mode + "' is not one of auto, require, off, each-pass");
}

py::dict countsDict(const ModelCounts &c) {
  py::dict d;
  d["nodes"] = c.nodes;
  d["initializers"] = c.initializers;
  d["constant_bytes"] = c.constantBytes;
  d["op_counts"] = c.opCounts;
  return d;
}

/// The report as plain Python values (field names in snake case).
py::dict reportDict(const OptimizeReport &r) {
  py::dict d;
  d["input_valid"] = r.inputValid;
  d["input_problems"] = r.inputProblems;
  d["before"] = countsDict(r.before);
  d["after"] = countsDict(r.after);
  d["pipeline"] = r.pipeline;
  d["rounds"] = r.rounds;
  d["converged"] = r.converged;
  d["changed"] = r.changed;
  py::list passes;
  for (const PassReport &p : r.passes) {
    py::dict pd;
    pd["pass"] = p.pass;
    py::dict counters;
    for (const auto &[name, value] : p.counters)
      counters[py::str(name)] = value;
    pd["counters"] = counters;
    pd["seconds"] = p.seconds;
    pd["runs"] = p.runs;
    passes.append(pd);
  }
  d["passes"] = passes;
  d["model_checked"] = r.modelChecked;
  py::dict check;
  check["outputs"] = r.check.outputs;
  check["max_abs_diff"] = r.check.maxAbsDiff;
  check["max_rel_diff"] = r.check.maxRelDiff;
  check["seconds"] = r.check.seconds;
  check["dims"] = r.check.dims;
  check["tolerances"] = r.check.tolerances;
  check["rewrites"] = r.check.rewrites;
  check["exact_rewrites"] = r.check.exactRewrites;
  check["proved_structurally"] = r.check.provedStructurally;
  d["check"] = check;
  d["model_check_skipped"] = r.modelCheckSkipped;
  d["rolled_back"] = r.rolledBack;
  py::list undone;
  for (const OptimizeReport::UndoneRewrite &u : r.undoneRewrites) {
    py::dict ud;
    ud["pass"] = u.pass;
    ud["pattern"] = u.pattern;
    ud["node"] = u.node;
    ud["round"] = u.round;
    ud["difference"] = u.difference;
    undone.append(ud);
  }
  d["undone_rewrites"] = undone;
  d["warnings"] = r.warnings;
  d["statistics_text"] = r.statisticsText;
  d["timing_text"] = r.timingText;
  d["optimize_seconds"] = r.seconds;
  return d;
}

/// Given a model (a path as str, or the model's bytes), optimizer options
/// and where the result goes (a path, or None for bytes), Execute: reads,
/// optimizes and writes it with the GIL released, Result: (the bytes of the
/// optimized model or None, the report as a dict). Raises OnnxSlimError.
py::tuple slimModel(const py::object &source, const std::optional<std::string> &output,
                    const std::string &modelName, const std::string &baseDir,
                    const std::optional<std::string> &pipeline, const std::string &target,
                    const std::vector<std::string> &skipPasses, const std::vector<std::string> &inputShapes,
                    std::optional<uint64_t> foldSizeLimit, bool shapeInference, bool allowInvalid,
                    const std::string &modelCheck, const std::map<std::string, int64_t> &checkDims,
                    bool externalData, const std::vector<std::string> &inputs,
                    const std::vector<std::string> &outputs, const std::string &floatType, bool keepIOTypes,
                    const std::vector<std::string> &skipFusions,
                    const std::vector<std::string> &skipOptimizations,
                    const std::vector<std::string> &checkInputs, std::optional<int> targetOpset,
                    bool allowDecline, bool testPasses) {
  OptimizeOptions options;
  options.surface = Surface::Python; // messages name slim()'s keywords
  if (testPasses) {
    // The deliberately wrong passes (transforms/TestPasses.cpp), for the
    // tests of what a failed model check looks like from Python.
    static const PassRegistry withTestPasses = [] {
      PassRegistry registry = PassRegistry::withBuiltinPasses();
      registerTestPasses(registry);
      return registry;
    }();
    options.registry = &withTestPasses;
  }
  for (const std::string &spec : checkInputs)
    if (Status s = addModelCheckInput(options, spec); !s)
      throw OnnxSlimError("model_check_inputs: " + s.message());
  options.skipOptimizations = skipOptimizations;
  options.targetOpset = targetOpset;
  options.allowDecline = allowDecline;
  options.inputs = inputs;
  options.outputs = outputs;
  options.floatType = floatType;
  options.keepIOTypes = keepIOTypes;
  options.pipeline = pipeline;
  options.target = target;
  options.skipPasses = skipPasses;
  options.skipFusions = skipFusions;
  options.inputShapes = inputShapes;
  options.foldSizeLimit = foldSizeLimit;
  options.shapeInference = shapeInference;
  options.allowInvalid = allowInvalid;
  options.modelCheck = modelCheckMode(modelCheck);
  // Check inputs given: the check must run (as --model-check-inputs does).
  if (!checkInputs.empty() && options.modelCheck == ModelCheckMode::Auto)
    options.modelCheck = ModelCheckMode::Require;
  options.checkDims = checkDims;

  // Where the model comes from: a path goes to the C++ loader as is (no
  // bytes through Python: models past protobuf's 2 GB limit work that way).
  bool fromPath = py::isinstance<py::str>(source);
  std::string path;
  const char *data = nullptr;
  Py_ssize_t size = 0;
  if (fromPath) {
    path = source.cast<std::string>();
  } else if (py::isinstance<py::bytes>(source)) {
    // The bytes object is immutable and `source` keeps it alive: it is
    // copied into the model's own buffer after the GIL is released.
    char *buffer = nullptr;
    if (PyBytes_AsStringAndSize(source.ptr(), &buffer, &size) != 0)
      throw py::error_already_set();
    data = buffer;
  } else {
    throw py::type_error("model: expected a path (str) or bytes");
  }
  options.modelName = fromPath ? path : modelName;

  OptimizeReport report;
  std::string outBytes;
  std::string failure;
  std::vector<std::string> notes;
  double loadSeconds = 0, saveSeconds = 0, librarySeconds = 0;
  auto start = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release released;
    auto failed = [&](const std::string &message) { failure = message; };
    // The options alone first, so that a typo fails before a large read.
    if (Status s = checkOptions(options); !s) {
      failed(s.message());
    } else {
      auto loadStart = std::chrono::steady_clock::now();
      Result<std::unique_ptr<Model>> model = [&] {
        if (fromPath)
          return load(path);
        ReadOptions read;
        read.name = modelName;
        read.baseDir = baseDir;
        return loadFromBytes(std::string(data, static_cast<size_t>(size)), read);
      }();
      loadSeconds = secondsSince(loadStart);
      if (!model) {
        failed(model.error());
      } else {
        report = optimize(**model, options);
        if (!report.status) {
          failed(report.status.message());
        } else {
          auto saveStart = std::chrono::steady_clock::now();
          WriteOptions write;
          write.externalData = externalData;
          write.onNote = [&](const std::string &note) { notes.push_back(note); };
          if (output) {
            if (Status s = save(**model, *output, write); !s)
              failed(s.message());
          } else {
            write.format = ModelFormat::Binary;
            Result<std::string> bytes = saveToBytes(**model, write);
            if (bytes)
              outBytes = std::move(*bytes);
            else
              failed(bytes.error());
          }
          saveSeconds = secondsSince(saveStart);
        }
      }
    }
    // The library's own time: what the Python call takes beyond this is
    // the binding's (bench/python_vs_cli.py).
    librarySeconds = secondsSince(start);
  }
  if (!failure.empty())
    throw OnnxSlimError(failure);

  py::dict d = reportDict(report);
  d["notes"] = notes;
  d["load_seconds"] = loadSeconds;
  d["save_seconds"] = saveSeconds;
  d["seconds"] = librarySeconds;
  py::object result = py::none();
  if (!output)
    result = py::bytes(outBytes);
  return py::make_tuple(result, d);
}

} // namespace

PYBIND11_MODULE(_onnxslim, m) {
  m.doc() = "onnxslim's C++ library (use the onnxslim package, not this module)";
  py::register_exception<OnnxSlimError>(m, "OnnxSlimError", PyExc_RuntimeError);
  m.def("version", [] { return std::string(onnxslim::version()); }, "The library's version, MAJOR.MINOR.PATCH");
  m.def("default_pipeline", [](const std::string &target) { return defaultPipelineFor(target); },
        py::arg("target") = "onnx", "The default pipeline's text for a target (onnx, onnxruntime)");
  m.def(
      "list_passes",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const PassDescription &p : listPasses())
          out.emplace_back(p.name, p.description);
        return out;
      },
      "The built-in passes as (name, description), sorted by name");
  m.def(
      "onnxslim_fusion_names",
      [] {
        py::list out;
        for (const FusionName &f : onnxslimFusionNames()) {
          py::dict d;
          d["name"] = f.name;
          d["pass"] = f.pass;
          d["skip_option"] = f.skipOption;
          d["covers"] = f.covers;
          out.append(d);
        }
        return out;
      },
      "OnnxSlim's fusion names as dicts (name, pass, skip_option, covers): the library's one table");
  m.def(
      "onnxslim_optimization_names",
      [] {
        py::dict out;
        for (const OptimizationName &o : onnxslimOptimizationNames())
          out[py::str(o.name)] = o.passes;
        return out;
      },
      "OnnxSlim's optimization names (skip_optimizations) and the passes each is here");
  m.def("slim_model", &slimModel, py::arg("source"), py::kw_only(), py::arg("output") = py::none(),
        py::arg("model_name") = "<bytes>", py::arg("base_dir") = ".", py::arg("pipeline") = py::none(),
        py::arg("target") = "onnx", py::arg("skip_passes") = std::vector<std::string>{},
        py::arg("input_shapes") = std::vector<std::string>{}, py::arg("fold_size_limit") = py::none(),
        py::arg("shape_inference") = true, py::arg("allow_invalid") = false, py::arg("model_check") = "auto",
        py::arg("check_dims") = std::map<std::string, int64_t>{}, py::arg("external_data") = false,
        py::arg("inputs") = std::vector<std::string>{}, py::arg("outputs") = std::vector<std::string>{},
        py::arg("float_type") = "", py::arg("keep_io_types") = true,
        py::arg("skip_fusions") = std::vector<std::string>{},
        py::arg("skip_optimizations") = std::vector<std::string>{},
        py::arg("check_inputs") = std::vector<std::string>{}, py::arg("target_opset") = py::none(),
        py::arg("allow_decline") = false, py::arg("test_passes") = false,
        "Read (path or bytes), optimize and write (path, or bytes when output is None) a model; "
        "returns (bytes or None, report dict). Raises OnnxSlimError.");
}

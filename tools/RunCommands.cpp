//===- tools/RunCommands.cpp - `onnxslim run` and `onnxslim verify` --------===//
//
// Both commands load models with the command line's loader (binary or text),
// make inputs with runtime/Inputs (seeded, dtype- and shape-aware, with
// --input files and --input-specs overriding), run them in the interpreter
// and report. Input files are read by frontend/DataFile as the kind of value
// their input declares (TensorProto, SequenceProto, OptionalProto); outputs
// are written by backend/Writer the same way. Errors are one line naming the
// file and, for a failing node, the node and op.
//
//===----------------------------------------------------------------------===//
#include "tools/RunCommands.h"

#include "backend/Writer.h"
#include "frontend/DataFile.h"
#include "frontend/Loader.h"
#include "ir/Verifier.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "onnxslim/onnxslim.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

namespace onnxslim::tools {
namespace {

int fail(const std::string &message) {
  std::cerr << "onnxslim: error: " << message << "\n";
  return 1;
}

std::unique_ptr<Model> loadChecked(const std::string &path, std::string &error) {
  Result<std::unique_ptr<Model>> model = load(path);
  if (!model) {
    error = model.error();
    return nullptr;
  }
  std::vector<std::string> problems = verify(**model, 1);
  if (!problems.empty()) {
    error = path + ": invalid model: " + problems.front();
    return nullptr;
  }
  return std::move(*model);
}

std::string describeTensor(const Tensor &t) {
  std::string s = dataTypeName(t.dtype()) + "[";
  for (size_t i = 0; i < t.dims().size(); ++i)
    s += (i ? "," : "") + std::to_string(t.dims()[i]);
  return s + "]";
}

/// The input options from --seed, --dim and --input-specs.
bool inputOptions(const InputArgs &args, const std::string &modelPath, rt::InputOptions &opts,
                  std::string &error) {
  opts.seed = args.seed;
  for (const std::string &d : args.dims) {
    rt::Status s = rt::parseDimFlag(d, opts.dims);
    if (!s.ok()) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    std::string file = args.inputSpecs.substr(0, colon);
    std::string name = colon != std::string::npos
                           ? args.inputSpecs.substr(colon + 1)
                           : std::filesystem::path(modelPath).stem().string();
    rt::Status s = rt::loadInputSpecs(file, name, opts.specs);
    if (!s.ok()) {
      error = "--input-specs " + args.inputSpecs + ": " + s.message();
      return false;
    }
  }
  return true;
}

/// Given --input flags (NAME=FILE.pb, or FILE.pb naming its input itself),
/// Execute: reads each file as the kind of value its input declares
/// (TensorProto, SequenceProto, OptionalProto), Result: the values by
/// input position, or false with a one-line error naming the file.
bool readInputFiles(const Graph &graph, const std::vector<std::string> &flags,
                    std::map<size_t, DataValue> &values, std::string &error) {
  for (const std::string &flag : flags) {
    size_t eq = flag.find('=');
    std::string name = eq == std::string::npos ? "" : flag.substr(0, eq);
    std::string file = eq == std::string::npos ? flag : flag.substr(eq + 1);
    if (eq != std::string::npos && name.empty()) {
      error = "--input " + flag + ": no input name before '='";
      return false;
    }
    size_t index = 0;
    DataValue value;
    if (!loadInputFile(graph, name, file, index, value, error)) {
      if (name.empty() && error.find("is not an input of the model") != std::string::npos)
        error += "; use --input NAME=FILE.pb";
      return false;
    }
    if (!values.emplace(index, std::move(value)).second) {
      error = "--input " + flag + ": input '" + graph.input(index)->name() + "' is given more than once";
      return false;
    }
  }
  return true;
}

RunValue toRunValue(const DataValue &v) {
  switch (v.kind) {
  case DataValue::Kind::Tensor:
    return RunValue::fromTensor(v.tensor);
  case DataValue::Kind::Sequence: {
    RunValue out;
    out.kind = RunValue::Kind::Sequence;
    out.sequence = v.sequence;
    return out;
  }
  case DataValue::Kind::Optional: {
    RunValue out;
    out.kind = RunValue::Kind::Optional;
    if (v.optional)
      out.optional = std::make_shared<const RunValue>(toRunValue(*v.optional));
    return out;
  }
  }
  return RunValue();
}

std::string describeValue(const DataValue &v) {
  switch (v.kind) {
  case DataValue::Kind::Tensor:
    return describeTensor(*v.tensor);
  case DataValue::Kind::Sequence:
    return "sequence of " + std::to_string(v.sequence.size()) + " tensor(s)";
  case DataValue::Kind::Optional:
    return v.optional ? "optional holding " + describeValue(*v.optional) : "empty optional";
  }
  return "?";
}

} // namespace

int runModelCommand(const RunArgs &args) {
  std::string error;
  std::unique_ptr<Model> model = loadChecked(args.model, error);
  if (!model)
    return fail(error);
  if (args.optimize) {
    OptimizeOptions options;
    options.modelName = args.model;
    options.modelCheck = ModelCheckMode::Off;
    OptimizeReport report = optimize(*model, options);
    if (!report.status)
      return fail(args.model + ": --optimize: " + report.status.message());
  }
  rt::InputOptions opts;
  if (!inputOptions(args.in, args.model, opts, error))
    return fail(error);
  const Graph &graph = *model->graph();
  std::map<size_t, DataValue> given;
  if (!readInputFiles(graph, args.in.inputs, given, error))
    return fail(error);
  for (const auto &[index, value] : given)
    opts.provided.insert(graph.input(index)->name());
  std::vector<rt::RtValue> inputs, outputs;
  rt::Status s = rt::makeInputs(graph, opts, inputs);
  if (!s.ok())
    return fail(args.model + ": " + s.message());
  for (const auto &[index, value] : given)
    inputs[index] = rt::fromDataValue(value);
  rt::RunOptions runOpts;
  runOpts.profile = args.profile;
  runOpts.profileNodes = args.profileNodes > 0;
  runOpts.checkInputShapes = !args.noInputShapeCheck;
  rt::Interpreter interp(*model, rt::OpRegistry::builtin(), runOpts);
  s = interp.run(graph, inputs, outputs);
  if (!s.ok())
    return fail(args.model + ": " + s.message());

  if (args.benchRuns > 0) {
    // Two untimed warm-up runs first, as the ONNX Runtime oracle does
    // (tools/oracle/oracle.js --bench): the first runs after the reference
    // one still settle (buffer reuse, caches, clocks), and ratios between
    // the two are taken over the same kind of runs.
    for (int r = 0; r < 2; ++r) {
      std::vector<rt::RtValue> warm;
      s = interp.run(graph, inputs, warm);
      if (!s.ok())
        return fail(args.model + ": " + s.message());
    }
    std::vector<double> ms;
    for (int r = 0; r < args.benchRuns; ++r) {
      std::vector<rt::RtValue> again;
      auto t0 = std::chrono::steady_clock::now();
      s = interp.run(graph, inputs, again);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!s.ok())
        return fail(args.model + ": " + s.message());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    std::printf("latency_ms: %.3f (median of %d runs)\n", ms[ms.size() / 2], args.benchRuns);
  }
  if (args.profile) {
    std::vector<std::pair<std::string, rt::OpProfile>> ops(interp.profile().begin(), interp.profile().end());
    std::sort(ops.begin(), ops.end(), [](auto &a, auto &b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (auto &[op, p] : ops)
      total += p.seconds;
    std::printf("%-28s %8s %12s %7s\n", "op", "calls", "ms", "share");
    for (auto &[op, p] : ops)
      std::printf("%-28s %8lld %12.3f %6.1f%%\n", op.c_str(), static_cast<long long>(p.calls), p.seconds * 1e3,
                  total > 0 ? 100 * p.seconds / total : 0.0);
  }

  if (args.profileNodes > 0) {
    std::vector<rt::NodeProfile> nodes = interp.nodeProfile();
    double total = 0;
    for (const rt::NodeProfile &n : nodes)
      total += n.time.seconds;
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](auto &a, auto &b) { return a.time.seconds > b.time.seconds; });
    nodes.resize(std::min(nodes.size(), static_cast<size_t>(args.profileNodes)));
    std::printf("%-32s %-20s %8s %12s %7s  %s\n", "node", "op", "calls", "ms", "share",
                "input shapes (first call)");
    // An unnamed node is shown by its first result: "(-> y)".
    auto label = [](const Node &node) {
      if (!node.name().empty() || node.numResults() == 0 || !node.result(0))
        return node.name();
      return "(-> " + node.result(0)->name() + ")";
    };
    for (const rt::NodeProfile &n : nodes)
      std::printf("%-32s %-20s %8lld %12.3f %6.1f%%  %s\n", label(*n.node).c_str(),
                  n.node->opType().c_str(), static_cast<long long>(n.time.calls),
                  n.time.seconds * 1e3, total > 0 ? 100 * n.time.seconds / total : 0.0,
                  n.inputShapes.c_str());
  }

  // Every output is converted and serialized before the first file is
  // written, so that an output that cannot be stored leaves nothing behind.
  struct Pending {
    DataValue value;
    std::string path;
    std::string bytes;
  };
  std::vector<Pending> files;
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i)
    names.push_back(graph.output(i)->name());
  std::vector<std::string> fileNames = dataFileNames(names); // as oracle.js names them
  std::set<std::string> written;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = names[i];
    if (!written.insert(fileNames[i]).second)
      continue; // the same output listed twice
    Pending p;
    s = rt::toDataValue(outputs[i], name, p.value);
    if (!s.ok())
      return fail(args.model + ": output " + s.message());
    if (!serializeDataValue(p.value, p.bytes, error))
      return fail(args.model + ": output '" + name + "': " + error);
    p.path = (std::filesystem::path(args.outputDir) / fileNames[i]).string();
    files.push_back(std::move(p));
  }
  std::error_code ec;
  std::filesystem::create_directories(args.outputDir, ec);
  if (ec)
    return fail("cannot create " + args.outputDir + ": " + ec.message());
  for (const Pending &p : files) {
    auto write = [&](std::ostream &os, std::string &) {
      os.write(p.bytes.data(), static_cast<std::streamsize>(p.bytes.size()));
      return true;
    };
    if (!writeFileAtomically(p.path, write, error))
      return fail(error);
    if (!args.quiet)
      std::cout << p.value.name << ": " << describeValue(p.value) << " -> " << p.path << "\n";
  }
  return 0;
}

int verifyModelsCommand(const VerifyArgs &args) {
  std::string error;
  std::unique_ptr<Model> a = loadChecked(args.modelA, error);
  if (!a)
    return fail(error);
  std::unique_ptr<Model> b = loadChecked(args.modelB, error);
  if (!b)
    return fail(error);
  VerifyOptions opts;
  opts.samples = args.samples;
  opts.seed = args.in.seed;
  opts.rtol = args.rtol;
  opts.atol = args.atol;
  opts.referenceName = args.modelA;
  opts.candidateName = args.modelB;
  for (const std::string &d : args.in.dims) {
    rt::Status s = rt::parseDimFlag(d, opts.dims);
    if (!s.ok())
      return fail("--dim " + d + ": " + s.message());
  }
  if (!args.in.inputSpecs.empty()) {
    size_t colon = args.in.inputSpecs.rfind(':');
    opts.specFile = args.in.inputSpecs.substr(0, colon);
    opts.specModel = colon != std::string::npos ? args.in.inputSpecs.substr(colon + 1)
                                                : std::filesystem::path(args.modelA).stem().string();
  }
  std::map<size_t, DataValue> given;
  if (!readInputFiles(*a->graph(), args.in.inputs, given, error))
    return fail(error);
  for (const auto &[index, value] : given)
    opts.inputs[a->graph()->input(index)->name()] = toRunValue(value);
  Result<VerifyReport> report = verify(*a, *b, opts);
  if (!report)
    return fail(report.error());
  std::printf("%-32s %14s %14s  %s\n", "output", "max abs diff", "max rel diff", "result");
  for (const OutputComparison &o : report->outputs) {
    std::string within = o.precision.empty()                        ? " (exact)"
                         : o.precision == "float" || args.rtol || args.atol ? ""
                                                                    : " (" + o.precision + " tolerance)";
    std::printf("%-32s %14.4g %14.4g  %s%s\n", o.name.c_str(), o.maxAbsDiff, o.maxRelDiff,
                o.mismatches ? "MISMATCH: " : ("ok" + within).c_str(), o.firstMismatch.c_str());
  }
  bool ok = report->equivalent();
  std::string tolerance = "each output within its precision's tolerance (float32: rtol 1e-4, atol 1e-5)";
  if (args.rtol || args.atol) {
    auto figure = [](const std::optional<double> &x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", x.value_or(0));
      return x ? std::string(buf) : std::string("of each output's precision");
    };
    tolerance = "rtol " + figure(args.rtol) + ", atol " + figure(args.atol);
  }
  std::printf("%s: %d sample(s), %s\n", ok ? "equivalent" : "NOT equivalent", args.samples, tolerance.c_str());
  return ok ? 0 : 1;
}

} // namespace onnxslim::tools

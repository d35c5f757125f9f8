//===- tools/RunCommands.cpp - `onnxslim run` and `onnxslim verify` --------===//
//
// Both commands load models with the library (binary or text), read --input
// files as the kind of value their input declares (TensorProto,
// SequenceProto, OptionalProto; readInputFile), make the other inputs from
// the seed, --dim and --input-specs, run them in the interpreter
// (runProfiled, verify) and report; `run` writes each output the same way
// (serializeValue, valueFileNames, writeFile). Errors are one line naming
// the file and, for a failing node, the node and op. Only the public API
// (onnxslim/onnxslim.h, onnxslim/passes.h) is used.
//
//===----------------------------------------------------------------------===//
#include "tools/RunCommands.h"

#include "onnxslim/onnxslim.h"
#include "onnxslim/passes.h"

#include <algorithm>
#include <charconv>
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
  std::vector<std::string> problems = verify(**model, 1); // the IR's invariants
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

/// The input options from --seed, --dim and --input-specs (the spec file
/// is read now, so that a bad one fails before any input file is read).
bool inputOptions(const InputArgs &args, const std::string &modelPath, RunConfig &config, std::string &error) {
  config.seed = args.seed;
  for (const std::string &d : args.dims)
    if (Status s = parseDim(d, config.dims); !s) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    config.specFile = args.inputSpecs.substr(0, colon);
    config.specModel = colon != std::string::npos ? args.inputSpecs.substr(colon + 1)
                                                  : std::filesystem::path(modelPath).stem().string();
    if (Status s = checkInputSpecs(config.specFile, config.specModel); !s) {
      error = "--input-specs " + args.inputSpecs + ": " + s.message();
      return false;
    }
  }
  return true;
}

/// Given --input flags (NAME=FILE.pb, or FILE.pb naming its input itself),
/// Execute: reads each file as the kind of value its input declares
/// (TensorProto, SequenceProto, OptionalProto), Result: the values by
/// input name, or false with a one-line error naming the file.
bool readInputFiles(const Model &model, const std::vector<std::string> &flags, std::map<std::string, RunValue> &values,
                    std::string &error) {
  for (const std::string &flag : flags) {
    // NAME=FILE or NAME:FILE; an '=' wins (a name may hold ':', "input:0").
    size_t eq = flag.find('=') != std::string::npos ? flag.find('=') : flag.find(':');
    std::string name = eq == std::string::npos ? "" : flag.substr(0, eq);
    std::string file = eq == std::string::npos ? flag : flag.substr(eq + 1);
    if (eq != std::string::npos && name.empty()) {
      error = "--input " + flag + ": no input name before '='";
      return false;
    }
    Result<std::pair<std::string, RunValue>> value = readInputFile(model, file, name);
    if (!value) {
      error = value.error();
      if (name.empty() && error.find("is not an input of the model") != std::string::npos)
        error += "; use --input NAME=FILE.pb";
      return false;
    }
    if (!values.emplace(value->first, std::move(value->second)).second) {
      error = "--input " + flag + ": input '" + value->first + "' is given more than once";
      return false;
    }
  }
  return true;
}

std::string describeValue(const RunValue &v) {
  switch (v.kind) {
  case RunValue::Kind::Tensor:
    return describeTensor(*v.tensor);
  case RunValue::Kind::Sequence:
    return "sequence of " + std::to_string(v.sequence.size()) + " tensor(s)";
  case RunValue::Kind::Optional:
    return v.optional ? "optional holding " + describeValue(*v.optional) : "empty optional";
  case RunValue::Kind::None:
    break;
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
  RunConfig config;
  if (!inputOptions(args.in, args.model, config, error))
    return fail(error);
  config.checkInputShapes = !args.noInputShapeCheck;
  std::map<std::string, RunValue> given;
  if (!readInputFiles(*model, args.in.inputs, given, error))
    return fail(error);
  ProfileOptions profile;
  profile.benchRuns = args.benchRuns;
  profile.opTimes = args.profile;
  profile.nodeTimes = args.profileNodes > 0;
  Result<RunReport> ran = runProfiled(*model, given, config, profile);
  if (!ran)
    return fail(args.model + ": " + ran.error());

  if (args.benchRuns > 0) {
    std::vector<double> ms;
    for (double seconds : ran->benchSeconds)
      ms.push_back(seconds * 1e3);
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    std::printf("latency_ms: %.3f (median of %d runs)\n", ms[ms.size() / 2], args.benchRuns);
  }
  if (args.profile) {
    std::vector<OpTime> ops = ran->ops;
    std::sort(ops.begin(), ops.end(), [](auto &a, auto &b) { return a.seconds > b.seconds; });
    double total = 0;
    for (const OpTime &p : ops)
      total += p.seconds;
    std::printf("%-28s %8s %12s %7s\n", "op", "calls", "ms", "share");
    for (const OpTime &p : ops)
      std::printf("%-28s %8lld %12.3f %6.1f%%\n", p.op.c_str(), static_cast<long long>(p.calls), p.seconds * 1e3,
                  total > 0 ? 100 * p.seconds / total : 0.0);
  }

  if (args.profileNodes > 0) {
    std::vector<NodeTime> nodes = ran->nodes;
    double total = 0;
    for (const NodeTime &n : nodes)
      total += n.seconds;
    std::stable_sort(nodes.begin(), nodes.end(), [](auto &a, auto &b) { return a.seconds > b.seconds; });
    nodes.resize(std::min(nodes.size(), static_cast<size_t>(args.profileNodes)));
    std::printf("%-32s %-20s %8s %12s %7s  %s\n", "node", "op", "calls", "ms", "share",
                "input shapes (first call)");
    // An unnamed node is shown by its first result: "(-> y)".
    auto label = [](const NodeTime &n) { return !n.node.empty() || n.output.empty() ? n.node : "(-> " + n.output + ")"; };
    for (const NodeTime &n : nodes)
      std::printf("%-32s %-20s %8lld %12.3f %6.1f%%  %s\n", label(n).c_str(), n.op.c_str(),
                  static_cast<long long>(n.calls), n.seconds * 1e3, total > 0 ? 100 * n.seconds / total : 0.0,
                  n.inputShapes.c_str());
  }

  // Every output is serialized before the first file is written, so that an
  // output that cannot be stored leaves nothing behind.
  struct Pending {
    std::string name;
    std::string description;
    std::string path;
    std::string bytes;
  };
  std::vector<Pending> files;
  std::vector<std::string> names;
  for (const auto &[name, value] : ran->outputs)
    names.push_back(name);
  std::vector<std::string> fileNames = valueFileNames(names); // as oracle.js names them
  std::set<std::string> written;
  for (size_t i = 0; i < ran->outputs.size(); ++i) {
    const auto &[name, value] = ran->outputs[i];
    if (!written.insert(fileNames[i]).second)
      continue; // the same output listed twice
    Result<std::string> bytes = serializeValue(value, name);
    if (!bytes)
      return fail(args.model + ": output " + bytes.error());
    files.push_back({name, describeValue(value), (std::filesystem::path(args.outputDir) / fileNames[i]).string(),
                     std::move(*bytes)});
  }
  std::error_code ec;
  std::filesystem::create_directories(args.outputDir, ec);
  if (ec)
    return fail("cannot create " + args.outputDir + ": " + ec.message());
  for (const Pending &p : files) {
    if (Status s = writeFile(p.path, p.bytes); !s)
      return fail(s.message());
    if (!args.quiet)
      std::cout << p.name << ": " << p.description << " -> " << p.path << "\n";
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
  for (const std::string &d : args.in.dims)
    if (Status s = parseDim(d, opts.dims); !s)
      return fail("--dim " + d + ": " + s.message());
  if (!args.in.inputSpecs.empty()) {
    size_t colon = args.in.inputSpecs.rfind(':');
    opts.specFile = args.in.inputSpecs.substr(0, colon);
    opts.specModel = colon != std::string::npos ? args.in.inputSpecs.substr(colon + 1)
                                                : std::filesystem::path(args.modelA).stem().string();
  }
  for (const std::string &flag : args.inputShapes) {
    size_t sep = flag.find_last_of(":=");
    std::vector<int64_t> shape;
    bool ok = sep != std::string::npos && sep > 0;
    for (size_t pos = sep + 1; ok && pos <= flag.size();) {
      size_t comma = std::min(flag.find(',', pos), flag.size());
      int64_t d = -1;
      auto r = std::from_chars(flag.data() + pos, flag.data() + comma, d);
      ok = r.ec == std::errc() && r.ptr == flag.data() + comma && d >= 0;
      shape.push_back(d);
      pos = comma + 1;
    }
    if (!ok)
      return fail("--input-shapes " + flag + ": expected NAME:d0,d1,... with sizes (e.g. x:1,3,48,320)");
    opts.inputShapes[flag.substr(0, sep)] = shape;
  }
  if (!readInputFiles(*a, args.in.inputs, opts.inputs, error))
    return fail(error);
  Result<VerifyReport> report = verify(*a, *b, opts);
  if (!report)
    return fail(report.error() + " (size its inputs with --dim SYM=N or --input-shapes NAME:d0,d1,...)");
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
  if (!report->inputs.empty())
    std::printf("inputs: %s\n", report->inputs.c_str());
  std::printf("%s: %zu sample(s), %s\n", ok ? "equivalent" : "NOT equivalent", report->samples, tolerance.c_str());
  return ok ? 0 : 1;
}

} // namespace onnxslim::tools

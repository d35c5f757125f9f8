//===- tools/onnxslim.cpp - The onnxslim command line ---------------------===//
//
//   onnxslim IN OUT [options]      optimize IN, write OUT, print a summary
//   onnxslim dump IN               print the IR as ONNX textual syntax
//   onnxslim check MODEL           validate a model against the ONNX spec
//   onnxslim run MODEL             run it in the interpreter, write outputs
//   onnxslim verify A B            compare two models' outputs on seeded inputs
//
// Errors go to stderr as one line naming the file (and node, op and subgraph
// path where there is one) and the exit status is non-zero. The input is
// never modified and a half-written output never remains.
//
// The optimizer validates its input against the ONNX spec before any pass
// and refuses an invalid model unless --allow-invalid; it validates the
// optimized model again before writing it (an invalid result is a pass bug:
// nothing is written; --verify-each validates after every pass to name it).
//
// Like any downstream program, the command line reaches the library only
// through its public headers (onnxslim/onnxslim.h; onnxslim/passes.h for
// the pass registry, the IR verifier and the type printer):
// tests/api/tools_public_includes.py checks it.
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"
#include "onnxslim/passes.h"

#include "tools/RunCommands.h"
#include "tools/Summary.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxslim;
using namespace onnxslim::tools;

namespace {

int fail(const std::string &message) {
  std::cerr << "onnxslim: error: " << message << "\n";
  return 1;
}

/// Refuses a model whose IR is broken (the frontend should have said why).
bool checkIR(const Model &model, const std::string &path, std::string &error) {
  std::vector<std::string> problems = verify(model, 1);
  if (problems.empty())
    return true;
  error = path + ": invalid model: " + problems.front();
  return false;
}

/// A model read with the library, or null with `error` set.
std::unique_ptr<Model> loadAny(const std::string &path, std::string &error) {
  Result<std::unique_ptr<Model>> model = load(path);
  if (!model) {
    error = model.error();
    return nullptr;
  }
  return std::move(*model);
}

long long fileSize(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

struct MainArgs {
  std::string input;
  std::string output;
  std::string emit = "onnx";
  bool externalData = false;
  bool quiet = false;
  bool allowInvalid = false; ///< --allow-invalid: optimize a model that fails validation
  // Pass pipeline (transforms/).
  std::string passes;
  bool passesGiven = false;
  std::string target = "onnx"; ///< --target: onnx | onnxruntime
  bool listPasses = false;
  bool enableTestPasses = false;
  bool stats = false;
  bool timing = false;
  OptimizeOptions opt;           ///< instrumentation flags land here directly
  bool modelCheck = false;       ///< --model-check
  bool modelCheckEach = false;   ///< --model-check-each
  bool noModelCheck = false;     ///< --no-model-check
  std::vector<std::string> dims; ///< SYM=N for --model-check inputs
  std::string inputSpecs;        ///< FILE[:NAME] for --model-check inputs
  bool noShapeInfer = false;
  int64_t foldSizeLimit = -1; ///< --fold-size-limit BYTES (-1: default)
  int64_t sizeThreshold = -1; ///< --size-threshold BYTES, OnnxSlim's (0: no limit; -1: not given)
  std::vector<std::string> skipPasses;
  std::vector<std::string> skipFusions; ///< --skip-fusion-patterns (ours or OnnxSlim's names)
  bool noConstantFolding = false;
  std::vector<std::string> checkInputs; ///< --model-check-inputs NAME:FILE
  bool strict = false;
  bool verbose = false;
  bool inspect = false;
  bool emitGiven = false;
  double progressAfter = 1.0;      ///< seconds before a progress line shows (terminal only)
  std::vector<std::string> report; ///< --report FORMAT [FILE] ("-" or none: standard output)
  std::string dtype;          ///< --dtype fp16|bf16|fp32 ("": keep the model's)
  int targetOpset = 0;        ///< --target-opset N (0: keep the model's)
  std::string keepIOTypes;    ///< --keep-io-types true|false ("": true)
  bool noFp16Fallback = false; ///< --no-fp16-fallback
};

PassRegistry makeRegistry(const MainArgs &args) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  if (args.enableTestPasses)
    registerTestPasses(registry);
  return registry;
}

int printPasses(const MainArgs &args) {
  PassRegistry registry = makeRegistry(args);
  std::cout << "Passes (default pipeline: " << defaultPipelineFor("onnx") << "):\n";
  for (const PassDescription &p : listPasses(&registry))
    std::cout << "  " << p.name << std::string(p.name.size() < 34 ? 34 - p.name.size() : 1, ' ')
              << p.description << "\n";
  return 0;
}

/// The library's options from the command line, Result: false with `error`
/// for contradictory or malformed flags.
bool optimizeOptions(MainArgs &args, const PassRegistry &registry, std::string &error) {
  OptimizeOptions &o = args.opt;
  o.modelName = args.input;
  o.surface = Surface::CommandLine; // messages name --flags
  if (args.passesGiven)
    o.pipeline = args.passes;
  o.target = args.target;
  o.shapeInference = !args.noShapeInfer;
  if (args.foldSizeLimit >= 0 && args.sizeThreshold >= 0) {
    error = "--size-threshold and --fold-size-limit both bound folding: give one";
    return false;
  }
  if (args.foldSizeLimit >= 0)
    o.foldSizeLimit = static_cast<uint64_t>(args.foldSizeLimit);
  if (args.sizeThreshold >= 0) // OnnxSlim's meaning: 0 is no limit
    o.foldSizeLimit = args.sizeThreshold == 0 ? UINT64_MAX / 2 : static_cast<uint64_t>(args.sizeThreshold);
  o.allowInvalid = args.allowInvalid;
  o.registry = &registry;
  o.log = &std::cerr;
  if (args.noModelCheck && (args.modelCheck || args.modelCheckEach)) {
    error = "--no-model-check contradicts --model-check / --model-check-each";
    return false;
  }
  o.modelCheck = args.modelCheckEach ? ModelCheckMode::EachPass
                 : args.modelCheck   ? ModelCheckMode::Require
                 : args.noModelCheck ? ModelCheckMode::Off
                                     : ModelCheckMode::Auto;
  for (const std::string &d : args.dims)
    if (Status s = parseDim(d, o.checkDims); !s) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    o.checkSpecFile = args.inputSpecs.substr(0, colon);
    // Without :NAME, the entry named like the input file (without extension).
    std::string base = args.input.substr(args.input.find_last_of('/') + 1);
    o.checkSpecModel = colon != std::string::npos ? args.inputSpecs.substr(colon + 1) : base.substr(0, base.rfind('.'));
  }
  o.skipPasses = args.skipPasses;
  for (const std::string &name : args.skipFusions)
    if (fusionPassName(name).empty()) {
      std::string names;
      for (const FusionName &f : onnxslimFusionNames())
        names += (names.empty() ? "" : ", ") + f.name;
      error = "--skip-fusion-patterns: unknown fusion '" + name +
              "' (fuse-* pass names as --list-passes shows, or OnnxSlim's: " + names + ")";
      return false;
    }
  o.skipFusions = args.skipFusions;
  if (args.noConstantFolding)
    o.skipPasses.push_back("fold-constants");
  for (const std::string &spec : args.checkInputs)
    if (Status s = addModelCheckInput(o, spec); !s) {
      error = "--model-check-inputs: " + s.message();
      return false;
    }
  if ((!o.checkInputs.empty() || !o.checkInputShapes.empty()) && o.modelCheck == ModelCheckMode::Auto)
    o.modelCheck = ModelCheckMode::Require; // real inputs given: the check must run
  if (args.strict && o.modelCheck == ModelCheckMode::Off) {
    error = "--strict applies to the model check (--no-model-check turns it off)";
    return false;
  }
  if (!args.report.empty() && args.report[0] != "json") {
    error = "--report " + args.report[0] + ": unknown format (formats: json; --report json [FILE])";
    return false;
  }
  return true;
}

/// A progress line on a terminal: "onnxslim: round 2, fold-constants (3.1 s)",
/// rewritten in place, shown once a run takes longer than `after` seconds.
class Progress {
public:
  Progress(bool enabled, double after) : enabled_(enabled && ::isatty(2)), after_(after) {}
  ~Progress() { clear(); }
  void update(std::string_view pass, unsigned round, double seconds) {
    if (!enabled_ || seconds < after_)
      return;
    std::string line = "onnxslim: round " + std::to_string(round) + ", " + std::string(pass) + " (" +
                       std::to_string(static_cast<int>(seconds * 10) / 10) + "." +
                       std::to_string(static_cast<int>(seconds * 10) % 10) + " s)";
    std::cerr << "\r" << line << std::string(width_ > line.size() ? width_ - line.size() : 0, ' ') << std::flush;
    width_ = line.size();
  }
  void clear() {
    if (width_)
      std::cerr << "\r" << std::string(width_, ' ') << "\r" << std::flush;
    width_ = 0;
  }

private:
  bool enabled_;
  double after_;
  size_t width_ = 0;
};

/// Where --report writes: its FILE, or "-" (standard output) when none.
std::string reportPath(const MainArgs &args) { return args.report.size() >= 2 ? args.report[1] : "-"; }

/// Writes the --report=json file (schema: docs/Report.md).
bool writeJsonReport(const MainArgs &args, const OptimizeReport &r, const ModelStats &before, const ModelStats &after,
                     double seconds, std::string &error) {
  auto counts = [](const ModelStats &m) {
    nlohmann::ordered_json ops = nlohmann::ordered_json::object();
    for (const auto &[op, n] : m.opCounts)
      ops[op] = n;
    return nlohmann::ordered_json{{"nodes", m.nodes},       {"initializers", m.initializers},
                          {"constantBytes", m.constantBytes}, {"fileBytes", m.fileBytes},
                          {"opCounts", ops}};
  };
  nlohmann::ordered_json passes = nlohmann::ordered_json::array();
  for (const PassReport &p : r.passes) {
    nlohmann::ordered_json counters = nlohmann::ordered_json::object();
    for (const auto &[name, value] : p.counters)
      counters[name] = value;
    passes.push_back({{"pass", p.pass}, {"seconds", p.seconds}, {"runs", p.runs}, {"counters", counters}});
  }
  nlohmann::ordered_json check = {{"ran", r.modelChecked}};
  if (r.modelChecked)
    check.update({{"outputs", r.check.outputs},
                  {"maxAbsDiff", r.check.maxAbsDiff},
                  {"maxRelDiff", r.check.maxRelDiff},
                  {"seconds", r.check.seconds},
                  {"dims", r.check.dims},
                  {"tolerances", r.check.tolerances},
                  {"rewrites", r.check.rewrites},
                  {"exactRewrites", r.check.exactRewrites},
                  {"provedStructurally", r.check.provedStructurally}});
  else if (!r.modelCheckSkipped.empty())
    check["skipped"] = r.modelCheckSkipped;
  if (r.float16Compared)
    check["float16"] = {{"keptFloat32Nodes", r.float16KeptNodes}};
  nlohmann::ordered_json undone = nlohmann::ordered_json::array();
  for (const OptimizeReport::UndoneRewrite &u : r.undoneRewrites)
    undone.push_back({{"pass", u.pass}, {"pattern", u.pattern}, {"node", u.node}, {"round", u.round},
                      {"difference", u.difference}});
  nlohmann::ordered_json j = {{"schema", "onnxslim-report/1"},
                      {"version", std::string(version())},
                      {"input", {{"path", args.input}, {"model", counts(before)}}},
                      {"output", {{"path", args.output}, {"model", counts(after)}}},
                      {"pipeline", r.pipeline},
                      {"rounds", r.rounds},
                      {"converged", r.converged},
                      {"passes", passes},
                      {"modelCheck", check},
                      {"rolledBack", r.rolledBack},
                      {"undoneRewrites", undone},
                      {"warnings", r.warnings},
                      {"seconds", seconds}};
  if (reportPath(args) == "-") {
    std::cout << j.dump(2) << "\n" << std::flush;
    if (!std::cout) {
      error = "--report: cannot write to standard output";
      return false;
    }
    return true;
  }
  if (Status s = writeFile(reportPath(args), j.dump(2) + "\n"); !s) {
    error = s.message();
    return false;
  }
  return true;
}

/// `onnxslim IN --inspect`: the model's interface, opsets, op counts and
/// sizes; nothing is written.
int runInspect(const MainArgs &args) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(args.input, error);
  if (!model || !checkIR(*model, args.input, error))
    return fail(error);
  for (const std::string &problem : validateModel(*model, args.input)) // the IR is sound: the spec's problems
    std::cerr << "onnxslim: warning: " << problem << "\n";
  const Graph &g = *model->graph();
  auto typeText = [](const std::optional<Type> &t) { return t ? typeToText(*t) : std::string("?"); };
  std::cout << "model: " << args.input << " (" << fileSize(args.input) << " bytes, ir_version "
            << model->irVersion << ")\nopsets:";
  for (const OpsetId &opset : model->opsetImport)
    std::cout << " " << (opset.domain.empty() ? "ai.onnx" : opset.domain) << "=" << opset.version;
  std::cout << "\ninputs:\n";
  for (const Value *v : g.inputs())
    if (!v->isInitializer())
      std::cout << "  " << v->name() << ": " << typeText(v->type()) << "\n";
  std::cout << "outputs:\n";
  for (size_t i = 0; i < g.numOutputs(); ++i) {
    const std::optional<Type> &slot = g.outputSlots()[i].type;
    std::cout << "  " << g.output(i)->name() << ": " << typeText(slot ? slot : g.output(i)->type()) << "\n";
  }
  ModelStats stats = collectStats(*model);
  stats.fileBytes = fileSize(args.input);
  std::cout << "nodes: " << stats.nodes << ", initializers: " << stats.initializers
            << ", constant bytes: " << stats.constantBytes << "\nops:\n";
  for (const auto &[op, n] : stats.opCounts)
    std::cout << "  " << op << std::string(op.size() < 28 ? 28 - op.size() : 1, ' ') << n << "\n";
  return std::cout ? 0 : fail("cannot write to standard output");
}

/// Writes the model as text to standard output (OUT = "-").
bool printToStdout(const Model &model, std::string &error) {
  WriteOptions opts;
  opts.format = ModelFormat::Text; // every constant in full: it reads back
  Result<std::string> text = saveToBytes(model, opts);
  if (!text) {
    error = text.error();
    return false;
  }
  std::cout << *text << (text->empty() || text->back() != '\n' ? "\n" : "");
  std::cout.flush();
  if (!std::cout)
    error = "cannot write to standard output";
  return static_cast<bool>(std::cout);
}

int runMain(MainArgs &args) {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  bool toStdout = args.output == "-";
  if (toStdout && args.emit != "text")
    return fail("writing to standard output ('-') needs --emit=text");
  if (!args.report.empty() && reportPath(args) == args.output)
    return fail(toStdout ? "--report and the output model cannot both go to standard output ('-')"
                         : "--report " + reportPath(args) + ": the report would overwrite the output model");

  // Where the output (and report) go must exist and be writable before the
  // optimization runs, not after.
  for (const std::string &path : {args.output, args.report.empty() ? std::string("-") : reportPath(args)}) {
    if (path == "-")
      continue;
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return fail("cannot write " + path + ": no directory " + dir);
    if (::access(dir.c_str(), W_OK) != 0)
      return fail("cannot write " + path + ": directory " + dir + " is not writable");
  }

  // The options are checked before the model is read, so a typo fails fast.
  PassRegistry registry = makeRegistry(args);
  if (!optimizeOptions(args, registry, error))
    return fail(error);
  if (args.targetOpset)
    args.opt.targetOpset = args.targetOpset;
  if (Status s = checkOptions(args.opt); !s)
    return fail(s.message());

  // --dtype: convert-float-type runs once after the optimizing pipeline.
  bool convert = !args.dtype.empty() || !args.keepIOTypes.empty() || args.noFp16Fallback;
  if (args.dtype == "float16" || args.dtype == "bfloat16" || args.dtype == "float32")
    args.dtype = args.dtype == "float16" ? "fp16" : args.dtype == "bfloat16" ? "bf16" : "fp32"; // the library's names too
  if (args.noFp16Fallback && args.dtype != "fp16" && args.dtype != "bf16")
    return fail("--no-fp16-fallback needs --dtype fp16 or bf16");
  if (convert) {
    if (args.dtype != "fp16" && args.dtype != "bf16" && args.dtype != "fp32")
      return fail(args.dtype.empty() ? "--keep-io-types needs --dtype fp16|bf16|fp32"
                                     : "--dtype takes fp16 (float16), bf16 (bfloat16) or fp32 (float32), not '" +
                                           args.dtype + "'");
    if (!args.keepIOTypes.empty() && args.keepIOTypes != "true" && args.keepIOTypes != "false")
      return fail("--keep-io-types takes true or false, not '" + args.keepIOTypes + "'");
    args.opt.floatType = args.dtype == "fp16" ? "float16" : args.dtype == "bf16" ? "bfloat16" : "float32";
    args.opt.keepIOTypes = args.keepIOTypes != "false";
    // OnnxSlim's --dtype fp16 converts the interface too: say where ours differs.
    if (args.dtype == "fp16" && args.keepIOTypes.empty() && !args.quiet)
      std::cerr << "onnxslim: note: --dtype fp16 keeps the model's float32 inputs and outputs (Casts at the "
                   "interface); --keep-io-types=false converts them too, as OnnxSlim does\n";
    args.opt.float16Fallback = !args.noFp16Fallback;
  }

  std::unique_ptr<Model> model = loadAny(args.input, error);
  if (!model)
    return fail(error);
  Progress progress(!args.quiet, args.progressAfter);
  args.opt.onPassStart = [&](std::string_view pass, unsigned round, double seconds) {
    progress.update(pass, round, seconds);
  };
  OptimizeReport report = optimize(*model, args.opt);
  progress.clear();
  if (args.verbose) {
    std::cerr << "onnxslim: pipeline: " << report.pipeline << " (" << report.rounds << " round(s))\n";
    for (const PassReport &p : report.passes) {
      std::string counters;
      for (const auto &[name, value] : p.counters)
        if (value)
          counters += " " + name + "=" + std::to_string(value);
      std::fprintf(stderr, "onnxslim:   %-34s %8.2f ms%s\n", p.pass.c_str(), p.seconds * 1e3, counters.c_str());
    }
  }
  if (args.stats)
    std::cerr << report.statisticsText;
  if (args.timing)
    std::cerr << report.timingText;
  if (!report.inputValid && !report.inputProblems.empty()) {
    const std::vector<std::string> &problems = report.inputProblems;
    std::string more = problems.size() > 1 ? std::to_string(problems.size() - 1) + " more problem(s); " : "";
    if (!args.allowInvalid)
      return fail(problems.front() + " [invalid model: " + more + "'onnxslim check " + args.input +
                  "' lists every problem; --allow-invalid optimizes it anyway]");
    std::cerr << "onnxslim: warning: " << problems.front() << " [invalid model, optimized anyway (--allow-invalid); "
              << more << "the output is not validated]\n";
  }
  if (!report.status)
    return fail(report.status.message());
  if (args.strict && !report.rolledBack.empty())
    return fail(args.input + ": --strict: " + std::to_string(report.rolledBack.size()) +
                " pass(es) changed the outputs and were rolled back (" + report.rolledBack.front() +
                "); nothing written");
  if (args.strict && !report.undoneRewrites.empty()) {
    const OptimizeReport::UndoneRewrite &u = report.undoneRewrites.front();
    return fail(args.input + ": --strict: the model check undid " + std::to_string(report.undoneRewrites.size()) +
                " rewrite(s) that changed the outputs (" + u.pattern + " at " + u.node + " in pass '" + u.pass +
                "'); nothing written");
  }

  if (toStdout) {
    if (!printToStdout(*model, error))
      return fail(error);
    return 0;
  }
  WriteOptions write;
  // Without --emit the output's extension decides (.txt/.onnxtxt: text).
  write.format = !args.emitGiven ? ModelFormat::Auto : args.emit == "text" ? ModelFormat::Text : ModelFormat::Binary;
  write.externalData = args.externalData;
  write.onNote = [](const std::string &note) { std::cerr << "onnxslim: note: " << note << "\n"; };
  if (Status s = save(*model, args.output, write); !s)
    return fail(s.message());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ModelStats before, after;
  static_cast<ModelCounts &>(before) = report.before;
  static_cast<ModelCounts &>(after) = report.after;
  before.fileBytes = fileSize(args.input);
  after.fileBytes = fileSize(args.output);
  if (!args.report.empty() && !writeJsonReport(args, report, before, after, seconds, error))
    return fail(error);
  if (!args.quiet) {
    // A report on standard output keeps it to itself: the summary goes to standard error.
    std::ostream &out = !args.report.empty() && reportPath(args) == "-" ? std::cerr : std::cout;
    printSummary(out, args.input, before, args.output, after, seconds);
    if (report.modelChecked)
      printModelCheck(out, report.check);
    for (const OptimizeReport::UndoneRewrite &u : report.undoneRewrites)
      out << "model check: undid " << u.pattern << " at " << u.node << " (pass '" << u.pass << "', round "
                << u.round << "), which changed the outputs; the rest of the pipeline's work is kept:\n"
                << u.difference << (u.difference.empty() || u.difference.back() == '\n' ? "" : "\n");
    if (report.float16Compared && args.opt.modelCheck == ModelCheckMode::Auto)
      out << "model check: the " << args.opt.floatType << " model matches too (within " << args.opt.floatType
          << "'s tolerance)"
                << (report.float16KeptNodes ? ", with " + std::to_string(report.float16KeptNodes) +
                                                  " node(s) kept in float32"
                                            : std::string())
                << "\n";
    else if (report.modelChecked && convert && args.opt.modelCheck == ModelCheckMode::Auto)
      out << "model check: made before the --dtype conversion (compare float16 outputs with 'onnxslim verify "
                << args.input << " " << args.output << "', or --model-check)\n";
    else if (report.modelChecked && convert)
      out << "model check: the --dtype conversion matches too (within float16's tolerance)\n";
    else if (!report.modelChecked && args.opt.modelCheck == ModelCheckMode::Auto && !args.passesGiven)
      out << "model check: skipped: " << report.modelCheckSkipped << " (--model-check to require it)\n";
  }
  return 0;
}

int runDump(const std::string &input, bool largeConstants) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(input, error);
  if (!model || !checkIR(*model, input, error))
    return fail(error);
  // An invalid model is still printed (that is how one looks at it), with a
  // warning (the IR is sound: the spec's problems).
  for (const std::string &problem : validateModel(*model, input))
    std::cerr << "onnxslim: warning: " << problem << "\n";
  WriteOptions opts;
  opts.format = ModelFormat::Text;
  opts.printLargeConstants = largeConstants;
  Result<std::string> text = saveToBytes(*model, opts);
  if (!text)
    return fail(text.error());
  std::cout << *text;
  return std::cout ? 0 : fail("cannot write to standard output");
}

/// `onnxslim check MODEL`: "MODEL: valid", or every problem found (exit 1).
int runCheck(const std::string &input) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(input, error);
  if (!model)
    return fail(error);
  std::vector<std::string> problems = validateModel(*model, input);
  if (problems.empty()) {
    std::cout << input << ": valid\n";
    return 0;
  }
  for (const std::string &p : problems)
    std::cout << p << "\n";
  std::cout.flush();
  return 1;
}

} // namespace

/// Levenshtein distance, for "did you mean".
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// Given the app and the (reversed) arguments of a failed parse, Result:
/// "; did you mean --input-shapes?" for the first `--flag` no command knows
/// when a known one is close to it (an edit distance of at most 3), else "".
std::string didYouMean(const CLI::App &app, const std::vector<std::string> &args) {
  std::vector<std::string> known;
  std::vector<const CLI::App *> apps{&app};
  for (const CLI::App *sub : app.get_subcommands({}))
    apps.push_back(sub);
  for (const CLI::App *a : apps)
    for (const CLI::Option *o : a->get_options({}))
      for (const std::string &n : o->get_lnames())
        known.push_back("--" + n);
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->rfind("--", 0) != 0)
      continue;
    std::string flag = it->substr(0, it->find('='));
    if (std::find(known.begin(), known.end(), flag) != known.end())
      continue;
    std::string best;
    size_t bestDistance = 4;
    for (const std::string &k : known)
      if (size_t d = editDistance(flag, k); d < bestDistance)
        best = k, bestDistance = d;
    return best.empty() ? std::string() : "; did you mean " + best + "?";
  }
  return "";
}

/// A vector option: one value per occurrence (repeat it, or separate values
/// by commas), so that it never takes the positionals that follow it.
CLI::Option *repeatable(CLI::Option *o, char delimiter = ',') {
  return o->expected(1)->allow_extra_args(false)->delimiter(delimiter)->multi_option_policy(
      CLI::MultiOptionPolicy::TakeAll);
}

int main(int argc, char **argv) {
  CLI::App app{"onnxslim: an optimizing compiler for ONNX models\n\n"
               "  onnxslim IN OUT [options]   optimize IN, write OUT, print a summary\n"
               "  onnxslim IN --inspect        describe IN, write nothing\n"
               "  onnxslim dump|check|run|verify ...   (onnxslim SUBCOMMAND --help)",
               "onnxslim"};
  app.require_subcommand(0, 1);
  app.positionals_at_end(false);
  app.set_help_flag("-h,--help", "Print this help and exit");

  MainArgs mainArgs;
  bool showVersion = false;
  app.add_option("input", mainArgs.input, "Input model (.onnx, or ONNX textual syntax)");
  app.add_option("output", mainArgs.output, "Output model (.onnx; .txt/.onnxtxt: textual syntax)");
  app.add_flag("--version", showVersion, "Print the version and the ONNX IR and opsets it supports");

  const char *kOpt = "Optimization", *kSurgery = "Surgery", *kCheck = "Checking", *kDebug = "Debugging",
             *kOut = "Output";
  CLI::Option *passesOpt =
      app.add_option("--passes", mainArgs.passes, "Run exactly this comma-separated pipeline once ('--passes=' runs none)")
          ->expected(0, 1)
          ->allow_extra_args(false)
          ->group(kOpt);
  app.add_option("--target", mainArgs.target,
                 "Runtime the output is for: onnx (standard ONNX only) or onnxruntime (the default pipeline "
                 "plus ONNX Runtime contrib-op fusions such as fuse-conv-relu)")
      ->check(CLI::IsMember({"onnx", "onnxruntime"}))
      ->group(kOpt);
  repeatable(app.add_option("--skip-passes", mainArgs.skipPasses,
                                         "Leave these passes out of the pipeline (names as --list-passes shows)"))
      ->group(kOpt);
  // OnnxSlim's names, and what each skips here, from the library's table.
  std::string onnxslimFusions;
  for (const FusionName &f : onnxslimFusionNames())
    onnxslimFusions += (onnxslimFusions.empty() ? "" : ", ") + f.name + " (" + f.pass +
                       (f.skipOption.empty() ? "" : "{" + f.skipOption + "}") + ")";
  repeatable(app.add_option("--skip-fusion-patterns", mainArgs.skipFusions,
                            "Leave these fusions out: fuse-* pass names (the whole pass), or OnnxSlim's names, "
                            "each skipping only what it names: " + onnxslimFusions))
      ->group(kOpt);
  std::string onnxslimOptimizations;
  for (const OptimizationName &o : onnxslimOptimizationNames())
    onnxslimOptimizations += (onnxslimOptimizations.empty() ? "" : ", ") + o.name;
  repeatable(app.add_option("--skip-optimizations", mainArgs.opt.skipOptimizations,
                            "Leave these optimizations out, by OnnxSlim's names: " + onnxslimOptimizations))
      ->group(kOpt);
  app.add_flag("--no-constant-folding", mainArgs.noConstantFolding, "Do not fold constants")->group(kOpt);
  app.add_flag("--no-shape-infer", mainArgs.noShapeInfer,
               "Do not run shape inference in the default pipeline nor write inferred value_info")
      ->group(kOpt);
  repeatable(app.add_option("--input-shapes", mainArgs.opt.inputShapes,
                            "Override an input's shape before optimizing: NAME:1,3,224,224 (dims: numbers, "
                            "symbols, ?; repeat the option for more inputs)"),
             '\0')
      ->group(kOpt);
  app.add_option("--fold-size-limit", mainArgs.foldSizeLimit,
                 "Do not fold a constant larger than BYTES and than its inputs (default 1048576; 0: fold none "
                 "that grows)")
      ->check(CLI::NonNegativeNumber)
      ->group(kOpt);
  app.add_option("--size-threshold", mainArgs.sizeThreshold,
                 "OnnxSlim's name: as --fold-size-limit, but 0 means no limit (fold every size)")
      ->check(CLI::NonNegativeNumber)
      ->group(kOpt);
  app.add_flag("--allow-invalid", mainArgs.allowInvalid,
               "Optimize a model that fails validation (warns; the output is not validated then)")
      ->group(kOpt);

  repeatable(app.add_option("--inputs", mainArgs.opt.inputs,
                                         "Make these values the model's inputs: NAME or NAME:dtype (what only "
                                         "feeds them goes)"))
      ->group(kSurgery);
  repeatable(
      app.add_option("--outputs", mainArgs.opt.outputs, "Make these values the model's outputs: NAME or NAME:dtype"))
      ->group(kSurgery);
  repeatable(app.add_option("--unused-output", mainArgs.opt.dropOutputs, "Remove this output"))
      ->group(kSurgery);

  app.add_flag("--model-check", mainArgs.modelCheck,
               "Refuse to write a model whose outputs differ from the input's on seeded random inputs")
      ->group(kCheck);
  app.add_flag("--no-model-check", mainArgs.noModelCheck,
               "Do not compare outputs before writing (the default pipeline does when the model's "
               "constants fit in 256 MiB and the interpreter runs every op)")
      ->group(kCheck);
  app.add_flag("--model-check-each", mainArgs.modelCheckEach,
               "Compare outputs after every pass and roll back a pass that changed them")
      ->group(kCheck);
  repeatable(app.add_option("--model-check-inputs", mainArgs.checkInputs,
                            "Inputs for the model check: real data, NAME:FILE.npy or NAME:FILE.pb, or the shape "
                            "of a seeded one, NAME:d0,d1,... (repeatable)"),
             '\0')
      ->group(kCheck);
  app.add_option("--check-n", mainArgs.opt.checkSamples, "Compare on N samples of random inputs (default 1)")
      ->check(CLI::PositiveNumber)
      ->group(kCheck);
  repeatable(
      app.add_option("--dim", mainArgs.dims, "Size of a symbolic input dim for the model check (SYM=N, repeatable)"))
      ->group(kCheck);
  app.add_option("--dtype", mainArgs.dtype,
                 "Then convert float32 weights and computation to float16 (fp16) or bfloat16 (bf16, opset 13 "
                 "on), or float16 to float32 (fp32); ops without a form in that type stay float32 behind Casts")
      ->group(kOpt);
  app.add_flag("--no-fp16-fallback", mainArgs.noFp16Fallback,
               "With --dtype fp16 or bf16: convert all that has a form in that type, even where the model check "
               "finds outputs beyond its tolerance (by default the first nodes stay float32 until they are within)")
      ->group(kOpt);
  app.add_option("--target-opset", mainArgs.targetOpset,
                 "First convert the model to default-domain opset N (7..24, up or down; pass convert-opset), "
                 "then optimize; refused, naming the node, when an op cannot be converted")
      ->check(CLI::Range(7, static_cast<int>(supportedVersions().defaultOpset)))
      ->group(kOpt);
  app.add_flag("--allow-decline", mainArgs.opt.allowDecline,
               "With --target-opset: leave a node the conversion declines at its own version (named in a warning) "
               "instead of refusing the model; the model written is then not valid ONNX at that opset")
      ->group(kOpt);
  app.add_option("--keep-io-types", mainArgs.keepIOTypes,
                 "With --dtype: keep the declared types of the model's inputs and outputs (true, the default) "
                 "or convert them too (false)")
      ->group(kOpt);
  app.add_option("--input-specs", mainArgs.inputSpecs,
                 "Input shapes/values for the model check from a models.json file (FILE[:NAME])")
      ->group(kCheck);
  app.add_flag("--strict", mainArgs.strict,
               "Fail (write nothing) when the model check had to undo a rewrite or --model-check-each rolled a pass "
               "back")
      ->group(kCheck);

  app.add_flag("--list-passes", mainArgs.listPasses, "List the passes and exit")->group(kDebug);
  repeatable(
      app.add_option("--print-ir-before", mainArgs.opt.printIRBefore, "Print the IR before these passes"))
      ->group(kDebug);
  repeatable(
      app.add_option("--print-ir-after", mainArgs.opt.printIRAfter, "Print the IR after these passes"))
      ->group(kDebug);
  app.add_flag("--print-ir-before-all", mainArgs.opt.printIRBeforeAll, "Print the IR before every pass")->group(kDebug);
  app.add_flag("--print-ir-after-all", mainArgs.opt.printIRAfterAll, "Print the IR after every pass")->group(kDebug);
  app.add_flag("--print-ir-after-change", mainArgs.opt.printIRAfterChange,
               "Print the IR after every pass that changed it")
      ->group(kDebug);
  app.add_flag("--verify-each", mainArgs.opt.verifyEach, "Run the IR verifier after every pass")->group(kDebug);
  app.add_flag("--stats", mainArgs.stats, "Print how many rewrites each pass made")->group(kDebug);
  app.add_flag("--timing", mainArgs.timing, "Print the time spent in each pass")->group(kDebug);
  repeatable(
      app.add_option("--debug-only", mainArgs.opt.debugOnly,
                     "Explain each rewrite and declined match of these passes or patterns ('all')"))
      ->group(kDebug);
  app.add_flag("-v,--verbose", mainArgs.verbose,
               "Also print the pipeline, each pass's rewrites and time, and the warnings")
      ->group(kDebug);
  app.add_flag("--enable-test-passes", mainArgs.enableTestPasses, "Register the deliberately wrong test passes")
      ->group("");
  app.add_option("--progress-after", mainArgs.progressAfter,
                 "Seconds after which a progress line appears on a terminal (default 1)")
      ->group("");

  app.add_option("--emit", mainArgs.emit, "Output form (default: text for .txt/.onnxtxt, else onnx)")
      ->check(CLI::IsMember({"onnx", "text"}))
      ->group(kOut);
  app.add_flag("--save-as-external-data", mainArgs.externalData,
               "Write tensors of 1 KiB and more to <output>.data beside the output")
      ->group(kOut);
  app.add_flag("-q,--quiet", mainArgs.quiet, "Do not print the summary table nor progress")->group(kOut);
  app.add_flag("--inspect", mainArgs.inspect,
               "Print the model's inputs, outputs, opsets, op counts and sizes; write nothing")
      ->group(kOut);
  app.add_option("--report", mainArgs.report,
                 "Write a machine-readable report: --report json [FILE] (no FILE or '-': standard output, "
                 "and the summary goes to standard error; docs/Report.md has the schema)")
      ->expected(1, 2)
      ->allow_extra_args(false)
      ->group(kOut);

  std::string dumpInput;
  bool largeConstants = false;
  CLI::App *dump = app.add_subcommand("dump", "Print a model as ONNX textual syntax");
  dump->add_option("input", dumpInput, "Input model")->required();
  dump->add_flag("--print-large-constants", largeConstants, "Print every constant in full");

  std::string checkInput;
  CLI::App *checkCmd = app.add_subcommand("check", "Validate a model against the ONNX specification");
  checkCmd->add_option("model", checkInput, "Model")->required();

  RunArgs runArgs;
  CLI::App *run = app.add_subcommand("run", "Run a model in the interpreter and write its outputs as .pb files (TensorProto, SequenceProto, OptionalProto)");
  run->add_option("model", runArgs.model, "Model")->required();
  run->add_option("--output-dir", runArgs.outputDir,
                  "Where <output name>.pb files go (default: .). Bytes of a name outside [A-Za-z0-9._-] "
                  "become '_' (logits:0 -> logits_0.pb); names that would then share a file get the "
                  "FNV-1a hash of the name before .pb, except one that needed no change (a_b, a/b, a:b -> "
                  "a_b.pb, a_b.3a8e75c1.pb, a_b.08bd8540.pb), as tools/oracle names its files");
  run->add_flag("-q,--quiet", runArgs.quiet, "Do not list the outputs");
  run->add_option("--bench", runArgs.benchRuns,
                  "Then run twice to warm up and N more times, and print the median latency")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--profile", runArgs.profile, "Print the time spent in each op type");
  run->add_flag("-O,--optimize", runArgs.optimize,
               "First optimize the model in memory with the default pipeline (as a runtime "
               "optimizes at session start; outputs may differ in the last bits)");
  run->add_option("--profile-nodes", runArgs.profileNodes,
                  "Print the N nodes that took longest, with their input shapes")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--no-input-shape-check", runArgs.noInputShapeCheck,
                "Accept input files whose shapes contradict the model's declared input shapes");
  VerifyArgs verifyArgs;
  CLI::App *verifyCmd =
      app.add_subcommand("verify", "Run two models on the same seeded inputs and compare their outputs");
  verifyCmd->add_option("a", verifyArgs.modelA, "Reference model")->required();
  verifyCmd->add_option("b", verifyArgs.modelB, "Model to check")->required();
  verifyCmd->add_option("--samples", verifyArgs.samples, "Number of seeded input samples (default 1)");
  repeatable(verifyCmd->add_option("--input-shapes", verifyArgs.inputShapes,
                                   "Shape of a seeded input: NAME:d0,d1,... (repeatable)"),
             '\0');
  verifyCmd->add_option("--rtol", verifyArgs.rtol,
                        "Relative tolerance for every floating output (default: each output's precision's: float32 "
                        "1e-4, float16 1e-2...)");
  verifyCmd->add_option("--atol", verifyArgs.atol,
                        "Absolute tolerance for every floating output (default: each output's precision's: float32 "
                        "1e-5, float16 1e-3...)");
  for (auto [cmd, in] : {std::pair{run, &runArgs.in}, std::pair{verifyCmd, &verifyArgs.in}}) {
    repeatable(cmd->add_option("--input", in->inputs,
                               "Input from a TensorProto, SequenceProto or OptionalProto file: NAME=FILE.pb or "
                               "FILE.pb (repeatable)"),
               '\0');
    cmd->add_option("--seed", in->seed, "Seed of the random inputs (default 0)");
    repeatable(
        cmd->add_option("--dim", in->dims,
                        cmd == run ? "Size of a symbolic input dim: SYM=N (repeatable; others are 1)"
                                   : "Size of a symbolic input dim: SYM=N (repeatable; others are sized as the "
                                     "optimizer's model check sizes them: 32, 64, 512, then searched)"));
    cmd->add_option("--input-specs", in->inputSpecs,
                    "Input shapes/dtypes/ranges from a models.json file (FILE[:NAME])");
  }
  // The interpreter's threads (folding, model checks, run, verify): one pool.
  int threads = 0;
  for (CLI::App *cmd : {&app, run, verifyCmd})
    cmd->add_option("--threads", threads,
                    "Interpreter threads (default and 0: one per core; results do not depend on it)")
        ->check(CLI::NonNegativeNumber)
        ->group(cmd == &app ? kCheck : "Options");

  // "--passes=" (an option with an empty value) is passed on as "--passes"
  // "": CLI11 would otherwise take the next argument as its value.
  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i) {
    std::string arg = argv[i];
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1) {
      args.emplace_back();
      args.push_back(arg.substr(0, arg.size() - 1));
    } else {
      args.push_back(std::move(arg));
    }
  }
  try {
    app.parse(args); // reversed, as CLI11 takes a vector
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    // A usage error is one line; --help has the rest.
    std::cerr << "onnxslim: error: " << e.what() << didYouMean(app, args) << " (onnxslim --help lists the options)\n";
    return 2;
  }

  setThreadCount(threads);
  if (showVersion) {
    SupportedVersions v = supportedVersions();
    std::cout << "onnxslim " << version() << " (ONNX IR version up to " << v.irVersion
              << ", default-domain opsets up to " << v.defaultOpset << ")\n";
    return 0;
  }
  if (dump->parsed())
    return runDump(dumpInput, largeConstants);
  if (checkCmd->parsed())
    return runCheck(checkInput);
  if (run->parsed())
    return runModelCommand(runArgs);
  if (verifyCmd->parsed())
    return verifyModelsCommand(verifyArgs);
  mainArgs.passesGiven = passesOpt->count() > 0;
  mainArgs.emitGiven = app.count("--emit") > 0;
  if (mainArgs.listPasses)
    return printPasses(mainArgs);
  if (mainArgs.input.empty()) {
    std::cerr << "onnxslim: error: no input model (usage: onnxslim IN OUT [options]; onnxslim --help)\n";
    return 2;
  }
  if (mainArgs.inspect)
    return runInspect(mainArgs);
  if (mainArgs.output.empty()) {
    std::cerr << "onnxslim: error: no output path after " << mainArgs.input
              << " (usage: onnxslim IN OUT [options]; --inspect describes IN without writing)\n";
    return 2;
  }
  return runMain(mainArgs);
}

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
// The optimizer validates its input (ir/Validate.h) before any pass and
// refuses an invalid model unless --allow-invalid; it validates the optimized
// model again before writing it (an invalid result is a pass bug: nothing is
// written; --verify-each validates after every pass to name it).
//
//===----------------------------------------------------------------------===//
#include "ir/Printer.h"
#include "ir/Validate.h"
#include "ir/Verifier.h"
#include "runtime/Inputs.h"
#include "tools/ModelIO.h"
#include "tools/RunCommands.h"
#include "tools/Summary.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"
#include "transforms/ShapeInferencePass.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <map>

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

/// The validator's diagnostics for `model`, each prefixed by `file` ("" for
/// none); `forWriting` when the model is about to be written (ir/Validate.h).
std::vector<std::string> problemsOf(const Model &model, std::string file, bool forWriting = false,
                                    size_t maxDiagnostics = 100) {
  ValidateOptions opts;
  opts.file = std::move(file);
  opts.forWriting = forWriting;
  opts.maxDiagnostics = maxDiagnostics;
  return validate(model, opts);
}

/// The input's validity: refuses an invalid model (one line, the first
/// problem) unless `allowInvalid`, when it warns. Sets `valid`.
bool checkInputValid(const Model &model, const std::string &path, bool allowInvalid, bool &valid,
                     std::string &error) {
  std::vector<std::string> problems = problemsOf(model, path);
  valid = problems.empty();
  if (valid)
    return true;
  std::string more = problems.size() > 1 ? std::to_string(problems.size() - 1) + " more problem(s); " : "";
  if (!allowInvalid) {
    error = problems.front() + " [invalid model: " + more + "'onnxslim check " + path +
            "' lists every problem; --allow-invalid optimizes it anyway]";
    return false;
  }
  std::cerr << "onnxslim: warning: " << problems.front() << " [invalid model, optimized anyway (--allow-invalid); "
            << more << "the output is not validated]\n";
  return true;
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
  PassManagerOptions pm;
  std::vector<std::string> dims;  ///< SYM=N for --model-check inputs
  std::string inputSpecs;         ///< FILE[:NAME] for --model-check inputs
  // Shape inference and folding (issue 5).
  bool noShapeInfer = false;
  std::vector<std::string> inputShapes; ///< NAME:d0,d1,... (--input-shapes)
  int64_t foldSizeLimit = -1;           ///< --fold-size-limit BYTES (-1: default)
  bool noModelCheck = false;            ///< --no-model-check
  /// Constant bytes up to which the default pipeline checks outputs by default.
  uint64_t modelCheckBudget = uint64_t{256} << 20;
};

/// Whether the default model check applies: the default pipeline, no
/// explicit --model-check(-each) or --no-model-check.
bool defaultModelCheck(const MainArgs &args) {
  return !args.passesGiven && !args.pm.modelCheck && !args.pm.modelCheckEach && !args.noModelCheck;
}

/// The pipeline text to run: the user's or the default one, with
/// --no-shape-infer and --fold-size-limit applied.
std::string pipelineFor(const MainArgs &args) {
  std::string text = args.passesGiven ? args.passes : targetPipeline(args.target);
  std::vector<std::string> items;
  size_t depth = 0, start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '{') {
      ++depth;
    } else if (text[i] == '}' && depth) {
      --depth;
    }
  }
  std::string out;
  for (std::string &item : items) {
    if (item == "infer-shapes" && args.noShapeInfer && !args.passesGiven)
      continue;
    if (item == "fold-constants" && args.foldSizeLimit >= 0)
      item += "{size-limit=" + std::to_string(args.foldSizeLimit) + "}";
    out += (out.empty() ? "" : ",") + item;
  }
  return text.empty() ? text : out;
}

/// Refuses a runtime-specific pass (fuse-conv-relu emits com.microsoft ops)
/// in a pipeline run without the --target that runtime needs.
bool checkTarget(const MainArgs &args, std::string &error) {
  if (!isKnownTarget(args.target)) {
    error = "--target=" + args.target + ": unknown target (onnx, onnxruntime)";
    return false;
  }
  std::string text = pipelineFor(args);
  size_t depth = 0, start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '{')
      ++depth;
    else if (i < text.size() && text[i] == '}' && depth)
      --depth;
    if (i != text.size() && (text[i] != ',' || depth))
      continue;
    std::string item = text.substr(start, i - start);
    start = i + 1;
    std::string name = item.substr(0, item.find('{'));
    std::string_view needed = requiredTarget(name);
    if (!needed.empty() && needed != args.target) {
      error = "pass '" + name + "' emits " + std::string(needed) + "-specific ops and needs --target=" +
              std::string(needed);
      return false;
    }
  }
  return true;
}

/// The model check's options from --dim and --input-specs.
bool modelCheckOptions(const MainArgs &args, ModelCheckOptions &opts, std::string &error) {
  for (const std::string &d : args.dims) {
    rt::Status s = rt::parseDimFlag(d, opts.dims);
    if (!s.ok()) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    opts.specFile = args.inputSpecs.substr(0, colon);
    // Without :NAME, the entry named like the input file (without extension).
    std::string base = args.input.substr(args.input.find_last_of('/') + 1);
    opts.specModel = colon != std::string::npos ? args.inputSpecs.substr(colon + 1) : base.substr(0, base.rfind('.'));
  }
  return true;
}

PassRegistry makeRegistry(const MainArgs &args) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  if (args.enableTestPasses)
    registerTestPasses(registry);
  return registry;
}

int listPasses(const MainArgs &args) {
  PassRegistry registry = makeRegistry(args);
  std::cout << "Passes (default pipeline: " << defaultPipeline() << "):\n";
  for (const PassInfo *p : registry.passes())
    std::cout << "  " << p->name << std::string(p->name.size() < 34 ? 34 - p->name.size() : 1, ' ')
              << p->description << "\n";
  return 0;
}

/// Writes the model as text to standard output (OUT = "-").
bool printToStdout(const Model &model, std::string &error) {
  PrintOptions opts;
  opts.printLargeConstants = true;
  std::string text = toText(model, opts);
  std::cout << text << (text.empty() || text.back() != '\n' ? "\n" : "");
  std::cout.flush();
  if (!std::cout)
    error = "cannot write to standard output";
  return static_cast<bool>(std::cout);
}

int runMain(const MainArgs &args) {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  bool toStdout = args.output == "-";
  if (toStdout && args.emit != "text")
    return fail("writing to standard output ('-') needs --emit=text");

  // The pipeline is parsed before the model is read, so a typo fails fast.
  if (!checkTarget(args, error))
    return fail(error);
  PassRegistry registry = makeRegistry(args);
  PassManager pm(registry, args.pm);
  if (!pm.parsePipeline(pipelineFor(args), error))
    return fail(error);
  // --passes= runs exactly that pipeline once; the default one runs to a fixed point.
  pm.setMaxRounds(args.passesGiven ? 1 : 10);
  if (args.noModelCheck && (args.pm.modelCheck || args.pm.modelCheckEach))
    return fail("--no-model-check contradicts --model-check / --model-check-each");
  bool autoCheck = defaultModelCheck(args);
  if (args.pm.modelCheck || args.pm.modelCheckEach || autoCheck) {
    ModelCheckOptions checkOptions;
    if (!modelCheckOptions(args, checkOptions, error))
      return fail(error);
    // Dims the user did not size are tried at 32, 64, 512 and then 1 (the
    // leading, batch dim stays 1): a 1x1 image exercises little and a
    // pooling window may not fit it. The summary says which were used.
    checkOptions.preferredDims = {32, 64, 512};
    pm.setOutputChecker(createRuntimeOutputChecker(checkOptions));
  }

  std::map<std::string, Shape> inputShapes;
  for (const std::string &flag : args.inputShapes) {
    std::string name;
    Shape shape;
    if (!parseInputShapeFlag(flag, name, shape, error))
      return fail("--input-shapes: " + error);
    inputShapes[name] = std::move(shape);
  }

  std::unique_ptr<Model> model = loadAny(args.input, error);
  if (!model || !checkIR(*model, args.input, error))
    return fail(error);
  bool inputValid = false;
  if (!checkInputValid(*model, args.input, args.allowInvalid, inputValid, error))
    return fail(error);
  if (inputValid && args.pm.verifyEach) {
    // The run's error already names the file.
    pm.setValidateEach([](const Model &m) { return problemsOf(m, "", /*forWriting=*/true, 1); });
  }
  ModelStats before = collectStats(*model);
  before.fileBytes = fileSize(args.input);
  if (!applyInputShapes(*model, inputShapes, error))
    return fail(args.input + ": " + error);
  // The default check runs when it is cheap and possible; otherwise it says why not.
  std::string checkSkipped;
  if (autoCheck) {
    checkSkipped = modelCheckUnsupportedReason(*model, args.modelCheckBudget);
    pm.setModelCheck(checkSkipped.empty(), /*bestEffort=*/true);
  }

  bool ok = pm.run(*model, error);
  // The default pipeline ends by recording the inferred types as value_info
  // (with --passes=, name infer-shapes{value-info=true} where wanted); types
  // known only in memory are dropped so that text and binary output agree.
  if (ok && !args.passesGiven) {
    if (!args.noShapeInfer)
      inferAndRecordValueInfo(*model);
    dropUnrecordedTypes(*model);
  }
  if (args.stats)
    pm.printStatistics(std::cerr);
  if (args.timing)
    pm.printTiming(std::cerr);
  if (!ok)
    return fail(args.input + ": " + error);
  // A valid input must give a valid output: anything else is a pass bug.
  if (inputValid) {
    std::vector<std::string> problems = problemsOf(*model, "", /*forWriting=*/true);
    if (!problems.empty())
      return fail(args.input + ": the optimized model is invalid (a bug in a pass; --verify-each names it), " +
                  "nothing written: " + problems.front());
  }

  if (toStdout) {
    if (!printToStdout(*model, error))
      return fail(error);
    return 0;
  }
  SaveSettings settings;
  settings.emit = args.emit == "text" ? Emit::Text : Emit::Onnx;
  settings.externalData = args.externalData;
  if (!saveAny(*model, args.output, settings, error))
    return fail(error);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ModelStats after = collectStats(*model);
  after.fileBytes = fileSize(args.output);
  if (!args.quiet) {
    printSummary(std::cout, args.input, before, args.output, after, seconds);
    if (checkSkipped.empty())
      checkSkipped = pm.report().modelCheckSkipped;
    if (pm.report().modelChecked)
      printModelCheck(std::cout, pm.report().checkFigures);
    else if (autoCheck)
      std::cout << "model check: skipped: " << checkSkipped << " (--model-check to require it)\n";
  }
  return 0;
}

int runDump(const std::string &input, bool largeConstants) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(input, error);
  if (!model || !checkIR(*model, input, error))
    return fail(error);
  // An invalid model is still printed (that is how one looks at it), with a warning.
  for (const std::string &problem : problemsOf(*model, input))
    std::cerr << "onnxslim: warning: " << problem << "\n";
  PrintOptions opts;
  opts.printLargeConstants = largeConstants;
  printModel(std::cout, *model, opts);
  return std::cout ? 0 : fail("cannot write to standard output");
}

/// `onnxslim check MODEL`: "MODEL: valid", or every problem found (exit 1).
int runCheck(const std::string &input) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(input, error);
  if (!model)
    return fail(error);
  std::vector<std::string> problems;
  for (const std::string &p : verify(*model, 20))
    problems.push_back(input + ": IR invariant broken: " + p);
  for (std::string &p : problemsOf(*model, input))
    problems.push_back(std::move(p));
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

int main(int argc, char **argv) {
  CLI::App app{"onnxslim: an optimizing compiler for ONNX models"};
  app.require_subcommand(0, 1);

  MainArgs mainArgs;
  app.add_option("input", mainArgs.input, "Input model (.onnx, or ONNX textual syntax)");
  app.add_option("output", mainArgs.output, "Output model");
  app.add_option("--emit", mainArgs.emit, "Output form")->check(CLI::IsMember({"onnx", "text"}));
  app.add_flag("--save-as-external-data", mainArgs.externalData,
               "Write tensors of 1 KiB and more to <output>.data beside the output");
  app.add_flag("-q,--quiet", mainArgs.quiet, "Do not print the summary table");
  app.add_flag("--allow-invalid", mainArgs.allowInvalid,
               "Optimize a model that fails validation (warns; the output is not validated then)");

  // Pass pipeline and instrumentation (LLVM opt / mlir-opt style).
  CLI::Option *passesOpt = app.add_option(
      "--passes", mainArgs.passes,
      "Run exactly this comma-separated pipeline once ('--passes=' runs none)")
      ->expected(0, 1)
      ->allow_extra_args(false);
  app.add_option("--target", mainArgs.target,
                 "Runtime the output is for: onnx (standard ONNX only) or onnxruntime (the default pipeline "
                 "plus ONNX Runtime contrib-op fusions such as fuse-conv-relu)")
      ->check(CLI::IsMember({"onnx", "onnxruntime"}));
  app.add_flag("--list-passes", mainArgs.listPasses, "List the passes and exit");
  app.add_option("--print-ir-before", mainArgs.pm.printIRBefore, "Print the IR before these passes")
      ->delimiter(',');
  app.add_option("--print-ir-after", mainArgs.pm.printIRAfter, "Print the IR after these passes")
      ->delimiter(',');
  app.add_flag("--print-ir-before-all", mainArgs.pm.printIRBeforeAll, "Print the IR before every pass");
  app.add_flag("--print-ir-after-all", mainArgs.pm.printIRAfterAll, "Print the IR after every pass");
  app.add_flag("--print-ir-after-change", mainArgs.pm.printIRAfterChange,
               "Print the IR after every pass that changed it");
  app.add_flag("--verify-each", mainArgs.pm.verifyEach, "Run the IR verifier after every pass");
  app.add_flag("--stats", mainArgs.stats, "Print how many rewrites each pass made");
  app.add_flag("--timing", mainArgs.timing, "Print the time spent in each pass");
  app.add_option("--debug-only", mainArgs.pm.debugOnly,
                 "Explain each rewrite and declined match of these passes or patterns ('all')")
      ->delimiter(',');
  app.add_flag("--model-check", mainArgs.pm.modelCheck,
               "Refuse to write a model whose outputs differ from the input's on seeded random inputs");
  app.add_flag("--no-model-check", mainArgs.noModelCheck,
               "Do not compare outputs before writing (the default pipeline does when the model's "
               "constants fit in 256 MiB and the interpreter runs every op)");
  app.add_flag("--model-check-each", mainArgs.pm.modelCheckEach,
               "Compare outputs after every pass and roll back a pass that changed them");
  app.add_flag("--no-shape-infer", mainArgs.noShapeInfer,
               "Do not run shape inference in the default pipeline nor write inferred value_info");
  app.add_option("--input-shapes", mainArgs.inputShapes,
                 "Override an input's shape before optimizing: NAME:1,3,224,224 (dims: numbers, symbols, ?; repeatable)");
  app.add_option("--fold-size-limit", mainArgs.foldSizeLimit,
                 "Do not fold a constant larger than BYTES and than its inputs (default 1048576)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dim", mainArgs.dims, "Size of a symbolic input dim for --model-check (SYM=N, repeatable)");
  app.add_option("--input-specs", mainArgs.inputSpecs,
                 "Input shapes/values for --model-check from a models.json file (FILE[:NAME])");
  app.add_flag("--enable-test-passes", mainArgs.enableTestPasses,
               "Register the deliberately wrong test passes")
      ->group("");

  std::string dumpInput;
  bool largeConstants = false;
  CLI::App *dump = app.add_subcommand("dump", "Print a model as ONNX textual syntax");
  dump->add_option("input", dumpInput, "Input model")->required();
  dump->add_flag("--print-large-constants", largeConstants, "Print every constant in full");

  std::string checkInput;
  CLI::App *checkCmd = app.add_subcommand("check", "Validate a model against the ONNX specification");
  checkCmd->add_option("model", checkInput, "Model")->required();

  RunArgs runArgs;
  CLI::App *run = app.add_subcommand("run", "Run a model in the interpreter and write its outputs as TensorProto files");
  run->add_option("model", runArgs.model, "Model")->required();
  run->add_option("--output-dir", runArgs.outputDir, "Where <output name>.pb files go (default: .)");
  run->add_flag("-q,--quiet", runArgs.quiet, "Do not list the outputs");
  run->add_option("--bench", runArgs.benchRuns, "Then run N more times and print the median latency");
  run->add_flag("--profile", runArgs.profile, "Print the time spent in each op type");
  VerifyArgs verifyArgs;
  CLI::App *verifyCmd =
      app.add_subcommand("verify", "Run two models on the same seeded inputs and compare their outputs");
  verifyCmd->add_option("a", verifyArgs.modelA, "Reference model")->required();
  verifyCmd->add_option("b", verifyArgs.modelB, "Model to check")->required();
  verifyCmd->add_option("--samples", verifyArgs.samples, "Number of seeded input samples (default 1)");
  verifyCmd->add_option("--rtol", verifyArgs.rtol, "Relative tolerance (default 1e-4)");
  verifyCmd->add_option("--atol", verifyArgs.atol, "Absolute tolerance (default 1e-5)");
  for (auto [cmd, in] : {std::pair{run, &runArgs.in}, std::pair{verifyCmd, &verifyArgs.in}}) {
    cmd->add_option("--input", in->inputs, "Input from a TensorProto file: NAME=FILE.pb or FILE.pb (repeatable)");
    cmd->add_option("--seed", in->seed, "Seed of the random inputs (default 0)");
    cmd->add_option("--dim", in->dims, "Size of a symbolic input dim: SYM=N (repeatable; others are 1)");
    cmd->add_option("--input-specs", in->inputSpecs,
                    "Input shapes/dtypes/ranges from a models.json file (FILE[:NAME])");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
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
  if (mainArgs.listPasses)
    return listPasses(mainArgs);
  if (mainArgs.input.empty() || mainArgs.output.empty()) {
    std::cerr << app.help();
    return 2;
  }
  return runMain(mainArgs);
}

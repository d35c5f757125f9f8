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
#include "onnxslim/onnxslim.h"

#include "ir/Printer.h"
#include "ir/Validate.h"
#include "ir/Verifier.h"
#include "runtime/Inputs.h"
#include "tools/RunCommands.h"
#include "tools/Summary.h"
#include "transforms/PassRegistry.h"
#include "transforms/Passes.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <sys/stat.h>

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

/// The validator's diagnostics for `model`, each prefixed by `file`.
std::vector<std::string> problemsOf(const Model &model, std::string file) {
  ValidateOptions opts;
  opts.file = std::move(file);
  return validate(model, opts);
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
  std::string dtype;          ///< --dtype fp16|fp32 ("": keep the model's)
  std::string keepIOTypes;    ///< --keep-io-types true|false ("": true)
};

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

/// The library's options from the command line, Result: false with `error`
/// for contradictory or malformed flags.
bool optimizeOptions(MainArgs &args, const PassRegistry &registry, std::string &error) {
  OptimizeOptions &o = args.opt;
  o.modelName = args.input;
  if (args.passesGiven)
    o.pipeline = args.passes;
  o.target = args.target;
  o.shapeInference = !args.noShapeInfer;
  if (args.foldSizeLimit >= 0)
    o.foldSizeLimit = static_cast<uint64_t>(args.foldSizeLimit);
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
  for (const std::string &d : args.dims) {
    rt::Status s = rt::parseDimFlag(d, o.checkDims);
    if (!s.ok()) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    o.checkSpecFile = args.inputSpecs.substr(0, colon);
    // Without :NAME, the entry named like the input file (without extension).
    std::string base = args.input.substr(args.input.find_last_of('/') + 1);
    o.checkSpecModel = colon != std::string::npos ? args.inputSpecs.substr(colon + 1) : base.substr(0, base.rfind('.'));
  }
  return true;
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

int runMain(MainArgs &args) {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  bool toStdout = args.output == "-";
  if (toStdout && args.emit != "text")
    return fail("writing to standard output ('-') needs --emit=text");

  // The options are checked before the model is read, so a typo fails fast.
  PassRegistry registry = makeRegistry(args);
  if (!optimizeOptions(args, registry, error))
    return fail(error);
  if (Status s = checkOptions(args.opt); !s)
    return fail(s.message());

  // --dtype: convert-float-type runs once after the optimizing pipeline.
  bool convert = !args.dtype.empty() || !args.keepIOTypes.empty();
  if (convert) {
    if (args.dtype != "fp16" && args.dtype != "fp32")
      return fail(args.dtype.empty() ? "--keep-io-types needs --dtype fp16|fp32"
                                     : "--dtype takes fp16 or fp32, not '" + args.dtype + "'");
    if (!args.keepIOTypes.empty() && args.keepIOTypes != "true" && args.keepIOTypes != "false")
      return fail("--keep-io-types takes true or false, not '" + args.keepIOTypes + "'");
    args.opt.floatType = args.dtype == "fp16" ? "float16" : "float32";
    args.opt.keepIOTypes = args.keepIOTypes != "false";
  }

  std::unique_ptr<Model> model = loadAny(args.input, error);
  if (!model)
    return fail(error);
  OptimizeReport report = optimize(*model, args.opt);
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

  if (toStdout) {
    if (!printToStdout(*model, error))
      return fail(error);
    return 0;
  }
  WriteOptions write;
  write.format = args.emit == "text" ? ModelFormat::Text : ModelFormat::Binary;
  write.externalData = args.externalData;
  write.onNote = [](const std::string &note) { std::cerr << "onnxslim: note: " << note << "\n"; };
  if (Status s = save(*model, args.output, write); !s)
    return fail(s.message());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!args.quiet) {
    ModelStats before, after;
    static_cast<ModelCounts &>(before) = report.before;
    static_cast<ModelCounts &>(after) = report.after;
    before.fileBytes = fileSize(args.input);
    after.fileBytes = fileSize(args.output);
    printSummary(std::cout, args.input, before, args.output, after, seconds);
    if (report.modelChecked)
      printModelCheck(std::cout, report.check);
    if (report.modelChecked && convert && args.opt.modelCheck == ModelCheckMode::Auto)
      std::cout << "model check: made before the --dtype conversion (compare float16 outputs with 'onnxslim verify "
                << args.input << " " << args.output << " --rtol 1e-2 --atol 1e-3', or --model-check)\n";
    else if (report.modelChecked && convert)
      std::cout << "model check: the --dtype conversion matches too (rtol 1e-2, atol 1e-3)\n";
    else if (args.opt.modelCheck == ModelCheckMode::Auto && !args.passesGiven)
      std::cout << "model check: skipped: " << report.modelCheckSkipped << " (--model-check to require it)\n";
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
  app.add_option("--print-ir-before", mainArgs.opt.printIRBefore, "Print the IR before these passes")
      ->delimiter(',');
  app.add_option("--print-ir-after", mainArgs.opt.printIRAfter, "Print the IR after these passes")
      ->delimiter(',');
  app.add_flag("--print-ir-before-all", mainArgs.opt.printIRBeforeAll, "Print the IR before every pass");
  app.add_flag("--print-ir-after-all", mainArgs.opt.printIRAfterAll, "Print the IR after every pass");
  app.add_flag("--print-ir-after-change", mainArgs.opt.printIRAfterChange,
               "Print the IR after every pass that changed it");
  app.add_flag("--verify-each", mainArgs.opt.verifyEach, "Run the IR verifier after every pass");
  app.add_flag("--stats", mainArgs.stats, "Print how many rewrites each pass made");
  app.add_flag("--timing", mainArgs.timing, "Print the time spent in each pass");
  app.add_option("--debug-only", mainArgs.opt.debugOnly,
                 "Explain each rewrite and declined match of these passes or patterns ('all')")
      ->delimiter(',');
  app.add_flag("--model-check", mainArgs.modelCheck,
               "Refuse to write a model whose outputs differ from the input's on seeded random inputs");
  app.add_flag("--no-model-check", mainArgs.noModelCheck,
               "Do not compare outputs before writing (the default pipeline does when the model's "
               "constants fit in 256 MiB and the interpreter runs every op)");
  app.add_flag("--model-check-each", mainArgs.modelCheckEach,
               "Compare outputs after every pass and roll back a pass that changed them");
  app.add_flag("--no-shape-infer", mainArgs.noShapeInfer,
               "Do not run shape inference in the default pipeline nor write inferred value_info");
  app.add_option("--input-shapes", mainArgs.opt.inputShapes,
                 "Override an input's shape before optimizing: NAME:1,3,224,224 (dims: numbers, symbols, ?; repeatable)");
  app.add_option("--fold-size-limit", mainArgs.foldSizeLimit,
                 "Do not fold a constant larger than BYTES and than its inputs (default 1048576)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dtype", mainArgs.dtype,
                 "Then convert float32 weights and computation to float16 (fp16) or float16 to float32 (fp32); "
                 "ops without a float16 form stay float32 behind Casts");
  app.add_option("--keep-io-types", mainArgs.keepIOTypes,
                 "With --dtype: keep the declared types of the model's inputs and outputs (true, the default) "
                 "or convert them too (false)");
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

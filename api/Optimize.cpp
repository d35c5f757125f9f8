//===- api/Optimize.cpp - optimize(): the command line's job as a function ===//
//
// optimize() is what `onnxslim IN OUT` does between reading and writing:
//
//   1. the pipeline text: the user's (run once) or the target's default one
//      (run to a fixed point), with the options applied to it (no
//      infer-shapes without shape inference, fold-constants' size limit,
//      skipped passes), parsed before the model is touched;
//   2. the input's IR invariants and its validity against the ONNX spec (an
//      invalid model is refused unless allowInvalid);
//   3. graph surgery (inputs/outputs cut at named values), input shapes
//      pinned, the model check set up (by default when the model is small
//      enough and runs in the interpreter: the policy is
//      transforms/CheckPolicy.h, given the options as a CheckRequest);
//   4. the passes (transforms/PassManager.h), then, for the default pipeline,
//      the inferred types recorded as value_info (with a target opset, a
//      conversion that declines is an error before any pass runs); with a
//      float type, its conversion (float16 compared with the float32 model,
//      transforms/Float16Fallback.h);
//   5. the result validated again (a valid input must give a valid output).
//
// Nothing is printed unless OptimizeOptions::log is set: warnings, timings
// and statistics are in the report.
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"

#include "api/FusionNames.h"
#include "api/OptionNames.h"
#include "ir/OpSchema.h"
#include "ir/ShapeInference.h"
#include "ir/Validate.h"
#include "ir/Verifier.h"
#include "transforms/CheckPolicy.h"
#include "transforms/Clone.h"
#include "transforms/Float16Fallback.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"
#include "transforms/ShapeInferencePass.h"
#include "transforms/Surgery.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <sstream>

namespace onnxslim {

namespace {

const PassRegistry &builtinRegistry() {
  static const PassRegistry registry = PassRegistry::withBuiltinPasses();
  return registry;
}

/// Given pipeline text, Result: its top-level entries ("a", "b{k=v}"),
/// splitting at commas outside braces.
std::vector<std::string> pipelineEntries(const std::string &text) {
  std::vector<std::string> items;
  if (text.empty())
    return items;
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
  return items;
}

std::string passNameOf(const std::string &entry) {
  size_t b = entry.find_first_not_of(" \t");
  std::string name = entry.substr(b == std::string::npos ? entry.size() : b);
  name = name.substr(0, name.find('{'));
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
    name.pop_back();
  return name;
}

/// Given a pipeline entry ("a" or "a{k=v}") and options, Result: the entry
/// with the options added.
std::string withOptions(const std::string &entry, const std::vector<std::string> &options) {
  std::string added;
  for (const std::string &o : options)
    added += (added.empty() ? "" : " ") + o;
  size_t brace = entry.find('{');
  if (brace == std::string::npos)
    return entry + "{" + added + "}";
  size_t close = entry.rfind('}');
  bool empty = entry.find_first_not_of(" \t", brace + 1) == close;
  return entry.substr(0, close) + (empty ? "" : " ") + added + entry.substr(close);
}

/// The pipeline text to run, with the options applied; error for an unknown
/// target, skipped pass or fusion, or a runtime-specific pass without its
/// target.
Result<std::string> pipelineFor(const OptimizeOptions &options, const PassRegistry &registry) {
  if (!isKnownTarget(options.target))
    return Status::error("unknown target '" + options.target + "' (onnx, onnxruntime)");
  for (const std::string &skip : options.skipPasses)
    if (!registry.lookup(skip))
      return Status::error("{option:skipPasses}: cannot skip pass '" + skip +
                           "': there is no such pass (see {option:listPasses})");
  Result<FusionSkips> fusions = resolveFusionSkips(options.skipFusions, registry);
  if (!fusions)
    return fusions.status();
  Result<std::vector<std::string>> optimizations = resolveOptimizationSkips(options.skipOptimizations);
  if (!optimizations)
    return optimizations.status();
  std::vector<std::string> skipped = options.skipPasses;
  skipped.insert(skipped.end(), fusions->passes.begin(), fusions->passes.end());
  skipped.insert(skipped.end(), optimizations->begin(), optimizations->end());
  bool given = options.pipeline.has_value();
  std::string text = given ? *options.pipeline : targetPipeline(options.target);
  if (options.targetOpset)
    text = "convert-opset{target=" + std::to_string(*options.targetOpset) +
           (options.allowDecline ? " allow-decline=true" : "") + "}" + (text.empty() ? "" : "," + text);
  std::string out;
  for (std::string &item : pipelineEntries(text)) {
    std::string name = passNameOf(item);
    if (std::find(skipped.begin(), skipped.end(), name) != skipped.end())
      continue;
    if (auto it = fusions->options.find(name); it != fusions->options.end())
      item = withOptions(item, it->second);
    if (name == "infer-shapes" && !options.shapeInference && !given)
      continue;
    if (name == "fold-constants" && options.foldSizeLimit && item.find('{') == std::string::npos)
      item += "{size-limit=" + std::to_string(*options.foldSizeLimit) + "}";
    std::string_view needed = requiredTarget(name);
    if (!needed.empty() && needed != options.target)
      return Status::error("pass '" + name + "' emits " + std::string(needed) + "-specific ops and needs --target=" +
                           std::string(needed));
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

Result<std::map<std::string, Shape>> inputShapesFor(const OptimizeOptions &options) {
  std::map<std::string, Shape> shapes;
  for (const std::string &flag : options.inputShapes) {
    std::string name, error;
    Shape shape;
    if (!parseInputShapeFlag(flag, name, shape, error))
      return Status::error("{option:inputShapes}: " + error);
    shapes[name] = std::move(shape);
  }
  return shapes;
}

/// The model check's request (transforms/CheckPolicy.h decides from it).
CheckRequest checkRequest(const OptimizeOptions &options) {
  CheckRequest request;
  request.mode = options.modelCheck == ModelCheckMode::Require    ? CheckMode::Require
                 : options.modelCheck == ModelCheckMode::Off      ? CheckMode::Off
                 : options.modelCheck == ModelCheckMode::EachPass ? CheckMode::EachPass
                                                                  : CheckMode::Auto;
  request.pipelineGiven = options.pipeline.has_value();
  request.budgetBytes = options.modelCheckBudget;
  request.inputs.dims = options.checkDims;
  request.inputs.specFile = options.checkSpecFile;
  request.inputs.specModel = options.checkSpecModel;
  request.inputs.samples = options.checkSamples;
  request.inputs.inputs = options.checkInputs;
  request.inputs.inputShapes = options.checkInputShapes;
  return request;
}

PassManagerOptions passManagerOptions(const OptimizeOptions &options, const CheckPolicy &policy, std::ostream &log) {
  PassManagerOptions pm;
  pm.printIRBefore = options.printIRBefore;
  pm.printIRAfter = options.printIRAfter;
  pm.printIRBeforeAll = options.printIRBeforeAll;
  pm.printIRAfterAll = options.printIRAfterAll;
  pm.printIRAfterChange = options.printIRAfterChange;
  pm.printLargeConstants = options.printLargeConstants;
  pm.verifyEach = options.verifyEach;
  pm.debugOnly = options.debugOnly;
  policy.configure(pm);
  pm.log = &log;
  if (options.onPassStart) {
    auto start = std::chrono::steady_clock::now();
    pm.onPassStart = [start, callback = options.onPassStart](std::string_view pass, unsigned round) {
      callback(pass, round, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
  }
  return pm;
}

std::vector<std::string> problemsOf(const Model &model, const std::string &file, bool forWriting,
                                    size_t maxDiagnostics) {
  ValidateOptions vo;
  vo.file = file;
  vo.forWriting = forWriting;
  vo.maxDiagnostics = maxDiagnostics;
  return validate(model, vo);
}

/// A stream that drops everything (the log when the caller gave none).
std::ostream &nullStream() {
  static thread_local std::ostream sink(nullptr);
  sink.clear();
  return sink;
}

void fillPassReports(const PassManager &pm, OptimizeReport &report) {
  std::vector<PassManager::EntryTiming> timings = pm.timings();
  for (size_t entry = 0; entry < timings.size(); ++entry) {
    const PassManager::EntryTiming &t = timings[entry];
    PassReport p;
    p.pass = t.pass;
    p.seconds = t.seconds;
    p.runs = t.runs;
    // Counters are per pipeline entry: a pass listed twice counts apart.
    for (const PassStatistics &ps : pm.context().statistics())
      if (ps.pass == t.pass && ps.entry == entry)
        for (const StatisticCounter &c : ps.counters)
          p.counters.emplace_back(c.name, c.value);
    report.passes.push_back(std::move(p));
  }
  std::ostringstream stats, timing;
  pm.printStatistics(stats);
  pm.printTiming(timing);
  report.statisticsText = stats.str();
  report.timingText = timing.str();
}

/// OptimizeOptions::floatType by its full name: "float16", "bfloat16" or
/// "float32" for "fp16"/"bf16"/"fp32" too (the command line's and
/// OnnxSlim's names).
std::string floatTypeName(const OptimizeOptions &options) {
  if (options.floatType == "fp16")
    return "float16";
  if (options.floatType == "bf16")
    return "bfloat16";
  if (options.floatType == "fp32")
    return "float32";
  return options.floatType;
}

/// The pass of OptimizeOptions::floatType, keeping the named nodes in
/// float32; kAfterFloatType runs after it, once.
std::unique_ptr<Pass> floatTypePass(const OptimizeOptions &options, const std::vector<std::string> &keepNodes) {
  return createConvertFloatTypePass(floatTypeName(options), options.keepIOTypes, keepNodes); // checked by checkOptions
}
constexpr std::string_view kAfterFloatType = "eliminate-dead-nodes,eliminate-unused-initializers";

/// Given the warnings of a run, Result: the reason of convert-opset's
/// decline ("" when it did not decline), without the note that the model
/// stays at its opset.
std::string declineReason(const std::vector<std::string> &warnings) {
  static const std::string kDeclined = "[convert-opset] declined: ", kStays = "; the model stays at opset ";
  for (const std::string &w : warnings)
    if (size_t at = w.find(kDeclined); at != std::string::npos) {
      std::string why = w.substr(at + kDeclined.size());
      return why.substr(0, why.rfind(kStays));
    }
  return "";
}

/// Given a model and a target opset, Execute: converts a copy of the model
/// alone (convert-opset once, nothing printed), Result: why the conversion
/// declined, or "" when it converts. --target-opset asks this first: a
/// decline is then one error, before any pass ran, instead of the pass's
/// warning in every round of the fixed point followed by the error; the
/// model itself is converted by the pipeline, whose model check covers
/// the conversion.
std::string conversionDeclined(const Model &model, int64_t opset, const PassRegistry &registry) {
  std::unique_ptr<Model> copy = cloneModel(model);
  PassManagerOptions quiet;
  quiet.log = &nullStream();
  PassManager pm(registry, quiet);
  std::string error;
  if (!copy || !pm.parsePipeline("convert-opset{target=" + std::to_string(opset) + "}", error))
    return ""; // the pipeline's own run says what is wrong
  pm.setMaxRounds(1);
  if (!pm.run(*copy, error))
    return error;
  return copy->opsetVersion("") == opset ? "" : declineReason(pm.context().warnings());
}

} // namespace

std::string defaultPipelineFor(std::string_view target) {
  return isKnownTarget(target) ? targetPipeline(target) : std::string();
}

std::vector<PassDescription> listPasses(const PassRegistry *registry) {
  std::vector<PassDescription> out;
  for (const PassInfo *p : (registry ? *registry : builtinRegistry()).passes())
    out.push_back({p->name, p->description});
  return out;
}

Status addModelCheckInput(OptimizeOptions &options, std::string_view spec) {
  size_t sep = spec.find('=') != std::string_view::npos ? spec.find('=') : spec.rfind(':');
  if (sep == std::string_view::npos || sep == 0 || sep + 1 == spec.size())
    return Status::error("model check input '" + std::string(spec) +
                         "': expected NAME:FILE.npy, NAME:FILE.pb or NAME:d0,d1,...");
  std::string name(spec.substr(0, sep));
  std::string_view value = spec.substr(sep + 1);
  if (value.find_first_not_of("0123456789,") == std::string_view::npos) {
    std::vector<int64_t> shape;
    for (size_t pos = 0; pos <= value.size();) {
      size_t comma = std::min(value.find(',', pos), value.size());
      int64_t d = -1;
      auto r = std::from_chars(value.data() + pos, value.data() + comma, d);
      if (r.ec != std::errc() || r.ptr != value.data() + comma)
        return Status::error("model check input '" + std::string(spec) + "': bad shape '" + std::string(value) + "'");
      shape.push_back(d);
      pos = comma + 1;
    }
    options.checkInputShapes[name] = std::move(shape);
    return {};
  }
  Result<TensorPtr> t = readTensorFile(std::string(value)); // .npy or TensorProto
  if (!t)
    return t.status();
  options.checkInputs[name] = std::move(*t);
  return {};
}

namespace {
Status checkOptionsUnresolved(const OptimizeOptions &options);
} // namespace

Status checkOptions(const OptimizeOptions &options) {
  return resolveOptionMarkers(checkOptionsUnresolved(options), options.surface);
}

namespace {
Status checkOptionsUnresolved(const OptimizeOptions &options) {
  if (options.targetOpset && (*options.targetOpset < 7 || *options.targetOpset > maxKnownDefaultOpset()))
    return Status::error("target opset " + std::to_string(*options.targetOpset) + " is out of range (7.." +
                         std::to_string(maxKnownDefaultOpset()) + ")");
  if (options.allowDecline && !options.targetOpset)
    return Status::error("{option:allowDecline} applies to a conversion: give {option:targetOpset} too");
  if (std::string t = floatTypeName(options); !t.empty() && t != "float16" && t != "bfloat16" && t != "float32")
    return Status::error("{option:floatType}: unknown float type '" + options.floatType +
                         "' (float16 or fp16, bfloat16 or bf16, float32 or fp32)");
  const PassRegistry &registry = options.registry ? *options.registry : builtinRegistry();
  Result<std::string> pipeline = pipelineFor(options, registry);
  if (!pipeline)
    return pipeline.status();
  PassManager pm(registry, passManagerOptions(options, CheckPolicy(checkRequest(options)), nullStream()));
  std::string error;
  if (!pm.parsePipeline(*pipeline, error) || !pm.checkNames(error))
    return Status::error(error);
  if (!options.floatType.empty() && !pm.parsePipeline(kAfterFloatType, error))
    return Status::error(error);
  Result<std::map<std::string, Shape>> shapes = inputShapesFor(options);
  return shapes ? Status() : shapes.status();
}
} // namespace

OptimizeReport optimize(Model &model, const OptimizeOptions &options) {
  auto start = std::chrono::steady_clock::now();
  OptimizeReport report;
  const std::string &name = options.modelName;
  auto finish = [&](Status status) -> OptimizeReport & {
    report.status = resolveOptionMarkers(std::move(status), options.surface);
    for (std::string &w : report.warnings)
      w = resolveOptionMarkers(std::move(w), options.surface);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  };

  // 1. The pipeline and the options, before the model is touched (a bad
  // float type or debug name must not surface after the passes ran).
  if (Status s = checkOptions(options); !s)
    return finish(s);
  const PassRegistry &registry = options.registry ? *options.registry : builtinRegistry();
  Result<std::string> pipeline = pipelineFor(options, registry);
  if (!pipeline)
    return finish(pipeline.status());
  std::ostream &log = options.log ? *options.log : nullStream();
  CheckPolicy policy(checkRequest(options));
  PassManager pm(registry, passManagerOptions(options, policy, log));
  std::string error;
  if (!pm.parsePipeline(*pipeline, error))
    return finish(Status::error(error));
  report.pipeline = pm.pipelineText();
  bool given = options.pipeline.has_value();
  pm.setMaxRounds(given ? 1 : options.maxRounds);
  Result<std::map<std::string, Shape>> shapes = inputShapesFor(options);
  if (!shapes)
    return finish(shapes.status());
  policy.attach(pm);

  // 2. The input: IR invariants, then the ONNX spec.
  if (std::vector<std::string> broken = verify(model, 1); !broken.empty())
    return finish(Status::error(name + ": invalid model: " + broken.front()));
  report.inputProblems = problemsOf(model, name, /*forWriting=*/false, 100);
  report.inputValid = report.inputProblems.empty();
  if (!report.inputValid) {
    std::string more = report.inputProblems.size() > 1
                           ? "; " + std::to_string(report.inputProblems.size() - 1) + " more problem(s)"
                           : "";
    if (!options.allowInvalid)
      return finish(Status::error(report.inputProblems.front() + " [invalid model" + more + "]"));
    report.warnings.push_back(report.inputProblems.front() + " [invalid model, optimized anyway" + more +
                              "; the output is not validated]");
  } else if (options.verifyEach) {
    // The run's error already names the file.
    pm.setValidateEach([](const Model &m) { return problemsOf(m, "", /*forWriting=*/true, 1); });
  }
  report.before = countModel(model);

  // 3. Surgery, input shapes and the model check.
  if (!options.outputs.empty() && !setOutputs(model, options.outputs, error))
    return finish(Status::error(name + ": " + error));
  if (!dropOutputs(model, options.dropOutputs, error))
    return finish(Status::error(name + ": " + error));
  if (!options.inputs.empty() && !cutInputs(model, options.inputs, error))
    return finish(Status::error(name + ": " + error));
  if (!applyInputShapes(model, *shapes, error))
    return finish(Status::error(name + ": " + error));
  // Pinned shapes that the graph cannot take (a MatMul's inner dims, dims
  // that do not broadcast) would give a model no runtime loads.
  if (!shapes->empty() && report.inputValid) {
    std::vector<std::string> contradictions;
    inferTypesFromOps(model, &contradictions);
    if (!contradictions.empty()) {
      std::string pinned;
      for (const std::string &flag : options.inputShapes)
        pinned += (pinned.empty() ? "" : " ") + flag;
      return finish(Status::error(name + ": --input-shapes " + pinned + " contradicts the graph: " +
                                  contradictions.front() + " (nothing written)"));
    }
  }
  report.modelCheckSkipped = policy.decide(model, pm);

  // 4. The passes. The default pipeline ends by recording the inferred types
  // as value_info (a given pipeline names infer-shapes{value-info=true}
  // where wanted); types known only in memory are dropped so that text and
  // binary output agree. A conversion the pass declines is an error: the
  // user asked for that opset. It is known before the pipeline runs
  // (conversionDeclined), or after it (a skipped pass, a rollback).
  std::string cannotConvert = options.targetOpset ? name + ": cannot convert to opset " +
                                                        std::to_string(*options.targetOpset) + ": "
                                                  : "";
  bool converting = options.targetOpset && std::find(options.skipPasses.begin(), options.skipPasses.end(),
                                                     "convert-opset") == options.skipPasses.end();
  if (converting && !options.allowDecline && model.opsetVersion("") != *options.targetOpset)
    if (std::string why = conversionDeclined(model, *options.targetOpset, registry); !why.empty())
      return finish(Status::error(cannotConvert + why));
  bool ok = pm.run(model, error);
  if (ok && options.targetOpset && model.opsetVersion("") != *options.targetOpset) {
    std::string why = declineReason(pm.context().warnings());
    if (why.empty())
      why = model.opsetVersion("") < 0 ? "the model imports no default-domain opset"
                                       : "convert-opset did not run (skipped?)";
    return finish(Status::error(cannotConvert + why));
  }
  // 4b. The float type, once, after the fixed point; its model check (when
  // required) uses float16 tolerances against the model before it. float16
  // is also compared by default (when the check can run), and where its
  // outputs leave the tolerance, float32 is kept where it is needed
  // (transforms/Float16Fallback.h).
  std::unique_ptr<PassManager> convert;
  if (ok && !options.floatType.empty()) {
    std::string to = floatTypeName(options);
    // bfloat16 exists in ONNX from opset 13 (If, Loop and Scan carry it
    // from 16): refuse rather than write a model nothing can load.
    if (to == "bfloat16" && model.opsetVersion("") < 13)
      return finish(Status::error(name + ": {option:floatType} bfloat16 needs opset 13 or later; the model imports opset " +
                                  std::to_string(model.opsetVersion("")) +
                                  " ({option:targetOpset} 13 converts it first)"));
    if (to == "bfloat16" && model.opsetVersion("") < 16) {
      const Node *control = nullptr;
      model.graph()->walk([&](Node *n) {
        if (!control && !n->subgraphs().empty())
          control = n;
      });
      if (control)
        return finish(Status::error(name + ": {option:floatType} bfloat16 in " + control->opType() +
                                    " bodies needs opset 16 or later; the model imports opset " +
                                    std::to_string(model.opsetVersion("")) + " ({option:targetOpset} 16 converts it first)"));
    }
    std::vector<std::string> keep;
    if ((to == "float16" || to == "bfloat16") && options.float16Fallback && options.keepIOTypes &&
        policy.comparesFloat16()) {
      Float16Fallback fallback = float16Fallback(model, registry, policy.checkOptions(), log,
                                                 to == "float16" ? DataType::Float16 : DataType::BFloat16);
      report.float16Compared = fallback.compared;
      report.float16KeptNodes = fallback.keepNodes.size();
      report.warnings.insert(report.warnings.end(), fallback.warnings.begin(), fallback.warnings.end());
      keep = std::move(fallback.keepNodes);
    }
    PassManagerOptions convertOptions = passManagerOptions(options, policy, log);
    convertOptions.undoFaultyRewrites = false; // a conversion out of tolerance fails (the user asked for it)
    convert = std::make_unique<PassManager>(registry, convertOptions);
    convert->addPass(floatTypePass(options, keep));
    if (!convert->parsePipeline(kAfterFloatType, error))
      return finish(Status::error(error));
    convert->setMaxRounds(1);
    if (std::unique_ptr<OutputChecker> checker = policy.conversionChecker())
      convert->setOutputChecker(std::move(checker));
    ok = convert->run(model, error);
  }
  if (ok && !given) {
    if (options.shapeInference)
      inferAndRecordValueInfo(model);
    dropUnrecordedTypes(model);
  }
  const PassManagerReport &run = pm.report();
  report.rounds = run.rounds;
  report.converged = run.converged;
  report.changed = run.changed;
  report.rolledBack = run.rolledBack;
  report.modelChecked = run.modelChecked;
  if (run.modelChecked)
    report.check = CheckReport{run.checkFigures.outputs, run.checkFigures.maxAbsDiff, run.checkFigures.maxRelDiff,
                               run.checkFigures.seconds, run.checkFigures.dims, run.rewrites, run.exactRewrites,
                               run.provedStructurally, run.checkFigures.tolerances, run.checkFigures.dimSizes};
  for (const UndoneRewrite &u : run.undone)
    report.undoneRewrites.push_back(
        {u.rewrite.pass, u.rewrite.pattern, u.rewrite.root, u.rewrite.round, u.difference});
  report.modelCheckSkipped = policy.skippedReason(run);
  for (const std::string &w : pm.context().warnings())
    report.warnings.push_back(w);
  fillPassReports(pm, report);
  if (convert) {
    report.changed = report.changed || convert->report().changed;
    for (const std::string &w : convert->context().warnings())
      report.warnings.push_back(w);
    OptimizeReport converted;
    fillPassReports(*convert, converted);
    for (PassReport &p : converted.passes)
      report.passes.push_back(std::move(p));
    report.statisticsText += converted.statisticsText;
    report.timingText += converted.timingText;
  }
  if (!ok)
    return finish(Status::error(name + ": " + error));

  // 5. A valid input must give a valid output: anything else is a pass bug.
  // Nodes allowDecline left at their own version are not valid at the
  // target opset: the user asked for that, and is told.
  bool leftNodes = std::any_of(report.passes.begin(), report.passes.end(), [](const PassReport &p) {
    return p.pass == "convert-opset" &&
           std::any_of(p.counters.begin(), p.counters.end(),
                       [](const std::pair<std::string, uint64_t> &c) { return c.first == "left" && c.second > 0; });
  });
  if (report.inputValid) {
    std::vector<std::string> problems = problemsOf(model, "", /*forWriting=*/true, 100);
    if (!problems.empty() && leftNodes) {
      for (const std::string &p : problems) {
        report.warnings.push_back(p + " [kept: {option:allowDecline}]");
        log << "onnxslim: warning: " << resolveOptionMarkers(report.warnings.back(), options.surface) << "\n";
      }
      problems.clear();
    }
    if (!problems.empty())
      return finish(Status::error(name + ": the optimized model is invalid (a bug in a pass; --verify-each names it), " +
                                  "nothing written: " + problems.front()));
  }
  report.after = countModel(model);
  return finish(Status());
}

} // namespace onnxslim

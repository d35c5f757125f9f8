//===- transforms/PassManager.cpp - Pipelines of passes -------------------===//
#include "transforms/PassManager.h"

#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/Clone.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>

namespace onnxslim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

/// Splits "a,b{x=1,y=2},c" at the commas outside braces.
bool splitPipeline(std::string_view text, std::vector<std::string_view> &out, std::string &error) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '{')
      ++depth;
    else if (c == '}' && --depth < 0) {
      error = "unbalanced '}' in the pass pipeline";
      return false;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0) {
    error = "unbalanced '{' in the pass pipeline";
    return false;
  }
  return true;
}

/// Splits "k=v k2=v2" (spaces or commas between entries).
std::vector<std::pair<std::string, std::string>> splitOptions(std::string_view text, bool &ok) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  ok = true;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ','))
      ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != ',')
      ++i;
    std::string_view item = text.substr(start, i - start);
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      ok = false;
      return out;
    }
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A stream that drops everything (the debug stream of replays).
std::ostream &nullStream() {
  static thread_local std::ostream sink(nullptr);
  sink.clear();
  return sink;
}

} // namespace

PassManager::PassManager(const PassRegistry &registry, PassManagerOptions options)
    : registry_(registry), options_(std::move(options)) {
  context_.enableDebug(options_.debugOnly);
  if (options_.log)
    context_.setDebugStream(*options_.log);
}

PassManager::~PassManager() = default;

std::ostream &PassManager::log() const { return options_.log ? *options_.log : std::cerr; }

bool PassManager::parsePipeline(std::string_view text, std::string &error) {
  if (trim(text).empty())
    return true;
  std::vector<std::string_view> items;
  if (!splitPipeline(text, items, error))
    return false;
  std::vector<std::unique_ptr<Pass>> parsed;
  for (std::string_view item : items) {
    if (item.empty()) {
      error = "empty pass name in the pipeline '" + std::string(text) + "'";
      return false;
    }
    std::string_view name = item, optionText;
    if (size_t brace = item.find('{'); brace != std::string_view::npos) {
      if (item.back() != '}') {
        error = "text after the options of '" + std::string(item) + "'";
        return false;
      }
      name = trim(item.substr(0, brace));
      optionText = item.substr(brace + 1, item.size() - brace - 2);
    }
    const PassInfo *info = registry_.lookup(name);
    if (!info) {
      error = "unknown pass '" + std::string(name) + "' (see {option:listPasses})";
      return false;
    }
    std::unique_ptr<Pass> pass = info->create();
    bool ok = true;
    for (const auto &[key, value] : splitOptions(optionText, ok))
      if (!pass->setOption(key, value, error))
        return false;
    if (!ok) {
      error = "bad options '" + std::string(optionText) + "' for pass '" + std::string(name) +
              "' (expected key=value ...)";
      return false;
    }
    parsed.push_back(std::move(pass));
  }
  for (auto &p : parsed)
    addPass(std::move(p));
  return true;
}

void PassManager::addPass(std::unique_ptr<Pass> pass) {
  Entry e;
  e.pass = std::move(pass);
  passes_.push_back(std::move(e));
}

std::string PassManager::pipelineText() const {
  std::string out;
  for (const Entry &e : passes_) {
    if (!out.empty())
      out += ",";
    out += e.pass->name();
    std::string opts = e.pass->optionsText();
    if (!opts.empty())
      out += "{" + opts + "}";
  }
  return out;
}

void PassManager::setOutputChecker(std::unique_ptr<OutputChecker> checker) {
  checker_ = std::move(checker);
}

bool PassManager::selected(const std::vector<std::string> &names, std::string_view pass) const {
  return std::find(names.begin(), names.end(), pass) != names.end() ||
         std::find(names.begin(), names.end(), "all") != names.end();
}

void PassManager::dumpIR(const Model &model, std::string_view when, std::string_view pass) {
  std::ostream &os = log();
  os << "# *** IR Dump " << when << " " << pass << " ***\n";
  PrintOptions opts;
  opts.printLargeConstants = options_.printLargeConstants;
  std::string text = toText(model, opts);
  os << text << (text.empty() || text.back() != '\n' ? "\n" : "");
  os.flush();
}

bool PassManager::runPass(Entry &entry, Model &model, PassContext &context, unsigned round, bool quiet,
                          bool &changed, std::string &error) {
  Pass &pass = *entry.pass;
  std::string name(pass.name());
  changed = false;
  // The rewrite log's replay limit and blocks apply to whole runs too.
  RewriteLog &rewrites = context.rewriteLog();
  std::string roundKey = "round " + std::to_string(round);
  if (rewrites.exhausted() || (rewrites.hasBlocks() && !rewrites.allows(name, roundKey)))
    return true;
  if (!quiet && (options_.printIRBeforeAll || selected(options_.printIRBefore, name)))
    dumpIR(model, "Before", name);

  std::unique_ptr<Graph> snapshot;
  if (!quiet && options_.modelCheckEach && checkerReady_ && model.graph()) {
    snapshot = cloneGraph(*model.graph());
    if (!snapshot) {
      error = "cannot snapshot the IR before pass '" + name + "': it reads values out of scope";
      return false;
    }
  }

  if (!quiet && options_.onPassStart)
    options_.onPassStart(name, round);
  context.setCurrentPass(name, static_cast<size_t>(&entry - passes_.data()));
  context.setRound(round);
  size_t logged = rewrites.size();
  auto start = std::chrono::steady_clock::now();
  changed = pass.run(model, context);
  if (!quiet) {
    entry.seconds += secondsSince(start);
    ++entry.runs;
  }
  if (changed && rewrites.size() == logged)
    rewrites.record(RewriteRecord{name, name, "(the whole model)", roundKey, round, pass.isExactByConstruction()});

  std::string where = "pass '" + name + "'" + (maxRounds_ > 1 ? " (round " + std::to_string(round) + ")" : "");
  if (context.failed()) {
    error = where + " failed: " + context.failureMessage();
    return false;
  }
  if (quiet)
    return true;
  if (options_.printIRAfterAll || selected(options_.printIRAfter, name) ||
      (options_.printIRAfterChange && changed))
    dumpIR(model, "After", name);
  if (options_.verifyEach) {
    std::vector<std::string> problems = verify(model, 5);
    if (!problems.empty()) {
      error = "IR verifier failed after " + where + ": " + problems.front();
      for (size_t i = 1; i < problems.size(); ++i)
        error += "\n  " + problems[i];
      return false;
    }
    if (options_.validateEach) {
      problems = options_.validateEach(model);
      if (!problems.empty()) {
        error = "the model is invalid after " + where + " (a bug in that pass): " + problems.front();
        return false;
      }
    }
  }
  if (snapshot && changed) {
    std::string diff;
    if (!checker_->matchesReference(model, diff)) {
      model.setGraph(std::move(snapshot));
      changed = false;
      entry.disabled = true;
      log() << "onnxslim: model-check-each: " << where << " changed the model's outputs; rolled back\n"
            << diff << (diff.empty() || diff.back() == '\n' ? "" : "\n");
      report_.rolledBack.push_back(name + ": " + diff);
    }
  }
  return true;
}

bool PassManager::runRounds(Model &model, PassContext &context, bool quiet, std::string &error) {
  for (unsigned round = 1; round <= maxRounds_; ++round) {
    if (!quiet)
      report_.rounds = round;
    bool roundChanged = false;
    for (Entry &e : passes_) {
      if (e.disabled)
        continue;
      bool changed = false;
      if (!runPass(e, model, context, round, quiet, changed, error))
        return false;
      roundChanged |= changed;
    }
    if (!quiet) {
      report_.changed |= roundChanged;
      report_.converged = !roundChanged || maxRounds_ == 1;
    }
    if (!roundChanged)
      break;
  }
  return true;
}

bool PassManager::referenceRecorded(bool ok, const std::string &why, std::string &error) {
  if (ok)
    return true;
  if (!options_.modelCheckBestEffort) {
    error = "model check: cannot run the input model: " + why;
    return false;
  }
  report_.modelCheckSkipped = "the input model does not run in the interpreter: " + why;
  return true;
}

std::unique_ptr<Model> PassManager::replay(const Model &original, std::optional<size_t> limit,
                                           const RewriteLog &blocks, PassContext &context, std::string &error) {
  std::unique_ptr<Model> copy = cloneModel(original);
  if (!copy) {
    error = "cannot copy the input model";
    return nullptr;
  }
  context.rewriteLog() = blocks;
  context.rewriteLog().clearRecords();
  context.rewriteLog().setLimit(limit);
  if (!runRounds(*copy, context, /*quiet=*/true, error))
    return nullptr;
  return copy;
}

bool PassManager::undoFaultyRewrites(Model &model, const Model &original, std::string difference,
                                     std::string &error) {
  RewriteLog blocks;
  auto quietContext = [&] {
    PassContext c;
    c.setDebugStream(nullStream());
    return c;
  };
  for (unsigned attempt = 0; attempt < kMaxUndoneRewrites; ++attempt) {
    // The pipeline again from a copy of the input, so that every run the
    // bisection compares starts from the same model (fresh names included).
    PassContext full = quietContext();
    std::unique_ptr<Model> all = replay(original, std::nullopt, blocks, full, error);
    if (!all)
      return false;
    std::vector<RewriteRecord> records = full.rewriteLog().records();
    std::string diff;
    if (checker_->matchesReference(*all, diff)) {
      error = "model check: the outputs differed after the pipeline but not after a replay of it (the pipeline is "
              "not deterministic):\n" + difference;
      return false;
    }
    // Bisect: a replay that may make the first `lo` rewrites matches (0:
    // the input itself), one that may make the first `hi` does not.
    size_t lo = 0, hi = records.size();
    std::string faultDiff = diff;
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      PassContext c = quietContext();
      std::unique_ptr<Model> prefix = replay(original, mid, blocks, c, error);
      if (!prefix)
        return false;
      const std::vector<RewriteRecord> &r = c.rewriteLog().records();
      for (size_t i = 0; i < r.size() && i < mid; ++i)
        if (r[i].key != records[i].key || r[i].pattern != records[i].pattern) {
          error = "model check: the outputs differ, and replays of the pipeline do not make the same rewrites (rewrite " +
                  std::to_string(i + 1) + ": " + r[i].pattern + " at " + r[i].root + " vs " + records[i].pattern +
                  " at " + records[i].root + "), so the rewrite at fault cannot be isolated:\n" + difference;
          return false;
        }
      std::string d;
      if (checker_->matchesReference(*prefix, d))
        lo = mid;
      else
        hi = mid, faultDiff = d;
    }
    if (hi == 0) {
      error = "model check: the outputs differ although the pipeline made no rewrite:\n" + difference;
      return false;
    }
    const RewriteRecord &fault = records[hi - 1];
    blocks.block(fault);
    report_.undone.push_back(UndoneRewrite{fault, faultDiff});
    log() << "onnxslim: model check: rewrite " << hi << " of " << records.size() << ", " << fault.pattern << " at "
          << fault.root << " (pass '" << fault.pass << "', round " << fault.round << "), changed the outputs:\n"
          << faultDiff << (faultDiff.empty() || faultDiff.back() == '\n' ? "" : "\n")
          << "onnxslim: model check: undone, kept from matching there again; the rest of the pipeline is kept\n";
    // The pipeline without it: the run whose statistics are reported.
    PassContext again;
    again.enableDebug(options_.debugOnly);
    again.setDebugStream(log());
    std::unique_ptr<Model> fixed = replay(original, std::nullopt, blocks, again, error);
    if (!fixed)
      return false;
    if (checker_->matchesReference(*fixed, difference)) {
      moveModelContents(model, *fixed);
      again.rewriteLog().setLimit(std::nullopt);
      context_ = std::move(again);
      return true;
    }
  }
  error = "model check failed: the optimized model's outputs differ from the input model's, and undoing " +
          std::to_string(kMaxUndoneRewrites) + " rewrites did not bring them back\n" + difference;
  return false;
}

bool PassManager::run(Model &model, std::string &error) {
  report_ = PassManagerReport{};
  if (!checkNames(error))
    return false;
  auto start = std::chrono::steady_clock::now();
  bool checking = (options_.modelCheck || options_.modelCheckEach);
  bool canRun = options_.modelRunUnavailable.empty();
  if (checking && canRun && !checker_) {
    error = "--model-check needs the runtime's output checker, which is not available";
    return false;
  }
  // The reference run of the input model. With only the final check it runs
  // on a copy of the model in a second thread while the passes work on the
  // model (tensors are immutable and shared, the interpreter keeps no global
  // state), so the check costs one run of the model, not two, in wall time;
  // the copy is also what the check replays the pipeline from to find a
  // rewrite at fault. --model-check-each needs the reference before the
  // first pass.
  // (Declared before the future, whose destructor waits for the thread.)
  std::string referenceError;
  std::unique_ptr<Model> referenceModel;
  std::future<bool> reference;
  if (checking && canRun && !options_.modelCheckEach)
    referenceModel = cloneModel(model);
  if (referenceModel) {
    reference = std::async(std::launch::async, [&] {
      return checker_->recordReference(*referenceModel, referenceError);
    });
  } else if (checking && !canRun && options_.modelCheckEach) {
    error = "--model-check-each cannot run the model: " + options_.modelRunUnavailable;
    return false;
  } else if (checking && canRun && !checker_->recordReference(model, referenceError)) {
    if (!referenceRecorded(false, referenceError, error))
      return false;
    checking = false;
  }
  checkerReady_ = checking && options_.modelCheckEach;
  context_.rewriteLog() = RewriteLog();
  bool ok = runRounds(model, context_, /*quiet=*/false, error);
  totalSeconds_ += secondsSince(start);
  if (!ok) {
    if (reference.valid())
      checker_->cancel();
    return false;
  }
  if (!report_.converged) {
    context_.setCurrentPass("");
    context_.warn("the pipeline still changed the model in round " + std::to_string(maxRounds_) +
                  " (the round cap); stopped before a fixed point");
  }
  const RewriteLog &rewrites = context_.rewriteLog();
  report_.rewrites = rewrites.size();
  report_.exactRewrites = rewrites.size() - rewrites.inexactCount();
  auto checkStart = std::chrono::steady_clock::now();
  if (checking && options_.modelCheck && !options_.modelCheckEach && rewrites.inexactCount() == 0) {
    // Every rewrite is exact by construction: nothing to run.
    if (reference.valid()) {
      checker_->cancel();
      reference.wait();
    }
    report_.modelChecked = report_.provedStructurally = true;
    report_.checkFigures.outputs = model.graph() ? model.graph()->numOutputs() : 0;
    report_.checkFigures.seconds = secondsSince(checkStart);
    totalSeconds_ += report_.checkFigures.seconds;
    return true;
  }
  if (checking && !canRun && options_.modelCheck) {
    // Nothing can run: a structural proof was the only way.
    if (!options_.modelCheckBestEffort) {
      error = "model check: cannot run the model (" + options_.modelRunUnavailable + ") and " +
              std::to_string(rewrites.inexactCount()) + " rewrite(s) are not exact by construction";
      return false;
    }
    report_.modelCheckSkipped = options_.modelRunUnavailable;
    return true;
  }
  if (reference.valid() && !referenceRecorded(reference.get(), referenceError, error))
    return false;
  if (checking && options_.modelCheck && report_.modelCheckSkipped.empty()) {
    // Some rewrite is not exact by construction: run the model and compare.
    std::string diff;
    bool same = checker_->matchesReference(model, diff);
    if (!same && referenceModel && !options_.modelCheckEach && options_.undoFaultyRewrites) {
      same = undoFaultyRewrites(model, *referenceModel, diff, error);
      if (!same)
        return false;
      report_.rewrites = context_.rewriteLog().size();
      report_.exactRewrites = report_.rewrites - context_.rewriteLog().inexactCount();
      checker_->matchesReference(model, diff); // the figures of the model kept
    }
    report_.modelChecked = true;
    report_.checkFigures = checker_->figures();
    if (!same) {
      error = "model check failed: the optimized model's outputs differ from the input model's\n" + diff;
      return false;
    }
  }
  totalSeconds_ += secondsSince(checkStart);
  return true;
}

bool PassManager::checkNames(std::string &error) const {
  for (const std::vector<std::string> *names : {&options_.printIRBefore, &options_.printIRAfter})
    for (const std::string &name : *names)
      if (name != "all" && !registry_.lookup(name)) {
        error = "unknown pass '" + name + "' in {option:printIR} (see {option:listPasses})";
        return false;
      }
  for (const std::string &name : options_.debugOnly)
    if (name != "all" && !registry_.lookup(name) && !isPatternName(name)) {
      error = "unknown pass or pattern '" + name + "' in {option:debugOnly} (see {option:listPasses})";
      return false;
    }
  return true;
}

bool PassManager::isPatternName(std::string_view name) const {
  for (const PassInfo *info : registry_.passes())
    for (const std::string &pattern : info->create()->patternNames())
      if (pattern == name)
        return true;
  return false;
}

std::vector<PassManager::EntryTiming> PassManager::timings() const {
  std::vector<EntryTiming> out;
  for (const Entry &e : passes_)
    out.push_back({std::string(e.pass->name()), e.seconds, e.runs});
  return out;
}

void PassManager::printStatistics(std::ostream &os) const {
  os << "===" << std::string(73, '-') << "===\n"
     << "                         ... Pass statistics report ...\n"
     << "===" << std::string(73, '-') << "===\n";
  for (const Entry &e : passes_) {
    // One block per pipeline entry: a pass listed twice has its own counts
    // at each place.
    size_t index = static_cast<size_t>(&e - passes_.data());
    os << e.pass->name() << "\n";
    for (const PassStatistics &ps : context_.statistics()) {
      if (ps.pass != e.pass->name() || ps.entry != index)
        continue;
      for (const StatisticCounter &c : ps.counters) {
        os << "  (S) " << c.value << " " << c.name;
        if (!c.description.empty())
          os << " - " << c.description;
        os << "\n";
      }
    }
  }
}

void PassManager::printTiming(std::ostream &os) const {
  char line[256];
  os << "===" << std::string(73, '-') << "===\n"
     << "                         ... Execution time report ...\n"
     << "===" << std::string(73, '-') << "===\n";
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds (%u round%s)\n\n",
                totalSeconds_, report_.rounds, report_.rounds == 1 ? "" : "s");
  os << line << "   Wall Time  Runs  Name\n";
  double sum = 0;
  for (const Entry &e : passes_) {
    double pct = totalSeconds_ > 0 ? 100.0 * e.seconds / totalSeconds_ : 0.0;
    std::snprintf(line, sizeof line, "  %.4f (%5.1f%%) %4u  ", e.seconds, pct, e.runs);
    os << line << e.pass->name() << "\n";
    sum += e.seconds;
  }
  double other = std::max(0.0, totalSeconds_ - sum);
  std::snprintf(line, sizeof line, "  %.4f (%5.1f%%)       (instrumentation and model checks)\n", other,
                totalSeconds_ > 0 ? 100.0 * other / totalSeconds_ : 0.0);
  os << line;
  std::snprintf(line, sizeof line, "  %.4f (100.0%%)       Total\n", totalSeconds_);
  os << line;
}

} // namespace onnxslim

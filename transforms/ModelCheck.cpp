//===- transforms/ModelCheck.cpp - Numerical safety net for passes --------===//
//
// The runtime-backed OutputChecker: inputs found once for the input model
// (runtime/InputSearch over runtime/Inputs: the graph inputs, which no pass
// may change), runs in runtime/Interpreter, comparisons by runtime/Compare
// with each output's precision's tolerance.
//
//===----------------------------------------------------------------------===//
#include "transforms/ModelCheck.h"

#include "ir/IR.h"
#include "runtime/BufferPool.h"
#include "runtime/Compare.h"
#include "runtime/InputSearch.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>

namespace onnxslim {

OutputChecker::~OutputChecker() = default;

namespace {

class RuntimeOutputChecker : public OutputChecker {
public:
  explicit RuntimeOutputChecker(ModelCheckOptions options) : options_(std::move(options)) {}

  bool recordReference(const Model &model, std::string &error) override {
    auto start = std::chrono::steady_clock::now();
    if (model.graph())
      precisions_ = rt::outputPrecisions(*model.graph());
    bool ok = recordOnFoundInputs(model, error);
    figures_.seconds += secondsSince(start);
    return ok;
  }

  bool matchesReference(const Model &model, std::string &report) override {
    auto start = std::chrono::steady_clock::now();
    bool ok = compare(model, report);
    figures_.seconds += secondsSince(start);
    return ok;
  }

  CheckFigures figures() const override { return figures_; }
  std::vector<std::shared_ptr<const Tensor>> referenceOutputs() const override {
    std::vector<std::shared_ptr<const Tensor>> out;
    if (!reference_.empty())
      for (const rt::RtValue &v : reference_.front())
        out.push_back(v.kind == rt::RtValue::Kind::Tensor ? v.tensor : nullptr);
    return out;
  }

  void cancel() override { cancelled_ = true; }

private:
  static double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// Given the input model, Execute: finds the inputs it runs on
  /// (runtime/InputSearch.h: the values its integer inputs are compared
  /// with, one sample per combination; index ranges; masks of ones; sizes
  /// of the free dims) and records its outputs on them, Result: false with
  /// `error` when no sample runs.
  bool recordOnFoundInputs(const Model &model, std::string &error) {
    if (!model.graph()) {
      error = "the model has no graph";
      return false;
    }
    const Graph &graph = *model.graph();
    rt::InputSearchOptions search;
    search.base.seed = options_.seed;
    search.base.dims = options_.dims;
    search.base.defaultDim = options_.defaultDim;
    search.preferredSizes = options_.preferredDims;
    search.samples = std::max(options_.samples, 1);
    search.cancel = &cancelled_;
    if (!options_.specFile.empty()) {
      rt::Status s = rt::loadInputSpecs(options_.specFile, options_.specModel, search.base.specs);
      if (!s.ok()) {
        error = "cannot read input specs: " + s.message();
        return false;
      }
    }
    for (const auto &entry : options_.inputShapes) { // (a structured binding cannot be captured before clang 16)
      const std::string &name = entry.first;
      const std::vector<int64_t> &shape = entry.second;
      bool known = false;
      for (const Value *in : graph.inputs())
        known = known || in->name() == name;
      if (!known) {
        error = "a check input shape is given for '" + name + "', which is not an input of the model";
        return false;
      }
      auto it = std::find_if(search.base.specs.begin(), search.base.specs.end(),
                             [&](const rt::InputSpec &s) { return s.name == name; });
      if (it == search.base.specs.end())
        it = search.base.specs.insert(search.base.specs.end(), rt::InputSpec{name, std::nullopt, std::nullopt, {}, {}});
      it->shape = shape;
    }
    for (const auto &[name, tensor] : options_.inputs) {
      bool known = false;
      for (const Value *in : graph.inputs())
        known = known || in->name() == name;
      if (!known) {
        error = "a check input is named '" + name + "', which is not an input of the model";
        return false;
      }
      search.base.provided.insert(name);
    }
    inputs_.clear();
    reference_.clear();
    // Each try makes the inputs and runs the model; the run that works is kept.
    rt::TryInputs tryInputs = [&](const rt::InputOptions &io, std::string &why, uint64_t &progress) {
      std::vector<rt::RtValue> inputs, outputs;
      rt::Status s = rt::makeInputs(graph, io, inputs);
      if (!s.ok()) {
        why = "cannot make inputs: " + s.message();
        return false;
      }
      for (const auto &[name, tensor] : options_.inputs)
        for (size_t i = 0; i < graph.inputs().size(); ++i)
          if (graph.input(i)->name() == name) {
            if (inputs.size() <= i)
              inputs.resize(i + 1);
            inputs[i] = rt::RtValue::fromTensor(tensor);
          }
      if (!run(model, inputs, outputs, why, &progress))
        return false;
      inputs_.push_back(std::move(inputs));
      reference_.push_back(std::move(outputs));
      return true;
    };
    std::vector<rt::InputSample> samples = rt::searchInputs(graph, search, tryInputs, error);
    if (samples.empty())
      return false;
    figures_.dims.clear();
    figures_.dimSizes = samples.front().options.dims;
    for (const rt::InputSample &sample : samples)
      if (!sample.description.empty())
        figures_.dims += (figures_.dims.empty() ? "" : " | ") + sample.description;
    return true;
  }

  bool compare(const Model &model, std::string &report) {
    report.clear();
    figures_.outputs = 0;
    figures_.maxAbsDiff = figures_.maxRelDiff = 0;
    bool ok = true;
    for (size_t sample = 0; sample < inputs_.size(); ++sample) {
      std::vector<rt::RtValue> outputs;
      std::string error;
      if (!run(model, inputs_[sample], outputs, error)) {
        report = "  the model no longer runs: " + error;
        return false;
      }
      const std::vector<rt::RtValue> &reference = reference_[sample];
      if (outputs.size() != reference.size()) {
        report = "  the model has " + std::to_string(outputs.size()) + " outputs instead of " +
                 std::to_string(reference.size());
        return false;
      }
      figures_.outputs = outputs.size();
      std::vector<DataType> precisions = rt::outputPrecisions(*model.graph());
      std::map<DataType, size_t> loose; // outputs compared at a precision other than float32's
      for (size_t i = 0; i < outputs.size(); ++i) {
        DataType precision = rt::leastPrecise(i < precisions_.size() ? precisions_[i] : DataType::Undefined,
                                              i < precisions.size() ? precisions[i] : DataType::Undefined);
        if (precision != DataType::Float && precision != DataType::Undefined && isFloating(reference[i]))
          ++loose[precision];
        rt::Comparison c = rt::compareValues(outputs[i], reference[i], rt::toleranceFor(precision));
        figures_.maxAbsDiff = std::max(figures_.maxAbsDiff, c.maxAbsDiff);
        figures_.maxRelDiff = std::max(figures_.maxRelDiff, c.maxRelDiff);
        if (c.ok)
          continue;
        ok = false;
        char diff[160];
        std::snprintf(diff, sizeof diff, "max abs diff %.6g, max rel diff %.6g, %lld element(s) differ",
                      c.maxAbsDiff, c.maxRelDiff, static_cast<long long>(c.mismatches));
        std::string name = i < model.graph()->numOutputs() ? model.graph()->output(i)->name() : "?";
        report += "  output '" + name + "'" + (inputs_.size() > 1 ? " (sample " + std::to_string(sample) + ")" : "") +
                  ": " + diff;
        if (!c.message.empty())
          report += " (" + c.message + ")";
        report += "\n";
      }
      figures_.tolerances.clear();
      for (const auto &[precision, count] : loose)
        figures_.tolerances += (figures_.tolerances.empty() ? "" : ", ") + dataTypeName(precision) + " for " +
                               std::to_string(count) + " output" + (count == 1 ? "" : "s");
    }
    return ok;
  }

  /// Whether a result is a floating tensor (the only kind a tolerance applies to).
  static bool isFloating(const rt::RtValue &v) {
    return v.isTensor() && v.tensor && isFloatingPoint(v.tensor->dtype());
  }

  /// Given a model and inputs, Execute: runs it, Result: false with
  /// `error` when it fails (and how many nodes it started in `progress`).
  bool run(const Model &model, const std::vector<rt::RtValue> &inputs, std::vector<rt::RtValue> &outputs,
           std::string &error, uint64_t *progress = nullptr) {
    rt::RunOptions options;
    options.cancel = &cancelled_;
    rt::Interpreter interpreter(model, rt::OpRegistry::builtin(), options);
    rt::Status s = interpreter.run(*model.graph(), inputs, outputs);
    if (progress)
      *progress = interpreter.stepsStarted();
    if (!s.ok()) {
      error = s.message();
      return false;
    }
    return true;
  }

  /// The reference run's freed blocks stay warm for the candidate runs
  /// (a first run page-faults every result it writes; see runtime/BufferPool.h).
  rt::BufferPoolScope bufferPool_;
  ModelCheckOptions options_;
  /// Per sample: the inputs, and the reference model's outputs on them.
  std::vector<std::vector<rt::RtValue>> inputs_;
  std::vector<std::vector<rt::RtValue>> reference_;
  /// The precision each output of the reference model is computed in.
  std::vector<DataType> precisions_;
  CheckFigures figures_;
  std::atomic<bool> cancelled_{false};
};

/// Adds the bytes of every constant tensor of `graph` and its subgraphs.
uint64_t constantBytes(const Graph &graph) {
  uint64_t bytes = 0;
  for (const Value *v : graph.initializers())
    if (v->initializer())
      bytes += v->initializer()->byteSize();
  graph.walk([&](Node *n) {
    for (const Attribute &a : n->attributes()) {
      if (a.t)
        bytes += a.t->byteSize();
      for (const Graph *sub : a.subgraphs())
        for (const Value *v : sub->initializers())
          if (v->initializer())
            bytes += v->initializer()->byteSize();
    }
  });
  return bytes;
}

} // namespace

std::string modelCheckUnsupportedReason(const Model &model, uint64_t weightBudgetBytes) {
  const Graph *graph = model.graph();
  if (!graph)
    return "the model has no graph";
  uint64_t bytes = constantBytes(*graph);
  if (bytes > weightBudgetBytes)
    return "its constants take " + std::to_string(bytes >> 20) + " MiB, over the " +
           std::to_string(weightBudgetBytes >> 20) + " MiB budget of the default check";
  const rt::OpRegistry &registry = rt::OpRegistry::builtin();
  std::string reason;
  graph->walk([&](Node *n) {
    if (!reason.empty())
      return;
    int64_t version = model.opsetVersion(n->domain());
    const rt::KernelDef *def = version < 0 ? nullptr : registry.find(n->domain(), n->opType(), version);
    std::string op = n->isDefaultDomain() ? n->opType() : n->domain() + "." + n->opType();
    if (!def)
      reason = "the interpreter has no kernel for " + op + (version < 0 ? "" : " at opset " + std::to_string(version));
    else if (!def->deterministic)
      reason = op + " is not deterministic";
  });
  return reason;
}

std::unique_ptr<OutputChecker> createRuntimeOutputChecker(const ModelCheckOptions &options) {
  return std::make_unique<RuntimeOutputChecker>(options);
}

} // namespace onnxslim

//===- transforms/ModelCheck.cpp - Numerical safety net for passes --------===//
//
// The runtime-backed OutputChecker: seeded inputs from runtime/Inputs (made
// once from the input model's graph inputs, which no pass may change), runs
// in runtime/Interpreter, comparisons by runtime/Compare.
//
//===----------------------------------------------------------------------===//
#include "transforms/ModelCheck.h"

#include "ir/IR.h"
#include "runtime/BufferPool.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

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
    bool ok = recordWithFallbacks(model, error);
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

  void cancel() override { cancelled_ = true; }

private:
  static double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// Records the reference with the given dims, then with each fallback size.
  bool recordWithFallbacks(const Model &model, std::string &error) {
    if (!model.graph()) {
      error = "the model has no graph";
      return false;
    }
    std::vector<rt::InputSpec> specs;
    if (!options_.specFile.empty()) {
      rt::Status s = rt::loadInputSpecs(options_.specFile, options_.specModel, specs);
      if (!s.ok()) {
        error = "cannot read input specs: " + s.message();
        return false;
      }
    }
    std::vector<int64_t> sizes = options_.preferredDims;
    sizes.push_back(0); // 0: the dims as given
    std::string lastError;
    for (int64_t size : sizes) {
      rt::InputOptions io;
      io.seed = options_.seed;
      io.dims = options_.dims;
      io.defaultDim = options_.defaultDim;
      io.specs = specs;
      // Size 0: the dims as given (user-sized ones, then defaultDim).
      if (!widenSymbolicDims(*model.graph(), size > 0 ? size : io.defaultDim, io) && size > 0)
        continue; // nothing to widen: the plain attempt runs these inputs
      std::string attempt;
      if (recordOnce(model, io, attempt)) {
        figures_.dims = describeDims(*model.graph(), io);
        return true;
      }
      lastError = attempt;
    }
    error = lastError;
    return false;
  }

  /// Given a size, Execute: sizes every symbolic dim the user did not size
  /// to it, except symbols that lead some input's shape (the batch, by every
  /// exporter's convention), which keep defaultDim; an input with unknown
  /// dims gets an explicit shape the same way. Result: false when the graph
  /// has no dim to widen.
  bool widenSymbolicDims(const Graph &graph, int64_t size, rt::InputOptions &io) const {
    std::set<std::string> leading;
    for (const Value *in : graph.inputs())
      if (const Shape *shape = inputShape(in); shape && !shape->empty() && (*shape)[0].isSymbol())
        leading.insert((*shape)[0].getSymbol());
    bool any = false;
    for (const Value *in : graph.inputs()) {
      const Shape *shape = inputShape(in);
      if (!shape)
        continue;
      bool hasSpec = false;
      for (const rt::InputSpec &spec : io.specs)
        hasSpec |= spec.name == in->name() && spec.shape.has_value();
      std::vector<int64_t> dims;
      bool unknown = false;
      for (size_t i = 0; i < shape->size(); ++i) {
        const Dim &d = (*shape)[i];
        if (d.isValue()) {
          dims.push_back(d.getValue());
        } else if (d.isSymbol()) {
          auto user = options_.dims.find(d.getSymbol());
          int64_t v = user != options_.dims.end() ? user->second
                      : leading.count(d.getSymbol()) ? io.defaultDim : size;
          if (user == options_.dims.end() && !leading.count(d.getSymbol()))
            any = true;
          io.dims[d.getSymbol()] = v;
          dims.push_back(v);
        } else if (auto user = options_.dims.find(unnamedDimKey(*in, i)); user != options_.dims.end()) {
          // An unnamed dim the user sized as INPUT[AXIS]=N.
          unknown = true;
          dims.push_back(user->second);
        } else {
          unknown = true;
          dims.push_back(i == 0 ? io.defaultDim : size);
          any |= i > 0;
        }
      }
      if (unknown && !hasSpec) {
        rt::InputSpec spec;
        spec.name = in->name();
        spec.shape = dims;
        io.specs.push_back(spec);
      }
    }
    return any;
  }

  /// How an unnamed dim is named in --dim and in the report: "x[1]".
  static std::string unnamedDimKey(const Value &in, size_t axis) { return in.name() + "[" + std::to_string(axis) + "]"; }

  static const Shape *inputShape(const Value *in) {
    if (in->isInitializer() || !in->type() || !in->type()->isTensor() || !in->type()->shape())
      return nullptr;
    return &*in->type()->shape();
  }

  static std::string describeDims(const Graph &graph, const rt::InputOptions &io) {
    std::string out;
    std::set<std::string> seen;
    for (const Value *in : graph.inputs()) {
      const Shape *shape = inputShape(in);
      if (!shape)
        continue;
      for (size_t i = 0; i < shape->size(); ++i) {
        const Dim &d = (*shape)[i];
        if (d.isValue() || !seen.insert(d.isSymbol() ? d.getSymbol() : unnamedDimKey(*in, i)).second)
          continue;
        int64_t v = io.defaultDim;
        if (d.isSymbol()) {
          if (auto it = io.dims.find(d.getSymbol()); it != io.dims.end())
            v = it->second;
        } else {
          for (const rt::InputSpec &spec : io.specs)
            if (spec.name == in->name() && spec.shape && i < spec.shape->size())
              v = (*spec.shape)[i];
        }
        out += (out.empty() ? "" : ", ") + (d.isSymbol() ? d.getSymbol() : unnamedDimKey(*in, i)) +
               "=" + std::to_string(v);
      }
    }
    return out;
  }

  /// Given input options, Execute: makes the inputs of every sample (seeds
  /// seed, seed+1, ...; the caller's tensors in place of seeded ones) and
  /// runs the reference on them, Result: false with `error` when it cannot.
  bool recordOnce(const Model &model, rt::InputOptions io, std::string &error) {
    const Graph &graph = *model.graph();
    inputs_.assign(static_cast<size_t>(std::max(options_.samples, 1)), {});
    reference_.assign(inputs_.size(), {});
    for (size_t sample = 0; sample < inputs_.size(); ++sample) {
      io.seed = options_.seed + sample;
      std::vector<rt::RtValue> &inputs = inputs_[sample];
      rt::Status s = rt::makeInputs(graph, io, inputs);
      if (!s.ok()) {
        error = "cannot make inputs: " + s.message();
        return false;
      }
      for (const auto &[name, tensor] : options_.inputs) {
        size_t i = 0;
        while (i < graph.inputs().size() && graph.input(i)->name() != name)
          ++i;
        if (i == graph.inputs().size()) {
          error = "a check input is named '" + name + "', which is not an input of the model";
          return false;
        }
        if (inputs.size() <= i)
          inputs.resize(i + 1);
        inputs[i] = rt::RtValue::fromTensor(tensor);
      }
      if (!run(model, inputs, reference_[sample], error))
        return false;
    }
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

  bool run(const Model &model, const std::vector<rt::RtValue> &inputs, std::vector<rt::RtValue> &outputs,
           std::string &error) {
    rt::RunOptions options;
    options.cancel = &cancelled_;
    rt::Interpreter interpreter(model, rt::OpRegistry::builtin(), options);
    rt::Status s = interpreter.run(*model.graph(), inputs, outputs);
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

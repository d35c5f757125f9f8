//===- transforms/ModelCheck.cpp - Numerical safety net for passes --------===//
//
// The runtime-backed OutputChecker: seeded inputs from runtime/Inputs (made
// once from the input model's graph inputs, which no pass may change), runs
// in runtime/Interpreter, comparisons by runtime/Compare.
//
//===----------------------------------------------------------------------===//
#include "transforms/ModelCheck.h"

#include "ir/IR.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

#include <cstdio>

namespace onnxslim {

OutputChecker::~OutputChecker() = default;

namespace {

class RuntimeOutputChecker : public OutputChecker {
public:
  explicit RuntimeOutputChecker(ModelCheckOptions options) : options_(std::move(options)) {}

  bool recordReference(const Model &model, std::string &error) override {
    if (!model.graph()) {
      error = "the model has no graph";
      return false;
    }
    rt::InputOptions io;
    io.seed = options_.seed;
    io.dims = options_.dims;
    io.defaultDim = options_.defaultDim;
    if (!options_.specFile.empty()) {
      rt::Status s = rt::loadInputSpecs(options_.specFile, options_.specModel, io.specs);
      if (!s.ok()) {
        error = "cannot read input specs: " + s.message();
        return false;
      }
    }
    inputs_.clear();
    rt::Status s = rt::makeInputs(*model.graph(), io, inputs_);
    if (!s.ok()) {
      error = "cannot make inputs: " + s.message();
      return false;
    }
    return run(model, reference_, error);
  }

  bool matchesReference(const Model &model, std::string &report) override {
    std::vector<rt::RtValue> outputs;
    std::string error;
    if (!run(model, outputs, error)) {
      report = "  the model no longer runs: " + error;
      return false;
    }
    if (outputs.size() != reference_.size()) {
      report = "  the model has " + std::to_string(outputs.size()) + " outputs instead of " +
               std::to_string(reference_.size());
      return false;
    }
    bool ok = true;
    report.clear();
    for (size_t i = 0; i < outputs.size(); ++i) {
      rt::Comparison c = rt::compareValues(outputs[i], reference_[i], options_.rtol, options_.atol);
      if (c.ok)
        continue;
      ok = false;
      char diff[160];
      std::snprintf(diff, sizeof diff, "max abs diff %.6g, max rel diff %.6g, %lld element(s) differ",
                    c.maxAbsDiff, c.maxRelDiff, static_cast<long long>(c.mismatches));
      std::string name = i < model.graph()->numOutputs() ? model.graph()->output(i)->name() : "?";
      report += "  output '" + name + "': " + diff;
      if (!c.message.empty())
        report += " (" + c.message + ")";
      report += "\n";
    }
    return ok;
  }

private:
  bool run(const Model &model, std::vector<rt::RtValue> &outputs, std::string &error) {
    rt::Interpreter interpreter(model);
    rt::Status s = interpreter.run(*model.graph(), inputs_, outputs);
    if (!s.ok()) {
      error = s.message();
      return false;
    }
    return true;
  }

  ModelCheckOptions options_;
  std::vector<rt::RtValue> inputs_;
  std::vector<rt::RtValue> reference_;
};

} // namespace

std::unique_ptr<OutputChecker> createRuntimeOutputChecker(const ModelCheckOptions &options) {
  return std::make_unique<RuntimeOutputChecker>(options);
}

} // namespace onnxslim

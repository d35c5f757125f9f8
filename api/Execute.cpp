//===- api/Execute.cpp - run() and verify() on the interpreter --------------===//
//
// Both make the inputs the caller did not give with runtime/Inputs (seeded,
// shaped by the declared types) and run the main graph in the interpreter
// (runtime/Interpreter.h). verify() first checks that the two models have the
// same interface: the same fed inputs by name and element type, the same
// outputs by position and name.
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"

#include "api/RunValues.h"
#include "runtime/Compare.h"
#include "runtime/InputSearch.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace onnxslim {

rt::RtValue toRuntime(const RunValue &v) {
  rt::RtValue out;
  out.elemType = v.elemType;
  switch (v.kind) {
  case RunValue::Kind::None:
    break;
  case RunValue::Kind::Tensor:
    out = rt::RtValue::fromTensor(v.tensor);
    break;
  case RunValue::Kind::Sequence:
    out = rt::RtValue::fromSequence(v.sequence);
    break;
  case RunValue::Kind::Optional:
    out.kind = rt::RtValue::Kind::Optional;
    if (v.optional)
      out.optional = std::make_shared<const rt::RtValue>(toRuntime(*v.optional));
    break;
  }
  return out;
}

RunValue fromRuntime(const rt::RtValue &v) {
  RunValue out;
  out.elemType = v.elemType;
  switch (v.kind) {
  case rt::RtValue::Kind::None:
    break;
  case rt::RtValue::Kind::Tensor:
    out = RunValue::fromTensor(v.tensor);
    break;
  case rt::RtValue::Kind::Sequence:
    out.kind = RunValue::Kind::Sequence;
    out.sequence = v.sequence;
    break;
  case rt::RtValue::Kind::Optional:
    out.kind = RunValue::Kind::Optional;
    if (v.optional)
      out.optional = std::make_shared<const RunValue>(fromRuntime(*v.optional));
    break;
  }
  return out;
}

namespace {

/// Graph inputs that the caller must feed (those not backed by an initializer).
std::vector<const Value *> fedInputs(const Graph &graph) {
  std::vector<const Value *> out;
  for (const Value *v : graph.inputs())
    if (!v->isInitializer())
      out.push_back(v);
  return out;
}

/// Given a graph, input options and values by name, Execute: makes the
/// inputs (seeded, then the given ones in their place), Result: an error
/// naming an input the graph does not have.
Status makeGraphInputs(const Graph &graph, const rt::InputOptions &opts,
                       const std::map<std::string, RunValue> &given, std::vector<rt::RtValue> &inputs) {
  // The given inputs are not generated (sequences and optionals cannot be).
  rt::InputOptions withGiven = opts;
  for (const auto &entry : given)
    withGiven.provided.insert(entry.first);
  rt::Status s = rt::makeInputs(graph, withGiven, inputs);
  if (!s.ok())
    return Status::error(s.message());
  for (const auto &entry : given) {
    const std::string &name = entry.first; // (a structured binding cannot be captured before clang 16)
    auto it = std::find_if(graph.inputs().begin(), graph.inputs().end(),
                           [&](const Value *v) { return v->name() == name; });
    if (it == graph.inputs().end()) {
      std::string names;
      for (const Value *v : fedInputs(graph))
        names += (names.empty() ? "" : ", ") + v->name();
      return Status::error("'" + name + "' is not an input of the model (inputs: " + names + ")");
    }
    size_t index = static_cast<size_t>(it - graph.inputs().begin());
    if (inputs.size() <= index)
      inputs.resize(index + 1);
    inputs[index] = toRuntime(entry.second);
  }
  return {};
}

std::string elemTypeName(const Value *v) {
  return v->type() && v->type()->isTensor() ? dataTypeName(v->type()->elemType()) : "(non-tensor)";
}

/// Given seed, dims and a models.json-style spec file, Result: the input
/// options, or why the spec file cannot be read.
Status inputOptions(uint64_t seed, const std::map<std::string, int64_t> &dims, const std::string &specFile,
                    const std::string &specModel, rt::InputOptions &opts) {
  opts.seed = seed;
  opts.dims = dims;
  if (specFile.empty())
    return {};
  rt::Status s = rt::loadInputSpecs(specFile, specModel, opts.specs);
  return s.ok() ? Status() : Status::error(specFile + ": " + s.message());
}

/// Why the two graphs' interfaces differ ("" when they agree).
std::string interfaceMismatch(const Graph &ga, const std::string &a, const Graph &gb, const std::string &b) {
  std::vector<const Value *> ia = fedInputs(ga), ib = fedInputs(gb);
  std::map<std::string, const Value *> byNameB;
  for (const Value *v : ib)
    byNameB[v->name()] = v;
  std::ostringstream out;
  for (const Value *v : ia) {
    auto it = byNameB.find(v->name());
    if (it == byNameB.end())
      out << "\n  input '" << v->name() << "' of " << a << " is not an input of " << b;
    else if (v->type() && it->second->type() && v->type()->isTensor() && it->second->type()->isTensor() &&
             v->type()->elemType() != it->second->type()->elemType())
      out << "\n  input '" << v->name() << "': " << elemTypeName(v) << " vs " << elemTypeName(it->second);
  }
  if (ib.size() != ia.size())
    out << "\n  " << a << " has " << ia.size() << " inputs, " << b << " has " << ib.size();
  if (ga.numOutputs() != gb.numOutputs())
    out << "\n  " << a << " has " << ga.numOutputs() << " outputs, " << b << " has " << gb.numOutputs();
  else
    for (size_t i = 0; i < ga.numOutputs(); ++i)
      if (ga.output(i)->name() != gb.output(i)->name())
        out << "\n  output " << i << " is '" << ga.output(i)->name() << "' vs '" << gb.output(i)->name() << "'";
  return out.str();
}

} // namespace

void setThreadCount(int threads) { rt::setThreadCount(threads); }

int threadCount() { return rt::threadCount(); }

Result<std::vector<std::pair<std::string, RunValue>>> run(const Model &model, const std::map<std::string, RunValue> &inputs,
                                                          const RunConfig &config) {
  Result<RunReport> report = runProfiled(model, inputs, config);
  if (!report)
    return report.status();
  return std::move(report->outputs);
}

Result<RunReport> runProfiled(const Model &model, const std::map<std::string, RunValue> &inputs,
                              const RunConfig &config, const ProfileOptions &profile) {
  const Graph *graph = model.graph();
  if (!graph)
    return Status::error("the model has no graph");
  rt::InputOptions opts;
  if (Status s = inputOptions(config.seed, config.dims, config.specFile, config.specModel, opts); !s)
    return s;
  std::vector<rt::RtValue> in, out;
  if (Status s = makeGraphInputs(*graph, opts, inputs, in); !s)
    return s;
  rt::RunOptions runOptions;
  runOptions.checkInputShapes = config.checkInputShapes;
  runOptions.profile = profile.opTimes;
  runOptions.profileNodes = profile.nodeTimes;
  rt::Interpreter interp(model, rt::OpRegistry::builtin(), runOptions);
  rt::Status s = interp.run(*graph, in, out);
  if (!s.ok())
    return Status::error(s.message());
  RunReport report;
  if (profile.benchRuns > 0) {
    // Two untimed warm-up runs first, as the ONNX Runtime oracle does
    // (tools/oracle/oracle.js --bench): the first runs after the reference
    // one still settle (buffer reuse, caches, clocks), and ratios between
    // the two are taken over the same kind of runs.
    for (int r = 0; r < 2; ++r) {
      std::vector<rt::RtValue> warm;
      if (rt::Status w = interp.run(*graph, in, warm); !w.ok())
        return Status::error(w.message());
    }
    for (int r = 0; r < profile.benchRuns; ++r) {
      std::vector<rt::RtValue> again;
      auto start = std::chrono::steady_clock::now();
      rt::Status timed = interp.run(*graph, in, again);
      report.benchSeconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!timed.ok())
        return Status::error(timed.message());
    }
  }
  for (const auto &[op, p] : interp.profile())
    report.ops.push_back({op, p.calls, p.seconds});
  for (const rt::NodeProfile &n : interp.nodeProfile()) {
    const Node &node = *n.node;
    std::string output = node.numResults() && node.result(0) ? node.result(0)->name() : "";
    report.nodes.push_back({node.name(), output, node.opType(), n.inputShapes, n.time.calls, n.time.seconds});
  }
  for (size_t i = 0; i < out.size(); ++i)
    report.outputs.emplace_back(graph->output(i)->name(), fromRuntime(out[i]));
  return report;
}

Status parseDim(std::string_view flag, std::map<std::string, int64_t> &dims) {
  rt::Status s = rt::parseDimFlag(flag, dims);
  return s.ok() ? Status() : Status::error(s.message());
}

Status checkInputSpecs(const std::string &specFile, const std::string &specModel) {
  std::vector<rt::InputSpec> specs;
  rt::Status s = rt::loadInputSpecs(specFile, specModel, specs);
  return s.ok() ? Status() : Status::error(s.message());
}

Result<VerifyReport> verify(const Model &reference, const Model &candidate, const VerifyOptions &options) {
  if (!reference.graph() || !candidate.graph())
    return Status::error("a model has no graph");
  if (options.samples < 1)
    return Status::error("samples must be at least 1");
  const Graph &ga = *reference.graph(), &gb = *candidate.graph();
  const std::string &a = options.referenceName, &b = options.candidateName;
  if (std::string mismatch = interfaceMismatch(ga, a, gb, b); !mismatch.empty())
    return Status::error("the models' interfaces differ:" + mismatch);

  rt::InputOptions opts;
  if (Status s = inputOptions(options.seed, options.dims, options.specFile, options.specModel, opts); !s)
    return s;
  for (const auto &entry : options.inputShapes) { // (a structured binding cannot be captured before clang 16)
    const std::string &name = entry.first;
    auto it = std::find_if(opts.specs.begin(), opts.specs.end(), [&](const rt::InputSpec &s) { return s.name == name; });
    if (it == opts.specs.end()) {
      opts.specs.emplace_back();
      it = std::prev(opts.specs.end());
      it->name = name;
    }
    it->shape = entry.second;
  }
  rt::Interpreter runB(candidate);
  VerifyReport report;
  report.outputs.resize(ga.numOutputs());
  // Each output's tolerance: the table's for the precision it is computed
  // in (in either model), with the caller's rtol/atol in its place if given.
  std::vector<DataType> pa = rt::outputPrecisions(ga), pb = rt::outputPrecisions(gb);
  std::vector<rt::Tolerance> tolerances(ga.numOutputs());
  for (size_t i = 0; i < ga.numOutputs(); ++i) {
    report.outputs[i].name = ga.output(i)->name();
    DataType p = rt::leastPrecise(i < pa.size() ? pa[i] : DataType::Undefined,
                                  i < pb.size() ? pb[i] : DataType::Undefined);
    tolerances[i] = rt::toleranceFor(p);
    if (options.rtol || options.atol)
      tolerances[i] = {options.rtol.value_or(tolerances[i].rtol), options.atol.value_or(tolerances[i].atol), 0};
    if (p != DataType::Undefined)
      report.outputs[i].precision = dataTypeName(p == DataType::Undefined ? DataType::Float : p);
  }
  // The inputs: sized as the optimizer's model check sizes them (free dims
  // tried at 32, 64, 512, then searched; rt::searchInputs), on the
  // reference, whose outputs are kept.
  rt::InputSearchOptions search;
  search.base = opts;
  for (const auto &entry : options.inputs)
    search.base.provided.insert(entry.first);
  search.samples = options.samples;
  std::vector<std::vector<rt::RtValue>> samplesIn, samplesOut;
  rt::TryInputs tryInputs = [&](const rt::InputOptions &io, std::string &why, uint64_t &progress) {
    std::vector<rt::RtValue> in, out;
    if (Status s = makeGraphInputs(ga, io, options.inputs, in); !s) {
      why = s.message();
      return false;
    }
    rt::Interpreter runA(reference);
    rt::Status s = runA.run(ga, in, out);
    progress = runA.stepsStarted();
    if (!s.ok()) {
      why = s.message();
      return false;
    }
    samplesIn.push_back(std::move(in));
    samplesOut.push_back(std::move(out));
    return true;
  };
  std::string error;
  std::vector<rt::InputSample> samples = rt::searchInputs(ga, search, tryInputs, error);
  if (samples.empty())
    return Status::error(a + ": " + error);
  for (const rt::InputSample &s : samples)
    if (!s.description.empty())
      report.inputs += (report.inputs.empty() ? "" : " | ") + s.description;
  report.dims = samples.front().options.dims;
  report.samples = samplesIn.size();
  for (size_t sample = 0; sample < samplesIn.size(); ++sample) {
    const std::vector<rt::RtValue> &inA = samplesIn[sample], &outA = samplesOut[sample];
    std::vector<rt::RtValue> inB, outB;
    // The candidate's inputs: the reference's values matched by name (it may
    // order them differently).
    inB.resize(gb.inputs().size());
    for (size_t j = 0; j < gb.inputs().size(); ++j)
      for (size_t k = 0; k < ga.inputs().size() && k < inA.size(); ++k)
        if (ga.input(k)->name() == gb.input(j)->name() && !gb.input(j)->isInitializer())
          inB[j] = inA[k];
    if (rt::Status s = runB.run(gb, inB, outB); !s.ok())
      return Status::error(b + ": " + s.message());
    for (size_t i = 0; i < outA.size(); ++i) {
      rt::Comparison c = rt::compareValues(outB[i], outA[i], tolerances[i]);
      OutputComparison &o = report.outputs[i];
      o.maxAbsDiff = std::max(o.maxAbsDiff, c.maxAbsDiff);
      o.maxRelDiff = std::max(o.maxRelDiff, c.maxRelDiff);
      if (!c.ok) {
        o.mismatches += std::max<int64_t>(c.mismatches, 1);
        if (o.firstMismatch.empty())
          o.firstMismatch = "sample " + std::to_string(sample) + ": " + c.message;
      }
    }
  }
  return report;
}

} // namespace onnxslim

//===- tools/RunCommands.cpp - `onnxslim run` and `onnxslim verify` --------===//
//
// Both commands load models with the command line's loader (binary or text),
// make inputs with runtime/Inputs (seeded, dtype- and shape-aware, with
// --input files and --input-specs overriding), run them in the interpreter
// and report. Errors name the file and, for a failing node, the node and op.
//
//===----------------------------------------------------------------------===//
#include "tools/RunCommands.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/Verifier.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "tools/ModelIO.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

namespace onnxslim::tools {
namespace {

int fail(const std::string &message) {
  std::cerr << "onnxslim: error: " << message << "\n";
  return 1;
}

std::unique_ptr<Model> loadChecked(const std::string &path, std::string &error) {
  std::unique_ptr<Model> model = loadAny(path, error);
  if (!model)
    return nullptr;
  std::vector<std::string> problems = verify(*model, 1);
  if (!problems.empty()) {
    error = path + ": invalid model: " + problems.front();
    return nullptr;
  }
  return model;
}

/// The file name under which an output is written (as oracle.js names it).
std::string fileNameFor(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      c = '_';
  return out + ".pb";
}

std::string describeType(const std::optional<Type> &type) {
  if (!type)
    return "(no type)";
  if (type->kind() != Type::Kind::Tensor)
    return "(non-tensor)";
  std::string s = dataTypeName(type->elemType());
  if (!type->shape())
    return s + "[?]";
  s += "[";
  for (size_t i = 0; i < type->shape()->size(); ++i) {
    const Dim &d = (*type->shape())[i];
    s += (i ? "," : "") + (d.isValue() ? std::to_string(d.getValue()) : d.isSymbol() ? d.getSymbol() : std::string("?"));
  }
  return s + "]";
}

std::string describeTensor(const Tensor &t) {
  std::string s = dataTypeName(t.dtype()) + "[";
  for (size_t i = 0; i < t.dims().size(); ++i)
    s += (i ? "," : "") + std::to_string(t.dims()[i]);
  return s + "]";
}

/// The input options from --seed, --dim and --input-specs.
bool inputOptions(const InputArgs &args, const std::string &modelPath, rt::InputOptions &opts,
                  std::string &error) {
  opts.seed = args.seed;
  for (const std::string &d : args.dims) {
    rt::Status s = rt::parseDimFlag(d, opts.dims);
    if (!s.ok()) {
      error = "--dim " + d + ": " + s.message();
      return false;
    }
  }
  if (!args.inputSpecs.empty()) {
    size_t colon = args.inputSpecs.rfind(':');
    std::string file = args.inputSpecs.substr(0, colon);
    std::string name = colon != std::string::npos
                           ? args.inputSpecs.substr(colon + 1)
                           : std::filesystem::path(modelPath).stem().string();
    rt::Status s = rt::loadInputSpecs(file, name, opts.specs);
    if (!s.ok()) {
      error = "--input-specs " + args.inputSpecs + ": " + s.message();
      return false;
    }
  }
  return true;
}

/// Graph inputs that the caller must feed (those not backed by an initializer).
std::vector<const Value *> fedInputs(const Graph &graph) {
  std::vector<const Value *> out;
  for (const Value *v : graph.inputs())
    if (!v->isInitializer())
      out.push_back(v);
  return out;
}

/// Given --input flags, Execute: replaces the generated values of the named
/// inputs with the tensors read from the files.
bool applyInputFiles(const Graph &graph, const std::vector<std::string> &flags,
                     std::vector<rt::RtValue> &inputs, std::string &error) {
  for (const std::string &flag : flags) {
    size_t eq = flag.find('=');
    std::string name = eq == std::string::npos ? "" : flag.substr(0, eq);
    std::string file = eq == std::string::npos ? flag : flag.substr(eq + 1);
    TensorPtr t = loadTensorFile(file, error);
    if (!t)
      return false;
    if (name.empty())
      name = t->name;
    auto it = std::find_if(graph.inputs().begin(), graph.inputs().end(),
                           [&](const Value *v) { return v->name() == name; });
    if (name.empty() || it == graph.inputs().end()) {
      std::string names;
      for (const Value *v : fedInputs(graph))
        names += (names.empty() ? "" : ", ") + v->name();
      error = "--input " + flag + ": '" + name + "' is not an input of the model (inputs: " + names +
              "); use --input NAME=FILE.pb";
      return false;
    }
    size_t index = static_cast<size_t>(it - graph.inputs().begin());
    if (inputs.size() <= index)
      inputs.resize(index + 1);
    inputs[index] = rt::RtValue::fromTensor(std::move(t));
  }
  return true;
}

} // namespace

int runModelCommand(const RunArgs &args) {
  std::string error;
  std::unique_ptr<Model> model = loadChecked(args.model, error);
  if (!model)
    return fail(error);
  rt::InputOptions opts;
  if (!inputOptions(args.in, args.model, opts, error))
    return fail(error);
  const Graph &graph = *model->graph();
  std::vector<rt::RtValue> inputs, outputs;
  rt::Status s = rt::makeInputs(graph, opts, inputs);
  if (!s.ok())
    return fail(args.model + ": " + s.message());
  if (!applyInputFiles(graph, args.in.inputs, inputs, error))
    return fail(error);
  rt::RunOptions runOpts;
  runOpts.profile = args.profile;
  rt::Interpreter interp(*model, rt::OpRegistry::builtin(), runOpts);
  s = interp.run(graph, inputs, outputs);
  if (!s.ok())
    return fail(args.model + ": " + s.message());

  if (args.benchRuns > 0) {
    std::vector<double> ms;
    for (int r = 0; r < args.benchRuns; ++r) {
      std::vector<rt::RtValue> again;
      auto t0 = std::chrono::steady_clock::now();
      s = interp.run(graph, inputs, again);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!s.ok())
        return fail(args.model + ": " + s.message());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    std::printf("latency_ms: %.3f (median of %d runs)\n", ms[ms.size() / 2], args.benchRuns);
  }
  if (args.profile) {
    std::vector<std::pair<std::string, rt::OpProfile>> ops(interp.profile().begin(), interp.profile().end());
    std::sort(ops.begin(), ops.end(), [](auto &a, auto &b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (auto &[op, p] : ops)
      total += p.seconds;
    std::printf("%-28s %8s %12s %7s\n", "op", "calls", "ms", "share");
    for (auto &[op, p] : ops)
      std::printf("%-28s %8lld %12.3f %6.1f%%\n", op.c_str(), static_cast<long long>(p.calls), p.seconds * 1e3,
                  total > 0 ? 100 * p.seconds / total : 0.0);
  }

  std::error_code ec;
  std::filesystem::create_directories(args.outputDir, ec);
  if (ec)
    return fail("cannot create " + args.outputDir + ": " + ec.message());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = graph.output(i)->name();
    if (!outputs[i].isTensor())
      return fail(args.model + ": output '" + name + "' is not a tensor (sequence and optional outputs cannot be written as TensorProto)");
    Tensor named(*outputs[i].tensor);
    named.name = name;
    std::string path = (std::filesystem::path(args.outputDir) / fileNameFor(name)).string();
    if (!saveTensorFile(named, path, error))
      return fail(error);
    if (!args.quiet)
      std::cout << name << ": " << describeTensor(named) << " -> " << path << "\n";
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
  if (args.samples < 1)
    return fail("--samples must be at least 1");
  const Graph &ga = *a->graph(), &gb = *b->graph();

  // Interfaces: the same fed inputs and outputs, by name, with the same types.
  std::vector<const Value *> ia = fedInputs(ga), ib = fedInputs(gb);
  std::map<std::string, const Value *> byNameB;
  for (const Value *v : ib)
    byNameB[v->name()] = v;
  std::ostringstream mismatch;
  for (const Value *v : ia) {
    auto it = byNameB.find(v->name());
    if (it == byNameB.end())
      mismatch << "\n  input '" << v->name() << "' of " << args.modelA << " is not an input of " << args.modelB;
    else if (v->type() && it->second->type() && v->type()->isTensor() && it->second->type()->isTensor() &&
             v->type()->elemType() != it->second->type()->elemType())
      mismatch << "\n  input '" << v->name() << "': " << describeType(v->type()) << " vs "
               << describeType(it->second->type());
  }
  if (ib.size() != ia.size())
    mismatch << "\n  " << args.modelA << " has " << ia.size() << " inputs, " << args.modelB << " has " << ib.size();
  if (ga.numOutputs() != gb.numOutputs())
    mismatch << "\n  " << args.modelA << " has " << ga.numOutputs() << " outputs, " << args.modelB << " has "
             << gb.numOutputs();
  else
    for (size_t i = 0; i < ga.numOutputs(); ++i)
      if (ga.output(i)->name() != gb.output(i)->name())
        mismatch << "\n  output " << i << " is '" << ga.output(i)->name() << "' vs '" << gb.output(i)->name() << "'";
  if (!mismatch.str().empty())
    return fail("the models' interfaces differ:" + mismatch.str());

  rt::InputOptions opts;
  if (!inputOptions(args.in, args.modelA, opts, error))
    return fail(error);
  rt::Interpreter runA(*a), runB(*b);
  struct Worst {
    double abs = 0, rel = 0;
    int64_t mismatches = 0;
    std::string message;
  };
  std::vector<Worst> worst(ga.numOutputs());
  for (int sample = 0; sample < args.samples; ++sample) {
    opts.seed = args.in.seed + static_cast<uint64_t>(sample);
    std::vector<rt::RtValue> inA, inB, outA, outB;
    rt::Status s = rt::makeInputs(ga, opts, inA);
    if (!s.ok())
      return fail(args.modelA + ": " + s.message());
    if (!applyInputFiles(ga, args.in.inputs, inA, error))
      return fail(error);
    // B's inputs: A's values matched by name (B may order them differently).
    inB.resize(gb.inputs().size());
    for (size_t j = 0; j < gb.inputs().size(); ++j)
      for (size_t k = 0; k < ga.inputs().size() && k < inA.size(); ++k)
        if (ga.input(k)->name() == gb.input(j)->name() && !gb.input(j)->isInitializer())
          inB[j] = inA[k];
    if (!(s = runA.run(ga, inA, outA)).ok())
      return fail(args.modelA + ": " + s.message());
    if (!(s = runB.run(gb, inB, outB)).ok())
      return fail(args.modelB + ": " + s.message());
    for (size_t i = 0; i < outA.size(); ++i) {
      rt::Comparison c = rt::compareValues(outB[i], outA[i], args.rtol, args.atol);
      Worst &w = worst[i];
      w.abs = std::max(w.abs, c.maxAbsDiff);
      w.rel = std::max(w.rel, c.maxRelDiff);
      if (!c.ok) {
        w.mismatches += std::max<int64_t>(c.mismatches, 1);
        if (w.message.empty())
          w.message = "sample " + std::to_string(sample) + ": " + c.message;
      }
    }
  }
  bool ok = true;
  std::printf("%-32s %14s %14s  %s\n", "output", "max abs diff", "max rel diff", "result");
  for (size_t i = 0; i < worst.size(); ++i) {
    const Worst &w = worst[i];
    ok &= w.mismatches == 0;
    std::printf("%-32s %14.4g %14.4g  %s%s\n", ga.output(i)->name().c_str(), w.abs, w.rel,
                w.mismatches ? "MISMATCH: " : "ok", w.message.c_str());
  }
  std::printf("%s: %d sample(s), rtol %g, atol %g\n", ok ? "equivalent" : "NOT equivalent", args.samples,
              args.rtol, args.atol);
  return ok ? 0 : 1;
}

} // namespace onnxslim::tools

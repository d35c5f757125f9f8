//===- transforms/Float16Fallback.cpp - float32 where float16 is not enough ===//
//
// Each trial converts a copy of the model with convert-float-type{to=float16
// (or bfloat16) keep-node=...} in a quiet pass manager of its own (no
// printing, no check) and compares it with the float32 model's recorded
// outputs, within the tolerance of the destination type (runtime/Compare.h).
//
//===----------------------------------------------------------------------===//
#include "transforms/Float16Fallback.h"

#include "ir/IR.h"
#include "runtime/Compare.h"
#include "transforms/Clone.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace onnxslim {

namespace {

/// A stream that drops everything (the trials' pass managers print nothing).
std::ostream &nullStream() {
  static thread_local std::ostream sink(nullptr);
  sink.clear();
  return sink;
}

/// The main-graph nodes whose float16 rounding changes a decision rather
/// than a value: float comparisons (Equal, Less, Greater...), ArgMax/ArgMin
/// and TopK, with the chain of nodes computing their float operands back to
/// and including the nearest node with a weight (a float initializer of more
/// than one element: Conv, MatMul...). A peak mask Equal(MaxPool(s), s) finds
/// two peaks where two neighbours of s round to the same float16.
std::vector<Node *> decisionChains(Graph &graph) {
  static constexpr std::string_view kDecisions[] = {"ArgMax", "ArgMin", "Equal", "Greater", "GreaterOrEqual",
                                                    "Less", "LessOrEqual", "TopK"};
  auto isFloat = [](const Value *v) {
    return v && v->type() && v->type()->isTensor() && v->type()->elemType() == DataType::Float;
  };
  auto isDecision = [](const Node *n) {
    return n->isDefaultDomain() &&
           std::find(std::begin(kDecisions), std::end(kDecisions), n->opType()) != std::end(kDecisions);
  };
  std::unordered_set<Node *> kept;
  std::vector<Node *> work;
  for (Node *n : graph.nodes())
    if (isDecision(n))
      for (Value *v : n->operands())
        if (isFloat(v) && kept.insert(n).second)
          work.push_back(n);
  while (!work.empty()) {
    Node *n = work.back();
    work.pop_back();
    bool weighted = false;
    for (Value *v : n->operands())
      weighted = weighted || (v && v->initializer() && v->initializer()->dtype() == DataType::Float &&
                              v->initializer()->numElements() > 1);
    if (weighted && !isDecision(n))
      continue; // the nearest weight: kept, not walked past
    for (Value *v : n->operands())
      if (Node *def = v ? v->definingNode() : nullptr; def && isFloat(v) && def->graph() == &graph &&
                                                       kept.insert(def).second)
        work.push_back(def);
  }
  std::vector<Node *> out;
  for (Node *n : graph.nodes())
    if (kept.count(n))
      out.push_back(n);
  return out;
}

/// Beyond this magnitude a float32 value is kept out of float16 (its
/// largest finite value is 65504): half of it, so that the rounding of a
/// float16 computation near the bound does not overflow either.
constexpr double kFloat16Headroom = 65504.0 / 2;

/// The main-graph nodes that compute or read a float32 value whose
/// magnitude, on the model check's first input sample, leaves float16's
/// range (a finite value past kFloat16Headroom): what float16 would turn
/// into inf. Found by running a copy of the model with every float32 node
/// result as an output. Empty when that copy does not run.
std::vector<Node *> overflowingNodes(Model &model, const ModelCheckOptions &check) {
  Graph &graph = *model.graph();
  std::vector<Value *> probed;
  std::unordered_set<const Value *> outputs;
  for (size_t i = 0; i < graph.numOutputs(); ++i)
    outputs.insert(graph.output(i));
  for (Node *n : graph.nodes())
    for (Value *r : n->results())
      if (r && !outputs.count(r) && r->type() && r->type()->isTensor() &&
          r->type()->elemType() == DataType::Float)
        probed.push_back(r);
  if (probed.empty())
    return {};
  // The copy's values are found again by name (cloneModel keeps names).
  std::unique_ptr<Model> probe = cloneModel(model);
  if (!probe)
    return {};
  std::unordered_map<std::string, Value *> byName;
  for (Node *n : probe->graph()->nodes())
    for (Value *r : n->results())
      if (r)
        byName.emplace(r->name(), r);
  size_t first = probe->graph()->numOutputs();
  for (Value *v : probed) {
    auto it = byName.find(v->name());
    if (it == byName.end())
      return {};
    probe->graph()->addOutput(it->second, it->second->type());
  }
  std::unique_ptr<OutputChecker> run = createRuntimeOutputChecker(check);
  std::string error;
  if (!run->recordReference(*probe, error))
    return {};
  std::vector<std::shared_ptr<const Tensor>> values = run->referenceOutputs();
  std::unordered_set<Node *> kept;
  for (size_t i = 0; i < probed.size() && first + i < values.size(); ++i) {
    const Tensor *t = values[first + i].get();
    if (!t || t->dtype() != DataType::Float)
      continue;
    const float *x = t->dataAs<float>();
    bool beyond = false;
    for (int64_t k = 0, n = t->numElements(); k < n && !beyond; ++k)
      beyond = std::isfinite(x[k]) && std::fabs(static_cast<double>(x[k])) > kFloat16Headroom;
    if (!beyond)
      continue;
    // Computed in float32, and read in float32 by every node using it.
    kept.insert(probed[i]->definingNode());
    for (const Use *u : probed[i]->uses())
      if (!u->isGraphOutput() && u->owner()->graph() == &graph)
        kept.insert(u->owner());
  }
  std::vector<Node *> out;
  for (Node *n : graph.nodes())
    if (kept.count(n))
      out.push_back(n);
  return out;
}

} // namespace

Float16Fallback float16Fallback(Model &model, const PassRegistry &registry, const ModelCheckOptions &check,
                                std::ostream &log, DataType to) {
  Float16Fallback result;
  const std::string type = dataTypeName(to); // "float16" or "bfloat16"
  const std::string tolerance = rt::describe(rt::toleranceFor(to));
  auto warn = [&](std::string message) {
    log << "onnxslim: warning: " << message << "\n";
    result.warnings.push_back(std::move(message));
  };
  std::unique_ptr<OutputChecker> checker = createRuntimeOutputChecker(check);
  std::string error;
  if (!checker->recordReference(model, error)) {
    warn(type + " accuracy not checked: the model does not run in the interpreter: " + error);
    return result;
  }
  std::vector<std::string> chains, prefix;
  // Given a prefix length, Result: whether keeping the chains and the
  // prefix brings the converted copy's outputs within tolerance (`why`
  // says how far they are otherwise).
  auto within = [&](size_t length, std::string &why) {
    std::unique_ptr<Model> copy = cloneModel(model);
    PassManagerOptions quiet; // no printing, no check of its own
    quiet.log = &nullStream();
    PassManager pm(registry, quiet);
    std::vector<std::string> keep = chains;
    keep.insert(keep.end(), prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(length));
    pm.addPass(createConvertFloatTypePass(type, /*keepIOTypes=*/true, keep));
    pm.setMaxRounds(1);
    std::string err;
    return pm.run(*copy, err) && checker->matchesReference(*copy, why);
  };
  std::string why;
  result.compared = true;
  if (within(0, why))
    return result;
  std::vector<Node *> named; // unnamed nodes named for the search
  auto nameOf = [&](Node *n) {
    if (n->name().empty()) {
      n->setName(model.names().fresh(n->opType()));
      named.push_back(n);
    }
    return n->name();
  };
  // Values float16 cannot hold (beyond what the conversion's own rule for
  // constants sees) stay float32 first: where that is all it takes,
  // nothing else is kept.
  std::vector<Node *> overflowing = to == DataType::Float16 ? overflowingNodes(model, check) : std::vector<Node *>{};
  for (Node *n : overflowing)
    chains.push_back(nameOf(n));
  if (!overflowing.empty() && within(0, why)) {
    warn(std::to_string(overflowing.size()) + " node(s) compute or read values beyond " + type +
         "'s range on the model check's inputs (past +-" + std::to_string(static_cast<int>(kFloat16Headroom)) +
         ", half its largest): kept in float32");
    result.keepNodes = chains;
    return result;
  }
  for (Node *n : decisionChains(*model.graph()))
    chains.push_back(nameOf(n));
  for (Node *n : model.graph()->nodes())
    prefix.push_back(nameOf(n));
  std::string allWhy;
  if (!within(prefix.size(), allWhy)) {
    warn(type + " outputs differ beyond " + type + "'s tolerance (" + tolerance +
         ") even with every node kept in float32:\n" + allWhy);
    result.compared = false;
    for (Node *n : named)
      n->setName("");
    return result;
  }
  size_t lo = 0, hi = prefix.size(); // within(hi) holds; within(lo) does not, or lo is 0
  std::string ignored;
  if (within(0, ignored))
    hi = 0;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    (within(mid, ignored) ? hi : lo) = mid;
  }
  warn(type + " outputs differ beyond " + type + "'s tolerance (" + tolerance + "):\n" + why +
       "float32 kept for " + std::to_string(chains.size()) + " node(s) deciding comparisons" +
       (to == DataType::Float16 ? " or computing beyond float16's range" : "") + ", and the first " +
       std::to_string(hi) + " of " + std::to_string(prefix.size()) + " nodes");
  prefix.resize(hi);
  chains.insert(chains.end(), prefix.begin(), prefix.end());
  std::unordered_set<std::string> keep(chains.begin(), chains.end());
  for (Node *n : named)
    if (!keep.count(n->name()))
      n->setName(""); // not kept: as it was
  result.keepNodes = std::move(chains);
  return result;
}

} // namespace onnxslim

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
#include <iterator>
#include <string_view>
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
       "float32 kept for " + std::to_string(chains.size()) + " node(s) deciding comparisons and the first " +
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

//===- ir/Verifier.cpp - IR invariant checker -----------------------------===//
#include "ir/Verifier.h"

#include "ir/IR.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace onnxslim {

namespace {

class Verifier {
public:
  explicit Verifier(size_t maxErrors) : maxErrors_(maxErrors) {}

  void verifyGraph(const Graph &g, const std::string &path) {
    scopes_.emplace_back();
    auto &scope = scopes_.back();
    std::unordered_set<std::string> names;
    auto define = [&](const Value *v, const std::string &where) {
      if (!v)
        return;
      scope.insert(v);
      checkUseList(v, where);
      if (!v->name().empty() && !names.insert(v->name()).second)
        error(path, "value name '" + v->name() + "' is defined twice (" + where + ")");
    };

    for (const Value *v : g.inputs()) {
      if (v->defKind() != Value::DefKind::GraphInput || v->graph() != &g)
        error(path, "graph input '" + v->name() + "' is not defined by this graph");
      define(v, "graph input");
    }
    for (const Value *v : g.initializers()) {
      if (v->defKind() == Value::DefKind::GraphInput) {
        if (!scope.count(v))
          error(path, "initializer '" + v->name() + "' marked as input but not in the input list");
        continue;
      }
      if (v->defKind() != Value::DefKind::Initializer || v->graph() != &g)
        error(path, "initializer '" + v->name() + "' is not defined by this graph");
      define(v, "initializer");
    }
    for (const Value *v : g.sparseInitializers())
      define(v, "sparse initializer");

    // Node list links.
    size_t count = 0;
    const Node *prev = nullptr;
    for (const Node *n : g.nodes()) {
      ++count;
      if (n->prev() != prev)
        error(path, "node list is corrupt before " + describe(n));
      if (n->graph() != &g)
        error(path, describe(n) + " points at another graph");
      prev = n;
    }
    if (prev != g.lastNode() || count != g.numNodes())
      error(path, "node list end or size is corrupt");

    for (const Node *n : g.nodes()) {
      for (size_t i = 0; i < n->numOperands(); ++i) {
        const Use &u = n->operandUses()[i];
        if (u.owner() != n || u.index() != i || u.ownerGraph())
          error(path, describe(n) + " operand " + std::to_string(i) + " has a wrong owner or index");
        const Value *v = u.get();
        if (v)
          ++slotRefs_[v];
        if (v && !visible(v))
          error(path, describe(n) + " operand " + std::to_string(i) + " '" + v->name() +
                          "' is not defined before it in scope (topological order or scoping)");
      }
      for (const Attribute &a : n->attributes())
        for (const Graph *sg : a.subgraphs()) {
          if (sg->parentNode() != n)
            error(path, describe(n) + " attribute '" + a.name + "' owns a graph whose parent is another node");
          verifyGraph(*sg, path + "/" + describe(n) + "." + a.name);
        }
      for (size_t i = 0; i < n->numResults(); ++i) {
        const Value *r = n->result(i);
        if (!r)
          continue;
        if (r->definingNode() != n || r->resultNumber() != i)
          error(path, describe(n) + " result " + std::to_string(i) + " is not defined by it");
        define(r, describe(n) + " result");
      }
    }

    for (size_t i = 0; i < g.numOutputs(); ++i) {
      const GraphOutput &o = g.outputSlots()[i];
      if (o.use.ownerGraph() != &g || o.use.index() != i || o.use.owner())
        error(path, "graph output " + std::to_string(i) + " has a wrong owner or index");
      if (o.use.get())
        ++slotRefs_[o.use.get()];
      if (!o.use.get())
        error(path, "graph output " + std::to_string(i) + " reads no value");
      else if (!visible(o.use.get()))
        error(path, "graph output '" + o.use.get()->name() + "' is not defined in scope");
    }
    scopes_.pop_back();
  }

  /// After every graph: each value's use list must hold exactly the slots
  /// that read it (a slot reading a value but missing from its list is caught here).
  void checkSlotCounts() {
    for (const auto &[v, listed] : listLength_) {
      auto it = slotRefs_.find(v);
      size_t slots = it == slotRefs_.end() ? 0 : it->second;
      if (slots != listed)
        error("", "value '" + v->name() + "' is read by " + std::to_string(slots) +
                      " operand slots but " + std::to_string(listed) + " are in the use list");
    }
    for (const auto &[v, slots] : slotRefs_)
      if (!listLength_.count(v))
        error("", "an operand reads '" + v->name() + "', which is defined nowhere in the model");
  }

  std::vector<std::string> take() { return std::move(errors_); }

private:
  static std::string describe(const Node *n) {
    std::string s = n->opType();
    if (!n->name().empty())
      s += " '" + n->name() + "'";
    return s;
  }

  bool visible(const Value *v) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->count(v))
        return true;
    return false;
  }

  // Every list entry must be a slot holding `v` whose owner lists it there.
  void checkUseList(const Value *v, const std::string &where) {
    size_t steps = 0;
    size_t &listed = listLength_[v];
    for (const Use *u = v->uses().first; u; u = u->next()) {
      ++listed;
      if (++steps > 100000000) {
        error("", "use list of '" + v->name() + "' is cyclic");
        return;
      }
      bool ok = u->get() == v;
      if (ok && u->owner())
        ok = u->index() < u->owner()->numOperands() && &u->owner()->operandUses()[u->index()] == u;
      else if (ok && u->ownerGraph())
        ok = u->index() < u->ownerGraph()->numOutputs() &&
             &u->ownerGraph()->outputSlots()[u->index()].use == u;
      else
        ok = false;
      if (!ok)
        error("", "use list of '" + v->name() + "' (" + where + ") holds a use that is not its operand slot");
    }
  }

  void error(const std::string &path, const std::string &msg) {
    if (errors_.size() < maxErrors_)
      errors_.push_back(path.empty() ? msg : path + ": " + msg);
  }

  size_t maxErrors_;
  std::deque<std::unordered_set<const Value *>> scopes_; // deque: references survive growth
  std::unordered_map<const Value *, size_t> listLength_;
  std::unordered_map<const Value *, size_t> slotRefs_;
  std::vector<std::string> errors_;
};

} // namespace

std::vector<std::string> verify(const Graph &graph, size_t maxErrors) {
  Verifier v(maxErrors);
  v.verifyGraph(graph, graph.name.empty() ? "graph" : graph.name);
  if (!graph.parentNode())
    v.checkSlotCounts();
  return v.take();
}

std::vector<std::string> verify(const Model &model, size_t maxErrors) {
  Verifier v(maxErrors);
  if (model.graph())
    v.verifyGraph(*model.graph(), model.graph()->name.empty() ? "graph" : model.graph()->name);
  for (const auto &f : model.functions)
    if (f->body)
      v.verifyGraph(*f->body, "function " + f->domain + "." + f->name);
  v.checkSlotCounts();
  return v.take();
}

} // namespace onnxslim

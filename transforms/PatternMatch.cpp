//===- transforms/PatternMatch.cpp - Patterns and the rewriter -------------===//
#include "transforms/PatternMatch.h"

#include "transforms/Pass.h"
#include "transforms/ValueUtils.h"

#include <cassert>
#include <ostream>

namespace onnxslim {

//===----------------------------------------------------------------------===//
// Pattern, PatternSet
//===----------------------------------------------------------------------===//

Pattern::~Pattern() = default;

namespace {
bool isDefaultDomainName(std::string_view d) { return d.empty() || d == "ai.onnx"; }
} // namespace

bool Pattern::matchesRoot(const Node &node) const {
  if (!rootOp_.empty() && node.opType() != rootOp_)
    return false;
  if (isDefaultDomainName(rootDomain_))
    return node.isDefaultDomain();
  return node.domain() == rootDomain_;
}

void PatternSet::add(std::unique_ptr<Pattern> pattern) {
  const Pattern *p = pattern.get();
  mergedCache_.clear();
  patterns_.push_back(std::move(pattern));
  if (p->rootOp().empty())
    anyOp_.push_back(p);
  else
    byOp_[p->rootOp()].push_back(p);
}

const std::vector<const Pattern *> &PatternSet::patternsFor(const Node &node) const {
  static const std::vector<const Pattern *> kNone;
  if (!anyOp_.empty() && byOp_.empty())
    return anyOp_;
  auto it = byOp_.find(node.opType());
  if (it == byOp_.end())
    return anyOp_.empty() ? kNone : anyOp_;
  if (anyOp_.empty())
    return it->second;
  // Rare (a set mixing rooted and catch-all patterns): a per-op merged list,
  // built once.
  auto merged = mergedCache_.find(node.opType());
  if (merged == mergedCache_.end()) {
    std::vector<const Pattern *> all = it->second;
    all.insert(all.end(), anyOp_.begin(), anyOp_.end());
    merged = mergedCache_.emplace(node.opType(), std::move(all)).first;
  }
  return merged->second;
}

RewriteListener::~RewriteListener() = default;

//===----------------------------------------------------------------------===//
// Rewriter
//===----------------------------------------------------------------------===//

std::string nodeLabel(const Node &node) {
  std::string s;
  if (!node.isDefaultDomain())
    s = node.domain() + ".";
  s += node.opType();
  if (!node.name().empty())
    return s + " '" + node.name() + "'";
  for (size_t i = 0; i < node.numResults(); ++i)
    if (Value *r = node.result(i))
      return s + " (-> " + r->name() + ")";
  return s;
}

Rewriter::Rewriter(PassContext &context, RewriteListener *listener)
    : context_(context), listener_(listener) {}

std::string Rewriter::freshName(Graph &graph, std::string_view base) {
  if (Model *m = graph.model())
    return m->names().fresh(base);
  // A free-standing graph (tests): no name table to consult.
  return std::string(base) + "__" + std::to_string(++freshCounter_);
}

Node *Rewriter::insertCreated(Node *pos, bool before, std::string opType,
                              const std::vector<Value *> &operands,
                              const std::vector<std::string> &resultNameBases, std::string domain) {
  Graph &graph = *pos->graph();
  std::vector<std::string> names;
  names.reserve(resultNameBases.size());
  for (const std::string &base : resultNameBases)
    names.push_back(base.empty() ? std::string() : freshName(graph, base));
  Node *node = graph.createNode(std::move(opType), operands, names, std::move(domain));
  if (before)
    graph.insertBefore(pos, node);
  else
    graph.insertAfter(pos, node);
  noteChange();
  if (listener_)
    listener_->notifyNodeInserted(node);
  return node;
}

Node *Rewriter::createNodeBefore(Node *pos, std::string opType, const std::vector<Value *> &operands,
                                 const std::vector<std::string> &resultNameBases, std::string domain) {
  return insertCreated(pos, true, std::move(opType), operands, resultNameBases, std::move(domain));
}

Node *Rewriter::createNodeAfter(Node *pos, std::string opType, const std::vector<Value *> &operands,
                                const std::vector<std::string> &resultNameBases, std::string domain) {
  return insertCreated(pos, false, std::move(opType), operands, resultNameBases, std::move(domain));
}

void Rewriter::replaceAllUsesWith(Value *from, Value *to) {
  replaceUsesWithIf(from, to, [](const Use &) { return true; });
}

size_t Rewriter::replaceUsesWithIf(Value *from, Value *to,
                                   const std::function<bool(const Use &)> &pred) {
  assert(from != to && "replacing a value with itself");
  size_t moved = 0;
  for (Use *u = from->uses().first; u;) {
    Use *next = u->next();
    if (pred(*u)) {
      Node *owner = u->owner();
      u->set(to);
      ++moved;
      notifyModified(owner);
    }
    u = next;
  }
  if (moved) {
    noteChange();
    notifyDropped(from);
  }
  return moved;
}

size_t Rewriter::replaceNodeUsesWith(Value *from, Value *to) {
  return replaceUsesWithIf(from, to, [](const Use &u) { return !u.isGraphOutput(); });
}

void Rewriter::replaceNode(Node *node, const std::vector<Value *> &replacements) {
  for (size_t i = 0; i < node->numResults() && i < replacements.size(); ++i)
    if (Value *r = node->result(i); r && replacements[i] && r->hasUses())
      replaceAllUsesWith(r, replacements[i]);
  eraseNode(node);
}

namespace {
void collectNested(const Node *node, std::vector<Node *> &out) {
  if (!hasSubgraphs(*node))
    return;
  for (Graph *g : node->subgraphs())
    for (Node *n : g->nodes()) {
      out.push_back(n);
      collectNested(n, out);
    }
}
} // namespace

void Rewriter::eraseNode(Node *node) {
  assert(node->resultsUnused() && "erasing a node whose results are still used");
  if (listener_) {
    std::vector<Node *> doomed;
    collectNested(node, doomed);
    doomed.push_back(node);
    // Producers first (they may be queued again), then null every doomed node.
    for (Node *n : doomed) {
      for (const Use &u : n->operandUses())
        notifyDropped(u.get());
      if (hasSubgraphs(*n))
        for (Graph *g : n->subgraphs())
          for (Value *v : g->outputs())
            notifyDropped(v);
    }
    for (Node *n : doomed)
      listener_->notifyNodeErased(n);
  }
  node->erase();
  noteChange();
}

void Rewriter::setOperand(Node *node, size_t index, Value *value) {
  Value *old = node->operand(index);
  if (old == value)
    return;
  node->setOperand(index, value);
  noteChange();
  notifyModified(node);
  notifyDropped(old);
}

void Rewriter::resizeOperands(Node *node, size_t count) {
  if (node->numOperands() == count)
    return;
  std::vector<Value *> dropped;
  for (size_t i = count; i < node->numOperands(); ++i)
    dropped.push_back(node->operand(i));
  node->resizeOperands(count);
  noteChange();
  notifyModified(node);
  for (Value *v : dropped)
    notifyDropped(v);
}

void Rewriter::dropResult(Node *node, size_t index) {
  if (!node->result(index))
    return;
  assert(!node->result(index)->hasUses() && "dropping a used result");
  if (listener_)
    for (Use *u = node->result(index)->uses().first; u; u = u->next())
      notifyModified(u->owner());
  node->dropResult(index);
  noteChange();
  notifyModified(node);
}

void Rewriter::eraseResult(Node *node, size_t index) {
  assert((!node->result(index) || !node->result(index)->hasUses()) && "erasing a used result");
  node->eraseResult(index);
  noteChange();
  notifyModified(node);
}

void Rewriter::eraseOperand(Node *node, size_t index) {
  Value *old = node->operand(index);
  node->eraseOperand(index);
  noteChange();
  notifyModified(node);
  notifyDropped(old);
}

void Rewriter::eraseGraphOutput(Graph &graph, size_t index) {
  Value *old = graph.output(index);
  graph.eraseOutput(index);
  noteChange();
  notifyDropped(old);
}

void Rewriter::modifyNodeInPlace(Node *node, const std::function<void()> &fn) {
  fn();
  noteChange();
  notifyModified(node);
}

void Rewriter::renameValue(Value *value, std::string name) {
  if (value->name() == name)
    return;
  value->setName(std::move(name));
  noteChange();
}

Value *Rewriter::addInitializer(Graph &graph, std::string_view nameBase, TensorPtr tensor) {
  Value *v = graph.addInitializer(freshName(graph, nameBase), std::move(tensor));
  noteChange();
  return v;
}

size_t Rewriter::eraseUnusedInitializersIf(Graph &graph, const std::function<bool(Value *)> &pred) {
  size_t n = graph.eraseInitializersIf(pred);
  if (n)
    noteChange();
  return n;
}

void Rewriter::eraseGraphInput(Graph &graph, Value *input) {
  graph.eraseInput(input);
  noteChange();
}

bool Rewriter::debugEnabled() const { return context_.isDebugEnabled(pattern_); }

namespace {
void debugLine(PassContext &ctx, const std::string &pattern, const Node *node, std::string_view verb,
               std::string_view what) {
  std::ostream &os = ctx.debugStream();
  os << "[" << ctx.currentPass() << "] ";
  if (!pattern.empty() && pattern != ctx.currentPass())
    os << pattern << ": ";
  if (node)
    os << nodeLabel(*node) << ": ";
  os << verb << what << "\n";
}
} // namespace

bool Rewriter::notifyMatchFailure(const Node *node, std::string_view reason) {
  if (debugEnabled())
    debugLine(context_, pattern_, node, "declined: ", reason);
  return false;
}

void Rewriter::notifyRewrite(const Node *node, std::string_view what) {
  if (debugEnabled())
    debugLine(context_, pattern_, node, "", what);
}

} // namespace onnxslim

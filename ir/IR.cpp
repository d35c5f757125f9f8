//===- ir/IR.cpp - The onnxslim SSA IR ------------------------------------===//
#include "ir/IR.h"

#include <algorithm>

namespace onnxslim {

//===----------------------------------------------------------------------===//
// Use
//===----------------------------------------------------------------------===//

void Use::link(Value *v) {
  value_ = v;
  if (!v)
    return;
  next_ = v->firstUse_;
  if (next_)
    next_->back_ = &next_;
  back_ = &v->firstUse_;
  v->firstUse_ = this;
}

void Use::unlink() {
  if (!value_)
    return;
  *back_ = next_;
  if (next_)
    next_->back_ = back_;
  value_ = nullptr;
  next_ = nullptr;
  back_ = nullptr;
}

void Use::takeLinkFrom(Use &other) {
  value_ = other.value_;
  next_ = other.next_;
  back_ = other.back_;
  if (value_) {
    *back_ = this;
    if (next_)
      next_->back_ = &next_;
  }
  other.value_ = nullptr;
  other.next_ = nullptr;
  other.back_ = nullptr;
}

Use::Use(Use &&other) noexcept : owner_(other.owner_), graph_(other.graph_), index_(other.index_) {
  takeLinkFrom(other);
}

Use &Use::operator=(Use &&other) noexcept {
  if (this != &other) {
    unlink();
    owner_ = other.owner_;
    graph_ = other.graph_;
    index_ = other.index_;
    takeLinkFrom(other);
  }
  return *this;
}

void Use::set(Value *v) {
  if (v == value_)
    return;
  unlink();
  link(v);
}

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

Value::~Value() {
  assert(!firstUse_ && "destroying a value that still has uses");
  // Release mode: detach remaining uses so they do not dangle.
  while (firstUse_)
    firstUse_->unlink();
}

void Value::setName(std::string name) {
  if (Graph *g = graph())
    if (Model *m = g->model())
      m->names().reserve(name);
  name_ = std::move(name);
}

Graph *Value::graph() const { return def_ == DefKind::NodeResult ? (node_ ? node_->graph() : nullptr) : graph_; }

size_t Value::useCount() const {
  size_t n = 0;
  for (Use *u = firstUse_; u; u = u->next())
    ++n;
  return n;
}

std::vector<Node *> Value::users() const {
  std::vector<Node *> out;
  for (Use *u = firstUse_; u; u = u->next())
    if (Node *n = u->owner(); n && std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
  return out;
}

bool Value::isGraphOutput() const {
  for (Use *u = firstUse_; u; u = u->next())
    if (u->isGraphOutput())
      return true;
  return false;
}

void Value::replaceAllUsesWith(Value *v) {
  assert(v != this && "replacing a value with itself");
  while (firstUse_)
    firstUse_->set(v);
}

void Value::replaceUsesWithIf(Value *v, const std::function<bool(Use &)> &pred) {
  for (Use *u = firstUse_; u;) {
    Use *next = u->next();
    if (pred(*u))
      u->set(v);
    u = next;
  }
}

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

Node::~Node() {
  // Operand uses unlink themselves. Results must be unused by now; subgraphs
  // (owned by attributes) are destroyed before the results they might use.
  attrs_.clear();
  operands_.clear();
}

std::vector<Value *> Node::operands() const {
  std::vector<Value *> out;
  out.reserve(operands_.size());
  for (const Use &u : operands_)
    out.push_back(u.get());
  return out;
}

void Node::setOperand(size_t i, Value *v) { operands_.at(i).set(v); }

void Node::addOperand(Value *v) {
  operands_.emplace_back(this, nullptr, static_cast<unsigned>(operands_.size()));
  operands_.back().set(v);
}

void Node::reindexOperands(size_t from) {
  for (size_t i = from; i < operands_.size(); ++i)
    operands_[i].index_ = static_cast<unsigned>(i);
}

void Node::eraseOperand(size_t i) {
  operands_.erase(operands_.begin() + static_cast<std::ptrdiff_t>(i));
  reindexOperands(i);
}

void Node::resizeOperands(size_t n) {
  while (operands_.size() > n)
    operands_.pop_back();
  while (operands_.size() < n)
    addOperand(nullptr);
}

std::vector<Value *> Node::results() const {
  std::vector<Value *> out;
  out.reserve(results_.size());
  for (const auto &r : results_)
    out.push_back(r.get());
  return out;
}

Value *Node::addResult(std::string name) {
  auto v = std::unique_ptr<Value>(new Value(std::move(name), Value::DefKind::NodeResult));
  v->node_ = this;
  v->resultNo_ = static_cast<unsigned>(results_.size());
  if (graph_)
    if (Model *m = graph_->model())
      m->names().reserve(v->name_);
  results_.push_back(std::move(v));
  return results_.back().get();
}

void Node::dropResult(size_t i) {
  assert(results_.at(i) == nullptr || !results_[i]->hasUses());
  results_.at(i).reset();
}

void Node::eraseResult(size_t i) {
  assert(results_.at(i) == nullptr || !results_[i]->hasUses());
  results_.erase(results_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t j = i; j < results_.size(); ++j)
    if (results_[j])
      results_[j]->resultNo_ = static_cast<unsigned>(j);
}

void Node::trimResults() {
  while (!results_.empty() && !results_.back())
    results_.pop_back();
}

const Attribute *Node::attr(std::string_view name) const {
  for (const Attribute &a : attrs_)
    if (a.name == name)
      return &a;
  return nullptr;
}

Attribute *Node::attr(std::string_view name) {
  for (Attribute &a : attrs_)
    if (a.name == name)
      return &a;
  return nullptr;
}

int64_t Node::attrInt(std::string_view name, int64_t dflt) const {
  const Attribute *a = attr(name);
  return a && a->kind == AttrKind::Int ? a->i : dflt;
}

float Node::attrFloat(std::string_view name, float dflt) const {
  const Attribute *a = attr(name);
  return a && a->kind == AttrKind::Float ? a->f : dflt;
}

std::string Node::attrString(std::string_view name, std::string dflt) const {
  const Attribute *a = attr(name);
  return a && a->kind == AttrKind::String ? a->s : dflt;
}

std::vector<int64_t> Node::attrInts(std::string_view name, std::vector<int64_t> dflt) const {
  const Attribute *a = attr(name);
  return a && a->kind == AttrKind::Ints ? a->ints : dflt;
}

void Node::setAttr(Attribute a) {
  for (Graph *g : a.subgraphs())
    g->setParentNode(this);
  for (Attribute &old : attrs_)
    if (old.name == a.name) {
      old = std::move(a);
      return;
    }
  attrs_.push_back(std::move(a));
}

bool Node::removeAttr(std::string_view name) {
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const Attribute &a) { return a.name == name; });
  if (it == attrs_.end())
    return false;
  attrs_.erase(it);
  return true;
}

std::vector<Graph *> Node::subgraphs() const {
  std::vector<Graph *> out;
  for (const Attribute &a : attrs_)
    for (Graph *g : a.subgraphs())
      out.push_back(g);
  return out;
}

void Node::moveBefore(Node *pos) {
  assert(pos && pos->graph_ == graph_ && pos != this);
  graph_->unlink(this);
  graph_->link(pos, this, /*before=*/true);
}

void Node::moveAfter(Node *pos) {
  assert(pos && pos->graph_ == graph_ && pos != this);
  graph_->unlink(this);
  graph_->link(pos, this, /*before=*/false);
}

bool Node::resultsUnused() const {
  for (const auto &r : results_)
    if (r && r->hasUses())
      return false;
  return true;
}

void Node::erase() {
  assert(resultsUnused() && "erasing a node whose results are still used");
  if (inList_)
    graph_->unlink(this);
  delete this;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

Graph::~Graph() {
  // Outputs first, then nodes in reverse order (users before producers), then
  // leaf values, so no value is destroyed while a use still points at it.
  outputs_.clear();
  for (Node *n = last_; n;) {
    Node *prev = n->prev_;
    // Uses from later nodes are gone; drop any remaining (subgraph) uses.
    for (auto &r : n->results_)
      if (r)
        while (r->firstUse_)
          r->firstUse_->unlink();
    delete n;
    n = prev;
  }
  for (auto &leaf : leaves_)
    if (leaf)
      while (leaf->firstUse_)
        leaf->firstUse_->unlink();
  leaves_.clear();
}

Graph *Graph::parentGraph() const { return parentNode_ ? parentNode_->graph() : nullptr; }

Model *Graph::model() const {
  const Graph *g = this;
  while (g->parentNode_ && g->parentNode_->graph())
    g = g->parentNode_->graph();
  return g->model_;
}

bool Graph::isInScope(const Value *v) const {
  const Graph *vg = v ? v->graph() : nullptr;
  for (const Graph *g = this; g; g = g->parentGraph())
    if (g == vg)
      return true;
  return false;
}

Node *Graph::createNode(std::string opType, const std::vector<Value *> &operands,
                        const std::vector<std::string> &resultNames, std::string domain) {
  Node *n = new Node(this, std::move(opType), std::move(domain));
  n->operands_.reserve(operands.size());
  for (Value *v : operands)
    n->addOperand(v);
  for (const std::string &name : resultNames) {
    if (name.empty())
      n->addAbsentResult();
    else
      n->addResult(name);
  }
  return n;
}

void Graph::link(Node *pos, Node *n, bool before) {
  assert(!n->inList_ && n->graph_ == this);
  if (!pos) {
    // Append at the end.
    n->prev_ = last_;
    n->next_ = nullptr;
    if (last_)
      last_->next_ = n;
    else
      first_ = n;
    last_ = n;
  } else if (before) {
    n->next_ = pos;
    n->prev_ = pos->prev_;
    if (pos->prev_)
      pos->prev_->next_ = n;
    else
      first_ = n;
    pos->prev_ = n;
  } else {
    n->prev_ = pos;
    n->next_ = pos->next_;
    if (pos->next_)
      pos->next_->prev_ = n;
    else
      last_ = n;
    pos->next_ = n;
  }
  n->inList_ = true;
  ++numNodes_;
}

void Graph::unlink(Node *n) {
  assert(n->inList_ && n->graph_ == this);
  if (n->prev_)
    n->prev_->next_ = n->next_;
  else
    first_ = n->next_;
  if (n->next_)
    n->next_->prev_ = n->prev_;
  else
    last_ = n->prev_;
  n->prev_ = n->next_ = nullptr;
  n->inList_ = false;
  --numNodes_;
}

Node *Graph::append(Node *n) {
  link(nullptr, n, false);
  return n;
}

Node *Graph::insertBefore(Node *pos, Node *n) {
  link(pos, n, true);
  return n;
}

Node *Graph::insertAfter(Node *pos, Node *n) {
  link(pos, n, false);
  return n;
}

Value *Graph::newLeaf(std::string name, Value::DefKind kind) {
  auto v = std::unique_ptr<Value>(new Value(std::move(name), kind));
  v->graph_ = this;
  v->slot_ = leaves_.size();
  if (Model *m = model())
    m->names().reserve(v->name_);
  leaves_.push_back(std::move(v));
  return leaves_.back().get();
}

void Graph::destroyLeaf(Value *v) {
  assert(v->graph_ == this && leaves_[v->slot_].get() == v);
  size_t slot = v->slot_;
  if (slot + 1 != leaves_.size()) {
    leaves_[slot] = std::move(leaves_.back());
    leaves_[slot]->slot_ = slot;
  }
  leaves_.pop_back();
}

Value *Graph::addInput(std::string name, std::optional<Type> type) {
  Value *v = newLeaf(std::move(name), Value::DefKind::GraphInput);
  v->type_ = std::move(type);
  inputs_.push_back(v);
  return v;
}

Value *Graph::addInitializer(std::string name, TensorPtr tensor) {
  Value *v = newLeaf(std::move(name), Value::DefKind::Initializer);
  if (tensor) {
    Shape shape;
    for (int64_t d : tensor->dims())
      shape.push_back(Dim::value(d));
    v->type_ = Type::tensor(tensor->dtype(), std::move(shape));
  }
  v->initializer_ = std::move(tensor);
  initializers_.push_back(v);
  return v;
}

void Graph::addInitializerToInput(Value *input, TensorPtr tensor) {
  assert(input->def_ == Value::DefKind::GraphInput && input->graph_ == this);
  input->initializer_ = std::move(tensor);
  initializers_.push_back(input);
}

Value *Graph::addSparseInitializer(std::string name, std::shared_ptr<const SparseTensor> t) {
  Value *v = newLeaf(std::move(name), Value::DefKind::Initializer);
  v->sparse_ = std::move(t);
  sparseInitializers_.push_back(v);
  return v;
}

size_t Graph::eraseInitializersIf(const std::function<bool(Value *)> &pred) {
  std::vector<Value *> doomed;
  auto dies = [&](Value *v) {
    return v->def_ == Value::DefKind::Initializer && !v->hasUses() && pred(v);
  };
  auto keep = [&](std::vector<Value *> &list) {
    auto it = std::remove_if(list.begin(), list.end(), [&](Value *v) {
      if (!dies(v))
        return false;
      doomed.push_back(v);
      return true;
    });
    list.erase(it, list.end());
  };
  keep(initializers_);
  keep(sparseInitializers_);
  for (Value *v : doomed)
    destroyLeaf(v);
  return doomed.size();
}

void Graph::eraseInput(Value *input) {
  assert(input->def_ == Value::DefKind::GraphInput && !input->hasUses());
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), input), inputs_.end());
  initializers_.erase(std::remove(initializers_.begin(), initializers_.end(), input), initializers_.end());
  sparseInitializers_.erase(std::remove(sparseInitializers_.begin(), sparseInitializers_.end(), input),
                            sparseInitializers_.end());
  destroyLeaf(input);
}

void Graph::reorderInputs(std::vector<Value *> order) {
  assert(std::is_permutation(order.begin(), order.end(), inputs_.begin(), inputs_.end()));
  inputs_ = std::move(order);
}

std::vector<Value *> Graph::outputs() const {
  std::vector<Value *> out;
  out.reserve(outputs_.size());
  for (const GraphOutput &o : outputs_)
    out.push_back(o.use.get());
  return out;
}

size_t Graph::addOutput(Value *v, std::optional<Type> type) {
  size_t i = outputs_.size();
  outputs_.push_back(GraphOutput{Use(nullptr, this, static_cast<unsigned>(i)), std::move(type), {}});
  outputs_.back().use.set(v);
  return i;
}

void Graph::setOutput(size_t i, Value *v) { outputs_.at(i).use.set(v); }

void Graph::eraseOutput(size_t i) {
  struct Kept {
    Value *value;
    std::optional<Type> type;
    ValueInfoExtras info;
  };
  std::vector<Kept> kept;
  for (size_t j = 0; j < outputs_.size(); ++j)
    if (j != i)
      kept.push_back({outputs_[j].use.get(), std::move(outputs_[j].type), std::move(outputs_[j].info)});
  for (GraphOutput &o : outputs_)
    o.use.set(nullptr);
  outputs_.clear();
  for (Kept &k : kept) {
    addOutput(k.value, std::move(k.type));
    outputs_.back().info = std::move(k.info);
  }
}

void Graph::walk(const std::function<void(Node *)> &fn) const {
  for (Node *n : nodes()) {
    fn(n);
    for (Graph *g : n->subgraphs())
      g->walk(fn);
  }
}

//===----------------------------------------------------------------------===//
// Attribute (out of line: it owns Graphs)
//===----------------------------------------------------------------------===//

Attribute::Attribute() = default;
Attribute::Attribute(std::string n, AttrKind k) : name(std::move(n)), kind(k) {}
Attribute::Attribute(Attribute &&) noexcept = default;
Attribute &Attribute::operator=(Attribute &&) noexcept = default;
Attribute::~Attribute() = default;

Attribute Attribute::makeInt(std::string name, int64_t v) {
  Attribute a(std::move(name), AttrKind::Int);
  a.i = v;
  return a;
}
Attribute Attribute::makeFloat(std::string name, float v) {
  Attribute a(std::move(name), AttrKind::Float);
  a.f = v;
  return a;
}
Attribute Attribute::makeString(std::string name, std::string v) {
  Attribute a(std::move(name), AttrKind::String);
  a.s = std::move(v);
  return a;
}
Attribute Attribute::makeInts(std::string name, std::vector<int64_t> v) {
  Attribute a(std::move(name), AttrKind::Ints);
  a.ints = std::move(v);
  return a;
}
Attribute Attribute::makeFloats(std::string name, std::vector<float> v) {
  Attribute a(std::move(name), AttrKind::Floats);
  a.floats = std::move(v);
  return a;
}
Attribute Attribute::makeTensor(std::string name, TensorPtr v) {
  Attribute a(std::move(name), AttrKind::Tensor);
  a.t = std::move(v);
  return a;
}
Attribute Attribute::makeGraph(std::string name, std::unique_ptr<Graph> g) {
  Attribute a(std::move(name), AttrKind::Graph);
  a.g = std::move(g);
  return a;
}

std::vector<Graph *> Attribute::subgraphs() const {
  std::vector<Graph *> out;
  if (g)
    out.push_back(g.get());
  for (const auto &sg : graphs)
    if (sg)
      out.push_back(sg.get());
  return out;
}

//===----------------------------------------------------------------------===//
// NameTable, Model
//===----------------------------------------------------------------------===//

std::string NameTable::fresh(std::string_view base) {
  std::string b(base.empty() ? std::string_view("v") : base);
  if (used_.insert(b).second)
    return b;
  uint64_t &counter = counters_[b];
  for (;;) {
    std::string candidate = b + "_" + std::to_string(++counter);
    if (used_.insert(candidate).second)
      return candidate;
  }
}

Model::Model() = default;
Model::~Model() = default;

void Model::setGraph(std::unique_ptr<Graph> g) {
  graph_ = std::move(g);
  if (graph_)
    graph_->setModel(this);
}

std::unique_ptr<Graph> Model::releaseGraph() {
  if (graph_)
    graph_->setModel(nullptr);
  return std::move(graph_);
}

int64_t Model::opsetVersion(std::string_view dom) const {
  auto norm = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
  for (const OpsetId &o : opsetImport)
    if (norm(o.domain) == norm(dom))
      return o.version;
  return -1;
}

} // namespace onnxslim

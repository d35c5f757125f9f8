//===- ir/IR.h - The onnxslim SSA IR ---------------------------*- C++ -*-===//
//
// The core IR: Model, Graph, Node, Value and Use.
//
//  - SSA with use-def chains. Every tensor is one Value with exactly one
//    definition: a node result, a graph input or an initializer. Every operand
//    of a node (and every graph output) is a Use linked into its value's use
//    list, so use counts, users, replace-all-uses and erase cost O(1) per use.
//  - Ownership. A Graph owns its nodes (an intrusive list, kept in topological
//    order), its inputs and its initializers; a Node owns its result values
//    and, through its attributes, its subgraphs. A value from an outer scope
//    used inside a subgraph is a real use of that outer value.
//  - Names are labels. Graph input/output names are the model's interface.
//    Fresh names come from the model's NameTable.
//
// Everything ONNX has that the IR does not use itself (doc strings, metadata,
// value_info ordering, explicit default fields...) is kept so that a model
// loaded and saved unchanged comes back equal, field by field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Attribute.h"
#include "DataType.h"
#include "Support.h"
#include "Tensor.h"
#include "Type.h"

#include <cassert>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace onnxslim {

class Graph;
class Model;
class Node;
class Value;

//===----------------------------------------------------------------------===//
// Use
//===----------------------------------------------------------------------===//

/// One operand slot: of a node (owner() != nullptr) or of a graph's output
/// list (ownerGraph() != nullptr, owner() == nullptr). The slot is a link in
/// its value's intrusive use list. An empty slot (an omitted optional input)
/// has no value and is in no list.
class Use {
public:
  Use() = default;
  Use(Node *owner, Graph *ownerGraph, unsigned index) : owner_(owner), graph_(ownerGraph), index_(index) {}
  /// Moving a Use keeps its place in the use list (vectors of Uses may grow).
  Use(Use &&other) noexcept;
  Use &operator=(Use &&other) noexcept;
  Use(const Use &) = delete;
  Use &operator=(const Use &) = delete;
  ~Use() { unlink(); }

  Value *get() const { return value_; }
  /// Given a value (or null), Execute: unlinks from the old value's list and links
  /// into the new one, Result: this slot reads `v`. O(1).
  void set(Value *v);

  /// The node whose operand this is; null for a graph output.
  Node *owner() const { return owner_; }
  /// The graph whose output this is; null for a node operand.
  Graph *ownerGraph() const { return graph_; }
  bool isGraphOutput() const { return graph_ != nullptr; }
  /// Operand number in the owner node, or output number in the owner graph.
  unsigned index() const { return index_; }
  Use *next() const { return next_; }

private:
  friend class Node;
  friend class Graph;
  friend class Value;
  friend struct IRTestPeer; // tests corrupt the IR on purpose to check the verifier
  void link(Value *v);
  void unlink();
  void takeLinkFrom(Use &other);

  Value *value_ = nullptr;
  Use *next_ = nullptr;
  Use **back_ = nullptr; ///< The pointer that points at this use.
  Node *owner_ = nullptr;
  Graph *graph_ = nullptr;
  unsigned index_ = 0;
};

/// Iterates a value's use list. Safe against erasing the *current* use only
/// if the caller advanced first (see Value::replaceAllUsesWith).
class UseIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Use *;
  using difference_type = std::ptrdiff_t;
  using pointer = Use **;
  using reference = Use *;
  explicit UseIterator(Use *u = nullptr) : use_(u) {}
  Use *operator*() const { return use_; }
  UseIterator &operator++() { use_ = use_->next(); return *this; }
  bool operator==(const UseIterator &o) const { return use_ == o.use_; }
  bool operator!=(const UseIterator &o) const { return use_ != o.use_; }

private:
  Use *use_;
};

struct UseRange {
  Use *first;
  UseIterator begin() const { return UseIterator(first); }
  UseIterator end() const { return UseIterator(nullptr); }
};

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

/// doc_string and metadata of a ValueInfoProto (graph input/output or value_info entry).
struct ValueInfoExtras {
  std::string docString;
  StringPairs metadataProps;
  ExplicitFields explicitFields;
  bool operator==(const ValueInfoExtras &o) const {
    return docString == o.docString && metadataProps == o.metadataProps &&
           explicitFields == o.explicitFields;
  }
};

class Value {
public:
  enum class DefKind : uint8_t { NodeResult, GraphInput, Initializer };
  static constexpr uint32_t kNoValueInfo = UINT32_MAX;

  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;
  ~Value();

  const std::string &name() const { return name_; }
  /// Given a name, Execute: relabels this value (and registers the name in the
  /// model's name table), Result: uses see the new name. Never call on a graph
  /// input/output without meaning to change the interface.
  void setName(std::string name);

  /// Declared or inferred type; nullopt when unknown.
  const std::optional<Type> &type() const { return type_; }
  std::optional<Type> &type() { return type_; }
  void setType(std::optional<Type> t) { type_ = std::move(t); }

  DefKind defKind() const { return def_; }
  bool isGraphInput() const { return def_ == DefKind::GraphInput; }
  bool isInitializer() const { return def_ == DefKind::Initializer || (def_ == DefKind::GraphInput && (initializer_ || sparse_)); }
  /// The node defining this value, or null for a graph input or initializer.
  Node *definingNode() const { return def_ == DefKind::NodeResult ? node_ : nullptr; }
  /// Result number in the defining node.
  unsigned resultNumber() const { return resultNo_; }
  /// The graph in which this value is defined.
  Graph *graph() const;

  /// Initializer data (also set for a graph input that has a default initializer).
  const TensorPtr &initializer() const { return initializer_; }
  /// Given a tensor, Execute: replaces this initializer's data, Result: uses read it.
  void setInitializer(TensorPtr t) { initializer_ = std::move(t); }
  /// Sparse initializer data, for values defined by sparse_initializer.
  const std::shared_ptr<const SparseTensor> &sparseInitializer() const { return sparse_; }

  //===--- Uses -------------------------------------------------------===//
  UseRange uses() const { return UseRange{firstUse_}; }
  bool hasUses() const { return firstUse_ != nullptr; }
  bool hasOneUse() const { return firstUse_ && !firstUse_->next(); }
  size_t useCount() const;
  /// Distinct nodes that use this value (graph-output uses are not nodes).
  std::vector<Node *> users() const;
  /// Whether some graph (this one or an ancestor's output list) outputs this value.
  bool isGraphOutput() const;
  /// Given a value of the same type, Execute: points every use of this value at
  /// `v`, Result: this value has no uses. O(number of uses). Graph-output uses
  /// are moved too: callers that must keep output names check isGraphOutput().
  void replaceAllUsesWith(Value *v);
  /// Like replaceAllUsesWith, restricted to uses for which `pred` holds.
  void replaceUsesWithIf(Value *v, const std::function<bool(Use &)> &pred);

  //===--- value_info round-trip data --------------------------------===//
  /// Position of this value's entry in the serialized value_info list, or
  /// kNoValueInfo. Entries are written back sorted by this number.
  uint32_t valueInfoOrder = kNoValueInfo;
  /// doc_string/metadata of this value's declaring entry (graph input entry or
  /// value_info entry).
  ValueInfoExtras info;

private:
  friend class Use;
  friend class Node;
  friend class Graph;
  friend struct IRTestPeer;
  Value(std::string name, DefKind def) : name_(std::move(name)), def_(def) {}

  std::string name_;
  std::optional<Type> type_;
  Use *firstUse_ = nullptr;
  DefKind def_;
  unsigned resultNo_ = 0;
  Node *node_ = nullptr;    ///< Defining node (results).
  Graph *graph_ = nullptr;  ///< Owning graph (inputs and initializers).
  size_t slot_ = 0;         ///< Index in the graph's leaf-value storage.
  TensorPtr initializer_;
  std::shared_ptr<const SparseTensor> sparse_;
};

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

class Node {
public:
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  ~Node();

  const std::string &opType() const { return opType_; }
  void setOpType(std::string op) { opType_ = std::move(op); }
  /// Operator domain; "" (or "ai.onnx") is the default ONNX domain.
  const std::string &domain() const { return domain_; }
  void setDomain(std::string d) { domain_ = std::move(d); }
  bool isDefaultDomain() const { return domain_.empty() || domain_ == "ai.onnx"; }
  /// True for an op of the default domain named `op`.
  bool is(std::string_view op) const { return isDefaultDomain() && opType_ == op; }
  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  Graph *graph() const { return graph_; }
  Node *prev() const { return prev_; }
  Node *next() const { return next_; }

  //===--- Operands ---------------------------------------------------===//
  size_t numOperands() const { return operands_.size(); }
  /// Operand i's value; null when the optional input is omitted.
  Value *operand(size_t i) const { return i < operands_.size() ? operands_[i].get() : nullptr; }
  Use &operandUse(size_t i) { return operands_[i]; }
  const std::vector<Use> &operandUses() const { return operands_; }
  std::vector<Value *> operands() const;
  /// Given an index and a value (null = omit), Execute: relinks the use, Result: operand i reads v.
  void setOperand(size_t i, Value *v);
  /// Given a value (null = omitted optional input), Execute: appends an operand slot.
  void addOperand(Value *v);
  /// Given an index, Execute: removes that operand (later ones shift down), Result: one fewer operand.
  void eraseOperand(size_t i);
  /// Given a size, Execute: drops trailing operands or appends empty ones.
  void resizeOperands(size_t n);

  //===--- Results ----------------------------------------------------===//
  size_t numResults() const { return results_.size(); }
  /// Result i; null when the optional output is omitted.
  Value *result(size_t i) const { return i < results_.size() ? results_[i].get() : nullptr; }
  std::vector<Value *> results() const;
  /// Given a name, Execute: appends a result value named `name` (registered in
  /// the name table), Result: the new value.
  Value *addResult(std::string name);
  /// Appends an omitted optional output ("" in ONNX).
  void addAbsentResult() { results_.emplace_back(); }
  /// Given a result index whose value has no uses, Execute: destroys that value
  /// and leaves an omitted slot, Result: result(i) == nullptr.
  void dropResult(size_t i);
  /// Given a result index whose value has no uses, Execute: destroys that
  /// value and removes its slot (later results shift down; for variadic
  /// results such as a Loop's, whose positions are their meaning).
  void eraseResult(size_t i);
  /// Execute: removes the trailing omitted results (ONNX writes them as
  /// empty names, which count against a schema's output arity), Result:
  /// numResults() ends at the last present result.
  void trimResults();

  //===--- Attributes -------------------------------------------------===//
  const std::vector<Attribute> &attributes() const { return attrs_; }
  std::vector<Attribute> &attributes() { return attrs_; }
  const Attribute *attr(std::string_view name) const;
  Attribute *attr(std::string_view name);
  bool hasAttr(std::string_view name) const { return attr(name) != nullptr; }
  int64_t attrInt(std::string_view name, int64_t dflt) const;
  float attrFloat(std::string_view name, float dflt) const;
  std::string attrString(std::string_view name, std::string dflt) const;
  std::vector<int64_t> attrInts(std::string_view name, std::vector<int64_t> dflt = {}) const;
  /// Given an attribute, Execute: replaces the one of the same name or appends it.
  void setAttr(Attribute a);
  /// Given a name, Execute: removes that attribute if present, Result: whether it was.
  bool removeAttr(std::string_view name);
  /// Every subgraph owned by this node's attributes.
  std::vector<Graph *> subgraphs() const;

  //===--- Position ---------------------------------------------------===//
  /// Given a node in the same graph, Execute: unlinks this node and relinks it
  /// right before `pos`, Result: order changed; the caller keeps it topological.
  void moveBefore(Node *pos);
  void moveAfter(Node *pos);
  /// Given a node none of whose results has uses, Execute: removes it from its
  /// graph (dropping its operand uses and subgraphs) and deletes it, Result: the
  /// pointer dangles. Asserts on results that still have uses: that is a bug.
  void erase();
  /// Whether every result is unused (omitted results count as unused).
  bool resultsUnused() const;

  //===--- Round-trip data --------------------------------------------===//
  std::string docString;
  std::string overload;
  StringPairs metadataProps;
  /// device_configurations entries, kept serialized (the IR does not use them).
  std::vector<std::string> deviceConfigurations;
  ExplicitFields explicitFields;

private:
  friend class Graph;
  friend struct IRTestPeer;
  Node(Graph *g, std::string opType, std::string domain) : opType_(std::move(opType)), domain_(std::move(domain)), graph_(g) {}
  void reindexOperands(size_t from);

  std::string opType_;
  std::string domain_;
  std::string name_;
  std::vector<Use> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<Attribute> attrs_;
  Graph *graph_;
  Node *prev_ = nullptr;
  Node *next_ = nullptr;
  bool inList_ = false;
};

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

/// A graph output slot: the value it reads plus the declared output type.
struct GraphOutput {
  Use use;
  std::optional<Type> type;
  ValueInfoExtras info;
};

/// A value_info entry that names no value of its graph (or a duplicate one).
/// Kept verbatim so nothing is lost.
struct OrphanValueInfo {
  uint32_t order = 0;
  std::string name;
  std::optional<Type> type;
  ValueInfoExtras info;
};

/// A quantization_annotation entry, kept verbatim.
struct TensorAnnotation {
  std::string tensorName;
  StringPairs quantParameterTensorNames;
  ExplicitFields explicitFields;
};

class NodeIterator {
public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = Node *;
  using difference_type = std::ptrdiff_t;
  using pointer = Node **;
  using reference = Node *;
  explicit NodeIterator(Node *n = nullptr) : node_(n) {}
  Node *operator*() const { return node_; }
  NodeIterator &operator++() { node_ = node_->next(); return *this; }
  bool operator==(const NodeIterator &o) const { return node_ == o.node_; }
  bool operator!=(const NodeIterator &o) const { return node_ != o.node_; }

private:
  Node *node_;
};

struct NodeRange {
  Node *first;
  NodeIterator begin() const { return NodeIterator(first); }
  NodeIterator end() const { return NodeIterator(nullptr); }
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph();

  std::string name;
  std::string docString;
  StringPairs metadataProps;
  std::vector<TensorAnnotation> quantizationAnnotations;
  std::vector<OrphanValueInfo> orphanValueInfos;
  ExplicitFields explicitFields;

  //===--- Scope ------------------------------------------------------===//
  /// The node whose attribute owns this graph; null for a model's main graph
  /// and for function bodies.
  Node *parentNode() const { return parentNode_; }
  Graph *parentGraph() const;
  /// The model this graph belongs to (through its ancestors); may be null for a
  /// free-standing graph under construction.
  Model *model() const;
  void setModel(Model *m) { model_ = m; }
  /// Given a graph, Execute: records `n` as its owner (attributes call this when
  /// a graph is attached to a node).
  void setParentNode(Node *n) { parentNode_ = n; }
  /// Whether `v` is visible here: defined in this graph or an enclosing one.
  bool isInScope(const Value *v) const;

  //===--- Nodes ------------------------------------------------------===//
  NodeRange nodes() const { return NodeRange{first_}; }
  Node *firstNode() const { return first_; }
  Node *lastNode() const { return last_; }
  size_t numNodes() const { return numNodes_; }
  /// Given an op type, domain, operands and result names, Execute: creates a
  /// node (not yet in the list) with those operands and named results,
  /// Result: the node; insert it with insertBefore/insertAfter/append.
  Node *createNode(std::string opType, const std::vector<Value *> &operands,
                   const std::vector<std::string> &resultNames, std::string domain = "");
  /// Given a node made by createNode, Execute: links it at the end.
  Node *append(Node *n);
  /// Given a node made by createNode and a listed node, Execute: links it before/after `pos`.
  Node *insertBefore(Node *pos, Node *n);
  Node *insertAfter(Node *pos, Node *n);

  //===--- Inputs and initializers ------------------------------------===//
  const std::vector<Value *> &inputs() const { return inputs_; }
  Value *input(size_t i) const { return inputs_[i]; }
  /// Given a name and type, Execute: appends a graph input, Result: its value.
  Value *addInput(std::string name, std::optional<Type> type = std::nullopt);
  const std::vector<Value *> &initializers() const { return initializers_; }
  /// Given a name and tensor, Execute: appends an initializer, Result: its value.
  Value *addInitializer(std::string name, TensorPtr tensor);
  /// Given an existing graph input, Execute: attaches a default initializer to
  /// it (old exporters list weights as inputs), Result: it is in both lists.
  void addInitializerToInput(Value *input, TensorPtr tensor);
  /// Given a name and sparse tensor, Execute: appends a sparse initializer.
  Value *addSparseInitializer(std::string name, std::shared_ptr<const SparseTensor> t);
  const std::vector<Value *> &sparseInitializers() const { return sparseInitializers_; }
  /// Given a predicate, Execute: removes and destroys every initializer (not
  /// graph input) for which it holds and which has no uses, in one pass,
  /// Result: the number removed.
  size_t eraseInitializersIf(const std::function<bool(Value *)> &pred);
  /// Given a graph input with no uses, Execute: removes it from the inputs
  /// (and initializers); changes the interface, so only on request.
  void eraseInput(Value *input);
  /// Given the graph's inputs in a new order (the same values), Execute:
  /// makes that the input order.
  void reorderInputs(std::vector<Value *> order);

  //===--- Outputs ----------------------------------------------------===//
  size_t numOutputs() const { return outputs_.size(); }
  Value *output(size_t i) const { return outputs_[i].use.get(); }
  GraphOutput &outputSlot(size_t i) { return outputs_[i]; }
  const std::vector<GraphOutput> &outputSlots() const { return outputs_; }
  std::vector<Value *> outputs() const;
  /// Given a value, Execute: appends an output reading it, Result: its slot index.
  size_t addOutput(Value *v, std::optional<Type> type = std::nullopt);
  /// Given an output index and value, Execute: retargets that output.
  void setOutput(size_t i, Value *v);
  /// Given an output position, Execute: removes that output (the others
  /// keep their order, types and value_info extras).
  void eraseOutput(size_t i);

  /// Hands out value_info ordinals for values that get an entry later.
  uint32_t nextValueInfoOrder() { return valueInfoCounter_++; }
  void noteValueInfoOrder(uint32_t used) { valueInfoCounter_ = std::max(valueInfoCounter_, used + 1); }

  /// Given a callback, Execute: calls it on every node of this graph and of
  /// every nested subgraph, pre-order. The callback must not erase nodes.
  void walk(const std::function<void(Node *)> &fn) const;

private:
  friend class Node;
  friend class Value;
  friend struct IRTestPeer;
  Value *newLeaf(std::string name, Value::DefKind kind);
  void destroyLeaf(Value *v);
  void link(Node *pos, Node *n, bool before);
  void unlink(Node *n);

  Node *first_ = nullptr;
  Node *last_ = nullptr;
  size_t numNodes_ = 0;
  std::vector<std::unique_ptr<Value>> leaves_;
  std::vector<Value *> inputs_;
  std::vector<Value *> initializers_;
  std::vector<Value *> sparseInitializers_;
  std::vector<GraphOutput> outputs_;
  Node *parentNode_ = nullptr;
  Model *model_ = nullptr;
  uint32_t valueInfoCounter_ = 0;
};

//===----------------------------------------------------------------------===//
// Model, Function, NameTable
//===----------------------------------------------------------------------===//

struct OpsetId {
  std::string domain;
  int64_t version = 0;
  ExplicitFields explicitFields;
  bool operator==(const OpsetId &o) const {
    return domain == o.domain && version == o.version && explicitFields == o.explicitFields;
  }
};

/// Unique names for a whole model (every graph, every subgraph, functions excluded).
class NameTable {
public:
  /// Given a name, Execute: records it as taken.
  void reserve(const std::string &name) { if (!name.empty()) used_.insert(name); }
  bool contains(const std::string &name) const { return used_.count(name) != 0; }
  /// Given a base, Execute: picks `base` or `base_N` not yet taken and reserves
  /// it, Result: the fresh name. Amortized O(1).
  std::string fresh(std::string_view base);

private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, uint64_t> counters_;
};

/// A model-local function (FunctionProto). Its body is a Graph whose inputs
/// and outputs are the formal parameters (untyped).
struct Function {
  std::string name;
  std::string domain;
  std::string overload;
  std::string docString;
  std::vector<std::string> attributeNames;
  std::vector<Attribute> attributeProtos;
  std::vector<OpsetId> opsetImport;
  StringPairs metadataProps;
  std::unique_ptr<Graph> body;
  ExplicitFields explicitFields;
};

class Model {
public:
  Model();
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  int64_t irVersion = 0;
  std::string producerName;
  std::string producerVersion;
  std::string domain;
  int64_t modelVersion = 0;
  std::string docString;
  std::vector<OpsetId> opsetImport;
  StringPairs metadataProps;
  std::vector<std::unique_ptr<Function>> functions;
  /// training_info and configuration entries, kept serialized (not used by the IR).
  std::vector<std::string> trainingInfo;
  std::vector<std::string> configuration;
  ExplicitFields explicitFields;

  /// The main graph (null only for a model with no graph).
  Graph *graph() const { return graph_.get(); }
  /// Given a graph, Execute: makes it the main graph, Result: it belongs to this model.
  void setGraph(std::unique_ptr<Graph> g);
  /// Execute: gives the main graph away, Result: it (the model has none left).
  std::unique_ptr<Graph> releaseGraph();
  NameTable &names() { return names_; }

  /// The opset version imported for `domain` ("" and "ai.onnx" are the same), or -1.
  int64_t opsetVersion(std::string_view domain) const;

private:
  std::unique_ptr<Graph> graph_;
  NameTable names_;
};

} // namespace onnxslim

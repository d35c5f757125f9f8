//===- transforms/cleanup/EliminateCommonSubexpressions.cpp - Hash-consing CSE===//
//
// eliminate-common-subexpressions: a node computing exactly what an earlier
// node computes (same op type and domain, same operand values in the same
// order, equal attributes) is replaced by that earlier node.
//
//   Before:                          After:
//     a = Relu(x)                      a = Relu(x)
//     b = Relu(x)                      y = Add(a, a)
//     y = Add(a, b)
//
// One walk in program order with a scoped hash table (hash-consing, not
// pairwise comparison): each eligible node is looked up by a hash of its op,
// operands and attributes; a hit whose full comparison succeeds replaces it,
// a miss records it. Entering a subgraph opens a scope, so a node in a body
// may be replaced by an equal node of an enclosing graph (defined before the
// body's owner), never by one of a sibling body. Replacing a node makes its
// users read the earlier results, so chains of duplicates fold in the same
// walk.
//
// Conditions:
//   - default-domain ops only, deterministic ones only (not RandomNormal,
//     RandomUniform(Like), RandomNormalLike, Multinomial, Bernoulli, Dropout);
//   - no subgraph attributes (If/Loop/Scan are not compared);
//   - the same results present; a duplicate's result that is a graph output
//     keeps its name (only its node users move, the node stays).
// Tensor attributes compare by content (the cached XXH3 hash first).
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace onnxslim {

namespace {

constexpr std::string_view kNonDeterministic[] = {"RandomNormal", "RandomNormalLike", "RandomUniform",
                                                  "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};

void mix(uint64_t &h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }
uint64_t hashString(std::string_view s) { return std::hash<std::string_view>{}(s); }

uint64_t hashAttribute(const Attribute &a) {
  uint64_t h = hashString(a.name);
  mix(h, static_cast<uint64_t>(a.kind));
  switch (a.kind) {
  case AttrKind::Int: mix(h, static_cast<uint64_t>(a.i)); break;
  case AttrKind::Float: {
    uint32_t bits;
    std::memcpy(&bits, &a.f, sizeof bits);
    mix(h, bits);
    break;
  }
  case AttrKind::String: mix(h, hashString(a.s)); break;
  case AttrKind::Ints:
    for (int64_t v : a.ints)
      mix(h, static_cast<uint64_t>(v));
    break;
  case AttrKind::Floats:
    for (float f : a.floats) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      mix(h, bits);
    }
    break;
  case AttrKind::Strings:
    for (const std::string &s : a.strings)
      mix(h, hashString(s));
    break;
  case AttrKind::Tensor:
    if (a.t)
      mix(h, tensorContentHash(*a.t));
    break;
  default: break;
  }
  return h;
}

/// A node's attributes sorted by name (attribute order does not matter).
std::vector<const Attribute *> sortedAttributes(const Node &n) {
  std::vector<const Attribute *> out;
  out.reserve(n.attributes().size());
  for (const Attribute &a : n.attributes())
    out.push_back(&a);
  std::sort(out.begin(), out.end(), [](const Attribute *x, const Attribute *y) { return x->name < y->name; });
  return out;
}

/// The hash-consing table: open addressing over (hash, node) slots, several
/// nodes per hash allowed (equal hashes, different nodes). Flat, so a lookup
/// touches a cache line or two and an insert never allocates.
class NodeTable {
public:
  /// The first node with hash `h` for which `equal` holds, or null.
  template <typename Eq> Node *find(uint64_t h, Eq &&equal) const {
    if (slots_.empty())
      return nullptr;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &s = slots_[i];
      if (!s.node)
        return nullptr;
      if (s.node != tombstone() && s.hash == h && equal(s.node))
        return s.node;
    }
  }
  void insert(uint64_t h, Node *n) {
    if ((used_ + 1) * 10 > slots_.size() * 7)
      rehash(slots_.empty() ? 64 : (size_ + 1) * 10 > slots_.size() * 5 ? slots_.size() * 2 : slots_.size());
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (!s.node || s.node == tombstone()) {
        used_ += !s.node;
        s = Slot{h, n};
        ++size_;
        return;
      }
    }
  }
  void erase(uint64_t h, Node *n) {
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (!s.node)
        return;
      if (s.node == n) {
        s.node = tombstone();
        --size_;
        return;
      }
    }
  }

private:
  struct Slot {
    uint64_t hash = 0;
    Node *node = nullptr;
  };
  static Node *tombstone() { return reinterpret_cast<Node *>(uintptr_t{1}); }
  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = used_ = 0;
    for (const Slot &s : old)
      if (s.node && s.node != tombstone())
        insert(s.hash, s.node);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0, used_ = 0;
};

class CommonSubexpressionEliminator {
public:
  explicit CommonSubexpressionEliminator(Rewriter &rewriter) : rewriter_(rewriter) {}

  void visit(Graph &g) {
    size_t mark = log_.size();
    for (Node *n = g.firstNode(); n;) {
      Node *next = n->next();
      bool replaced = eligible(*n) && tryReplace(n);
      if (!replaced && hasSubgraphs(*n)) // (a node owning subgraphs is never eligible)
        for (Graph *sg : n->subgraphs())
          visit(*sg);
      n = next;
    }
    while (log_.size() > mark) {
      table_.erase(log_.back().first, log_.back().second);
      log_.pop_back();
    }
  }

  uint64_t erased = 0, redirected = 0;

private:
  bool eligible(const Node &n) const {
    if (!n.isDefaultDomain() || n.numResults() == 0)
      return false;
    for (std::string_view op : kNonDeterministic)
      if (n.opType() == op)
        return false;
    for (const Attribute &a : n.attributes())
      if (a.kind == AttrKind::Graph || a.kind == AttrKind::Graphs || a.g || !a.graphs.empty())
        return false;
    return true;
  }

  uint64_t hashNode(const Node &n) const {
    uint64_t h = hashString(n.opType());
    mix(h, n.numOperands());
    for (const Use &u : n.operandUses())
      mix(h, reinterpret_cast<uintptr_t>(u.get()));
    uint64_t present = 0;
    for (size_t i = 0; i < n.numResults(); ++i)
      if (n.result(i))
        present |= uint64_t{1} << (i % 64);
    mix(h, n.numResults());
    mix(h, present);
    // Attributes: an order-independent combination.
    uint64_t attrs = 0;
    for (const Attribute &a : n.attributes())
      attrs += hashAttribute(a);
    mix(h, attrs);
    h *= 0x9e3779b97f4a7c15ull; // spread into the low bits the table indexes with
    return h ^ (h >> 29);
  }

  static bool equivalent(const Node &a, const Node &b) {
    if (a.opType() != b.opType() || a.numOperands() != b.numOperands() || a.numResults() != b.numResults() ||
        a.attributes().size() != b.attributes().size())
      return false;
    for (size_t i = 0; i < a.numOperands(); ++i)
      if (a.operand(i) != b.operand(i))
        return false;
    for (size_t i = 0; i < a.numResults(); ++i)
      if ((a.result(i) == nullptr) != (b.result(i) == nullptr))
        return false;
    std::vector<const Attribute *> x = sortedAttributes(a), y = sortedAttributes(b);
    for (size_t i = 0; i < x.size(); ++i)
      if (!sameAttribute(*x[i], *y[i]))
        return false;
    return true;
  }

  /// Replaces `n` by an equal earlier node, or records it. Result: whether
  /// `n` was replaced (and possibly erased).
  bool tryReplace(Node *n) {
    uint64_t h = hashNode(*n);
    if (Node *m = table_.find(h, [&](const Node *m) { return equivalent(*n, *m); })) {
      replace(n, m);
      return true;
    }
    table_.insert(h, n);
    log_.emplace_back(h, n);
    return false;
  }

  void replace(Node *n, Node *m) {
    bool keep = false;
    for (size_t i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (!r)
        continue;
      if (r->isGraphOutput()) {
        keep = true;
        redirected += rewriter_.replaceNodeUsesWith(r, m->result(i)) != 0;
      } else if (r->hasUses()) {
        rewriter_.replaceAllUsesWith(r, m->result(i));
      }
    }
    if (keep) {
      if (rewriter_.debugEnabled())
        rewriter_.notifyRewrite(n, "same as " + nodeLabel(*m) + "; kept for its graph output");
      return;
    }
    if (rewriter_.debugEnabled())
      rewriter_.notifyRewrite(n, "erased: same as " + nodeLabel(*m));
    rewriter_.eraseNode(n);
    ++erased;
  }

  Rewriter &rewriter_;
  NodeTable table_;
  std::vector<std::pair<uint64_t, Node *>> log_; ///< entries in insertion order, for scope exit
};

class EliminateCommonSubexpressionsPass : public Pass {
public:
  /// A deterministic node on the same operands computes the same results.
  bool isExactByConstruction() const override { return true; }
  std::string_view name() const override { return "eliminate-common-subexpressions"; }
  std::string_view description() const override {
    return "Merge identical deterministic nodes on identical inputs (hash-consing)";
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    Rewriter rewriter(context);
    CommonSubexpressionEliminator cse(rewriter);
    uint64_t before = rewriter.changeCount();
    cse.visit(*model.graph());
    context.counter("erased", "Nodes replaced by an identical earlier node") += cse.erased;
    context.counter("redirected", "Graph-output duplicates whose users were redirected") += cse.redirected;
    return rewriter.changeCount() != before;
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateCommonSubexpressionsPass() {
  return std::make_unique<EliminateCommonSubexpressionsPass>();
}

} // namespace onnxslim

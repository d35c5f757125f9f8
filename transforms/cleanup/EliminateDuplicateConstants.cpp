//===- transforms/cleanup/EliminateDuplicateConstants.cpp - One copy per constant===//
//
// eliminate-duplicate-constants: initializers and Constant nodes holding
// the same tensor (equal dtype, dims and bytes; any size and dtype) become
// one; the first in program order is kept and the users of the others read
// it.
//
//   Before:  <float[2] a = {1, 2}, float[2] b = {1, 2}>
//            { c = Constant <value = float[2] {1, 2}> ()
//              y = Add(x, a); z = Mul(y, b); w = Sub(z, c) }
//   After:   <float[2] a = {1, 2}>
//            { y = Add(x, a); z = Mul(y, a); w = Sub(z, a) }
//
// Cost: weights are read only where two tensors could be equal.
//   1. Candidates are grouped by (dtype, dims): a tensor whose shape is
//      unique is never read.
//   2. Within a group, a tensor of 64 KiB or more gets a sampled fingerprint
//      (XXH3 of 16 slices of 256 bytes spread evenly from its first to its
//      last byte: at most 16 pages read); smaller ones are hashed whole.
//      Tensors whose fingerprint is unique in the group are not read further.
//      (A Llama-style model has 30+ same-shape twins per weight, all with
//      different contents: only the samples are read.)
//   3. Tensors whose fingerprints collide are hashed whole with XXH3, the
//      hash cached in Tensor::cachedHash (later rounds and later runs reuse
//      it); bytes are compared only when hashes are equal.
// Samples of a tensor that views a mapped file (external data, or the
// mapped input model) are read with pread, not through the mapping; pages
// of mapped tensors hashed or compared whole are released from the
// resident set right after (Buffer::releasePages). So the pass's peak RSS
// is bounded by the largest tensor it must hash whole, not by the model.
//
// Conditions and scoping:
//   - a graph input with a default initializer is interface (a caller may
//     feed it) and is neither merged away nor used as the kept copy;
//   - a constant inside a subgraph may be replaced by one of an enclosing
//     graph (visible there), never the reverse or across sibling subgraphs;
//   - a duplicate that is itself a graph output keeps its name: only its
//     node users move;
//   - tensors in external data take part like any other: the frontend maps
//     the data file and the tensor views it (zero-copy). Only when the
//     loader was told not to load external data (LoadOptions::
//     loadExternalData = false) does such a tensor have no bytes; it is then
//     inconsistent (Tensor::isConsistent) and left alone, as are sparse
//     initializers and Constant sparse_value.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

// Header-only: the library has no link dependency on libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <unistd.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace onnxslim {

uint64_t tensorContentHash(const Tensor &t, bool *computed) {
  uint64_t cached = t.cachedHash.load(std::memory_order_relaxed);
  if (computed)
    *computed = cached == 0;
  if (cached)
    return cached;
  XXH3_state_t *state = XXH3_createState();
  XXH3_64bits_reset(state);
  int32_t dtype = static_cast<int32_t>(t.dtype());
  XXH3_64bits_update(state, &dtype, sizeof dtype);
  uint64_t rank = t.dims().size();
  XXH3_64bits_update(state, &rank, sizeof rank);
  XXH3_64bits_update(state, t.dims().data(), t.dims().size() * sizeof(int64_t));
  if (t.dtype() == DataType::String) {
    for (const std::string &s : t.strings()) {
      uint64_t len = s.size();
      XXH3_64bits_update(state, &len, sizeof len);
      XXH3_64bits_update(state, s.data(), s.size());
    }
  } else if (t.byteSize()) {
    XXH3_64bits_update(state, t.rawData(), t.byteSize());
  }
  uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (h == 0)
    h = 1;
  t.cachedHash.store(h, std::memory_order_relaxed);
  return h;
}

namespace {

/// Tensors of this many bytes or more are fingerprinted by sampling first.
constexpr size_t kSampleFrom = 64 * 1024;
constexpr size_t kSamples = 16, kSampleBytes = 256;

/// Given a tensor, Execute: hashes its dtype, dims and kSamples slices of
/// kSampleBytes spread evenly over its bytes (the first slice starts at
/// byte 0, the last ends at the last byte), Result: the fingerprint; equal
/// tensors have equal fingerprints. A tensor viewing a mapped file is
/// sampled with pread from that file, so no page is faulted into (and none
/// has to be released from) this process's mapping.
uint64_t sampledFingerprint(const Tensor &t) {
  XXH3_state_t *state = XXH3_createState();
  XXH3_64bits_reset(state);
  int32_t dtype = static_cast<int32_t>(t.dtype());
  XXH3_64bits_update(state, &dtype, sizeof dtype);
  XXH3_64bits_update(state, t.dims().data(), t.dims().size() * sizeof(int64_t));
  const MappedFile *file = t.buffer().mappedFile();
  size_t size = t.byteSize();
  size_t span = size - kSampleBytes;
  uint8_t sample[kSampleBytes];
  for (size_t i = 0; i < kSamples; ++i) {
    size_t at = span / (kSamples - 1) * i + (i == kSamples - 1 ? span % (kSamples - 1) : 0);
    const uint8_t *bytes = t.rawData() + at;
    if (file && file->fd() >= 0) {
      auto offset = static_cast<off_t>(bytes - file->data());
      if (::pread(file->fd(), sample, kSampleBytes, offset) == static_cast<ssize_t>(kSampleBytes))
        bytes = sample;
    }
    XXH3_64bits_update(state, bytes, kSampleBytes);
  }
  uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

struct Candidate {
  Value *value;
  Node *constantNode; ///< null for an initializer
  TensorPtr tensor;
};

bool isAncestorOrSelf(const Graph *ancestor, const Graph *g) {
  for (; g; g = g->parentGraph())
    if (g == ancestor)
      return true;
  return false;
}

std::string shapeKey(const Tensor &t) {
  std::string key = std::to_string(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) {
    key += ',';
    key += std::to_string(d);
  }
  return key;
}

class DuplicateConstantMerger {
public:
  explicit DuplicateConstantMerger(Rewriter &rewriter) : rewriter_(rewriter) {}

  /// Collects the candidates of `g` and its subgraphs in program order.
  void collect(Graph &g) {
    for (Value *v : g.initializers())
      if (v->defKind() == Value::DefKind::Initializer && v->initializer() &&
          v->initializer()->isConsistent())
        add(Candidate{v, nullptr, v->initializer()});
    for (Node *n : g.nodes()) {
      if (n->is("Constant") && n->numResults() == 1 && n->result(0))
        if (TensorPtr t = constantNodeTensor(*n); t && t->isConsistent())
          add(Candidate{n->result(0), n, t});
      if (hasSubgraphs(*n))
        for (Graph *sg : n->subgraphs())
          collect(*sg);
    }
  }

  /// Merges every group; Result: whether the IR changed.
  bool merge() {
    bool changed = false;
    for (const std::vector<size_t> &group : groups_)
      if (group.size() > 1)
        changed |= mergeGroup(group);
    for (auto &entry : doomedInitializers_) {
      // (Not a structured binding: clang 14, the fuzz build's compiler, cannot capture one.)
      const auto &doomed = entry.second;
      rewriter_.eraseUnusedInitializersIf(*entry.first, [&](Value *v) { return doomed.count(v) != 0; });
    }
    return changed;
  }

  uint64_t hashed = 0, sampled = 0, mergedInitializers = 0, mergedConstants = 0;

private:
  void add(Candidate c) {
    auto [it, inserted] = groupOf_.emplace(shapeKey(*c.tensor), groups_.size());
    if (inserted)
      groups_.emplace_back();
    groups_[it->second].push_back(candidates_.size());
    candidates_.push_back(std::move(c));
  }

  /// Given a group of same-(dtype, dims) candidates in program order,
  /// Execute: splits it by fingerprint (sampled for large tensors, else the
  /// full hash) and merges within each part of two or more, Result: whether
  /// the IR changed. Equal tensors always share a part, so the kept copy is
  /// the same as if the whole group were hashed.
  bool mergeGroup(const std::vector<size_t> &group) {
    std::unordered_map<uint64_t, std::vector<size_t>> parts;
    std::vector<uint64_t> order;
    for (size_t idx : group) {
      const Tensor &t = *candidates_[idx].tensor;
      uint64_t key;
      if (t.dtype() != DataType::String && t.byteSize() >= kSampleFrom) {
        key = sampledFingerprint(t);
        ++sampled;
      } else {
        bool computed = false;
        key = tensorContentHash(t, &computed);
        hashed += computed;
      }
      std::vector<size_t> &part = parts[key];
      if (part.empty())
        order.push_back(key);
      part.push_back(idx);
    }
    bool changed = false;
    for (uint64_t key : order)
      if (const std::vector<size_t> &part = parts[key]; part.size() > 1)
        changed |= mergePart(part);
    return changed;
  }

  /// Given candidates that may be equal (program order), Execute: hashes
  /// each whole, compares bytes on equal hashes and replaces every
  /// duplicate by its first copy visible from it, Result: whether the IR changed.
  bool mergePart(const std::vector<size_t> &part) {
    bool changed = false;
    std::unordered_map<uint64_t, std::vector<size_t>> kept; // hash -> kept candidates
    for (size_t idx : part) {
      Candidate &c = candidates_[idx];
      bool computed = false;
      uint64_t h = tensorContentHash(*c.tensor, &computed);
      hashed += computed;
      c.tensor->buffer().releasePages();
      std::vector<size_t> &same = kept[h];
      const Candidate *into = nullptr;
      for (size_t k : same) {
        const Candidate &r = candidates_[k];
        if (isAncestorOrSelf(r.value->graph(), c.value->graph()) &&
            (r.tensor == c.tensor || r.tensor->sameContent(*c.tensor))) {
          r.tensor->buffer().releasePages();
          c.tensor->buffer().releasePages();
          into = &r;
          break;
        }
      }
      if (!into) {
        same.push_back(idx);
        continue;
      }
      changed |= replace(c, into->value);
    }
    return changed;
  }

  bool replace(Candidate &c, Value *keep) {
    std::string what = rewriter_.debugEnabled() ? "same tensor as '" + keep->name() + "'" : std::string();
    if (c.value->isGraphOutput()) {
      if (rewriter_.replaceNodeUsesWith(c.value, keep) == 0)
        return false;
      if (rewriter_.debugEnabled())
        rewriter_.notifyRewrite(c.constantNode, "'" + c.value->name() + "' is a graph output; its users now read '" +
                                                    keep->name() + "'");
      return true;
    }
    if (c.constantNode) {
      if (rewriter_.debugEnabled())
        rewriter_.notifyRewrite(c.constantNode, "erased: " + what);
      rewriter_.replaceAllUsesWith(c.value, keep);
      rewriter_.eraseNode(c.constantNode);
      ++mergedConstants;
    } else {
      if (rewriter_.debugEnabled())
        rewriter_.context().debugStream() << "[" << rewriter_.context().currentPass() << "] initializer '"
                                          << c.value->name() << "' removed: " << what << "\n";
      rewriter_.replaceAllUsesWith(c.value, keep);
      doomedInitializers_[c.value->graph()].insert(c.value);
      ++mergedInitializers;
    }
    return true;
  }

  Rewriter &rewriter_;
  std::vector<Candidate> candidates_;
  std::vector<std::vector<size_t>> groups_;
  std::unordered_map<std::string, size_t> groupOf_;
  std::unordered_map<Graph *, std::unordered_set<Value *>> doomedInitializers_;
};

class EliminateDuplicateConstantsPass : public Pass {
public:
  /// Merged constants are byte for byte equal.
  bool isExactByConstruction() const override { return true; }
  std::string_view name() const override { return "eliminate-duplicate-constants"; }
  std::string_view description() const override {
    return "Merge initializers and Constant nodes holding equal tensors (sampled, then hashed, XXH3)";
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    Rewriter rewriter(context);
    DuplicateConstantMerger merger(rewriter);
    merger.collect(*model.graph());
    bool changed = merger.merge();
    context.counter("merged-initializers", "Duplicate initializers removed") += merger.mergedInitializers;
    context.counter("merged-constants", "Duplicate Constant nodes removed") += merger.mergedConstants;
    context.counter("tensors-hashed", "Tensors hashed whole (each at most once, cached)") += merger.hashed;
    context.counter("tensors-sampled", "Large tensors fingerprinted from 16 samples instead") += merger.sampled;
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateDuplicateConstantsPass() {
  return std::make_unique<EliminateDuplicateConstantsPass>();
}

} // namespace onnxslim

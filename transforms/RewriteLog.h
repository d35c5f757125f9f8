//===- transforms/RewriteLog.h - Every rewrite of a pipeline run -*- C++ -*-===//
//
// The pass context keeps a log of the rewrites a pipeline makes, in order:
// each pattern that matched (the greedy driver records it), each step of a
// whole-model pass that asks for one (fold-constants folds a node,
// inline-constant-if inlines an If...), and each run of any other pass that
// changed the model (one entry for the whole run). Each record names the
// pass, the pattern or step, the root node, and whether the rewrite is exact
// by construction (it cannot change what the model computes: removing a
// dead node or an Identity, merging byte-identical constants, folding
// constants with the interpreter's own kernels, integer shape folding,
// inferring types), which the model check uses to prove such a pipeline
// without running the model.
//
// The same log replays a run: with a limit, the rewrites past it are not
// made (the LLVM -debug-counter idea: the model check bisects over the
// count to find the first rewrite after which the outputs differ), and a
// blocked (pattern, root) pair is never made again (the rewrite at fault is
// undone by running the pipeline again without it). Replays rely on the
// pipeline being deterministic; the checker compares the replay's records
// with the first run's to be sure.
//
// A root is identified by its first result's name (unique in the model and
// the same in a replay, as fresh names come from the model's name table).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onnxslim {

class Node;

/// One rewrite.
struct RewriteRecord {
  std::string pass;    ///< The pipeline entry that made it.
  std::string pattern; ///< The pattern or step ("" for a whole pass run).
  std::string root;    ///< The root node as messages name it ("Mul 'gelu/mul'").
  std::string key;     ///< The root's identity in a replay (rewriteKey), or "round N".
  unsigned round = 0;  ///< The pipeline round.
  bool exact = false;  ///< Exact by construction.
};

/// Given a node, Result: its identity for the rewrite log: the name of its
/// first result (or its own name when it has none).
std::string rewriteKey(const Node &node);

class RewriteLog {
public:
  const std::vector<RewriteRecord> &records() const { return records_; }
  size_t size() const { return records_.size(); }
  /// Rewrites that are not exact by construction.
  size_t inexactCount() const { return inexact_; }

  /// Whether no further rewrite may be made (the limit is reached).
  bool exhausted() const { return limit_ && records_.size() >= *limit_; }
  /// Whether blocked pairs exist (to skip computing keys when none).
  bool hasBlocks() const { return !blocked_.empty(); }
  /// Given a pattern or step and a root key, Result: whether that rewrite may be made.
  bool allows(std::string_view pattern, std::string_view key) const;
  /// Given a rewrite that was made, Execute: appends it.
  void record(RewriteRecord record);

  /// Given a count (nullopt = none), Execute: allows only that many rewrites.
  void setLimit(std::optional<size_t> limit) { limit_ = limit; }
  /// Given a record, Execute: keeps its (pattern, key) from being made again.
  void block(const RewriteRecord &record) { blocked_.emplace(record.pattern, record.key); }
  /// Execute: forgets the records (not the limit nor the blocks).
  void clearRecords() {
    records_.clear();
    inexact_ = 0;
  }

private:
  std::vector<RewriteRecord> records_;
  size_t inexact_ = 0;
  std::optional<size_t> limit_;
  std::set<std::pair<std::string, std::string>, std::less<>> blocked_;
};

} // namespace onnxslim

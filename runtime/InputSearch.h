//===- runtime/InputSearch.h - Inputs that reach a model's real paths -*- C++ -*-===//
//
// Seeded random inputs (runtime/Inputs.h) exercise little of some models:
// a sample rate compared with 16000 picks an If branch, random token ids
// overrun a small embedding table, an attention mask of random 0s and 1s
// hides whole rows, a free dim of 32 is too short for a 128-tap filter and
// a state's batch dim must be 1. This file reads what the graph says about
// its inputs and searches for inputs it runs on:
//
//  - readInputHints: an integer input compared with constants (Equal,
//    Less, Greater... through Cast/Reshape/Squeeze/Unsqueeze/Identity,
//    subgraphs included) is given each of those constants and, by
//    searchInputs, one less than the smallest (the other side of every such
//    comparison), one sample per combination (at most
//    kMaxDecisionSamples); one used as Gather indices gets values inside
//    the gathered dim; one whose name says mask, and an integer or bool
//    input used as a Where condition, gets ones;
//  - searchInputs: for each sample, the free dims (symbolic or unnamed
//    input dims the caller did not size) are sized by trying, in order,
//    each preferred size for every non-leading dim (leading, batch dims
//    at 1), then a coordinate search over 1, 2, 4 ... 4096 dim by dim that
//    keeps the size that got furthest into the model (the number of nodes
//    started before the failure) until one runs or the budget is spent.
//
// The caller runs the model (runtime/Interpreter.h) through a callback, and
// keeps the inputs and outputs of the run that worked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Inputs.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnxslim::rt {

/// What the graph says about its inputs.
struct InputHints {
  /// Integer inputs compared with constants: the constants, in first-seen order.
  std::map<std::string, std::vector<int64_t>> compared;
  /// Integer inputs used as Gather indices: the gathered dim's size (the
  /// smallest over the uses); values go in [0, size - 1].
  std::map<std::string, int64_t> indexLimit;
  /// Inputs whose name says they are a mask, and integer or bool inputs
  /// used as a Where condition: filled with ones.
  std::set<std::string> masks;
};

/// Given a graph, Result: its inputs' hints (see the file comment).
InputHints readInputHints(const Graph &graph);

/// At most this many samples are made for combinations of compared values.
constexpr size_t kMaxDecisionSamples = 4;

/// One run of the search: the inputs' options, Result of the callback:
/// whether the model ran; when not, `progress` says how far it got.
using TryInputs = std::function<bool(const InputOptions &, std::string &error, uint64_t &progress)>;

struct InputSearchOptions {
  /// The caller's dims, specs, seed and provided inputs.
  InputOptions base;
  /// Sizes tried first for every free non-leading dim, in order.
  std::vector<int64_t> preferredSizes = {32, 64, 512};
  /// At least this many samples (seeds base.seed, base.seed + 1, ...).
  int samples = 1;
  /// Runs the search may make per sample before it gives up.
  int maxTries = 64;
  /// When set and true, the search makes no further run.
  const std::atomic<bool> *cancel = nullptr;
};

/// One sample that ran.
struct InputSample {
  InputOptions options;
  /// What ran, for reports: "sr=16000; input[1]=256, state[1]=1".
  std::string description;
};

/// Given a graph, options and the run callback, Execute: plans the samples
/// (compared values, index ranges, masks; the caller's specs win) and
/// searches free dims for each, Result: the samples that ran (in order;
/// the first sample's failure is `error` when none did).
std::vector<InputSample> searchInputs(const Graph &graph, const InputSearchOptions &options, const TryInputs &run,
                                      std::string &error);

} // namespace onnxslim::rt

//===- transforms/fusion/FusionUtils.h - Helpers shared by the fusions -*- C++ -*-===//
//
// The questions every fusion pass asks: the default-domain opset of the
// graph a node lives in, whether a value feeds exactly one node (and no
// graph output), a floating constant's elements as doubles and back (float,
// double, float16, bfloat16; arithmetic is done in double and written back
// in the weights' own dtype), and the per-channel view of a constant that
// broadcasts against a Conv-like output [N, C, ...].
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <optional>
#include <string_view>
#include <vector>

namespace onnxslim {

class Rewriter;

/// Given a node, Result: the default-domain ("" / ai.onnx) opset version of
/// its model, or -1 when the node is not in a model.
int64_t defaultOpset(const Node &node);

/// Given a value, Result: whether exactly one node operand reads it and it
/// is not a graph output (so the producer may be folded into that user).
bool hasSingleNodeUse(const Value *value);

/// Given a value, Result: the node reading it when it has a single node use
/// (see hasSingleNodeUse), else null.
Node *singleUser(const Value *value);

/// Given a value, Result: its defining node when that node is the default-
/// domain op `op`, else null.
Node *producerOp(const Value *value, std::string_view op);

/// Whether `t` is a floating dtype whose elements toDoubles() can read.
bool isFloatLike(DataType t);

/// Given a tensor, Result: its elements as doubles for Float, Double,
/// Float16 and BFloat16 tensors whose bytes match their dims; nullopt else.
std::optional<std::vector<double>> toDoubles(const Tensor &tensor);

/// Given a floating dtype, dims and values, Result: a new tensor of that
/// dtype (rounded to nearest even for the 16-bit types).
TensorPtr fromDoubles(DataType dtype, std::vector<int64_t> dims, const std::vector<double> &values);

/// Given a number read from a constant of element type `t` and the exact
/// value `c` a pattern expects, Result: whether the constant may stand for
/// `c`: within a tenth of the model check's relative tolerance for `t`
/// (runtime/Compare.h: 1e-5 for float32, 1e-3 for float16), and at least
/// within 2 units in the last place of `t`. Exporters round or write such
/// constants (sqrt(2) as 1.41421); one farther off (1.00009 for 1) would
/// move the results by more than the check accepts once amplified by the
/// layers after it. Integer types: exactly.
bool nearConstant(double x, double c, DataType t);

/// Given a constant value, Result: its elements as doubles (see toDoubles),
/// or nullopt when it is no floating constant.
std::optional<std::vector<double>> constantDoubles(const Value *value);

/// Given a constant's dims and an output rank and channel count C (the
/// output is [N, C, d2, ...] of rank `rank`), Result: the constant's values
/// per channel (C entries) when broadcasting it against that output changes
/// nothing but channel values: rank <= `rank`, every dim 1 except the one
/// aligned with axis 1, which may be C. Nullopt otherwise; `reason` says why.
std::optional<std::vector<double>> perChannelValues(const Tensor &constant, size_t rank, int64_t channels,
                                                    const char *&reason);

/// A binary op (Add, Mul) of a Conv result and a per-channel constant.
struct ConvChannelOperand {
  Node *conv = nullptr;
  TensorPtr weights;          ///< The Conv's constant weights.
  int64_t channels = 0;       ///< Output channels.
  std::vector<double> values; ///< The constant, one value per output channel.
};

/// Given an Add or Mul node, Result: the Conv (or, with `allowTranspose`,
/// ConvTranspose) with constant floating weights whose result only this
/// node reads (and is no graph output), and the per-channel values of the
/// other operand (a constant of the weights' dtype that broadcasts per
/// channel without growing the result); nullopt with `reason` set otherwise.
std::optional<ConvChannelOperand> matchConvChannelOperand(const Node &node, bool allowTranspose,
                                                          const char *&reason);

/// Given a model, a domain and a version, Execute: imports `domain` at
/// `version` unless it is imported already, Result: false when an older
/// version of it is imported (nothing changed).
bool ensureOpsetImport(Model &model, const std::string &domain, int64_t version);

/// Given a node whose first result is to be replaced by `replacement` (the
/// result of the node a fusion produced or kept), Execute: moves every use
/// (graph outputs included) to `replacement` and erases the node; when the
/// old result was a graph output, or `takeName` is set (for the result of a
/// node the fusion just created), `replacement` takes over its name, and its
/// value_info entry, provided it is a node result that was no graph output
/// itself (so the interface is unchanged and no Identity is needed);
/// otherwise a graph output keeps its name through an Identity (see
/// replaceNodeWithValue).
void replaceFusedNode(Node *node, Value *replacement, Rewriter &rewriter, std::string_view what,
                      bool takeName = false);

/// Given the nodes of a matched chain (any order), Execute: erases, through
/// the rewriter, each one whose results are all unused, repeating until none
/// is left to erase (so a chain goes in any order).
void eraseDeadChain(const std::vector<Node *> &nodes, Rewriter &rewriter);

} // namespace onnxslim

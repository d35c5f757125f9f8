//===- transforms/fusion/AttentionMask.h - Masks Attention can take exactly -*- C++ -*-===//
//
// fuse-attention replaces softmax(scores + mask) v, or softmax(Where(mask,
// scores, fill)) v, by one Attention. The two agree on every row with a
// visible key. They differ on a row whose every key is hidden: the
// decomposition gives the mean of v there (a finite fill, or an additive
// mask at float's lowest, which absorbs the scores into one value) or NaN
// (-inf), while ONNX Runtime's Attention gives 0 (it fills hidden keys with
// float's lowest and zeroes a row that is all lowest or -inf). Left padding
// under a causal mask hides whole rows, so this is not a corner case.
//
// This file decides, for a mask the pattern found, whether and in what
// form Attention computes what the decomposition computes on every input,
// hidden rows included (planAttentionMask), and writes that form
// (materializeAttentionMask):
//
//   - a causal mask over square scores is is_causal = 1: the diagonal is
//     always visible, so no row is ever hidden;
//   - a constant mask whose every row keeps a visible key (bool: a true;
//     additive: a value above half of the type's lowest) is passed as it is
//     (a boolean masked_fill mask through Not);
//   - a mask computed at run time whose values are known (a value-set
//     analysis of its producers: Where of constants, Cast from bool, (1 - x)
//     * c of such x, Min/Max/Add/Sub/Mul/Neg, shape-only ops) to be finite:
//     passed as it is when every value is above half of the type's lowest
//     (a hidden row then stays the same finite softmax in both); otherwise,
//     in float32 when a single value lies below that, that value is raised
//     to half of float's lowest (Where(b, 0, lowest) becomes Where(b, 0,
//     lowest / 2); any other mask goes through Max(mask, lowest / 2)). Both
//     forms absorb every score of sane size into one value, so a hidden row
//     stays the uniform mean of v, and it no longer hits ONNX Runtime's
//     lowest sentinel;
//   - a boolean mask computed at run time, from a Where with a finite fill:
//     in float32 the additive Where(visible, 0, lowest / 2) (a hidden row:
//     the mean of v, as the decomposition's all-fill row gives; a hidden key
//     of a visible row: weight exactly 0, as exp(fill - max) is in float32
//     once a visible score exceeds fill + 104, which a fill <= -1e4 makes
//     the case for any score above -9896).
//
//   - a bias added to the scores ahead of the mask (T5's relative position
//     bias gathered from a constant table), whose values are bounded by
//     2^100 in magnitude (constants, what only moves their elements, Where
//     and Add of such): the operand is bias + mask, passed as it is when no
//     mask value lies at or below half of float's lowest, otherwise (float32)
//     Max(bias + mask, lowest / 2). A hidden key's mask value m <= lowest / 2
//     has an ulp of 2^103 or more, so m + bias + score rounds to m in the
//     decomposition and lowest / 2 + score to lowest / 2 in the fused form:
//     a row hidden whole is uniform in both, a hidden key of a visible row
//     weighs 0 in both; a visible key's bias + 0 is the bias itself.
//
// Declined (with the reason): a run-time mask whose values are unknown or
// may be -inf or NaN (a hidden row is NaN in the decomposition, 0 in ONNX
// Runtime), a run-time boolean mask with a -inf fill, a constant mask with
// a row hidden whole, and the float32-only forms in other element types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace onnxslim {

class Rewriter;

/// The mask the pattern found in front of the Softmax.
struct AttentionMaskMatch {
  Value *mask = nullptr;  ///< Additive (q's element type) or boolean.
  bool boolean = false;   ///< From a Where: true keys are visible...
  bool inverted = false;  ///< ... or hidden (masked_fill's Where(hidden, fill, scores)).
  double fill = 0;        ///< A boolean mask's fill, times any scale after the Where.
  /// An additive term added to the scores ahead of the mask (T5's relative
  /// position bias: softmax((s + bias) + mask)); the operand is their sum.
  Value *bias = nullptr;
};

/// The mask operand the fused Attention gets.
struct AttentionMaskPlan {
  enum class Form {
    Causal,        ///< is_causal = 1, no mask operand.
    AsIs,          ///< The mask itself (Not of it for an inverted boolean mask).
    Raised,        ///< Its single value below lowest / 2 raised to lowest / 2.
    VisibleWhere,  ///< A boolean mask as the additive Where(visible, 0, lowest / 2).
    Floored,       ///< Max(bias + mask, lowest / 2).
  };
  Form form = Form::AsIs;
  /// A row dim of 1 to expand to the known query length (ONNX Runtime wants it).
  bool expandRows = false;
  /// For Raised: the value to raise.
  double raise = 0;
};

/// Given the mask, q's element type and the dims of the scores [B, H, Sq,
/// Skv], Result: null with `plan` set when Attention can take the mask
/// exactly (see the file comment); otherwise why not.
const char *planAttentionMask(const AttentionMaskMatch &match, DataType dtype, const Shape &scores,
                              AttentionMaskPlan &plan);

/// Given a planned mask, the query length and the node before which new
/// nodes go, Execute: writes the mask operand, Result: it (null for Causal).
Value *materializeAttentionMask(const AttentionMaskMatch &match, const AttentionMaskPlan &plan, DataType dtype,
                                const Dim &queryLength, Node *pos, Rewriter &rewriter);

} // namespace onnxslim

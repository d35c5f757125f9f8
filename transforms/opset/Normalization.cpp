//===- transforms/opset/Normalization.cpp - BatchNormalization's versions ===//
//
// BatchNormalization-9 dropped `spatial` (7 had it, default 1: statistics
// per channel; 0 meant per activation, which later versions cannot say).
// BatchNormalization-14 replaced the training outputs (mean, var,
// saved_mean, saved_var of 7/9) by `training_mode` and two outputs
// (running_mean, running_var) with another meaning.
//
//   Before (opset 9):                            After (target=14):
//     y, m, v, sm, sv = BatchNormalization(...)    y = BatchNormalization(...)
//     (m, v, sm, sv unused: inference)
//
// Upgrade 7 -> 9: refused when spatial = 0. Upgrade 9 -> 14 and downgrade
// 14 -> 9: the extra outputs must be unused (inference); they are dropped.
// A downgrade with training_mode = 1 is refused (the driver keeps only a 0).
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

namespace onnxslim {
namespace opset {

namespace {

std::string spatial9(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (node.attrInt("spatial", 1) != 1)
      return "spatial=0 (per-activation statistics) has no form from opset 9";
    node.removeAttr("spatial");
  }
  return "";
}

std::string outputs14(Node &node, StepContext &) {
  for (size_t i = 1; i < node.numResults(); ++i)
    if (Value *r = node.result(i); r && r->hasUses())
      return "its training output " + std::to_string(i) + " ('" + r->name() + "') is used, and its meaning changes at 14";
  for (size_t i = node.numResults(); i-- > 1;)
    if (node.result(i))
      node.dropResult(i);
  return "";
}

} // namespace

void registerNormalization(AdapterRegistry &r) {
  r.addBoth("BatchNormalization", 9, spatial9);
  r.addBoth("BatchNormalization", 14, outputs14);
}

} // namespace opset
} // namespace onnxslim

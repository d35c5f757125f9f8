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
// Unused trailing training outputs are dropped, not left as empty slots.
//
// GroupNormalization-21 takes scale and bias per channel [C]; 18 took them
// per group [G] (a spec error, which is why the changelog marks 18
// deprecated; ONNX Runtime still runs it, see isSupersededInPlace).
//
//   Before (opset 18, C = 4, G = 2):            After (target=21):
//     y = GroupNormalization <num_groups = 2>     y = GroupNormalization <num_groups = 2>
//           (x, s = {a, b}, t = {c, d})                 (x, {a, a, b, b}, {c, c, d, d})
//
// Upgrade: scale and bias are constants of G elements and C is known (a
// multiple of G); each value is repeated for the C / G channels of its
// group. Downgrade: refused, even when the per-channel values are equal
// within each group: GroupNormalization-18 is deprecated, so the written
// model would fail onnx.checker and our validator (DESIGN: the output is
// standard ONNX that the checker accepts).
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

#include <cstring>

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

/// Given a constant of `groups` elements and a multiple `channels` of it,
/// Result: each element repeated for the channels / groups channels of its group.
TensorPtr perChannel(const Tensor &t, int64_t groups, int64_t channels) {
  size_t elem = t.byteSize() / static_cast<size_t>(groups);
  std::vector<uint8_t> out(static_cast<size_t>(channels) * elem);
  for (int64_t c = 0; c < channels; ++c)
    std::memcpy(out.data() + static_cast<size_t>(c) * elem,
                t.rawData() + static_cast<size_t>(c / (channels / groups)) * elem, elem);
  return std::make_shared<Tensor>(t.dtype(), std::vector<int64_t>{channels}, Buffer::copyOf(out.data(), out.size()));
}

std::string perChannel21(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down)
    return "GroupNormalization-18 is deprecated in the ONNX spec (onnx.checker rejects it), so it has no form "
           "below opset 21";
  if (node.numOperands() != 3 || !node.operand(0) || !node.operand(1) || !node.operand(2))
    return "it does not have x, scale and bias";
  int64_t groups = node.attrInt("num_groups", 0);
  std::optional<Shape> xs = knownShape(node.operand(0));
  if (groups <= 0 || !xs || xs->size() < 2 || !(*xs)[1].isValue() || (*xs)[1].getValue() % groups != 0)
    return "its channel count is not known to be a multiple of num_groups";
  int64_t channels = (*xs)[1].getValue();
  TensorPtr repeated[3];
  for (size_t i = 1; i < 3; ++i) {
    TensorPtr t = constantTensor(node.operand(i));
    if (!t || !t->isConsistent() || t->rank() != 1 || t->numElements() != groups)
      return "its " + std::string(i == 1 ? "scale" : "bias") + " is not a constant of num_groups (" +
             std::to_string(groups) + ") elements";
    repeated[i] = perChannel(*t, groups, channels);
  }
  for (size_t i = 1; i < 3; ++i) {
    Value *v = ctx.constantBefore(node, node.operand(i)->name() + "_per_channel", repeated[i]);
    clearOperand(node, i);
    node.setOperand(i, v);
  }
  return "";
}

} // namespace

bool isSupersededInPlace(std::string_view op, int64_t sinceVersion) {
  return op == "GroupNormalization" && sinceVersion == 18;
}

void registerNormalization(AdapterRegistry &r) {
  r.addBoth("BatchNormalization", 9, spatial9);
  r.addBoth("BatchNormalization", 14, outputs14);
  r.addBoth("GroupNormalization", 21, perChannel21);
}

} // namespace opset
} // namespace onnxslim

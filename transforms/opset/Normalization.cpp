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
// 14 -> 9 in inference mode: the extra outputs must be unused; they are
// dropped (not left as empty slots).
//
// Downgrade 14 -> 9 with training_mode = 1: the batch's statistics written
// out, and the node itself an inference BatchNormalization on them (the
// spec's training-mode Y is the inference formula on the batch's mean and
// population variance):
//
//   Before (opset 15, x: [N, C, D1, D2]):       After (target=13):
//     y, rm, rv = BatchNormalization              m1 = ReduceMean<axes = [0, 2, 3]>(x)       [1, C, 1, 1]
//       <training_mode = 1, momentum = .9>        d = Sub(x, m1)
//       (x, s, b, mean, var)                      cv = ReduceMean<axes = [0, 2, 3], keepdims = 0>(Mul(d, d))
//                                                 cm = Reshape(m1, [-1])                     [C]
//                                                 rm = Add(Mul(mean, .9), Mul(cm, .1))
//                                                 rv = Add(Mul(var, .9), Mul(cv, .1))
//                                                 y = BatchNormalization(x, s, b, cm, cv)
//
// (ONNX Runtime's CPU kernel computes the same: the sums over N and the
// spatial dims divided by their count, running = input * momentum + batch
// * (1 - momentum), y = x * scale / sqrt(var + epsilon) + bias - mean *
// that.) Conditions: x's rank is known, x, scale, B, input_mean and
// input_var have one element type (BatchNormalization-9 has one T), and
// the node has its running_mean and running_var outputs (used or not):
// without them ONNX Runtime normalizes with input_mean and input_var
// (it trains only when the outputs are there) while the spec uses the
// batch's statistics, so no form computes both and it is declined.
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
#include "transforms/opset/Body.h"

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

/// BatchNormalization-14 with training_mode = 1 -> BatchNormalization-9 in
/// inference mode on the batch's statistics (the file comment's form).
std::string training14To9(Node &node, StepContext &ctx) {
  if (node.numResults() < 3 || !node.result(1) || !node.result(2))
    return "training_mode = 1 without its running_mean and running_var outputs: the spec normalizes with the "
           "batch's statistics, ONNX Runtime (which trains only when they are there) with input_mean and input_var";
  if (node.numOperands() != 5)
    return "it does not have its five inputs";
  for (size_t i = 0; i < 5; ++i)
    if (!node.operand(i))
      return "its input " + std::to_string(i) + " is omitted";
  std::optional<Shape> xs = knownShape(node.operand(0));
  if (!xs || xs->size() < 2)
    return "its input's rank is unknown (the batch statistics' axes need it)";
  std::optional<DataType> t = knownElemType(node.operand(0));
  if (!t || (*t != DataType::Float && *t != DataType::Double && *t != DataType::Float16))
    return "its input's element type is not known to be float, double or float16";
  for (size_t i = 1; i < 5; ++i)
    if (knownElemType(node.operand(i)) != t)
      return "its input " + std::to_string(i) + " ('" + node.operand(i)->name() +
             "') does not have the data's element type (BatchNormalization-9 has one)";
  std::vector<int64_t> axes{0};
  for (int64_t k = 2; k < static_cast<int64_t>(xs->size()); ++k)
    axes.push_back(k);
  float momentum = node.attrFloat("momentum", 0.9f);
  Body b(node, ctx);
  Value *x = node.operand(0);
  // Nodes land at opset 13 (ReduceMean takes its axes as an attribute).
  Value *meanKept = b.op("ReduceMean", {x}, "batch_mean_kept", {aInts("axes", axes), aInt("keepdims", 1)});
  Value *centered = b.op("Sub", {x, meanKept}, "centered");
  Value *squared = b.op("Mul", {centered, centered}, "squared");
  Value *var = b.op("ReduceMean", {squared}, "batch_var", {aInts("axes", axes), aInt("keepdims", 0)});
  Value *mean = b.op("Reshape", {meanKept, b.ints({-1}, "flat")}, "batch_mean");
  // What ONNX Runtime multiplies by: momentum and 1 - momentum in float.
  Value *keep = b.scalar(*t, momentum, "momentum");
  Value *take = b.scalar(*t, 1.0f - momentum, "one_minus_momentum");
  for (size_t i : {size_t{2}, size_t{1}}) {
    if (!node.result(i)->hasUses()) {
      node.dropResult(i);
      continue;
    }
    Value *running = node.operand(i + 2), *batch = i == 1 ? mean : var;
    std::string what = i == 1 ? "running_mean" : "running_var";
    Value *kept = b.op("Mul", {running, keep}, what + "_kept");
    Value *updated = b.op("Add", {kept, b.op("Mul", {batch, take}, what + "_taken")}, what);
    b.moveResult(i, updated);
  }
  node.trimResults();
  node.removeAttr("training_mode");
  node.removeAttr("momentum");
  clearOperand(node, 3);
  clearOperand(node, 4);
  node.setOperand(3, mean);
  node.setOperand(4, var);
  return "";
}

std::string outputs14(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down && node.attrInt("training_mode", 0) != 0)
    return training14To9(node, ctx);
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

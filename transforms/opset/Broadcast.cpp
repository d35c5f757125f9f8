//===- transforms/opset/Broadcast.cpp - Legacy broadcasting (opset < 7) ---===//
//
// Before 7, the binary ops (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal,
// Greater, Less) took `broadcast` and `axis` attributes: without broadcast
// both operands have one shape; with it, B is broadcast to A starting at
// `axis` (default: aligned to A's last dims). From 7 they broadcast the
// numpy way (aligned to the last dims). Gemm-7 dropped `broadcast` (C
// broadcasts either way) and BatchNormalization-7 dropped `is_test`.
// Upgrades only (the targets start at 7).
//
//   Before (opset 6, A: [2, 3, 4], B: [3]):     After (target=7):
//     y = Add<broadcast = 1, axis = 1>(a, b)      s = Constant<value = int64[2] {3, 1}>()
//                                                 b2 = Reshape(b, s)
//                                                 y = Add(a, b2)
//
// The axis case needs B's shape and A's rank: otherwise the node is refused.
// PRelu-7 broadcasts the slope the numpy way too: a slope of one element or
// of X's shape means the same, one per channel ([C], X: [N, C, ...]) is
// reshaped to [C, 1, ...], others are refused.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

namespace onnxslim {
namespace opset {

namespace {

std::string binary7(Node &node, StepContext &ctx) {
  bool broadcast = node.attrInt("broadcast", 0) != 0;
  const Attribute *axisAttr = node.attr("axis");
  if (broadcast && axisAttr) {
    std::optional<Shape> a = knownShape(node.operand(0));
    std::optional<Shape> b = knownShape(node.operand(1));
    if (!a || !b)
      return "it broadcasts at an axis and its operands' shapes are unknown";
    int64_t ra = static_cast<int64_t>(a->size()), rb = static_cast<int64_t>(b->size());
    int64_t axis = axisAttr->i < 0 ? axisAttr->i + ra : axisAttr->i;
    if (axis < 0 || axis + rb > ra)
      return "its broadcast axis " + std::to_string(axisAttr->i) + " does not fit its operands";
    if (axis + rb < ra) {
      std::vector<int64_t> dims;
      for (const Dim &d : *b) {
        if (!d.isValue())
          return "it broadcasts at an axis and B's shape is not static";
        dims.push_back(d.getValue());
      }
      dims.resize(static_cast<size_t>(ra - axis), 1);
      Value *shape = ctx.constantBefore(node, node.operand(1)->name() + "_shape", StepContext::int64s(dims));
      Node *reshape = ctx.nodeBefore(node, "Reshape", {node.operand(1), shape}, node.operand(1)->name() + "_aligned");
      node.setOperand(1, reshape->result(0));
    }
  }
  node.removeAttr("broadcast");
  node.removeAttr("axis");
  return "";
}

std::string gemm7(Node &node, StepContext &) {
  node.removeAttr("broadcast");
  return "";
}

std::string batchNorm7(Node &node, StepContext &) {
  node.removeAttr("is_test");
  for (size_t i = 1; i < node.numResults(); ++i)
    if (Value *r = node.result(i); r && r->hasUses())
      return "its training output " + std::to_string(i) + " is used";
  return "";
}

std::string prelu7(Node &node, StepContext &ctx) {
  std::optional<Shape> x = knownShape(node.operand(0));
  std::optional<Shape> slope = knownShape(node.operand(1));
  std::optional<int64_t> n = slope ? staticNumElements(*slope) : std::nullopt;
  if (n && *n == 1)
    return "";
  if (x && slope && *x == *slope)
    return "";
  // One slope per channel (dim 1): [C] becomes [C, 1, ..., 1].
  if (x && slope && n && slope->size() == 1 && x->size() >= 2 && (*x)[1].isValue() && (*x)[1].getValue() == *n) {
    std::vector<int64_t> dims(x->size() - 1, 1);
    dims[0] = *n;
    Value *slopeIn = node.operand(1);
    Value *shape = ctx.constantBefore(node, slopeIn->name() + "_shape", StepContext::int64s(dims));
    Node *reshape = ctx.nodeBefore(node, "Reshape", {slopeIn, shape}, slopeIn->name() + "_per_channel");
    node.setOperand(1, reshape->result(0));
    return "";
  }
  return "its slope is neither one value, nor one per channel, nor of X's shape (PRelu-7 broadcasts it the numpy way)";
}

} // namespace

void registerBroadcast(AdapterRegistry &r) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"})
    r.add(op, 7, Direction::Up, binary7);
  r.add("Gemm", 7, Direction::Up, gemm7);
  r.add("BatchNormalization", 7, Direction::Up, batchNorm7);
  r.add("PRelu", 7, Direction::Up, prelu7);
}

} // namespace opset
} // namespace onnxslim

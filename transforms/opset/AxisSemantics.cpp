//===- transforms/opset/AxisSemantics.cpp - Softmax, LogSoftmax, Hardmax at 13 ===//
//
// Before 13, Softmax, LogSoftmax and Hardmax coerce their input to 2-D at
// `axis` (default 1): [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)], and
// normalize each row. From 13 they normalize along the single axis `axis`
// (default -1). The two agree when `axis` is the last dim.
//
// Upgrade (11 -> 13):
//   axis is the last dim (rank known, or axis = -1): the axis is written
//   out (the default changed) and nothing else changes. Otherwise:
//     Before:                          After:
//       y = Softmax<axis = 1>(x)         f = Flatten<axis = 1>(x)
//                                        s = Softmax<axis = -1>(f)
//                                        shape = Shape(x)
//                                        y = Reshape(s, shape)
// Downgrade (13 -> 11):
//   axis is the last dim: the same node (axis written out). Otherwise, with
//   the rank known, the axis is moved last and back:
//     Before (rank 3):                 After:
//       y = Softmax<axis = 1>(x)         t = Transpose<perm = [0, 2, 1]>(x)
//                                        s = Softmax<axis = 2>(t)
//                                        y = Transpose<perm = [0, 2, 1]>(s)
//   and refused when the rank is unknown.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

#include <numeric>

namespace onnxslim {
namespace opset {

namespace {

std::string axis13(Node &node, StepContext &ctx) {
  bool up = ctx.direction == Direction::Up;
  int64_t axis = node.attrInt("axis", up ? 1 : -1);
  Value *x = node.operand(0);
  if (!x)
    return "it has no input";
  std::optional<Shape> shape = knownShape(x);
  int64_t rank = shape ? static_cast<int64_t>(shape->size()) : -1; // -1: unknown
  if (rank >= 0 && (axis < -rank || axis >= std::max<int64_t>(rank, 1)))
    return "its axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  bool last = axis == -1 || (rank >= 0 && (axis < 0 ? axis + rank : axis) == rank - 1);
  if (last) {
    node.setAttr(Attribute::makeInt("axis", axis));
    return "";
  }
  std::string op = node.opType();
  if (up) {
    Node *flat = ctx.nodeBefore(node, "Flatten", {x}, nodeBase(node, "flat"));
    flat->setAttr(Attribute::makeInt("axis", axis));
    Node *norm = ctx.nodeBefore(node, op, {flat->result(0)}, nodeBase(node, "2d"));
    norm->setAttr(Attribute::makeInt("axis", -1));
    Node *shapeOf = ctx.nodeBefore(node, "Shape", {x}, nodeBase(node, "shape"));
    node.attributes().clear();
    node.setOpType("Reshape");
    node.resizeOperands(2);
    node.setOperand(0, norm->result(0));
    node.setOperand(1, shapeOf->result(0));
    return "";
  }
  if (rank < 0)
    return "its axis " + std::to_string(axis) + " is not the last one and the input's rank is unknown";
  int64_t a = axis < 0 ? axis + rank : axis;
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(a)], perm.back());
  Node *in = ctx.nodeBefore(node, "Transpose", {x}, nodeBase(node, "moved"));
  in->setAttr(Attribute::makeInts("perm", perm));
  Node *norm = ctx.nodeBefore(node, op, {in->result(0)}, nodeBase(node, "last"));
  norm->setAttr(Attribute::makeInt("axis", rank - 1));
  node.attributes().clear();
  node.setOpType("Transpose");
  node.setOperand(0, norm->result(0));
  node.setAttr(Attribute::makeInts("perm", perm));
  return "";
}

} // namespace

void registerAxisSemantics(AdapterRegistry &r) {
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"})
    r.addBoth(op, 13, axis13);
}

} // namespace opset
} // namespace onnxslim

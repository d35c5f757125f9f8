//===- transforms/opset/Renamed.cpp - Ops replaced, attribute values renamed ===//
//
//   version           change                                  adapter
//   Scatter-11        deprecated, replaced by ScatterElements  upgrade: renamed
//                     (same inputs, axis, semantics)
//   RoiAlign-16       coordinate_transformation_mode added,    upgrade: set to
//                     default half_pixel (10 was               output_half_pixel;
//                     output_half_pixel)                       downgrade needs it
//   GridSample-20     mode bilinear/bicubic renamed            both ways, 4-D only
//                     linear/cubic; N-D inputs                 going down
//   DFT-20            axis attribute -> input 2                both ways
//   CastLike-15       new (Cast with the type of input 1)      downgrade: Cast
//   HardSwish-14      new (x * HardSigmoid(x, 1/6, 0.5))       downgrade: that
//   ScatterElements   Scatter before 11                        downgrade: renamed
//   Shape-15          start, end attributes                    downgrade: Shape
//                                                               then Slice
//   Trilu-14          new                                      downgrade: Where(
//                                                               mask, x, 0), the
//                                                               mask constant, or
//                                                               offsets j - i
//                                                               compared with k
//   Before (opset 10):                 After (target=16):
//     y = RoiAlign(x, rois, idx)         y = RoiAlign<coordinate_transformation_mode =
//                                                     "output_half_pixel">(x, rois, idx)
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

#include <cstdint>

namespace onnxslim {
namespace opset {

namespace {

std::string scatterToElements(Node &node, StepContext &) {
  node.setOpType("ScatterElements");
  return "";
}

std::string roiAlign16(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    node.setAttr(Attribute::makeString("coordinate_transformation_mode", "output_half_pixel"));
    return "";
  }
  std::string m = node.attrString("coordinate_transformation_mode", "half_pixel");
  if (m != "output_half_pixel")
    return "coordinate_transformation_mode '" + m + "' needs opset 16";
  node.removeAttr("coordinate_transformation_mode");
  return "";
}

std::string gridSample20(Node &node, StepContext &ctx) {
  bool up = ctx.direction == Direction::Up;
  std::string mode = node.attrString("mode", up ? "bilinear" : "linear");
  if (!up) {
    std::optional<Shape> s = node.operand(0) ? knownShape(node.operand(0)) : std::nullopt;
    if (!s || s->size() != 4)
      return "GridSample-16 takes 4-D input only (the input's rank is not known to be 4)";
  }
  static const std::pair<const char *, const char *> kNames[] = {{"bilinear", "linear"}, {"bicubic", "cubic"}};
  for (const auto &[older, newer] : kNames)
    if (mode == (up ? older : newer)) {
      node.setAttr(Attribute::makeString("mode", up ? newer : older));
      return "";
    }
  if (node.hasAttr("mode"))
    node.setAttr(Attribute::makeString("mode", mode));
  return "";
}

/// DFT-17 (axis attribute, default 1) <-> DFT-20 (axis input 2, default -2).
std::string dft20(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    Value *axis = ctx.constantBefore(node, nodeBase(node, "axis"),
                                     StepContext::int64s({node.attrInt("axis", 1)}, /*scalar=*/true));
    node.removeAttr("axis");
    node.resizeOperands(3);
    node.setOperand(2, axis);
    return "";
  }
  int64_t axis = -2;
  if (node.operand(2)) {
    std::optional<std::vector<int64_t>> a = constantInts(node.operand(2));
    if (!a || a->size() != 1)
      return "its axis is not a constant";
    axis = (*a)[0];
  }
  if (axis < 0) {
    std::optional<Shape> s = node.operand(0) ? knownShape(node.operand(0)) : std::nullopt;
    if (!s)
      return "its axis is negative and the input's rank is unknown";
    axis += static_cast<int64_t>(s->size());
  }
  node.setAttr(Attribute::makeInt("axis", axis));
  clearOperand(node, 2);
  trimOperands(node);
  return "";
}

/// CastLike-15 -> Cast (before 15): the target type of the second operand.
std::string castLikeToCast(Node &node, StepContext &) {
  std::optional<DataType> t = node.operand(1) ? knownElemType(node.operand(1)) : std::nullopt;
  if (!t)
    return "the element type of its second input is unknown (Cast needs it)";
  node.setOpType("Cast");
  node.setAttr(Attribute::makeInt("to", static_cast<int64_t>(*t)));
  clearOperand(node, 1);
  trimOperands(node);
  return "";
}

/// Given a node, an op, operands and a name part, Execute:
/// writes that op before `node` (StepContext::nodeBefore), Result: its value.
Value *emit(Node &node, StepContext &ctx, const char *op, const std::vector<Value *> &in, std::string_view what) {
  return ctx.nodeBefore(node, op, in, nodeBase(node, what))->result(0);
}

/// Trilu-14 -> Where(mask, x, 0) (before 14), the mask true where
/// j - i >= k (upper) or j - i <= k (lower) for row i and column j of the
/// last two dims, broadcast over the leading dims:
///   k a constant (0 when omitted), the last two dims known: a constant
///   bool mask [N, M];
///   k computed: the column minus row offsets d = j - i, a constant int64
///   [N, M] when the dims are known, else Sub(Range(0, M), Unsqueeze(
///   Range(0, N), [1])) from the input's shape (rank known), compared with
///   k at run time: Not(Less(d, k)) (upper) or Not(Greater(d, k)) (lower).
///   Before (x: float[2,3,4], k: int64):   After (opset 13):
///     y = Trilu(x, k)                        d = Constant<int64[3,4] {0, 1, 2, 3, -1, 0, ...}>()
///                                            m = Not(Less(d, k))
///                                            y = Where(m, x, Constant<float 0>())
std::string triluToWhere(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  std::optional<Shape> s = x ? knownShape(x) : std::nullopt;
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!s || s->size() < 2)
    return "its input is not known to have two dims or more (the mask is over its last two)";
  if (!t || elementSize(*t) == 0)
    return "its input's element type is unknown or has no fixed size (for the zero)";
  bool upper = node.attrInt("upper", 1) != 0;
  bool dimsKnown = (*s)[s->size() - 2].isValue() && s->back().isValue();
  int64_t rows = dimsKnown ? (*s)[s->size() - 2].getValue() : 0, cols = dimsKnown ? s->back().getValue() : 0;
  Value *k = node.numOperands() > 1 ? node.operand(1) : nullptr;
  std::optional<std::vector<int64_t>> kv = k ? constantIntsOperand(node, 1) : std::vector<int64_t>{0};
  if (kv && kv->size() != 1)
    return "its k is not one value";
  Value *m;
  if (kv && dimsKnown) {
    std::vector<uint8_t> mask(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        mask[static_cast<size_t>(i * cols + j)] = upper ? j - i >= (*kv)[0] : j - i <= (*kv)[0];
    m = ctx.constantBefore(node, nodeBase(node, "mask"), Tensor::fromValues(DataType::Bool, {rows, cols}, mask));
  } else {
    if (!k)
      k = ctx.constantBefore(node, nodeBase(node, "k"), StepContext::int64s({0}, /*scalar=*/true));
    Value *d;
    if (dimsKnown) {
      std::vector<int64_t> offsets(static_cast<size_t>(rows * cols));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          offsets[static_cast<size_t>(i * cols + j)] = j - i;
      d = ctx.constantBefore(node, nodeBase(node, "offsets"), Tensor::fromValues(DataType::Int64, {rows, cols}, offsets));
    } else {
      auto r = static_cast<int64_t>(s->size());
      Value *shape = emit(node, ctx, "Shape", {x}, "shape");
      auto dim = [&](int64_t i, const char *what) {
        Value *at = ctx.constantBefore(node, nodeBase(node, what), StepContext::int64s({i}, /*scalar=*/true));
        return emit(node, ctx, "Gather", {shape, at}, what);
      };
      Value *zero = ctx.constantBefore(node, nodeBase(node, "zero_index"), StepContext::int64s({0}, true));
      Value *one = ctx.constantBefore(node, nodeBase(node, "one_index"), StepContext::int64s({1}, true));
      Value *rowIds = emit(node, ctx, "Range", {zero, dim(r - 2, "rows"), one}, "row_ids");
      Value *colIds = emit(node, ctx, "Range", {zero, dim(r - 1, "cols"), one}, "col_ids");
      Value *axes = ctx.constantBefore(node, nodeBase(node, "row_axes"), StepContext::int64s({1}));
      Value *column = emit(node, ctx, "Unsqueeze", {rowIds, axes}, "row_column");
      d = emit(node, ctx, "Sub", {colIds, column}, "offsets");
    }
    Value *outside = emit(node, ctx, upper ? "Less" : "Greater", {d, k}, "outside");
    m = emit(node, ctx, "Not", {outside}, "mask");
  }
  std::vector<uint8_t> zero(elementSize(*t), 0);
  Value *z = ctx.constantBefore(node, nodeBase(node, "zero"), Tensor::fromValues(*t, {}, zero));
  if (node.numOperands() > 1 && kv)
    clearOperand(node, 1);
  node.removeAttr("upper");
  node.setOpType("Where");
  node.resizeOperands(3);
  node.setOperand(0, m);
  node.setOperand(1, x);
  node.setOperand(2, z);
  return "";
}

/// HardSwish-14 -> x * HardSigmoid<alpha = 1/6, beta = 0.5>(x) (before 14).
std::string hardSwishExpanded(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  Node *hs = ctx.nodeBefore(node, "HardSigmoid", {x}, nodeBase(node, "gate"));
  hs->setAttr(Attribute::makeFloat("alpha", 1.0f / 6.0f));
  hs->setAttr(Attribute::makeFloat("beta", 0.5f));
  node.setOpType("Mul");
  node.resizeOperands(2);
  node.setOperand(1, hs->result(0));
  return "";
}

/// ScatterElements-11 -> Scatter-9 (before 11; same meaning).
std::string elementsToScatter(Node &node, StepContext &) {
  node.setOpType("Scatter");
  return "";
}

/// Shape-15 start/end -> Shape, then Slice of the shape (before 15).
std::string shape15(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  int64_t start = node.attrInt("start", 0);
  const Attribute *end = node.attr("end");
  if (start == 0 && !end) {
    node.removeAttr("start");
    return "";
  }
  Node *whole = ctx.nodeBefore(node, "Shape", {node.operand(0)}, nodeBase(node, "whole"));
  Value *starts = ctx.constantBefore(node, nodeBase(node, "start"), StepContext::int64s({start}));
  Value *ends = ctx.constantBefore(node, nodeBase(node, "end"), StepContext::int64s({end ? end->i : INT64_MAX}));
  node.attributes().clear();
  node.setOpType("Slice");
  node.resizeOperands(3);
  node.setOperand(0, whole->result(0));
  node.setOperand(1, starts);
  node.setOperand(2, ends);
  return "";
}

} // namespace

void registerRenamed(AdapterRegistry &r) {
  r.add("Scatter", 11, Direction::Up, scatterToElements);
  r.addBoth("RoiAlign", 16, roiAlign16);
  r.addBoth("GridSample", 20, gridSample20);
  r.addBoth("DFT", 20, dft20);
  r.add("CastLike", 15, Direction::Down, castLikeToCast);
  r.add("HardSwish", 14, Direction::Down, hardSwishExpanded);
  r.add("ScatterElements", 11, Direction::Down, elementsToScatter);
  r.addBoth("Shape", 15, shape15);
  r.add("Trilu", 14, Direction::Down, triluToWhere);
}

} // namespace opset
} // namespace onnxslim

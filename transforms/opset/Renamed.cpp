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
//   Before (opset 10):                 After (target=16):
//     y = RoiAlign(x, rois, idx)         y = RoiAlign<coordinate_transformation_mode =
//                                                     "output_half_pixel">(x, rois, idx)
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

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
    Value *axis = ctx.constantBefore(node, (node.name().empty() ? "DFT" : node.name()) + "_axis",
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

} // namespace

void registerRenamed(AdapterRegistry &r) {
  r.add("Scatter", 11, Direction::Up, scatterToElements);
  r.addBoth("RoiAlign", 16, roiAlign16);
  r.addBoth("GridSample", 20, gridSample20);
  r.addBoth("DFT", 20, dft20);
}

} // namespace opset
} // namespace onnxslim

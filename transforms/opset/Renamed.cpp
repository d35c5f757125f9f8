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
//
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

} // namespace

void registerRenamed(AdapterRegistry &r) {
  r.add("Scatter", 11, Direction::Up, scatterToElements);
  r.addBoth("RoiAlign", 16, roiAlign16);
  r.addBoth("GridSample", 20, gridSample20);
}

} // namespace opset
} // namespace onnxslim

//===- transforms/opset/Resize.cpp - Upsample and Resize versions ---------===//
//
//   version        change                                      adapter
//   Upsample-9     scales attribute -> input 1                 both ways (a
//                                                               constant going down)
//   Upsample-10    deprecated, replaced by Resize-10 (same     the op is renamed
//                  inputs X, scales; modes nearest, linear)     (both ways)
//   Resize-11      inputs X, roi, scales, sizes; coordinate    see below
//                  transformation and nearest rounding modes
//   Resize-13      roi and scales may be omitted;              downgrade: empty
//                  tf_half_pixel_for_nn dropped                 constants; upgrade
//                                                               refuses that mode
//   Resize-18      antialias, axes, keep_aspect_ratio_policy   version only
//   Resize-19      coordinate mode half_pixel_symmetric        downgrade refuses it
//
//   Before (opset 10):                    After (target=11):
//     y = Resize<mode = "nearest">(x, s)    roi = Constant<value = float[0] {}>()
//                                           y = Resize<coordinate_transformation_mode = "asymmetric",
//                                                      mode = "nearest", nearest_mode = "floor">(x, roi, s)
//
// Resize-10 (and Upsample) maps output index i to input i / scale, and
// nearest takes its floor: Resize-11's "asymmetric" coordinates with
// nearest_mode "floor". Going back needs exactly those modes, no sizes
// input, no cubic mode.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/fusion/FusionUtils.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {
namespace opset {

namespace {

TensorPtr emptyFloats() { return Tensor::fromValues(DataType::Float, {0}, std::vector<float>{}); }

std::string upsample9(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (!node.hasAttr("scales"))
      return "it has no scales";
    const Attribute *a = node.attr("scales");
    TensorPtr t = Tensor::fromValues(DataType::Float, {static_cast<int64_t>(a->floats.size())}, a->floats);
    Value *s = ctx.constantBefore(node, nodeBase(node, "scales"), t);
    node.removeAttr("scales");
    node.resizeOperands(2);
    node.setOperand(1, s);
    return "";
  }
  std::optional<std::vector<double>> s = node.operand(1) ? constantDoubles(node.operand(1)) : std::nullopt;
  if (!s)
    return "its scales are not a constant";
  node.setAttr(Attribute::makeFloats("scales", std::vector<float>(s->begin(), s->end())));
  clearOperand(node, 1);
  node.resizeOperands(1);
  return "";
}

std::string upsampleToResize(Node &node, StepContext &) {
  node.setOpType("Resize");
  return "";
}

std::string resize11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    Value *scales = node.operand(1);
    Value *roi = ctx.constantBefore(node, nodeBase(node, "roi"), emptyFloats());
    node.resizeOperands(3);
    node.setOperand(1, roi);
    node.setOperand(2, scales);
    node.setAttr(Attribute::makeString("coordinate_transformation_mode", "asymmetric"));
    if (node.attrString("mode", "nearest") == "nearest")
      node.setAttr(Attribute::makeString("nearest_mode", "floor"));
    return "";
  }
  std::string mode = node.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    return "mode '" + mode + "' needs opset 11";
  if (node.attrString("coordinate_transformation_mode", "half_pixel") != "asymmetric")
    return "coordinate_transformation_mode '" + node.attrString("coordinate_transformation_mode", "half_pixel") +
           "' needs opset 11 (Resize-10 is 'asymmetric')";
  if (mode == "nearest" && node.attrString("nearest_mode", "round_prefer_floor") != "floor")
    return "nearest_mode '" + node.attrString("nearest_mode", "round_prefer_floor") +
           "' needs opset 11 (Resize-10 rounds down)";
  if (node.attrInt("exclude_outside", 0) != 0)
    return "exclude_outside needs opset 11";
  if (node.operand(3))
    return "it is given sizes, which need opset 11";
  Value *scales = node.operand(2);
  if (!scales)
    return "it has no scales";
  for (const char *a : {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                        "extrapolation_value"})
    node.removeAttr(a);
  node.resizeOperands(3);
  node.setOperand(2, nullptr);
  Value *roi = node.operand(1);
  node.setOperand(1, scales);
  node.resizeOperands(2);
  if (Node *def = roi ? roi->definingNode() : nullptr; def && def->is("Constant") && def->resultsUnused())
    def->erase();
  return "";
}

std::string resize13(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    // Resize-13 dropped this coordinate mode (x_in = (x_out + 0.5) / scale).
    if (node.attrString("coordinate_transformation_mode", "half_pixel") == "tf_half_pixel_for_nn")
      return "coordinate_transformation_mode 'tf_half_pixel_for_nn' has no form from opset 13";
  } else {
    if (node.numOperands() < 3)
      node.resizeOperands(3);
    if (!node.operand(1))
      node.setOperand(1, ctx.constantBefore(node, nodeBase(node, "roi"), emptyFloats()));
    if (!node.operand(2))
      node.setOperand(2, ctx.constantBefore(node, nodeBase(node, "scales"), emptyFloats()));
  }
  return "";
}

std::string resize19(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down &&
      node.attrString("coordinate_transformation_mode", "half_pixel") == "half_pixel_symmetric")
    return "coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19";
  return "";
}

std::string bump(Node &, StepContext &) { return ""; }

/// Resize-10 -> Upsample-9 (before 10): the same inputs and modes.
std::string resizeToUpsample(Node &node, StepContext &) {
  node.setOpType("Upsample");
  return "";
}

} // namespace

void registerResize(AdapterRegistry &r) {
  r.addBoth("Upsample", 9, upsample9);
  r.add("Upsample", 10, Direction::Up, upsampleToResize);
  r.add("Resize", 10, Direction::Down, resizeToUpsample);
  r.addBoth("Resize", 11, resize11);
  r.addBoth("Resize", 13, resize13);
  r.addBoth("Resize", 18, bump);
  r.addBoth("Resize", 19, resize19);
}

} // namespace opset
} // namespace onnxslim

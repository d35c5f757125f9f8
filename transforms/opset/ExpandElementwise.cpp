//===- transforms/opset/ExpandElementwise.cpp - Activations and quantization written out ===//
//
// (Being written: see Adapter.h.)
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

namespace onnxslim {
namespace opset {

void registerElementwiseExpansions(AdapterRegistry &r) { (void)r; }

} // namespace opset
} // namespace onnxslim

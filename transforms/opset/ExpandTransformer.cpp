//===- transforms/opset/ExpandTransformer.cpp - Expansions of the transformer ops for older opsets ===//
//
// (Being written: see Adapter.h.)
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

namespace onnxslim {
namespace opset {

void registerTransformerExpansions(AdapterRegistry &r) { (void)r; }

} // namespace opset
} // namespace onnxslim

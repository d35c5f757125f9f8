//===- transforms/opset/ExpandFunctions.cpp - Expansions of newer ops into older ones ===//
//
// (Being written: see Adapter.h.)
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

namespace onnxslim {
namespace opset {

void registerFunctionExpansions(AdapterRegistry &r) { (void)r; }

} // namespace opset
} // namespace onnxslim

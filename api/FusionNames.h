//===- api/FusionNames.h - Fusions to skip, resolved --------------*- C++ -*-===//
//
// What optimize() makes of OptimizeOptions::skipFusions with the table of
// OnnxSlim's fusion names (onnxslimFusionNames(), api/FusionNames.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "onnxslim/onnxslim.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace onnxslim {

/// Fusions to skip, as changes to the pipeline.
struct FusionSkips {
  /// Passes left out of the pipeline.
  std::vector<std::string> passes;
  /// Per pass, the options added to its entries ("skip=conv-transpose").
  std::map<std::string, std::vector<std::string>> options;
};

/// Given OnnxSlim's optimization names, Result: the passes they name, or
/// the error naming the first unknown name and listing the known ones.
Result<std::vector<std::string>> resolveOptimizationSkips(const std::vector<std::string> &names);

/// Given a name that is neither OnnxSlim's nor a fusion pass's, Result:
/// the message saying so, listing OnnxSlim's names.
std::string unknownFusionMessage(std::string_view name);

/// Given fusion names (OnnxSlim's, or fuse-* passes of `registry`),
/// Result: what to skip, or the error naming the first unknown name.
Result<FusionSkips> resolveFusionSkips(const std::vector<std::string> &names, const PassRegistry &registry);

} // namespace onnxslim

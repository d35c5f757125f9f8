//===- tools/Summary.h - Before/after model statistics ---------*- C++ -*-===//
#pragma once

#include "ir/IR.h"
#include "transforms/ModelCheck.h"

#include <map>
#include <ostream>
#include <string>

namespace onnxslim::tools {

/// Counts of one model, taken before or after the pipeline.
struct ModelStats {
  std::map<std::string, size_t> opCounts; ///< "Domain.Op" or "Op", subgraphs included
  size_t nodes = 0;                       ///< subgraphs included
  size_t initializers = 0;                ///< main graph
  size_t constantBytes = 0;               ///< initializer + Constant-node tensor bytes
  long long fileBytes = -1;
};

ModelStats collectStats(const Model &model);

/// Prints the summary table: op-type counts, nodes, initializers, file size
/// and time, one column before and one after.
void printSummary(std::ostream &os, const std::string &inPath, const ModelStats &before,
                  const std::string &outPath, const ModelStats &after, double seconds);

/// Prints one line with what the model check measured.
void printModelCheck(std::ostream &os, const CheckFigures &figures);

} // namespace onnxslim::tools

//===- tools/Summary.h - Before/after model statistics ---------*- C++ -*-===//
#pragma once

#include "onnxslim/onnxslim.h"

#include <map>
#include <ostream>
#include <string>

namespace onnxslim::tools {

/// Counts of one model, taken before or after the pipeline, and its file size.
struct ModelStats : ModelCounts {
  long long fileBytes = -1;
};

ModelStats collectStats(const Model &model);

/// Prints the summary table: op-type counts, nodes, initializers, file size
/// and time, one column before and one after.
void printSummary(std::ostream &os, const std::string &inPath, const ModelStats &before,
                  const std::string &outPath, const ModelStats &after, double seconds);

/// Prints one line with what the model check measured.
void printModelCheck(std::ostream &os, const CheckReport &check);

} // namespace onnxslim::tools

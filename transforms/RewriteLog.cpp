//===- transforms/RewriteLog.cpp - Every rewrite of a pipeline run --------===//
#include "transforms/RewriteLog.h"

#include "ir/IR.h"

namespace onnxslim {

std::string rewriteKey(const Node &node) {
  for (size_t i = 0; i < node.numResults(); ++i)
    if (const Value *r = node.result(i))
      return r->name();
  return node.name();
}

bool RewriteLog::allows(std::string_view pattern, std::string_view key) const {
  if (exhausted())
    return false;
  return blocked_.empty() || !blocked_.count({std::string(pattern), std::string(key)});
}

void RewriteLog::record(RewriteRecord record) {
  inexact_ += !record.exact;
  records_.push_back(std::move(record));
}

} // namespace onnxslim

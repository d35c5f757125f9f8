//===- frontend/NestingLimit.h - How deep subgraphs may nest ---*- C++ -*-===//
//
// Internal to frontend/. Both frontends (protobuf and textual syntax) refuse,
// at load time, a model whose subgraphs (If/Loop/Scan bodies, any graph
// attribute) nest more than kMaxSubgraphDepth levels below the main graph,
// with one line naming the file and the nodes on the way down. Every later
// walk of the IR recurses per nesting level (passes, shape inference, the
// interpreter, the printer, the writer), so this bound is what keeps all of
// them within the stack: a hostile model of a few hundred kilobytes can
// otherwise nest thousands of levels. Real models nest a handful.
//
// Messages the loader leaves to protobuf (functions, training_info, types)
// are bounded by protobuf's own recursion limit (kProtobufRecursionLimit
// nested messages), which fails the parse cleanly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace onnxslim::frontend {

/// Subgraph levels below the main graph that a model may have.
constexpr size_t kMaxSubgraphDepth = 64;

/// Nested messages protobuf may parse (its default, stated explicitly).
constexpr int kProtobufRecursionLimit = 100;

/// One level of a nesting path: "name(Op).attr", or "Op.attr" for an unnamed node.
inline std::string nestingLevel(const std::string &nodeName, const std::string &opType,
                                const std::string &attrName) {
  std::string op = opType.empty() ? std::string("?") : opType;
  std::string attr = attrName.empty() ? std::string("?") : attrName;
  return (nodeName.empty() ? op : nodeName + "(" + op + ")") + "." + attr;
}

/// The error for a path of `levels` (outermost first) that went one level
/// too deep: "subgraphs nested more than 64 levels deep: a(If).then_branch >
/// ... (58 more) ... > z(If).else_branch", the middle elided.
inline std::string nestingTooDeep(const std::vector<std::string> &levels) {
  constexpr size_t kShown = 3; // levels shown at each end
  std::string path;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels.size() > 2 * kShown + 1 && i == kShown) {
      path += " > ... (" + std::to_string(levels.size() - 2 * kShown) + " more) ...";
      i = levels.size() - kShown - 1;
      continue;
    }
    path += (i ? " > " : "") + levels[i];
  }
  return "subgraphs nested more than " + std::to_string(kMaxSubgraphDepth) +
         " levels deep: " + path;
}

} // namespace onnxslim::frontend

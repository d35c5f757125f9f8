//===- tools/Summary.cpp - Before/after model statistics ------------------===//
#include "tools/Summary.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace onnxslim::tools {

namespace {
std::string human(long long bytes) {
  if (bytes < 0)
    return "-";
  char buf[32];
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%lld B", bytes);
  else if (bytes < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024));
  return buf;
}
} // namespace

ModelStats collectStats(const Model &model) {
  ModelStats s;
  static_cast<ModelCounts &>(s) = countModel(model);
  return s;
}

void printSummary(std::ostream &os, const std::string &inPath, const ModelStats &before,
                  const std::string &outPath, const ModelStats &after, double seconds) {
  std::set<std::string> ops;
  for (const auto &[op, n] : before.opCounts)
    ops.insert(op);
  for (const auto &[op, n] : after.opCounts)
    ops.insert(op);
  size_t width = 16;
  for (const std::string &op : ops)
    width = std::max(width, op.size() + 2);

  auto row = [&](const std::string &label, const std::string &a, const std::string &b) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "| %-*s | %14s | %14s |\n", static_cast<int>(width),
                  label.c_str(), a.c_str(), b.c_str());
    os << buf;
  };
  std::string rule = "+" + std::string(width + 2, '-') + "+" + std::string(16, '-') + "+" +
                     std::string(16, '-') + "+\n";
  os << rule;
  row("", "before", "after");
  os << rule;
  for (const std::string &op : ops) {
    auto count = [&](const ModelStats &s) {
      auto it = s.opCounts.find(op);
      return std::to_string(it == s.opCounts.end() ? 0 : it->second);
    };
    row(op, count(before), count(after));
  }
  os << rule;
  row("nodes", std::to_string(before.nodes), std::to_string(after.nodes));
  row("initializers", std::to_string(before.initializers), std::to_string(after.initializers));
  row("constant bytes", human(static_cast<long long>(before.constantBytes)),
      human(static_cast<long long>(after.constantBytes)));
  row("file size", human(before.fileBytes), human(after.fileBytes));
  char t[32];
  std::snprintf(t, sizeof t, "%.3f s", seconds);
  row("time", "", t);
  os << rule;
  os << "in:  " << inPath << "\nout: " << outPath << "\n";
}

void printModelCheck(std::ostream &os, const CheckReport &figures) {
  char buf[256];
  if (figures.provedStructurally) {
    std::snprintf(buf, sizeof buf,
                  "model check: proved without running the model: all %zu rewrite(s) are exact by construction "
                  "(%.3f s)\n",
                  figures.rewrites, figures.seconds);
    os << buf;
    return;
  }
  std::snprintf(buf, sizeof buf, "model check: %zu output(s) match, max abs diff %.3g, max rel diff %.3g (%.3f s)",
                figures.outputs, figures.maxAbsDiff, figures.maxRelDiff, figures.seconds);
  os << buf;
  if (figures.rewrites)
    os << "; " << figures.rewrites << " rewrite(s), " << figures.exactRewrites << " exact by construction";
  if (!figures.tolerances.empty())
    os << "; tolerance of " << figures.tolerances;
  if (!figures.dims.empty())
    os << "; dims " << figures.dims;
  os << "\n";
}

} // namespace onnxslim::tools

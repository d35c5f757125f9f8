//===- tests/transforms/OpsetAdaptersTest.cpp - The adapter table is complete -===//
//
// convert-opset needs an adapter for every step of every op between two of
// its versions, both ways, and an expansion for every op newer than a
// target (transforms/opset/Adapter.h). This test derives the steps from
// the schema table (ir/OpSchema.h) and checks each against the registered
// adapters, so that a new schema version or a forgotten direction fails
// here instead of declining on a user's model:
//
//   up     (op, s) for consecutive versions p < s of an op, s >= 7 a real
//          version or the deprecation that replaces the op (Upsample-10);
//          older steps only matter for models older than opset 7, which
//          the converter takes only as far as their adapters go
//   down   (op, s) for consecutive versions p < s, s > 7 (the oldest
//          target), neither a deprecation
//   expand (op, s) for an op's first version s > 7 (no older form)
//
// The few steps with no adapter are listed below, each with the reason the
// target cannot express it; a listed step that gets an adapter fails too
// (the list stays exact). ONNXSLIM_PRINT_GAPS=1 prints the current gaps in
// the list's syntax.
//
//===----------------------------------------------------------------------===//
#include "ir/OpSchema.h"
#include "transforms/opset/Adapter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace onnxslim {
namespace {

using opset::Direction;

enum class Kind { Up, Down, Expand };

struct Gap {
  const char *op;
  int version;
  Kind kind;
  const char *reason;
};

// Steps that have no exact form in the older (or newer) opset.
const std::vector<Gap> kGaps = {
#include "OpsetAdapterGaps.inc"
};

const char *kindName(Kind k) { return k == Kind::Up ? "Up" : k == Kind::Down ? "Down" : "Expand"; }

/// Every step the schema table implies, as (op, since-version, kind).
std::vector<std::tuple<std::string, int, Kind>> requiredSteps() {
  std::map<std::string, std::vector<const OpSchema *>> byOp;
  for (const OpSchema &s : allOpSchemas())
    if (s.domain.empty())
      byOp[std::string(s.opType)].push_back(&s);
  std::vector<std::tuple<std::string, int, Kind>> out;
  for (const auto &entry : byOp) {
    const std::vector<const OpSchema *> &versions = entry.second;
    const OpSchema *first = versions.front();
    if (!first->deprecated && first->sinceVersion > 7)
      out.emplace_back(entry.first, first->sinceVersion, Kind::Expand);
    for (size_t i = 1; i < versions.size(); ++i) {
      const OpSchema *p = versions[i - 1], *s = versions[i];
      if (p->deprecated) {
        // Re-introduced after a deprecation: the new first version.
        if (!s->deprecated && s->sinceVersion > 7 && !opset::isSupersededInPlace(entry.first, p->sinceVersion))
          out.emplace_back(entry.first, s->sinceVersion, Kind::Expand);
        continue;
      }
      if (s->sinceVersion >= 7)
        out.emplace_back(entry.first, s->sinceVersion, Kind::Up);
      if (!s->deprecated && s->sinceVersion > 7)
        out.emplace_back(entry.first, s->sinceVersion, Kind::Down);
    }
  }
  return out;
}

bool registered(const std::string &op, int version, Kind kind) {
  const opset::AdapterRegistry &adapters = opset::builtinAdapters();
  return adapters.find(op, version, kind == Kind::Up ? Direction::Up : Direction::Down) != nullptr;
}

TEST(OpsetAdapters, EveryStepHasAnAdapterOrAListedReason) {
  std::set<std::tuple<std::string, int, Kind>> listed;
  for (const Gap &g : kGaps) {
    EXPECT_TRUE(listed.emplace(g.op, g.version, g.kind).second)
        << g.op << "-" << g.version << " " << kindName(g.kind) << " is listed twice";
    EXPECT_TRUE(g.reason && *g.reason) << g.op << "-" << g.version << " is listed without a reason";
  }
  bool print = std::getenv("ONNXSLIM_PRINT_GAPS") != nullptr;
  std::set<std::tuple<std::string, int, Kind>> required;
  for (const auto &step : requiredSteps()) {
    required.insert(step);
    const auto &[op, version, kind] = step;
    if (registered(op, version, kind)) {
      EXPECT_FALSE(listed.count(step)) << op << "-" << version << " " << kindName(kind)
                                       << " has an adapter now: remove it from OpsetAdapterGaps.inc";
      continue;
    }
    if (print)
      std::cout << "{\"" << op << "\", " << version << ", Kind::" << kindName(kind) << ", \"\"},\n";
    EXPECT_TRUE(listed.count(step)) << "no adapter for " << op << "-" << version << " " << kindName(kind)
                                    << " (transforms/opset/): write one, or list the step in "
                                       "tests/transforms/OpsetAdapterGaps.inc with the reason no exact form exists";
  }
  for (const Gap &g : kGaps)
    EXPECT_TRUE(required.count({g.op, g.version, g.kind}))
        << g.op << "-" << g.version << " " << kindName(g.kind) << " is listed but is not a step of the schema table";
}

} // namespace
} // namespace onnxslim

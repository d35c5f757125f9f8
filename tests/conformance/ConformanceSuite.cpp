//===- tests/conformance/ConformanceSuite.cpp - Shared conformance code ---===//
//
// Case discovery, the tolerance and input-shape exceptions (each with its
// reason), input naming, output comparison and the report against
// expected_failures.txt, shared by the in-process and command-line runners.
//
//===----------------------------------------------------------------------===//
#include "tests/conformance/ConformanceSuite.h"

#include "frontend/DataFile.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace onnxslim::conformance {
namespace {

const char *const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
constexpr double kRtol = 1e-3, kAtol = 1e-5;

/// Cases whose reference outputs need a looser tolerance, with the reason.
struct Tolerance {
  const char *name;
  double rtol, atol;
  const char *why;
};
// The reference data truncates float to bfloat16; we round to nearest even
// (as current ONNX and ONNX Runtime do): at most one bfloat16 ulp (2^-8
// relative) apart.
const char *const kBf16Rounding = "reference truncates to bfloat16; we round to nearest even";
const std::vector<Tolerance> kTolerances = {
    {"node/test_cast_FLOAT_to_BFLOAT16", 1e-2, 1e-5, kBf16Rounding},
    {"node/test_castlike_FLOAT_to_BFLOAT16", 1e-2, 1e-5, kBf16Rounding},
    {"node/test_castlike_FLOAT_to_BFLOAT16_expanded", 1e-2, 1e-5, kBf16Rounding},
};

/// Cases whose test data contradicts the model's declared input shapes; the
/// interpreter's input-shape check is off for them only.
struct Relaxed {
  const char *name;
  const char *why;
};
const std::vector<Relaxed> kUncheckedInputShapes = {
    {"node/test_castlike_BFLOAT16_to_FLOAT", "input 'like' is declared rank 2, stored rank 1"},
    {"node/test_castlike_BFLOAT16_to_FLOAT_expanded", "input 'like' is declared rank 2, stored rank 1"},
    {"node/test_castlike_FLOAT_to_BFLOAT16", "input 'like' is declared rank 2, stored rank 1"},
    {"node/test_castlike_FLOAT_to_BFLOAT16_expanded", "input 'like' is declared rank 2, stored rank 1"},
};

/// A one-line reason for expected_failures.txt, derived from the error.
std::string reasonFor(const CaseResult &r) {
  const std::string &m = r.reason;
  size_t u = m.find("unsupported op ");
  if (u != std::string::npos) {
    std::string rest = m.substr(u);
    size_t stop = rest.find(" (");
    size_t colon = rest.find(':');
    return rest.substr(0, std::min(stop, colon));
  }
  if (m.find("mismatches") != std::string::npos || m.find("expected") != std::string::npos)
    return "wrong result: " + m;
  return "error: " + m;
}

/// suite/case -> reason, from expected_failures.txt.
std::map<std::string, std::string> readExpected(const std::string &path) {
  std::map<std::string, std::string> reasons;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    size_t hash = line.find('#');
    std::string reason = hash == std::string::npos ? "" : line.substr(hash + 1);
    std::string key = line.substr(0, hash);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t\r") + 1);
    if (key.empty())
      continue;
    reason.erase(0, reason.find_first_not_of(' '));
    reasons[key] = reason;
  }
  return reasons;
}

} // namespace

std::vector<Case> collectCases(const fs::path &dataDir, const std::string &onlySuite, const std::string &filter) {
  std::vector<Case> cases;
  for (const char *suite : kSuites) {
    if (!onlySuite.empty() && onlySuite != suite)
      continue;
    std::vector<fs::path> dirs;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dataDir / suite, ec))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path &d : dirs) {
      std::string name = std::string(suite) + "/" + d.filename().string();
      if (filter.empty() || name.find(filter) != std::string::npos)
        cases.push_back({d, name});
    }
  }
  return cases;
}

std::vector<fs::path> testDataSets(const fs::path &caseDir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(caseDir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<fs::path> numbered(const fs::path &dir, const std::string &prefix) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 3 && n.substr(n.size() - 3) == ".pb")
      found.emplace_back(std::atoi(n.c_str() + prefix.size()), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto &[i, p] : found)
    out.push_back(p);
  return out;
}

void toleranceFor(const std::string &caseName, double &rtol, double &atol) {
  rtol = kRtol;
  atol = kAtol;
  for (const Tolerance &t : kTolerances)
    if (caseName == t.name) {
      rtol = t.rtol;
      atol = t.atol;
    }
}

bool checksInputShapes(const std::string &caseName) {
  return std::none_of(kUncheckedInputShapes.begin(), kUncheckedInputShapes.end(),
                      [&](const Relaxed &r) { return caseName == r.name; });
}

std::string inputNameFor(const Graph &graph, size_t i, const fs::path &file) {
  DataValue peek;
  std::string ignored;
  if (loadDataFileAnyKind(file.string(), peek, ignored) && !peek.name.empty())
    for (const Value *v : graph.inputs())
      if (v->name() == peek.name)
        return peek.name;
  return i < graph.inputs().size() ? graph.input(i)->name() : "";
}

std::string compareOutputs(const Graph &graph, const std::vector<fs::path> &expectedFiles,
                           const std::vector<rt::RtValue> &actual, double rtol, double atol) {
  if (expectedFiles.size() != actual.size())
    return std::to_string(actual.size()) + " outputs, " + std::to_string(expectedFiles.size()) + " expected";
  for (size_t i = 0; i < expectedFiles.size(); ++i) {
    const GraphOutput &slotInfo = graph.outputSlots()[i];
    std::optional<Type> ty = slotInfo.type;
    if (!ty && slotInfo.use.get())
      ty = slotInfo.use.get()->type();
    std::optional<DataValue::Kind> kind = dataKindOf(ty);
    if (!kind)
      return "output " + std::to_string(i) + ": its declared type has no data-file form";
    DataValue expected;
    std::string error;
    if (!loadDataFile(expectedFiles[i].string(), *kind, expected, error))
      return error;
    // The file may name another output than its position says.
    size_t slot = i;
    if (!expected.name.empty())
      for (size_t k = 0; k < graph.numOutputs(); ++k)
        if (graph.output(k) && graph.output(k)->name() == expected.name)
          slot = k;
    if (actual[slot].isTensor())
      relabelStoredBFloat16(expected, Type::tensor(actual[slot].tensor->dtype()));
    rt::Comparison c = rt::compareValues(actual[slot], rt::fromDataValue(expected), rtol, atol);
    if (!c.ok) {
      std::ostringstream os;
      os << "output " << slot << ": " << c.message;
      if (c.mismatches > 0)
        os << " [" << c.mismatches << " mismatches, max abs diff " << c.maxAbsDiff << "]";
      return os.str();
    }
  }
  return "";
}

std::string shorten(std::string s, size_t max) {
  for (char &c : s)
    if (c == '\n')
      c = ' ';
  if (s.size() > max)
    s = s.substr(0, max) + "...";
  return s;
}

size_t report(const std::vector<CaseResult> &results, const std::string &expectedPath,
              const std::string &writeExpected, const std::string &label, double wallSeconds, unsigned jobs) {
  std::map<std::string, std::string> expected = readExpected(expectedPath);
  std::map<std::string, std::pair<int, int>> perSuite;
  std::vector<const CaseResult *> regressions, fixed;
  int passed = 0, failed = 0;
  for (const CaseResult &r : results) {
    auto &counts = perSuite[r.name.substr(0, r.name.find('/'))];
    bool listed = expected.count(r.name) != 0;
    if (r.passed) {
      ++counts.first;
      ++passed;
      if (listed)
        fixed.push_back(&r);
    } else {
      ++counts.second;
      ++failed;
      if (!listed)
        regressions.push_back(&r);
    }
  }
  for (const char *suite : kSuites) {
    if (!perSuite.count(suite))
      continue;
    std::cout << suite << ": " << perSuite[suite].first << " passed, " << perSuite[suite].second << " failed\n";
    for (const CaseResult &r : results)
      if (!r.passed && r.name.rfind(std::string(suite) + "/", 0) == 0)
        std::cout << "  failing: " << r.name << (expected.count(r.name) ? " (expected)" : " (UNEXPECTED)") << ": "
                  << r.reason << "\n";
  }
  // Slowest cases, to keep the suite fast.
  std::vector<const CaseResult *> byTime;
  for (const CaseResult &r : results)
    byTime.push_back(&r);
  std::sort(byTime.begin(), byTime.end(),
            [](const CaseResult *a, const CaseResult *b) { return a->seconds > b->seconds; });
  std::cout << "slowest cases:";
  for (size_t i = 0; i < std::min<size_t>(5, byTime.size()); ++i)
    std::cout << " " << byTime[i]->name << " (" << byTime[i]->seconds << " s)";
  std::cout << "\nwall time: " << wallSeconds << " s on " << jobs << " threads\n";

  if (!writeExpected.empty()) {
    std::ofstream out(writeExpected);
    out << "# Conformance cases that are known to fail, one per line: suite/case  # reason\n"
           "# The conformance test fails on any failure not listed here and on any listed case\n"
           "# that passes. Regenerate with: conformance_tests --write-expected FILE\n";
    for (const CaseResult &r : results)
      if (!r.passed) {
        auto it = expected.find(r.name);
        out << r.name << "  # " << (it != expected.end() && !it->second.empty() ? it->second : reasonFor(r)) << "\n";
      }
    std::cout << "wrote " << writeExpected << "\n";
  }
  for (const CaseResult *r : regressions)
    std::cout << "REGRESSION (not in expected_failures.txt): " << r->name << ": " << r->reason << "\n";
  for (const CaseResult *r : fixed)
    std::cout << "NOW PASSES (remove it from expected_failures.txt): " << r->name << "\n";
  size_t unexpected = regressions.size() + fixed.size();
  std::cout << label << ": " << passed << " passed, " << failed << " failed ("
            << failed - static_cast<int>(regressions.size()) << " expected, " << unexpected
            << " unexpected results)\n";
  return unexpected;
}

} // namespace onnxslim::conformance

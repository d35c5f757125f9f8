//===- tests/conformance/ConformanceSuite.h - Shared conformance code -*- C++ -*-===//
//
// What the two conformance runners share: the in-process one
// (ConformanceRunner.cpp, the interpreter called directly) and the
// command-line one (CliConformance.cpp, `onnxslim run` as a process). Both
// find the same cases of Debian's libonnx-testdata, feed each
// test_data_set_*/input_N.pb to the same graph input, compare the outputs
// with output_N.pb under the same tolerances, and judge the results against
// the same tests/conformance/expected_failures.txt. Data files are read by
// the library (frontend/DataFile), as the kind of value the graph declares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "runtime/Kernel.h"

#include <filesystem>
#include <string>
#include <vector>

namespace onnxslim::conformance {

namespace fs = std::filesystem;

/// One conformance case: <data>/<suite>/<case>/ with model.onnx.
struct Case {
  fs::path dir;
  std::string name; ///< suite/case
};

/// Given the data directory and optional filters, Result: the cases of the
/// node, pytorch-converted, pytorch-operator and simple suites, sorted.
std::vector<Case> collectCases(const fs::path &dataDir, const std::string &onlySuite, const std::string &filter);

/// The test_data_set_* directories of a case, sorted.
std::vector<fs::path> testDataSets(const fs::path &caseDir);

/// Files named <prefix><N>.pb in a directory, in numeric order.
std::vector<fs::path> numbered(const fs::path &dir, const std::string &prefix);

/// The comparison tolerances of a case (rtol 1e-3, atol 1e-5 unless it has
/// a justified exception).
void toleranceFor(const std::string &caseName, double &rtol, double &atol);

/// Whether the case's test data agrees with its declared input shapes (a
/// few cases store inputs of another rank; the check is off for them only).
bool checksInputShapes(const std::string &caseName);

/// Given a graph and input file number `i`, Result: the name of the graph
/// input it feeds: the one its own name field names, else the i-th input
/// ("" when there is none).
std::string inputNameFor(const Graph &graph, size_t i, const fs::path &file);

/// Given a graph, the expected output files of one data set and the actual
/// outputs (in graph order), Execute: reads each expected file as the kind
/// its output declares and compares, Result: "" or why the set fails.
std::string compareOutputs(const Graph &graph, const std::vector<fs::path> &expectedFiles,
                           const std::vector<rt::RtValue> &actual, double rtol, double atol);

struct CaseResult {
  std::string name; ///< suite/case
  bool passed = false;
  std::string reason;
  double seconds = 0;
};

/// Shortens an error to one line for the report.
std::string shorten(std::string s, size_t max = 240);

/// Given the results and the expected-failures file, Execute: prints
/// per-suite counts, failures, the slowest cases and the totals under
/// `label` (and writes a new expected-failures file when `writeExpected` is
/// set), Result: the number of unexpected results (unlisted failures and
/// listed cases that pass).
size_t report(const std::vector<CaseResult> &results, const std::string &expectedPath,
              const std::string &writeExpected, const std::string &label, double wallSeconds, unsigned jobs);

} // namespace onnxslim::conformance

//===- tests/text/TextConformanceTest.cpp - Text round trip of real models ===//
//
// For every model.onnx of the ONNX conformance suite (node, pytorch-converted,
// pytorch-operator, simple) and every fetched real model: load the binary
// model, print it with all constants, parse the text, and require the parsed
// IR to equal the loaded one (ir/Equivalence) and to print to the same text
// again (a fixed point). Also reports printer and parser throughput.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "frontend/TextParser.h"
#include "ir/Equivalence.h"
#include "ir/Printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;

struct Throughput {
  size_t bytes = 0;
  double printSeconds = 0;
  double parseSeconds = 0;
};

/// Runs the round trip on one file; returns "" or the first problem.
std::string roundTripFile(const std::string &path, Throughput &tp) {
  std::string error;
  auto binary = loadModel(path, error);
  if (!binary)
    return "load failed: " + error;
  PrintOptions all;
  all.printLargeConstants = true;
  auto t0 = std::chrono::steady_clock::now();
  std::string text = toText(*binary, all);
  auto t1 = std::chrono::steady_clock::now();
  auto parsed = parseModelText(text, error, path + ".txt");
  auto t2 = std::chrono::steady_clock::now();
  tp.bytes += text.size();
  tp.printSeconds += std::chrono::duration<double>(t1 - t0).count();
  tp.parseSeconds += std::chrono::duration<double>(t2 - t1).count();
  if (!parsed)
    return "parse failed: " + error;
  if (auto d = firstDifference(*binary, *parsed))
    return "parsed text differs from the binary model: " + *d;
  if (toText(*parsed, all) != text)
    return "printing the parsed model does not give the same text";
  return "";
}

void report(const char *what, size_t count, const Throughput &tp) {
  auto rate = [&](double s) { return s > 0 ? tp.bytes / 1e6 / s : 0.0; };
  std::cout << what << ": " << count << " models round-tripped, " << tp.bytes / 1e6 << " MB of text; print "
            << rate(tp.printSeconds) << " MB/s, parse " << rate(tp.parseSeconds) << " MB/s\n";
}

TEST(TextRoundTripConformance, ConformanceModels) {
  fs::path root = ONNXSLIM_TESTDATA_DIR;
  ASSERT_TRUE(fs::is_directory(root)) << "ONNX conformance data not found at " << root
                                      << ": run scripts/setup.sh (installs Debian's libonnx-testdata)";
  std::vector<std::string> models;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = root / suite;
    ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing: run scripts/setup.sh";
    for (const auto &entry : fs::directory_iterator(dir))
      if (fs::exists(entry.path() / "model.onnx"))
        models.push_back((entry.path() / "model.onnx").string());
  }
  std::sort(models.begin(), models.end());
  ASSERT_GE(models.size(), 1000u) << "expected the 1072 conformance models under " << root;
  Throughput tp;
  size_t failures = 0;
  for (const std::string &path : models) {
    std::string problem = roundTripFile(path, tp);
    if (!problem.empty() && ++failures <= 20)
      ADD_FAILURE() << path << ": " << problem;
  }
  EXPECT_EQ(failures, 0u) << failures << " of " << models.size() << " models failed";
  report("conformance", models.size() - failures, tp);
}

TEST(TextRoundTripConformance, RealModels) {
  fs::path cache = ONNXSLIM_MODEL_CACHE;
  std::vector<std::string> models;
  if (fs::is_directory(cache))
    for (const auto &entry : fs::directory_iterator(cache))
      if (entry.path().extension() == ".onnx")
        models.push_back(entry.path().string());
  std::sort(models.begin(), models.end());
  ASSERT_FALSE(models.empty()) << "no real models in " << cache << ": run scripts/fetch-models.sh";
  Throughput total;
  size_t failures = 0;
  for (const std::string &path : models) {
    Throughput tp;
    std::string problem = roundTripFile(path, tp);
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << path << ": " << problem;
      continue;
    }
    std::cout << "  " << fs::path(path).filename().string() << ": " << tp.bytes / 1e6 << " MB text, print "
              << tp.bytes / 1e6 / tp.printSeconds << " MB/s, parse " << tp.bytes / 1e6 / tp.parseSeconds << " MB/s\n";
    total.bytes += tp.bytes;
    total.printSeconds += tp.printSeconds;
    total.parseSeconds += tp.parseSeconds;
  }
  EXPECT_EQ(failures, 0u);
  report("real models", models.size() - failures, total);
}

} // namespace
} // namespace onnxslim

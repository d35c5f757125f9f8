//===- tests/validate/CorpusValidateTest.cpp - Valid models validate clean ===//
//
// Every ONNX conformance model (Debian's libonnx-testdata) and every fetched
// real model is valid ONNX, so the validator must find nothing in any of
// them: a diagnostic here is a false positive (a validator bug), unless the
// model is listed in kKnownInvalid with the reason it really is invalid.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/Validate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

namespace fs = std::filesystem;
using namespace onnxslim;

namespace {

/// Models of the corpora that are really invalid ONNX, with the reason.
const std::map<std::string, std::string> kKnownInvalid = {
};

size_t validateTree(const fs::path &root, const std::string &suffix, std::string &failures) {
  size_t count = 0;
  std::vector<fs::path> files;
  for (const auto &entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().string().ends_with(suffix))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path &path : files) {
    std::string rel = fs::relative(path, root).string();
    std::string error;
    std::unique_ptr<Model> model = loadModel(path.string(), error);
    if (!model) {
      failures += "  " + rel + ": does not load: " + error + "\n";
      continue;
    }
    ++count;
    ValidateOptions opts;
    opts.file = rel;
    opts.maxDiagnostics = 3;
    std::vector<std::string> problems = validate(*model, opts);
    bool known = kKnownInvalid.count(rel) != 0;
    if (problems.empty() && known)
      failures += "  " + rel + ": listed as invalid but validates clean\n";
    if (!problems.empty() && !known)
      for (const std::string &p : problems)
        failures += "  " + p + "\n";
  }
  return count;
}

} // namespace

TEST(CorpusValidate, ConformanceModelsValidateClean) {
  fs::path root = ONNXSLIM_TESTDATA_DIR;
  ASSERT_TRUE(fs::is_directory(root)) << root << " is missing: run scripts/setup.sh or `apt-get install libonnx-testdata`";
  std::string failures;
  size_t count = validateTree(root, "model.onnx", failures);
  EXPECT_GT(count, 1000u);
  EXPECT_TRUE(failures.empty()) << "validator diagnostics on conformance models:\n" << failures;
}

TEST(CorpusValidate, RealModelsValidateClean) {
  fs::path root = ONNXSLIM_MODEL_CACHE;
  ASSERT_TRUE(fs::is_directory(root)) << root << " is missing: run scripts/fetch-models.sh";
  std::string failures;
  size_t count = 0;
  for (const auto &entry : fs::directory_iterator(root))
    if (entry.path().extension() == ".onnx")
      ++count;
  ASSERT_GE(count, 10u) << "real models missing from " << root << ": run scripts/fetch-models.sh";
  std::vector<fs::path> files;
  validateTree(root, ".onnx", failures);
  EXPECT_TRUE(failures.empty()) << "validator diagnostics on real models:\n" << failures;
}

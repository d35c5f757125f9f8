//===- tests/roundtrip/RoundTripConformance.cpp - Every conformance model -===//
//
// Every model.onnx of the ONNX conformance suite (node, pytorch-converted,
// pytorch-operator, simple) must load, pass the IR verifier and serialize
// back equal, field by field, to the file.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/RoundTripUtil.h"

#include <filesystem>
#include <iostream>

using namespace onnxslim::testing;

TEST(RoundTripConformance, EveryModel) {
  std::string dir = ONNXSLIM_TESTDATA_DIR;
  if (!std::filesystem::is_directory(dir))
    FAIL() << "ONNX conformance data not found at " << dir
           << ": run scripts/setup.sh or `apt-get install libonnx-testdata`";
  auto models = conformanceModels(dir);
  ASSERT_GT(models.size(), 0u) << "no model.onnx under " << dir
                               << ": run scripts/setup.sh or `apt-get install libonnx-testdata`";
  size_t ok = 0, identical = 0;
  for (const std::string &path : models) {
    RoundTripResult r = roundTripFile(path);
    if (r.ok)
      ++ok;
    else
      ADD_FAILURE() << path << ": " << r.message;
    identical += r.byteIdentical;
  }
  std::cout << ok << " models round-tripped (of " << models.size() << "; " << identical
            << " byte-identical)\n";
  EXPECT_EQ(ok, models.size());
}

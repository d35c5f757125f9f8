//===- tests/roundtrip/LoaderErrorsTest.cpp - Malformed input files -------===//
//
// Truncated, corrupted and non-protobuf files give a one-line error naming
// the file; the loader never crashes or reads out of bounds (run this test
// under -DONNXSLIM_SANITIZE=ON to have the last point checked).
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "frontend/Loader.h"

#include <google/protobuf/stubs/logging.h>

#include <random>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

/// Loads a private heap copy of exactly `bytes` (so a sanitizer sees any
/// read past its end).
std::unique_ptr<Model> loadBytes(const std::string &bytes, std::string &error) {
  return loadModelFromString(bytes, "bad.onnx", ".", error);
}

bool isOneLine(const std::string &s) { return s.find('\n') == std::string::npos; }

/// A model exercising every scanned path: initializer, Constant tensors, an
/// If whose branches hold Constants and capture an outer value.
std::string richModel() {
  onnx::ModelProto m = addModel(16);
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  auto *c = addNode(g, "Constant", {}, {"k"}, "const");
  auto *ca = c->add_attribute();
  ca->set_name("value");
  ca->set_type(onnx::AttributeProto::TENSOR);
  ca->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  ca->mutable_t()->add_dims(2);
  ca->mutable_t()->set_raw_data(std::string(8, '\x11'));
  auto *iff = addNode(g, "If", {"cond"}, {"z"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *a = iff->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto *body = a->mutable_g();
    body->set_name(branch);
    auto *bc = addNode(*body, "Constant", {}, {std::string(branch) + "_k"});
    auto *ba = bc->add_attribute();
    ba->set_name("value");
    ba->set_type(onnx::AttributeProto::TENSOR);
    ba->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    ba->mutable_t()->add_dims(2);
    ba->mutable_t()->set_raw_data(std::string(8, '\x22'));
    addNode(*body, "Add", {"k", std::string(branch) + "_k"}, {std::string(branch) + "_out"});
    addOutput(*body, std::string(branch) + "_out");
  }
  addOutput(g, "z");
  return m.SerializeAsString();
}

} // namespace

TEST(LoaderErrors, EmptyFile) {
  std::string error;
  EXPECT_FALSE(loadBytes("", error));
  EXPECT_EQ(error, "bad.onnx: the file is empty (not an ONNX model)");
}

TEST(LoaderErrors, MissingFile) {
  std::string error;
  EXPECT_FALSE(loadModel("/nonexistent/dir/model.onnx", error));
  EXPECT_NE(error.find("/nonexistent/dir/model.onnx: cannot open: No such file"), std::string::npos)
      << error;
}

TEST(LoaderErrors, NotProtobuf) {
  std::string error;
  EXPECT_FALSE(loadBytes("<html><body>Not found</body></html>\n", error));
  EXPECT_EQ(error.rfind("bad.onnx: ", 0), 0u) << error;
  EXPECT_TRUE(isOneLine(error));
  EXPECT_FALSE(loadBytes("ir_version: 8\ngraph { name: \"g\" }\n", error));
  EXPECT_EQ(error.rfind("bad.onnx: ", 0), 0u) << error;
}

TEST(LoaderErrors, BadWireType) {
  std::string error;
  EXPECT_FALSE(loadBytes(std::string("\x0F\x01", 2), error)); // field 1, wire type 7
  EXPECT_NE(error.find("invalid wire type 7"), std::string::npos) << error;
}

TEST(LoaderErrors, LengthPastEnd) {
  std::string error;
  EXPECT_FALSE(loadBytes(std::string("\x3A\x10\x01", 3), error)); // graph claims 16 bytes
  EXPECT_NE(error.find("claims 16 bytes but only 1 remain"), std::string::npos) << error;
}

TEST(LoaderErrors, OverlongVarint) {
  std::string error;
  EXPECT_FALSE(loadBytes(std::string("\x08") + std::string(11, '\xFF'), error));
  EXPECT_NE(error.find("not a valid varint"), std::string::npos) << error;
}

TEST(LoaderErrors, EveryTruncationFailsCleanly) {
  std::string full = richModel();
  std::string error;
  ASSERT_TRUE(loadBytes(full, error)) << error;
  size_t failures = 0;
  for (size_t len = 1; len < full.size(); ++len) {
    error.clear();
    auto m = loadBytes(full.substr(0, len), error);
    if (!m) {
      ++failures;
      EXPECT_EQ(error.rfind("bad.onnx: ", 0), 0u) << error;
      EXPECT_TRUE(isOneLine(error)) << error;
    }
  }
  // Only cuts exactly between two model fields can leave a valid (smaller) model.
  EXPECT_GT(failures, full.size() - 8);
}

TEST(LoaderErrors, TruncatedRawDataNamesTheInitializer) {
  std::string full = addModel(256).SerializeAsString();
  std::string error;
  EXPECT_FALSE(loadBytes(full.substr(0, full.size() / 2), error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(LoaderErrors, TruncatedFileOnDisk) {
  TempDir dir;
  std::string full = addModel(256).SerializeAsString();
  writeFile(dir.file("cut.onnx"), full.substr(0, full.size() - 100));
  std::string error;
  EXPECT_FALSE(loadModel(dir.file("cut.onnx"), error));
  EXPECT_EQ(error.rfind(dir.file("cut.onnx") + ": ", 0), 0u) << error;
}

TEST(LoaderErrors, RandomCorruptionNeverCrashes) {
  // Debug builds of protobuf log invalid UTF-8 in string fields; not an error here.
  google::protobuf::LogSilencer quiet;
  std::string full = richModel();
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pos(0, full.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string bytes = full;
    int flips = 1 + iter % 4;
    for (int k = 0; k < flips; ++k)
      bytes[pos(rng)] = static_cast<char>(byte(rng));
    std::string error;
    auto m = loadBytes(bytes, error);
    if (!m) {
      EXPECT_FALSE(error.empty());
      EXPECT_TRUE(isOneLine(error)) << error;
    }
  }
}

TEST(LoaderErrors, BadExternalReferenceNamesTheTensor) {
  onnx::ModelProto m = addModel();
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  std::string error;
  EXPECT_FALSE(loadBytes(m.SerializeAsString(), error));
  EXPECT_EQ(error, "bad.onnx: graph 'g' / initializer 'w': data_location is EXTERNAL but "
                   "external_data has no location");
}

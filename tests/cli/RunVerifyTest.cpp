//===- tests/cli/RunVerifyTest.cpp - `onnxslim run` and `verify` ----------===//
//
// Runs the real binary: `run` writes each output as a TensorProto whose
// values are the model's function of the given inputs; `verify` passes on a
// model against itself and fails (non-zero exit, MISMATCH in its report) on a
// copy whose weight was changed, both on a small model and on a real one;
// interfaces that differ are a clear error.
//
//===----------------------------------------------------------------------===//
#include "schema/onnx.pb.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include "tests/cli/CliTestUtil.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
namespace pb = onnxslim::onnx;

namespace {

using onnxslim::clitest::readFile;
using onnxslim::clitest::RunResult;

void writeProto(const fs::path &p, const google::protobuf::MessageLite &m) {
  std::ofstream out(p, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

RunResult onnxslim(const std::string &args, const fs::path &dir) { return onnxslim::clitest::runOnnxslim(args, dir); }

/// y = Add(x, w) over float[4], w an initializer with the given values.
pb::ModelProto addModel(const float (&w)[4], const std::string &inputName = "x") {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto *op = m.add_opset_import();
  op->set_version(13);
  auto *g = m.mutable_graph();
  g->set_name("g");
  auto *x = g->add_input();
  x->set_name(inputName);
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  auto *init = g->add_initializer();
  init->set_name("w");
  init->set_data_type(1);
  init->add_dims(4);
  init->set_raw_data(std::string(reinterpret_cast<const char *>(w), sizeof(w)));
  auto *n = g->add_node();
  n->set_name("add0");
  n->set_op_type("Add");
  n->add_input(inputName);
  n->add_input("w");
  n->add_output("y");
  auto *y = g->add_output();
  y->set_name("y");
  *y->mutable_type() = x->type();
  return m;
}

class RunVerify : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxslim-runverify-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunVerify, RunWritesOutputsComputedFromInputFiles) {
  const float w[4] = {1, 2, 3, 4};
  writeProto(dir_ / "m.onnx", addModel(w));
  pb::TensorProto x;
  x.set_name("x");
  x.set_data_type(1);
  x.add_dims(4);
  for (float v : {10.f, 20.f, 30.f, 40.f})
    x.add_float_data(v);
  writeProto(dir_ / "x.pb", x);
  RunResult r = onnxslim("run " + (dir_ / "m.onnx").string() + " --input " + (dir_ / "x.pb").string() +
                             " --output-dir " + (dir_ / "out").string(),
                         dir_);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  pb::TensorProto y;
  ASSERT_TRUE(y.ParseFromString(readFile(dir_ / "out" / "y.pb")));
  EXPECT_EQ(y.name(), "y");
  ASSERT_EQ(y.dims_size(), 1);
  EXPECT_EQ(y.dims(0), 4);
  ASSERT_EQ(y.raw_data().size(), 16u);
  float got[4];
  std::memcpy(got, y.raw_data().data(), 16);
  EXPECT_FLOAT_EQ(got[0], 11);
  EXPECT_FLOAT_EQ(got[3], 44);
}

TEST_F(RunVerify, RunRejectsAnInputFileForAnUnknownName) {
  const float w[4] = {1, 2, 3, 4};
  writeProto(dir_ / "m.onnx", addModel(w));
  pb::TensorProto x;
  x.set_name("nope");
  x.set_data_type(1);
  x.add_dims(4);
  writeProto(dir_ / "x.pb", x);
  RunResult r = onnxslim("run " + (dir_ / "m.onnx").string() + " --input " + (dir_ / "x.pb").string(), dir_);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("'nope' is not an input"), std::string::npos) << r.err;
}

TEST_F(RunVerify, VerifyPassesOnEqualAndFailsOnChangedWeight) {
  const float w[4] = {1, 2, 3, 4}, w2[4] = {1, 2, 3.5f, 4};
  writeProto(dir_ / "a.onnx", addModel(w));
  writeProto(dir_ / "b.onnx", addModel(w2));
  std::string a = (dir_ / "a.onnx").string(), b = (dir_ / "b.onnx").string();
  RunResult same = onnxslim("verify " + a + " " + a + " --samples 3", dir_);
  EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("equivalent: 3 sample(s)"), std::string::npos) << same.out;
  RunResult diff = onnxslim("verify " + a + " " + b, dir_);
  EXPECT_EQ(diff.exitCode, 1) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("MISMATCH"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("NOT equivalent"), std::string::npos) << diff.out;
  // A looser tolerance accepts it: the difference is exactly 0.5.
  RunResult loose = onnxslim("verify " + a + " " + b + " --atol 0.6", dir_);
  EXPECT_EQ(loose.exitCode, 0) << loose.out;
}

TEST_F(RunVerify, VerifyRefusesDifferentInterfaces) {
  const float w[4] = {1, 2, 3, 4};
  writeProto(dir_ / "a.onnx", addModel(w, "x"));
  writeProto(dir_ / "b.onnx", addModel(w, "z"));
  RunResult r = onnxslim("verify " + (dir_ / "a.onnx").string() + " " + (dir_ / "b.onnx").string(), dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("interfaces differ"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("input 'x'"), std::string::npos) << r.err;
}

// A real model against itself, and against a copy whose largest weight
// (initializer or Constant node) is scaled by 1.1.
TEST_F(RunVerify, VerifyOnRealModelDetectsChangedWeight) {
  fs::path model = fs::path(ONNXSLIM_MODEL_CACHE) / "ppocr_cls.onnx";
  ASSERT_TRUE(fs::exists(model)) << model << " missing: run scripts/fetch-models.sh";
  std::string spec = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json:ppocr_cls";
  RunResult same = onnxslim("verify " + model.string() + " " + model.string() + " --input-specs " + spec, dir_);
  EXPECT_EQ(same.exitCode, 0) << same.out << same.err;

  pb::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(readFile(model)));
  // Paddle exports keep weights in raw_data or in float_data: scale either.
  auto count = [](const pb::TensorProto &t) {
    return t.has_raw_data() ? static_cast<int>(t.raw_data().size() / 4) : t.float_data_size();
  };
  pb::TensorProto *largest = nullptr;
  auto consider = [&](pb::TensorProto &t) {
    if (t.data_type() == 1 && (!largest || count(t) > count(*largest)))
      largest = &t;
  };
  // Initializers, and Constant nodes (where Paddle keeps its weights).
  for (auto &t : *m.mutable_graph()->mutable_initializer())
    consider(t);
  for (auto &n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == "Constant")
      for (auto &a : *n.mutable_attribute())
        if (a.name() == "value" && a.has_t())
          consider(*a.mutable_t());
  ASSERT_NE(largest, nullptr);
  ASSERT_GT(count(*largest), 0);
  if (largest->has_raw_data()) {
    std::string raw = largest->raw_data();
    for (size_t i = 0; i + 4 <= raw.size(); i += 4) {
      float v;
      std::memcpy(&v, raw.data() + i, 4);
      v *= 1.1f;
      std::memcpy(raw.data() + i, &v, 4);
    }
    largest->set_raw_data(raw);
  } else {
    for (int i = 0; i < largest->float_data_size(); ++i)
      largest->set_float_data(i, largest->float_data(i) * 1.1f);
  }
  writeProto(dir_ / "altered.onnx", m);
  RunResult diff =
      onnxslim("verify " + model.string() + " " + (dir_ / "altered.onnx").string() + " --input-specs " + spec, dir_);
  EXPECT_EQ(diff.exitCode, 1) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("MISMATCH"), std::string::npos) << diff.out;
}

} // namespace

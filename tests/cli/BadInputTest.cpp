//===- tests/cli/BadInputTest.cpp - The command line on bad input ---------===//
//
// Runs the real `onnxslim` binary on broken inputs and checks, for each: a
// non-zero exit, one clear line on stderr that names the file (and the node
// and op where there is one), the input file byte-for-byte unchanged, and no
// output or temporary file left behind.
//
//===----------------------------------------------------------------------===//
#include "schema/onnx.pb.h"

#include "tests/cli/CliTestUtil.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
namespace pb = onnxslim::onnx;

namespace {

using onnxslim::clitest::readFile;
using onnxslim::clitest::RunResult;
using onnxslim::clitest::runOnnxslim;
using onnxslim::clitest::writeFile;

/// A valid model: y = Relu(x) over float[2], opset 13.
pb::ModelProto validModel() {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto *op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto *g = m.mutable_graph();
  g->set_name("g");
  auto *x = g->add_input();
  x->set_name("x");
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  auto *n = g->add_node();
  n->set_name("relu0");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  auto *y = g->add_output();
  y->set_name("y");
  *y->mutable_type() = x->type();
  return m;
}

class BadInput : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxslim-badinput-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `onnxslim IN OUT` on `bytes` and checks everything the issue asks.
  std::string expectRejected(const std::string &bytes, const std::string &outName = "out.onnx") {
    fs::path in = dir_ / "in.onnx";
    writeFile(in, bytes);
    fs::path out = dir_ / outName;
    RunResult r = runOnnxslim(in.string() + " " + out.string(), dir_);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.exitCode, -1) << "onnxslim crashed";
    EXPECT_EQ(readFile(in), bytes) << "the input file was modified";
    EXPECT_FALSE(fs::exists(out)) << "an output was written for a bad input";
    for (const auto &entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path(), in) << "left behind: " << entry.path();
    // One line, naming the input file.
    std::string text = r.err;
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_NE(text.find(in.string()), std::string::npos) << text;
    return text;
  }

  fs::path dir_;
};

TEST_F(BadInput, ValidModelIsAccepted) {
  fs::path in = dir_ / "in.onnx";
  fs::path out = dir_ / "out.onnx";
  std::string bytes = validModel().SerializeAsString();
  writeFile(in, bytes);
  RunResult r = runOnnxslim(in.string() + " " + out.string(), dir_);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(readFile(in), bytes);
}

TEST_F(BadInput, SameInputAndOutputPathKeepsInputUntilRename) {
  fs::path in = dir_ / "in.onnx";
  std::string bytes = validModel().SerializeAsString();
  writeFile(in, bytes);
  RunResult r = runOnnxslim(in.string() + " " + in.string(), dir_);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  pb::ModelProto reread;
  ASSERT_TRUE(reread.ParseFromString(readFile(in)));
  EXPECT_EQ(reread.graph().node_size(), 1);
  for (const auto &entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path(), in) << "left behind: " << entry.path();
}

TEST_F(BadInput, TruncatedFile) {
  std::string bytes = validModel().SerializeAsString();
  expectRejected(bytes.substr(0, bytes.size() - 7));
}

TEST_F(BadInput, NotProtobuf) { expectRejected("this is not an ONNX model at all\n\x01\x02\x03"); }

TEST_F(BadInput, EmptyFile) { expectRejected(""); }

TEST_F(BadInput, GraphWithACycle) {
  pb::ModelProto m = validModel();
  auto *g = m.mutable_graph();
  // a = Neg(b); b = Neg(a); y = Relu(x) stays.
  auto *n1 = g->add_node();
  n1->set_name("neg_a");
  n1->set_op_type("Neg");
  n1->add_input("b");
  n1->add_output("a");
  auto *n2 = g->add_node();
  n2->set_name("neg_b");
  n2->set_op_type("Neg");
  n2->add_input("a");
  n2->add_output("b");
  std::string err = expectRejected(m.SerializeAsString());
  EXPECT_NE(err.find("cycle"), std::string::npos) << err;
  EXPECT_NE(err.find("Neg"), std::string::npos) << err;
}

TEST_F(BadInput, OperandNamesNoValue) {
  pb::ModelProto m = validModel();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  std::string err = expectRejected(m.SerializeAsString());
  EXPECT_NE(err.find("relu0"), std::string::npos) << err;
  EXPECT_NE(err.find("Relu"), std::string::npos) << err;
  EXPECT_NE(err.find("nowhere"), std::string::npos) << err;
}

TEST_F(BadInput, OperandNamesNoValueInsideSubgraph) {
  pb::ModelProto m = validModel();
  auto *g = m.mutable_graph();
  auto *cond = g->add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(9);
  auto *ifNode = g->add_node();
  ifNode->set_name("branch");
  ifNode->set_op_type("If");
  ifNode->add_input("cond");
  ifNode->add_output("z");
  for (const char *name : {"then_branch", "else_branch"}) {
    auto *a = ifNode->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::GRAPH);
    auto *body = a->mutable_g();
    body->set_name(name);
    auto *inner = body->add_node();
    inner->set_name("inner_abs");
    inner->set_op_type("Abs");
    inner->add_input(std::string(name) == "else_branch" ? "ghost" : "x");
    inner->add_output(std::string(name) + "_out");
    body->add_output()->set_name(std::string(name) + "_out");
  }
  std::string err = expectRejected(m.SerializeAsString());
  EXPECT_NE(err.find("ghost"), std::string::npos) << err;
  EXPECT_NE(err.find("inner_abs"), std::string::npos) << err;
  EXPECT_NE(err.find("else_branch"), std::string::npos) << err; // the subgraph path
}

TEST_F(BadInput, ExternalDataOutsideModelDirectory) {
  pb::ModelProto m = validModel();
  auto *w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(2);
  w->set_data_location(pb::TensorProto::EXTERNAL);
  auto *loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("../outside.bin");
  std::string err = expectRejected(m.SerializeAsString());
  EXPECT_NE(err.find("outside.bin"), std::string::npos) << err;
}

TEST_F(BadInput, ExternalDataPastEndOfFile) {
  pb::ModelProto m = validModel();
  writeFile(dir_ / "weights.bin", std::string(4, '\0'));
  auto *w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(2); // 8 bytes, the file has 4
  w->set_data_location(pb::TensorProto::EXTERNAL);
  auto *loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  auto *length = w->add_external_data();
  length->set_key("length");
  length->set_value("8");
  fs::path in = dir_ / "in.onnx";
  std::string bytes = m.SerializeAsString();
  writeFile(in, bytes);
  RunResult r = runOnnxslim(in.string() + " " + (dir_ / "out.onnx").string(), dir_);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("weights.bin"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  EXPECT_EQ(readFile(in), bytes);
}

TEST_F(BadInput, OutputInMissingDirectory) {
  fs::path in = dir_ / "in.onnx";
  std::string bytes = validModel().SerializeAsString();
  writeFile(in, bytes);
  fs::path out = dir_ / "no" / "such" / "dir" / "out.onnx";
  RunResult r = runOnnxslim(in.string() + " " + out.string(), dir_);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(out.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "no"));
  EXPECT_EQ(readFile(in), bytes);
}

TEST_F(BadInput, MissingInputFile) {
  fs::path in = dir_ / "does-not-exist.onnx";
  RunResult r = runOnnxslim(in.string() + " " + (dir_ / "out.onnx").string(), dir_);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find(in.string()), std::string::npos) << r.err;
}

} // namespace

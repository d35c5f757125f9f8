//===- tests/validate/CliValidateTest.cpp - The CLI refuses invalid models -===//
//
// Runs the real `onnxslim` binary on one invalid model per rejection class
// (built as protobuf bytes: most of these cannot be written in the textual
// syntax) and checks what issue 10 asks: one line on stderr naming the file
// and what is wrong, a non-zero exit, the input unchanged and no output (nor
// temporary file) left. Then `onnxslim check`, `dump` and `--allow-invalid`.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include "tests/cli/CliTestUtil.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using namespace onnxslim::testing;
namespace pb = onnxslim::onnx;

namespace {

using onnxslim::clitest::readFile;
using onnxslim::clitest::RunResult;
using onnxslim::clitest::writeFile;

RunResult run(const std::string &args, const fs::path &dir) { return onnxslim::clitest::runOnnxslim(args, dir); }

pb::AttributeProto *addAttr(pb::NodeProto *n, const std::string &name, pb::AttributeProto::AttributeType type) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

pb::ModelProto ifModel(const std::function<void(pb::GraphProto &, const std::string &)> &fill) {
  pb::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", pb::TensorProto::BOOL, {});
  addInput(g, "x");
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *body = addAttr(iff, branch, pb::AttributeProto::GRAPH)->mutable_g();
    body->set_name(branch);
    fill(*body, branch);
  }
  addOutput(g, "y");
  return m;
}

struct Case {
  const char *name;
  std::function<pb::ModelProto()> make;
  const char *expect; ///< in the one line
};

const std::vector<Case> &cases() {
  static const std::vector<Case> list = {
      {"RawDataTooShort",
       [] {
         auto m = addModel(4);
         m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(12);
         return m;
       },
       "initializer 'w' has 12 bytes of raw_data but float [4] needs 16 bytes"},
      {"RawDataTooLong",
       [] {
         auto m = addModel(4);
         m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->append(4, '\0');
         return m;
       },
       "initializer 'w' has 20 bytes of raw_data"},
      {"TypedCountWrong",
       [] {
         auto m = addModel(4);
         auto *w = m.mutable_graph()->mutable_initializer(0);
         w->clear_raw_data();
         w->add_float_data(1);
         return m;
       },
       "initializer 'w' has 1 elements of typed data but float [4] needs 4"},
      {"NegativeDim",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
         return m;
       },
       "initializer 'w' has a negative dim"},
      {"DimsOverflow",
       [] {
         auto m = addModel(2);
         auto *w = m.mutable_graph()->mutable_initializer(0);
         w->set_dims(0, int64_t(1) << 40);
         w->add_dims(int64_t(1) << 40);
         return m;
       },
       "more elements than int64 can count"},
      {"DimsExceedData",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t(1) << 40);
         return m;
       },
       "needs 4398046511104 bytes"},
      {"UnknownDataType",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_initializer(0)->set_data_type(99);
         return m;
       },
       "initializer 'w' has unknown data type 99"},
      {"EmptyOpType",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_node(0)->set_op_type("");
         return m;
       },
       "node has an empty op_type"},
      {"AttributeWrongType",
       [] {
         auto m = baseModel();
         auto &g = *m.mutable_graph();
         addInput(g, "x", 1, {2, 3});
         addAttr(addNode(g, "Transpose", {"x"}, {"y"}, "t0"), "perm", pb::AttributeProto::FLOAT)->set_f(1);
         addOutput(g, "y", 1, {3, 2});
         return m;
       },
       "node 't0' (Transpose): attribute 'perm' is float but Transpose-13 wants ints"},
      {"RequiredAttributeMissing",
       [] {
         auto m = baseModel();
         auto &g = *m.mutable_graph();
         addInput(g, "x");
         addNode(g, "Cast", {"x"}, {"y"}, "cast0");
         addOutput(g, "y");
         return m;
       },
       "node 'cast0' (Cast): required attribute 'to' of Cast-13 is missing"},
      {"TooManyInputs",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_node(0)->add_input("x");
         return m;
       },
       "node 'add0' (Add): has 3 inputs but Add-14 takes 2"},
      {"TooFewInputs",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
         return m;
       },
       "node 'add0' (Add): has 1 inputs but Add-14 takes 2"},
      {"TooManyOutputs",
       [] {
         auto m = addModel(2);
         m.mutable_graph()->mutable_node(0)->add_output("extra");
         return m;
       },
       "node 'add0' (Add): has 2 outputs but Add-14 gives 1"},
      {"OpNotInOpset",
       [] {
         auto m = baseModel();
         auto &g = *m.mutable_graph();
         addInput(g, "x");
         addNode(g, "Gelu", {"x"}, {"y"}, "gelu0");
         addOutput(g, "y");
         return m;
       },
       "node 'gelu0' (Gelu): op Gelu does not exist in opset 17"},
      {"SubgraphRedefinesOuterName",
       [] {
         return ifModel([](pb::GraphProto &body, const std::string &branch) {
           std::string out = branch == "then_branch" ? "x" : "e";
           addNode(body, "Identity", {"cond"}, {out}, branch + "_id");
           addOutput(body, out, pb::TensorProto::BOOL, {});
         });
       },
       "'x' redefines a name of an enclosing graph"},
      {"MissingOpsetImport",
       [] {
         auto m = addModel(2);
         m.clear_opset_import();
         return m;
       },
       "ir_version 8 (>= 3) needs opset_import"},
      {"DuplicateOpsetImport",
       [] {
         auto m = addModel(2);
         auto *op = m.add_opset_import();
         op->set_domain("ai.onnx");
         op->set_version(13);
         return m;
       },
       "opset_import lists domain 'ai.onnx' twice"},
      {"OpsetImportBelowIr3",
       [] {
         auto m = addModel(2);
         m.set_ir_version(2);
         return m;
       },
       "ir_version 2 (< 3) cannot have opset_import"},
      {"IrVersionTooLowForFloat8",
       [] {
         auto m = baseModel();
         m.mutable_opset_import(0)->set_version(19);
         auto &g = *m.mutable_graph();
         addInput(g, "x", pb::TensorProto::FLOAT8E4M3FN, {2});
         addNode(g, "Identity", {"x"}, {"y"}, "id0");
         addOutput(g, "y", pb::TensorProto::FLOAT8E4M3FN, {2});
         return m;
       },
       "input 'x' has type float8e4m3fn, which needs ir_version >= 9"},
      {"InitializerNotInputAtIr3",
       [] {
         auto m = addModel(2);
         m.set_ir_version(3);
         m.mutable_opset_import(0)->set_version(8);
         return m;
       },
       "initializer 'w' is not listed in graph.input"},
      // Classes the loader already refuses, with its own one line.
      {"DuplicateName",
       [] {
         auto m = addModel(2);
         addNode(*m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu_dup");
         return m;
       },
       "output 'y' is already defined by node 'add0' (Add)"},
      {"OutputNeverProduced",
       [] {
         auto m = addModel(2);
         addOutput(*m.mutable_graph(), "nowhere");
         return m;
       },
       "output 'nowhere' names no value in scope"},
      {"CaptureOfMissingName",
       [] {
         return ifModel([](pb::GraphProto &body, const std::string &branch) {
           addNode(body, "Relu", {"ghost"}, {branch + "_y"});
           addOutput(body, branch + "_y");
         });
       },
       "input 'ghost' names no value in scope"},
  };
  return list;
}

class CliValidate : public ::testing::TestWithParam<size_t> {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("onnxslim-clivalidate-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

} // namespace

TEST_P(CliValidate, RefusedWithOneLineAndNothingWritten) {
  const Case &c = cases()[GetParam()];
  std::string bytes = c.make().SerializeAsString();
  fs::path in = dir_ / "in.onnx", out = dir_ / "out.onnx";
  writeFile(in, bytes);
  RunResult r = run(in.string() + " " + out.string(), dir_);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(readFile(in), bytes) << "the input file was modified";
  EXPECT_FALSE(fs::exists(out)) << "an output was written for an invalid input";
  for (const auto &entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path(), in) << "left behind: " << entry.path();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("onnxslim: error: " + in.string(), 0), 0u) << r.err;
  EXPECT_NE(r.err.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << r.err;

  // `check` lists it (exit 1); `dump` still prints the model (exit 0) and warns.
  RunResult check = run("check " + in.string(), dir_);
  if (std::string(c.expect).find("already defined") == std::string::npos &&
      std::string(c.expect).find("names no value in scope") == std::string::npos) {
    EXPECT_EQ(check.exitCode, 1) << check.out << check.err;
    EXPECT_NE(check.out.find(c.expect), std::string::npos) << check.out;
    RunResult dump = run("dump " + in.string(), dir_);
    EXPECT_EQ(dump.exitCode, 0) << dump.err;
    EXPECT_NE(dump.out.find("ir_version"), std::string::npos) << dump.out;
    EXPECT_NE(dump.err.find("onnxslim: warning: " + in.string()), std::string::npos) << dump.err;
  } else {
    // The loader cannot represent these: check and dump fail with its line.
    EXPECT_EQ(check.exitCode, 1);
    EXPECT_NE(check.err.find(c.expect), std::string::npos) << check.err;
  }
  EXPECT_EQ(readFile(in), bytes);
}

INSTANTIATE_TEST_SUITE_P(EveryClass, CliValidate, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t> &info) { return cases()[info.param].name; });

TEST(CliValidateValid, CheckSaysValid) {
  fs::path dir = fs::temp_directory_path() / ("onnxslim-clivalidate-ok-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path in = dir / "ok.onnx";
  writeFile(in, addModel(2).SerializeAsString());
  RunResult r = run("check " + in.string(), dir);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, in.string() + ": valid\n");
  fs::remove_all(dir);
}

TEST(CliValidateValid, AllowInvalidOptimizesAnyway) {
  fs::path dir = fs::temp_directory_path() / ("onnxslim-clivalidate-allow-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path in = dir / "in.onnx", out = dir / "out.onnx";
  auto m = addModel(2);
  auto *op = m.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(17);
  writeFile(in, m.SerializeAsString());
  RunResult r = run(in.string() + " " + out.string() + " --allow-invalid -q", dir);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_NE(r.err.find("onnxslim: warning: " + in.string() + ": opset_import lists domain 'ai.onnx' twice"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

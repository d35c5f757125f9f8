//===- tests/cli/RunVerifyTest.cpp - `onnxslim run` and `verify` ----------===//
//
// Runs the real binary: `run` writes each output as a TensorProto whose
// values are the model's function of the given inputs; on the conformance
// suite's own files it reads tensors, sequences, optionals (empty or not),
// string and old-layout bfloat16 inputs and writes outputs byte for byte as
// ONNX wrote them (TensorProto, SequenceProto, OptionalProto); a bad input
// file (truncated, empty, missing, of the wrong kind, with data that does
// not fit its dims, for no input, given twice) is one error line naming the
// file, exit status 1, and no output written; `verify` passes on a
// model against itself and fails (non-zero exit, MISMATCH in its report) on a
// copy whose weight was changed, both on a small model and on a real one;
// interfaces that differ are a clear error.
//
//===----------------------------------------------------------------------===//
#include "schema/onnx.pb.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include "tests/cli/CliTestUtil.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
  for (float v : {1.f, 2.f, 3.f, 4.f})
    x.add_float_data(v);
  writeProto(dir_ / "x.pb", x);
  RunResult r = onnxslim("run " + (dir_ / "m.onnx").string() + " --input " + (dir_ / "x.pb").string(), dir_);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("'nope' is not an input"), std::string::npos) << r.err;
}

/// A conformance case's directory (the test fails, saying how to get the
/// data, when it is missing).
fs::path conformanceCase(const std::string &name) {
  fs::path dir = fs::path(ONNXSLIM_TESTDATA_DIR) / "node" / name;
  EXPECT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: apt-get install libonnx-testdata";
  return dir;
}

// Each case's first data set through `run`, every input given as FILE.pb
// (named by the file's own name field, whatever its kind) or NAME=FILE.pb:
// each output file equals the reference output byte for byte.
TEST_F(RunVerify, RunReadsAndWritesEveryValueKindAsOnnxDoes) {
  struct Case {
    const char *name;
    std::vector<std::string> outputs; ///< Output file names, in output_N order.
    /// Empty: give inputs as FILE.pb; else as NAME=FILE.pb with these names.
    std::vector<std::string> inputs;
  };
  const std::vector<Case> cases = {
      {"test_identity_sequence", {"y.pb"}, {}},                                 // sequence in and out
      {"test_identity_sequence", {"y.pb"}, {"x"}},
      {"test_identity_opt", {"opt_out.pb"}, {}},                                // optional(sequence) in and out
      {"test_optional_get_element", {"output.pb"}, {"optional_input"}},         // optional(tensor) in
      {"test_optional_has_element_empty", {"output.pb"}, {}},                   // empty optional in
      {"test_sequence_insert_at_back", {"output_sequence.pb"}, {}},             // sequence and tensor in
      {"test_sequence_map_identity_2_sequences", {"y0.pb", "y1.pb"}, {"x0", "x1"}}, // two sequences
      {"test_cast_BFLOAT16_to_FLOAT", {"output.pb"}, {"input"}},                // bfloat16 stored as UINT16
      {"test_strnormalizer_export_monday_casesensintive_lower", {"y.pb"}, {}},  // strings
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    fs::path dir = conformanceCase(c.name), set = dir / "test_data_set_0";
    std::string args = "run " + (dir / "model.onnx").string();
    size_t given = 0;
    for (; fs::exists(set / ("input_" + std::to_string(given) + ".pb")); ++given) {
      fs::path file = set / ("input_" + std::to_string(given) + ".pb");
      args += " --input " + (c.inputs.empty() ? "" : c.inputs.at(given) + "=") + file.string();
    }
    ASSERT_TRUE(c.inputs.empty() || c.inputs.size() == given);
    fs::path out = dir_ / c.name;
    RunResult r = onnxslim(args + " --output-dir " + out.string() + " -q", dir_);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "");
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      ASSERT_TRUE(fs::exists(out / c.outputs[i])) << c.outputs[i];
      EXPECT_EQ(readFile(out / c.outputs[i]), readFile(set / ("output_" + std::to_string(i) + ".pb")))
          << c.outputs[i] << " differs from output_" << i << ".pb";
    }
  }
}

/// o = Optional<type = tensor(float)>(): an empty optional output.
pb::ModelProto emptyOptionalModel() {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  auto *g = m.mutable_graph();
  g->set_name("g");
  auto *n = g->add_node();
  n->set_op_type("Optional");
  n->add_output("o");
  auto *type = n->add_attribute();
  type->set_name("type");
  type->set_type(pb::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
  auto *o = g->add_output();
  o->set_name("o");
  o->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  return m;
}

TEST_F(RunVerify, RunWritesAnEmptyOptionalWithItsElementType) {
  writeProto(dir_ / "m.onnx", emptyOptionalModel());
  RunResult r = onnxslim("run " + (dir_ / "m.onnx").string() + " --output-dir " + (dir_ / "out").string(), dir_);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("o: empty optional"), std::string::npos) << r.out;
  // OptionalProto: name (1) = "o", elem_type (2) = TENSOR (1), no value.
  EXPECT_EQ(readFile(dir_ / "out" / "o.pb"), std::string("\x0a\x01o\x10\x01", 5));
}

/// Runs `onnxslim run MODEL --input ARG --output-dir DIR/out` and checks the
/// failure: exit status 1, one line on stderr containing every `expected`
/// text, nothing on stdout, no output directory.
void expectBadInput(const fs::path &dir, const fs::path &model, const std::string &inputArg,
                    const std::vector<std::string> &expected) {
  SCOPED_TRACE(inputArg);
  fs::path out = dir / "out";
  RunResult r = onnxslim("run " + model.string() + " --input " + inputArg + " --output-dir " + out.string(), dir);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("onnxslim: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string &e : expected)
    EXPECT_NE(r.err.find(e), std::string::npos) << "missing '" << e << "' in: " << r.err;
  EXPECT_FALSE(fs::exists(out)) << "an output was written";
}

TEST_F(RunVerify, RunRejectsBadInputFilesWithOneLineAndWritesNothing) {
  fs::path seqCase = conformanceCase("test_identity_sequence");
  fs::path optCase = conformanceCase("test_optional_get_element");
  fs::path tensorCase = conformanceCase("test_cast_BFLOAT16_to_FLOAT");
  fs::path seqModel = seqCase / "model.onnx", optModel = optCase / "model.onnx",
           tensorModel = tensorCase / "model.onnx";
  std::string seqFile = (seqCase / "test_data_set_0" / "input_0.pb").string();
  std::string tensorFile = (tensorCase / "test_data_set_0" / "input_0.pb").string();
  std::string multiSeqFile =
      (conformanceCase("test_sequence_insert_at_back") / "test_data_set_0" / "input_0.pb").string();

  // Truncated: a tensor file and a sequence file cut short.
  std::string tensorBytes = readFile(tensorFile), seqBytes = readFile(seqFile);
  std::string truncTensor = (dir_ / "trunc_tensor.pb").string(), truncSeq = (dir_ / "trunc_seq.pb").string();
  onnxslim::clitest::writeFile(truncTensor, tensorBytes.substr(0, tensorBytes.size() - 5));
  onnxslim::clitest::writeFile(truncSeq, seqBytes.substr(0, seqBytes.size() - 5));
  expectBadInput(dir_, tensorModel, "input=" + truncTensor, {truncTensor, "truncated"});
  expectBadInput(dir_, seqModel, "x=" + truncSeq, {truncSeq, "truncated"});
  expectBadInput(dir_, tensorModel, truncTensor, {truncTensor, "truncated"});

  // The wrong kind for the input, both ways, and a sequence of two for an optional.
  expectBadInput(dir_, seqModel, "x=" + tensorFile,
                 {tensorFile, "holds a TensorProto, not a SequenceProto", "input 'x'"});
  expectBadInput(dir_, tensorModel, "input=" + seqFile,
                 {seqFile, "holds a SequenceProto", "not a TensorProto", "input 'input'"});
  expectBadInput(dir_, optModel, "optional_input=" + multiSeqFile,
                 {multiSeqFile, "holds a SequenceProto, not an OptionalProto"});

  // No such input, by flag and by the file's own name.
  expectBadInput(dir_, tensorModel, "nope=" + tensorFile, {tensorFile, "'nope' is not an input", "inputs: input"});
  expectBadInput(dir_, seqModel, tensorFile, {"'input' is not an input", "NAME=FILE.pb"});

  // Empty, missing, data that does not fit the dims, a name given twice.
  std::string empty = (dir_ / "empty.pb").string();
  onnxslim::clitest::writeFile(empty, "");
  expectBadInput(dir_, tensorModel, "input=" + empty, {empty, "empty"});
  std::string missing = (dir_ / "missing.pb").string();
  expectBadInput(dir_, tensorModel, "input=" + missing, {missing});
  pb::TensorProto shortData;
  shortData.set_name("input");
  shortData.set_data_type(1);
  shortData.add_dims(3);
  shortData.add_dims(4);
  shortData.set_raw_data(std::string(8, '\0'));
  std::string shortFile = (dir_ / "short.pb").string();
  writeProto(shortFile, shortData);
  expectBadInput(dir_, tensorModel, "input=" + shortFile, {shortFile, "does not fit", "float[3,4]"});
  expectBadInput(dir_, tensorModel, tensorFile + " --input input=" + tensorFile, {"given more than once"});
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

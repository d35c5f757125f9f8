//===- tests/validate/ValidateTest.cpp - The ONNX model validator ---------===//
//
// One test per rejection class of ir/Validate.h: a small model that is
// invalid in exactly that way (built as protobuf bytes, loaded by the real
// frontend, or built in the IR where the frontend cannot represent it) gives
// one diagnostic naming the file, the node or tensor and what is wrong; the
// valid base model gives none. Where the loader itself already refuses a
// class, the test shows that it does, with a one-line error.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"

#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/OpSchema.h"
#include "ir/Validate.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

std::unique_ptr<Model> load(const onnx::ModelProto &m, std::string &error) {
  return loadModelFromString(m.SerializeAsString(), "bad.onnx", ".", error);
}

std::vector<std::string> problemsOf(const Model &m) {
  ValidateOptions opts;
  opts.file = "bad.onnx";
  return validate(m, opts);
}

/// Loads `m` (which must load) and returns its diagnostics.
std::vector<std::string> problemsOf(const onnx::ModelProto &m) {
  std::string error;
  std::unique_ptr<Model> model = load(m, error);
  EXPECT_TRUE(model) << error;
  if (!model)
    return {"<did not load: " + error + ">"};
  return problemsOf(*model);
}

/// Expects exactly one diagnostic, on one line, naming the file and
/// containing every one of `parts`.
void expectOne(const std::vector<std::string> &problems, std::initializer_list<std::string> parts) {
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  const std::string &p = problems.front();
  EXPECT_EQ(p.find('\n'), std::string::npos) << p;
  EXPECT_EQ(p.rfind("bad.onnx: ", 0), 0u) << p;
  for (const std::string &part : parts)
    EXPECT_NE(p.find(part), std::string::npos) << "'" << part << "' not in: " << p;
}

/// Expects the loader to refuse `m` with one line containing `part`.
void expectLoaderRejects(const onnx::ModelProto &m, const std::string &part) {
  std::string error;
  EXPECT_FALSE(load(m, error)) << "loaded";
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_NE(error.find("bad.onnx"), std::string::npos) << error;
  EXPECT_NE(error.find(part), std::string::npos) << error;
}

onnx::AttributeProto *addAttr(onnx::NodeProto *n, const std::string &name, onnx::AttributeProto::AttributeType type) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

/// x -> Transpose(perm=[1,0]) -> y, float[2,3] -> float[3,2], opset 17.
onnx::ModelProto transposeModel() {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x", 1, {2, 3});
  auto *n = addNode(g, "Transpose", {"x"}, {"y"}, "t0");
  auto *perm = addAttr(n, "perm", onnx::AttributeProto::INTS);
  perm->add_ints(1);
  perm->add_ints(0);
  addOutput(g, "y", 1, {3, 2});
  return m;
}

} // namespace

//===----------------------------------------------------------------------===//
// Valid models
//===----------------------------------------------------------------------===//

TEST(Validate, ValidModelsHaveNoProblems) {
  EXPECT_TRUE(problemsOf(addModel(4)).empty()) << ::testing::PrintToString(problemsOf(addModel(4)));
  EXPECT_TRUE(problemsOf(transposeModel()).empty());
}

TEST(Validate, CustomDomainOpsAreNotJudged) {
  onnx::ModelProto m = baseModel();
  auto *op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  auto *n = addNode(g, "Transpose", {"x", "x", "x"}, {"y", "z"}, "custom");
  n->set_domain("com.example");
  addAttr(n, "perm", onnx::AttributeProto::FLOAT)->set_f(1);
  addOutput(g, "y");
  EXPECT_TRUE(problemsOf(m).empty()) << ::testing::PrintToString(problemsOf(m));
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

TEST(Validate, RawDataTooShort) {
  onnx::ModelProto m = addModel(4);
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(12);
  expectOne(problemsOf(m), {"initializer 'w'", "12 bytes of raw_data", "float [4] needs 16 bytes"});
}

TEST(Validate, RawDataTooLong) {
  onnx::ModelProto m = addModel(4);
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->append(4, '\0');
  expectOne(problemsOf(m), {"initializer 'w'", "20 bytes of raw_data", "needs 16 bytes"});
}

TEST(Validate, TypedFieldCountWrong) {
  onnx::ModelProto m = addModel(4);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  for (int i = 0; i < 3; ++i)
    w->add_float_data(1.0f);
  expectOne(problemsOf(m), {"initializer 'w'", "3 elements of typed data", "needs 4"});
}

TEST(Validate, StringCountWrong) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  auto *t = g.add_initializer();
  t->set_name("s");
  t->set_data_type(onnx::TensorProto::STRING);
  t->add_dims(3);
  t->add_string_data("a");
  addNode(g, "Identity", {"s"}, {"y"});
  addOutput(g, "y", onnx::TensorProto::STRING, {3});
  expectOne(problemsOf(m), {"initializer 's'", "1 strings", "needs 3"});
}

TEST(Validate, StringTensorAsRawDataInIR) {
  // What a pass that folds strings must not produce (issue 10, defect 2).
  std::string error;
  std::unique_ptr<Model> model = load(addModel(2), error);
  ASSERT_TRUE(model) << error;
  auto t = std::make_shared<Tensor>(DataType::String, std::vector<int64_t>{1}, Buffer::fromString("abc"));
  t->encoding = TensorEncoding::Raw;
  model->graph()->addInitializer("s", t);
  expectOne(problemsOf(*model), {"initializer 's'", "string tensor stored as raw_data"});
}

TEST(Validate, ExternalDataLengthWrong) {
  // The loader reads `length` bytes from the file; a length that does not
  // match dtype x dims is the validator's to report.
  std::string dir = ::testing::TempDir() + "validate-external";
  std::string cmd = "mkdir -p " + dir;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  {
    FILE *f = std::fopen((dir + "/w.bin").c_str(), "wb");
    ASSERT_TRUE(f);
    std::string bytes(64, '\0');
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  onnx::ModelProto m = addModel(4);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair{"location", "w.bin"}, std::pair{"offset", "0"}, std::pair{"length", "12"}}) {
    auto *e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  std::string error;
  std::unique_ptr<Model> model = loadModelFromString(m.SerializeAsString(), "bad.onnx", dir, error);
  ASSERT_TRUE(model) << error;
  expectOne(problemsOf(*model), {"initializer 'w'", "12 bytes of external data", "needs 16 bytes"});
}

TEST(Validate, NegativeDim) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
  expectOne(problemsOf(m), {"initializer 'w'", "negative dim", "[-2]"});
}

TEST(Validate, DimsProductOverflows) {
  onnx::ModelProto m = addModel(2);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, int64_t(1) << 40);
  w->add_dims(int64_t(1) << 40);
  expectOne(problemsOf(m), {"initializer 'w'", "more elements than int64"});
}

TEST(Validate, DimsExceedTheData) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t(1) << 40);
  expectOne(problemsOf(m), {"initializer 'w'", "8 bytes of raw_data", "needs 4398046511104 bytes"});
}

TEST(Validate, UnknownDataType) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_initializer(0)->set_data_type(99);
  expectOne(problemsOf(m), {"initializer 'w'", "unknown data type 99"});
}

TEST(Validate, UndefinedDataType) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_initializer(0)->set_data_type(0);
  expectOne(problemsOf(m), {"initializer 'w'", "unknown data type 0"});
}

TEST(Validate, AttributeTensorIsChecked) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  auto *c = addNode(g, "Constant", {}, {"y"}, "c0");
  auto *t = addAttr(c, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  t->set_raw_data(std::string(8, '\0'));
  addOutput(g, "y", 1, {3});
  expectOne(problemsOf(m), {"node 'c0' (Constant)", "attribute 'value'", "8 bytes of raw_data", "needs 12 bytes"});
}

TEST(Validate, TypedFieldOfTheWrongKindIsRefusedByTheLoader) {
  onnx::ModelProto m = addModel(2);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->add_int64_data(1);
  w->add_int64_data(2);
  expectLoaderRejects(m, "cannot hold data of type float");
}

TEST(Validate, ExternalPastEndIsRefusedByTheLoader) {
  onnx::ModelProto m = addModel(2);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *e = w->add_external_data();
  e->set_key("location");
  e->set_value("no-such-file.bin");
  expectLoaderRejects(m, "external data location 'no-such-file.bin'");
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

TEST(Validate, EmptyOpType) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_node(0)->set_op_type("");
  expectOne(problemsOf(m), {"node 'add0' ()", "empty op_type"});
}

TEST(Validate, AttributeOfTheWrongType) {
  onnx::ModelProto m = transposeModel();
  auto *perm = m.mutable_graph()->mutable_node(0)->mutable_attribute(0);
  perm->clear_ints();
  perm->set_type(onnx::AttributeProto::FLOAT);
  perm->set_f(1.0f);
  expectOne(problemsOf(m), {"node 't0' (Transpose)", "attribute 'perm' is float but Transpose-13 wants ints"});
}

TEST(Validate, UnknownAttribute) {
  onnx::ModelProto m = transposeModel();
  addAttr(m.mutable_graph()->mutable_node(0), "axis", onnx::AttributeProto::INT)->set_i(0);
  expectOne(problemsOf(m), {"node 't0' (Transpose)", "attribute 'axis' is not an attribute of Transpose-13"});
}

TEST(Validate, RequiredAttributeMissing) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addNode(g, "Cast", {"x"}, {"y"}, "cast0");
  addOutput(g, "y");
  expectOne(problemsOf(m), {"node 'cast0' (Cast)", "required attribute 'to' of Cast-13 is missing"});
}

TEST(Validate, TooManyInputs) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_node(0)->add_input("x");
  expectOne(problemsOf(m), {"node 'add0' (Add)", "has 3 inputs but Add-14 takes 2"});
}

TEST(Validate, TooFewInputs) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  expectOne(problemsOf(m), {"node 'add0' (Add)", "has 1 inputs but Add-14 takes 2"});
}

TEST(Validate, TooManyOutputs) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_node(0)->add_output("extra");
  expectOne(problemsOf(m), {"node 'add0' (Add)", "has 2 outputs but Add-14 gives 1"});
}

TEST(Validate, OpThatDoesNotExistAtTheOpset) {
  // Gelu is in the default domain from opset 20 on; the model imports 17.
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addNode(g, "Gelu", {"x"}, {"y"}, "gelu0");
  addOutput(g, "y");
  expectOne(problemsOf(m), {"node 'gelu0' (Gelu)", "op Gelu does not exist in opset 17"});
}

TEST(Validate, DeprecatedOp) {
  // Upsample was removed in opset 10.
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addInput(g, "s");
  addNode(g, "Upsample", {"x", "s"}, {"y"}, "up0");
  addOutput(g, "y");
  expectOne(problemsOf(m), {"node 'up0' (Upsample)", "op Upsample is deprecated in opset 17 (since opset 10"});
}

TEST(Validate, NodeInSubgraphIsCheckedWithItsPath) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  addInput(g, "x");
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *body = addAttr(iff, branch, onnx::AttributeProto::GRAPH)->mutable_g();
    body->set_name(branch);
    auto *n = addNode(*body, "Relu", {"x"}, {std::string(branch) + "_y"}, std::string(branch) + "_relu");
    if (std::string(branch) == "else_branch")
      addAttr(n, "alpha", onnx::AttributeProto::FLOAT)->set_f(1);
    addOutput(*body, std::string(branch) + "_y");
  }
  addOutput(g, "y");
  expectOne(problemsOf(m), {"graph 'g' / node 'if0' (If).else_branch / node 'else_branch_relu' (Relu)", "attribute 'alpha'"});
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

TEST(Validate, DuplicateNameIsRefusedByTheLoader) {
  onnx::ModelProto m = addModel(2);
  addNode(*m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu_dup");
  expectLoaderRejects(m, "output 'y' is already defined by node 'add0' (Add)");
}

TEST(Validate, SubgraphRedefiningAnOuterName) {
  // Names are unique over the whole model: a subgraph may not define a name
  // that an enclosing graph defines (the loader resolves it as shadowing).
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  addInput(g, "x");
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *body = addAttr(iff, branch, onnx::AttributeProto::GRAPH)->mutable_g();
    body->set_name(branch);
    std::string out = std::string(branch) == "then_branch" ? "x" : "e";
    addNode(*body, "Identity", {"cond"}, {out}, std::string(branch) + "_id");
    addOutput(*body, out, onnx::TensorProto::BOOL, {});
  }
  addOutput(g, "y", onnx::TensorProto::BOOL, {});
  std::string error;
  std::unique_ptr<Model> model = load(m, error);
  if (!model) {
    EXPECT_NE(error.find("'x'"), std::string::npos) << error;
    return;
  }
  expectOne(problemsOf(*model), {"node 'then_branch_id' (Identity)", "'x' redefines a name of an enclosing graph"});
}

TEST(Validate, OutputNeverProducedIsRefusedByTheLoader) {
  onnx::ModelProto m = addModel(2);
  addOutput(*m.mutable_graph(), "nowhere");
  expectLoaderRejects(m, "output 'nowhere' names no value in scope");
}

TEST(Validate, CaptureOfAMissingNameIsRefusedByTheLoader) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *body = addAttr(iff, branch, onnx::AttributeProto::GRAPH)->mutable_g();
    body->set_name(branch);
    addNode(*body, "Relu", {"ghost"}, {std::string(branch) + "_y"});
    addOutput(*body, std::string(branch) + "_y");
  }
  addOutput(g, "y");
  expectLoaderRejects(m, "input 'ghost' names no value in scope");
}

TEST(Validate, OperandOutOfScopeInIR) {
  // The IR can hold what a buggy pass makes: a node reading a value of a
  // sibling subgraph. The validator names it.
  std::string error;
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  addInput(g, "x");
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *body = addAttr(iff, branch, onnx::AttributeProto::GRAPH)->mutable_g();
    body->set_name(branch);
    addNode(*body, "Relu", {"x"}, {std::string(branch) + "_y"}, std::string(branch) + "_relu");
    addOutput(*body, std::string(branch) + "_y");
  }
  addOutput(g, "y");
  std::unique_ptr<Model> model = load(m, error);
  ASSERT_TRUE(model) << error;
  Node *iffNode = model->graph()->firstNode();
  Graph *thenG = iffNode->attr("then_branch")->g.get();
  Graph *elseG = iffNode->attr("else_branch")->g.get();
  elseG->firstNode()->setOperand(0, thenG->firstNode()->result(0));
  std::vector<std::string> problems = problemsOf(*model);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("node 'else_branch_relu' (Relu): input 'then_branch_y' names no value"), std::string::npos)
      << problems.front();
}

TEST(Validate, MissingOpsetImport) {
  onnx::ModelProto m = addModel(2);
  m.clear_opset_import();
  std::vector<std::string> problems = problemsOf(m);
  ASSERT_EQ(problems.size(), 2u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find("ir_version 8 (>= 3) needs opset_import"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("node 'add0' (Add): no opset_import for domain 'ai.onnx'"), std::string::npos) << problems[1];
}

TEST(Validate, MissingOpsetImportOfACustomDomain) {
  onnx::ModelProto m = addModel(2);
  m.mutable_graph()->mutable_node(0)->set_domain("com.example");
  expectOne(problemsOf(m), {"node 'add0' (com.example.Add)", "no opset_import for domain 'com.example'"});
}

TEST(Validate, DuplicateOpsetImport) {
  onnx::ModelProto m = addModel(2);
  auto *op = m.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(13);
  expectOne(problemsOf(m), {"opset_import lists domain 'ai.onnx' twice"});
}

TEST(Validate, OpsetImportWithIrVersionBelow3) {
  onnx::ModelProto m = addModel(2);
  m.set_ir_version(2);
  std::vector<std::string> problems = problemsOf(m);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("ir_version 2 (< 3) cannot have opset_import"), std::string::npos)
      << problems.front();
}

TEST(Validate, IrVersionUnset) {
  onnx::ModelProto m = addModel(2);
  m.clear_ir_version();
  expectOne(problemsOf(m), {"ir_version is not set"});
}

TEST(Validate, IrVersionTooNew) {
  onnx::ModelProto m = addModel(2);
  m.set_ir_version(99);
  expectOne(problemsOf(m), {"ir_version 99 is newer"});
}

TEST(Validate, OpsetTooNew) {
  onnx::ModelProto m = addModel(2);
  m.mutable_opset_import(0)->set_version(99);
  expectOne(problemsOf(m), {"default domain has version 99"});
}

TEST(Validate, Float8NeedsIrVersion9) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x", onnx::TensorProto::FLOAT8E4M3FN, {2});
  addNode(g, "Identity", {"x"}, {"y"}, "id0");
  addOutput(g, "y", onnx::TensorProto::FLOAT8E4M3FN, {2});
  m.mutable_opset_import(0)->set_version(19);
  expectOne(problemsOf(m), {"input 'x' has type float8e4m3fn, which needs ir_version >= 9 (the model has 8)"});
  m.set_ir_version(9);
  EXPECT_TRUE(problemsOf(m).empty()) << ::testing::PrintToString(problemsOf(m));
}

/// A cast to a type the model cannot hold: the input is fine until a pass
/// writes the cast's result type down (found by fuzz_load_pipeline).
onnx::ModelProto castModel(int64_t to, int64_t opset, int64_t ir) {
  onnx::ModelProto m = baseModel();
  m.set_ir_version(ir);
  m.mutable_opset_import(0)->set_version(opset);
  auto &g = *m.mutable_graph();
  addInput(g, "x", onnx::TensorProto::INT64, {2});
  auto *n = addNode(g, "Cast", {"x"}, {"y"}, "c0");
  addAttr(n, "to", onnx::AttributeProto::INT)->set_i(to);
  auto *o = g.add_output();
  o->set_name("y");
  return m;
}

TEST(Validate, CastToNamesATypeTheModelHas) {
  EXPECT_TRUE(problemsOf(castModel(onnx::TensorProto::FLOAT, 17, 8)).empty());
  EXPECT_TRUE(problemsOf(castModel(onnx::TensorProto::BFLOAT16, 13, 7)).empty());
  EXPECT_TRUE(problemsOf(castModel(onnx::TensorProto::FLOAT8E4M3FN, 19, 9)).empty());
  EXPECT_TRUE(problemsOf(castModel(23, 23, 11)).empty());
  // float4e2m1 (23) under IR 8 and opset 17: both are too old.
  std::vector<std::string> p = problemsOf(castModel(23, 17, 8));
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_NE(p[0].find("node 'c0' (Cast): attribute 'to' of Cast-13 names float4e2m1, which needs ir_version >= 11 "
                      "(the model has 8)"),
            std::string::npos)
      << p[0];
  EXPECT_NE(p[1].find("which no op has before opset 23 (the node is in opset 17)"), std::string::npos) << p[1];
  expectOne(problemsOf(castModel(onnx::TensorProto::BFLOAT16, 11, 7)), {"Cast-9", "bfloat16", "before opset 13"});
  expectOne(problemsOf(castModel(onnx::TensorProto::FLOAT8E5M2, 17, 9)), {"float8e5m2", "before opset 19"});
  expectOne(problemsOf(castModel(99, 17, 8)), {"attribute 'to' of Cast-13 is 99, not an element type"});
  expectOne(problemsOf(castModel(0, 17, 8)), {"is 0, not an element type"});
}

TEST(Validate, InitializerNotAnInputWithIrVersion3) {
  onnx::ModelProto m = addModel(2);
  m.set_ir_version(3);
  m.mutable_opset_import(0)->set_version(8);
  m.mutable_graph()->mutable_node(0)->set_op_type("Add");
  expectOne(problemsOf(m), {"initializer 'w' is not listed in graph.input", "(<= 3)"});
  // About to be written, the main graph's initializers are fine: the writer
  // lists them among the inputs itself (backend/ProtoExporter).
  {
    std::string error;
    std::unique_ptr<Model> model = load(m, error);
    ASSERT_TRUE(model) << error;
    ValidateOptions opts;
    opts.forWriting = true;
    EXPECT_TRUE(validate(*model, opts).empty());
  }
  addInput(*m.mutable_graph(), "w");
  EXPECT_TRUE(problemsOf(m).empty()) << ::testing::PrintToString(problemsOf(m));
}

//===----------------------------------------------------------------------===//
// The schema table
//===----------------------------------------------------------------------===//

TEST(OpSchemaTable, LooksUpTheVersionInEffect) {
  const OpSchema *s = lookupOpSchema("", "Transpose", 17);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sinceVersion, 13);
  ASSERT_TRUE(s->attribute("perm"));
  EXPECT_EQ(s->attribute("perm")->kind, AttrKind::Ints);
  EXPECT_FALSE(s->attribute("perm")->required);
  EXPECT_EQ(lookupOpSchema("ai.onnx", "Transpose", 17), s);
  EXPECT_FALSE(lookupOpSchema("", "Transpose", 0));
  EXPECT_FALSE(lookupOpSchema("", "Upsample", 10)); // deprecated in 10
  ASSERT_TRUE(lookupOpSchema("", "Upsample", 9));
  EXPECT_FALSE(lookupOpSchema("", "NoSuchOp", 17));
  const OpSchema *loop = lookupOpSchema("", "Loop", 24);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->minInputs, 2);
  EXPECT_EQ(loop->maxInputs, OpSchema::kUnbounded);
  EXPECT_TRUE(loop->attribute("body")->required);
  EXPECT_EQ(loop->attribute("body")->kind, AttrKind::Graph);
  const OpSchema *ml = lookupOpSchema("ai.onnx.ml", "LinearClassifier", 1);
  ASSERT_TRUE(ml);
  EXPECT_TRUE(ml->attribute("classlabels_ints"));
  EXPECT_TRUE(isKnownSchemaDomain(""));
  EXPECT_TRUE(isKnownSchemaDomain("ai.onnx.ml"));
  EXPECT_FALSE(isKnownSchemaDomain("com.microsoft"));
  EXPECT_EQ(maxKnownDefaultOpset(), 24);
}

TEST(OpSchemaTable, IsSortedAndConsistent) {
  std::span<const OpSchema> all = allOpSchemas();
  ASSERT_GT(all.size(), 600u);
  for (size_t i = 0; i < all.size(); ++i) {
    const OpSchema &s = all[i];
    if (i) {
      EXPECT_LT(std::tie(all[i - 1].domain, all[i - 1].opType, all[i - 1].sinceVersion),
                std::tie(s.domain, s.opType, s.sinceVersion));
    }
    if (s.deprecated)
      continue;
    EXPECT_GE(s.minInputs, 0) << s.opType;
    EXPECT_TRUE(s.maxInputs == OpSchema::kUnbounded || s.maxInputs >= s.minInputs) << s.opType;
    EXPECT_TRUE(s.maxOutputs == OpSchema::kUnbounded || s.maxOutputs >= s.minOutputs) << s.opType;
    EXPECT_NE(s.maxOutputs, 0) << s.opType << "-" << s.sinceVersion;
  }
}

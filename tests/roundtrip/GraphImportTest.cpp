//===- tests/roundtrip/GraphImportTest.cpp - Graph lowering and raising ---===//
//
// Name resolution, scoping, node sorting, cycles, value_info bookkeeping,
// initializers declared as inputs, functions, and the name table.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/Verifier.h"

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

std::unique_ptr<Model> load(const onnx::ModelProto &m, std::string &error) {
  return loadModelFromString(m.SerializeAsString(), "model.onnx", ".", error);
}

std::vector<std::string> nodeNames(const Graph &g) {
  std::vector<std::string> out;
  for (const Node *n : g.nodes())
    out.push_back(n->name());
  return out;
}

/// Load, verify, serialize and compare with the input.
void expectRoundTrip(const onnx::ModelProto &m) {
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  auto problems = verify(*model);
  EXPECT_TRUE(problems.empty()) << problems.front();
  std::string out = serializeModel(*model, error);
  ASSERT_FALSE(out.empty()) << error;
  std::string diff = compareModels(m.SerializeAsString(), out);
  EXPECT_TRUE(diff.empty()) << diff;
}

} // namespace

TEST(GraphImport, HarnessSeesFieldPresence) {
  onnx::ModelProto a = addModel();
  onnx::ModelProto b = a;
  b.mutable_graph()->mutable_node(0)->set_domain(""); // present, default value
  EXPECT_FALSE(compareModels(a.SerializeAsString(), b.SerializeAsString()).empty());
  expectRoundTrip(b);
}

TEST(GraphImport, UnsortedNodesAreSortedStably) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addNode(g, "Relu", {"b"}, {"c"}, "second");
  addNode(g, "Neg", {"x"}, {"b"}, "first");
  addNode(g, "Abs", {"x"}, {"d"}, "independent");
  addOutput(g, "c");
  addOutput(g, "d");
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  EXPECT_EQ(nodeNames(*model->graph()), (std::vector<std::string>{"first", "second", "independent"}));
  EXPECT_TRUE(verify(*model).empty());
}

TEST(GraphImport, SubgraphCaptureCountsForSorting) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  addInput(g, "x");
  auto *iff = addNode(g, "If", {"cond"}, {"y"}, "if0");
  for (const char *branch : {"then_branch", "else_branch"}) {
    auto *a = iff->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto *body = a->mutable_g();
    body->set_name(branch);
    addNode(*body, "Identity", {"late"}, {std::string(branch) + "_out"});
    addOutput(*body, std::string(branch) + "_out");
  }
  addNode(g, "Neg", {"x"}, {"late"}, "producer");
  addOutput(g, "y");
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  EXPECT_EQ(nodeNames(*model->graph()), (std::vector<std::string>{"producer", "if0"}));
  EXPECT_TRUE(verify(*model).empty());
  // The capture is a real use of the outer value.
  Node *producer = model->graph()->firstNode();
  EXPECT_EQ(producer->result(0)->useCount(), 2u);
}

TEST(GraphImport, CycleIsAnError) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addNode(g, "Add", {"x", "c"}, {"b"}, "a1");
  addNode(g, "Relu", {"b"}, {"c"}, "r1");
  addOutput(g, "c");
  std::string error;
  EXPECT_FALSE(load(m, error));
  EXPECT_NE(error.find("model.onnx: graph 'g' / node '"), std::string::npos) << error;
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
}

TEST(GraphImport, SelfLoopIsAnError) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addNode(g, "Identity", {"a"}, {"a"}, "loop");
  addOutput(g, "a");
  std::string error;
  EXPECT_FALSE(load(m, error));
  EXPECT_NE(error.find("node 'loop' (Identity)"), std::string::npos) << error;
}

TEST(GraphImport, OperandNamingNothingNamesFileNodeOpAndPath) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x");
  addInput(g, "trip", onnx::TensorProto::INT64, {});
  addInput(g, "cond", onnx::TensorProto::BOOL, {});
  auto *loop = addNode(g, "Loop", {"trip", "cond", "x"}, {"y"}, "loop1");
  auto *a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto *body = a->mutable_g();
  body->set_name("body");
  addInput(*body, "i", onnx::TensorProto::INT64, {});
  addInput(*body, "c", onnx::TensorProto::BOOL, {});
  addInput(*body, "v");
  addNode(*body, "Add", {"v", "nope"}, {"v2"}, "n");
  addNode(*body, "Identity", {"c"}, {"c2"});
  addOutput(*body, "c2", onnx::TensorProto::BOOL, {});
  addOutput(*body, "v2");
  addOutput(g, "y");
  std::string error;
  EXPECT_FALSE(load(m, error));
  EXPECT_EQ(error, "model.onnx: graph 'g' / Loop 'loop1'.body / node 'n' (Add): input 'nope' "
                   "names no value in scope");
}

TEST(GraphImport, OutputNamingNothingIsAnError) {
  onnx::ModelProto m = addModel();
  addOutput(*m.mutable_graph(), "ghost");
  std::string error;
  EXPECT_FALSE(load(m, error));
  EXPECT_NE(error.find("output 'ghost' names no value"), std::string::npos) << error;
}

TEST(GraphImport, DuplicateDefinitionIsAnError) {
  onnx::ModelProto m = addModel();
  addNode(*m.mutable_graph(), "Neg", {"x"}, {"y"}, "again");
  std::string error;
  EXPECT_FALSE(load(m, error));
  EXPECT_NE(error.find("'y' is already defined by node 'add0' (Add)"), std::string::npos) << error;
}

TEST(GraphImport, ValueInfoEntriesKeepTheirOrder) {
  onnx::ModelProto m = addModel();
  auto &g = *m.mutable_graph();
  addNode(g, "Neg", {"y"}, {"z"}, "neg");
  addValueInfo(g.mutable_value_info(), "z");        // attaches to a node result
  addValueInfo(g.mutable_value_info(), "ghost");    // names nothing
  addValueInfo(g.mutable_value_info(), "x");        // a graph input
  addValueInfo(g.mutable_value_info(), "z", 7);     // a second entry for z
  auto *untyped = g.add_value_info();               // no type at all
  untyped->set_name("y");
  untyped->set_doc_string("");
  addValueInfo(g.mutable_value_info(), "w");        // an initializer
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  const Graph &graph = *model->graph();
  EXPECT_EQ(graph.orphanValueInfos.size(), 3u);
  const Node *neg = graph.lastNode();
  EXPECT_EQ(neg->result(0)->valueInfoOrder, 0u);
  EXPECT_TRUE(neg->result(0)->info.explicitFields == ExplicitFields());
  expectRoundTrip(m);
}

TEST(GraphImport, InitializerDeclaredAsInputIsOneValue) {
  onnx::ModelProto m = addModel();
  addInput(*m.mutable_graph(), "w");
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  const Graph &g = *model->graph();
  ASSERT_EQ(g.inputs().size(), 2u);
  ASSERT_EQ(g.initializers().size(), 1u);
  EXPECT_EQ(g.inputs()[1], g.initializers()[0]);
  EXPECT_TRUE(g.inputs()[1]->isGraphInput());
  EXPECT_TRUE(g.inputs()[1]->initializer());
  expectRoundTrip(m);
}

TEST(GraphImport, UnknownDomainsAndAttributesAreKept) {
  onnx::ModelProto m = addModel();
  auto *op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(3);
  auto *n = addNode(*m.mutable_graph(), "Frobnicate", {"y", ""}, {"", "f"}, "custom");
  n->set_domain("com.example");
  n->set_doc_string("");
  auto *a = n->add_attribute();
  a->set_name("weird");
  a->set_type(onnx::AttributeProto::TYPE_PROTOS);
  a->add_type_protos()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  a->set_doc_string("kept");
  auto *b = n->add_attribute();
  b->set_name("zero");
  b->set_type(onnx::AttributeProto::FLOAT);
  b->set_f(0.0f);
  auto *md = n->add_metadata_props();
  md->set_key("k");
  md->set_value("v");
  expectRoundTrip(m);
}

TEST(GraphImport, FunctionsRoundTrip) {
  onnx::ModelProto m = addModel();
  m.set_ir_version(10);
  auto *f = m.add_functions();
  f->set_name("Square");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  f->add_attribute("unused");
  auto *n = f->add_node();
  n->set_op_type("Mul");
  n->add_input("a");
  n->add_input("a");
  n->add_output("b");
  auto *op = f->add_opset_import();
  op->set_domain("");
  op->set_version(17);
  addValueInfo(f->mutable_value_info(), "b");
  auto *call = addNode(*m.mutable_graph(), "Square", {"y"}, {"sq"}, "call");
  call->set_domain("local");
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  ASSERT_EQ(model->functions.size(), 1u);
  const Graph &body = *model->functions[0]->body;
  ASSERT_EQ(body.inputs().size(), 1u);
  EXPECT_FALSE(body.inputs()[0]->type().has_value());
  EXPECT_EQ(body.output(0)->definingNode()->opType(), "Mul");
  expectRoundTrip(m);
}

TEST(GraphImport, EveryNameIsReserved) {
  onnx::ModelProto m = addModel();
  std::string error;
  auto model = load(m, error);
  ASSERT_TRUE(model) << error;
  for (const char *name : {"x", "w", "y", "add0", "g"})
    EXPECT_TRUE(model->names().contains(name)) << name;
  EXPECT_NE(model->names().fresh("y"), "y");
}

TEST(GraphImport, TrainingInfoAndConfigurationAreKeptAsBytes) {
  onnx::ModelProto m = addModel();
  auto *ti = m.add_training_info();
  ti->mutable_algorithm()->set_name("algo");
  auto *bind = ti->add_update_binding();
  bind->set_key("w");
  bind->set_value("w_new");
  auto *cfg = m.add_configuration();
  cfg->set_name("mesh");
  cfg->set_num_devices(2);
  auto *dc = m.mutable_graph()->mutable_node(0)->add_device_configurations();
  dc->set_configuration_id("mesh");
  dc->set_pipeline_stage(0);
  expectRoundTrip(m);
}

TEST(GraphImport, TypesRoundTrip) {
  onnx::ModelProto m = addModel();
  auto &g = *m.mutable_graph();
  auto *seq = g.add_input();
  seq->set_name("s");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(7);
  auto *map = g.add_input();
  map->set_name("mp");
  map->mutable_type()->mutable_map_type()->set_key_type(8);
  map->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  auto *opt = g.add_input();
  opt->set_name("o");
  opt->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  auto *sparse = g.add_input();
  sparse->set_name("sp");
  sparse->mutable_type()->mutable_sparse_tensor_type()->set_elem_type(1);
  auto *dims = g.add_input();
  dims->set_name("d");
  dims->mutable_type()->set_denotation("IMAGE");
  auto *shape = dims->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim();                              // neither value nor param
  shape->add_dim()->set_dim_value(0);            // explicit zero
  shape->add_dim()->set_denotation("DATA_CHANNEL");
  auto *emptyShape = g.add_input();
  emptyShape->set_name("scalar");
  emptyShape->mutable_type()->mutable_tensor_type()->mutable_shape(); // present, rank 0
  auto *noType = g.add_input();
  noType->set_name("untyped");
  auto *emptyType = g.add_input();
  emptyType->set_name("emptytype");
  emptyType->mutable_type();
  expectRoundTrip(m);
}

TEST(GraphImport, SparseInitializersAndAnnotationsRoundTrip) {
  onnx::ModelProto m = addModel();
  auto &g = *m.mutable_graph();
  auto *sp = g.add_sparse_initializer();
  auto *values = sp->mutable_values();
  values->set_name("sp");
  values->set_data_type(1);
  values->add_dims(2);
  values->add_float_data(1.5f);
  values->add_float_data(2.5f);
  auto *idx = sp->mutable_indices();
  idx->set_data_type(7);
  idx->add_dims(2);
  idx->add_int64_data(1);
  idx->add_int64_data(5);
  sp->add_dims(8);
  auto *qa = g.add_quantization_annotation();
  qa->set_tensor_name("w");
  auto *e = qa->add_quant_parameter_tensor_names();
  e->set_key("SCALE_TENSOR");
  e->set_value("w_scale");
  auto *md = g.add_metadata_props();
  md->set_key("a");
  md->set_value("b");
  g.set_doc_string("graph doc");
  expectRoundTrip(m);
}

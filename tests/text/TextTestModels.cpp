//===- tests/text/TextTestModels.cpp - IR models for text tests -----------===//
#include "TextTestModels.h"

#include "frontend/TextParser.h"
#include "ir/Equivalence.h"
#include "ir/Printer.h"

#include <cstring>
#include <limits>

namespace onnxslim::testing {

namespace {

Shape dims(std::initializer_list<Dim> ds) { return Shape(ds); }

template <typename T> std::shared_ptr<Tensor> tensor(DataType dt, std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::fromValues<T>(dt, std::move(shape), values);
}

std::shared_ptr<Tensor> bytesTensor(DataType dt, std::vector<int64_t> shape, std::string bytes) {
  return std::make_shared<Tensor>(dt, std::move(shape), Buffer::fromString(std::move(bytes)));
}

float floatBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

double doubleBits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

ExplicitFields fields(std::initializer_list<unsigned> bits) {
  ExplicitFields f;
  for (unsigned b : bits)
    f.set(b);
  return f;
}

/// A one-node graph `name (float[2] a) => (float[2] b) { b = Relu(a) }`.
std::unique_ptr<Graph> tinyGraph(const std::string &name) {
  auto g = std::make_unique<Graph>();
  g->name = name;
  Value *a = g->addInput("a", Type::tensor(DataType::Float, dims({Dim::value(2)})));
  Node *n = g->append(g->createNode("Relu", {a}, {"b"}));
  g->addOutput(n->result(0), Type::tensor(DataType::Float, dims({Dim::value(2)})));
  return g;
}

} // namespace

std::unique_ptr<Model> kitchenSinkModel() {
  auto m = std::make_unique<Model>();
  m->irVersion = 10;
  m->producerName = "test \"producer\"\n\ttab\\";
  m->producerVersion = "";
  m->domain = "ai.test";
  m->modelVersion = 7;
  m->docString = std::string("model doc \xff\xfe invalid utf8, \x01 control, caf\xc3\xa9 valid", 45);
  m->opsetImport = {OpsetId{"", 19, fields({1})}, OpsetId{"com.microsoft", 1, {}}, OpsetId{"", 0, {}}};
  m->metadataProps = {{"key", "value"}, {"", ""}, {"k\"", "v\n"}};
  m->trainingInfo = {std::string("\x0a\x00\x01\xff", 4), ""};
  m->configuration = {"cfg"};
  m->explicitFields = fields({3, 5});

  m->setGraph(std::make_unique<Graph>());
  Graph &g = *m->graph();
  g.name = "main graph";
  g.docString = "graph doc";
  g.metadataProps = {{"gk", "gv"}};
  g.quantizationAnnotations.push_back(TensorAnnotation{"X", {{"SCALE_TENSOR", "s"}, {"ZERO_POINT_TENSOR", "z"}}, {}});
  g.quantizationAnnotations.push_back(TensorAnnotation{"", {}, fields({1})});
  g.explicitFields = fields({2});

  // Inputs: symbolic, unknown and denoted dims; reserved and odd names.
  Dim batch = Dim::symbol("N");
  batch.denotation = "DATA_BATCH";
  Type xType = Type::tensor(DataType::Float, dims({batch, Dim::value(3), Dim::unknown(), Dim::symbol("seq len")}));
  xType.denotation = "TENSOR";
  Value *x = g.addInput("X", xType);
  x->info.docString = "the input";
  x->info.metadataProps = {{"ik", "iv"}};
  Value *kw = g.addInput("float", Type::tensor(DataType::Float, std::nullopt)); // unknown rank, reserved name
  Value *scalar = g.addInput("scalar", Type::tensor(DataType::Int64, Shape{}));
  Value *untyped = g.addInput("untyped");
  Value *seqIn = g.addInput("seq_in", Type::sequence(Type::tensor(DataType::Float, dims({Dim::symbol("K")}))));
  Value *mapIn = g.addInput("map_in", Type::map(DataType::Int64, Type::tensor(DataType::Float, Shape{})));
  Value *optIn = g.addInput("opt_in", Type::optional(Type::sequence(Type::tensor(DataType::String, Shape{}))));
  Type noElem = Type::tensor(DataType::Undefined, dims({Dim::value(1)}));
  noElem.hasElemType = false;
  Value *noElemIn = g.addInput("no_elem", noElem);
  Value *emptyTypeIn = g.addInput("empty_type", Type());
  Value *sparseIn = g.addInput("sparse_in", Type::sparseTensor(DataType::Float, dims({Dim::value(3), Dim::value(4)})));
  Value *unknownDtIn = g.addInput("unknown_dt", Type::tensor(static_cast<DataType>(99), Shape{}));
  Value *w = g.addInput("W", Type::tensor(DataType::Float, dims({Dim::symbol("M")})));
  (void)kw; (void)untyped; (void)seqIn; (void)mapIn; (void)optIn; (void)noElemIn; (void)emptyTypeIn;
  (void)sparseIn; (void)unknownDtIn; (void)scalar;

  // Initializers of every element type and encoding.
  auto f32 = tensor<float>(DataType::Float, {6},
                           {1.5f, -0.0f, std::numeric_limits<float>::infinity(), floatBits(0x7FC00000),
                            floatBits(0xFFC00000), floatBits(0x7FC00001)});
  f32->docString = "f32 doc";
  f32->metadataProps = {{"tk", "tv"}};
  Value *vf32 = g.addInitializer("f32", f32);
  g.addInitializerToInput(w, tensor<float>(DataType::Float, {2}, {0.1f, 1e-30f}));
  auto f64 = tensor<double>(DataType::Double, {4}, {0.1, -0.0, doubleBits(0x7FF8000000000001ull), 4.9e-324});
  f64->encoding = TensorEncoding::Typed;
  g.addInitializer("f64", f64);
  g.addInitializer("i8", tensor<int8_t>(DataType::Int8, {3}, {-128, 0, 127}));
  g.addInitializer("i16", tensor<int16_t>(DataType::Int16, {2}, {-32768, 32767}));
  g.addInitializer("i32", tensor<int32_t>(DataType::Int32, {2}, {INT32_MIN, INT32_MAX}));
  auto i64 = tensor<int64_t>(DataType::Int64, {2, 2}, {INT64_MIN, INT64_MAX, 0, -1});
  i64->name = "renamed tensor";
  i64->explicitFields = fields({2, 14});
  Value *vi64 = g.addInitializer("i64", i64);
  g.addInitializer("u8", tensor<uint8_t>(DataType::UInt8, {2}, {0, 255}));
  g.addInitializer("u16", tensor<uint16_t>(DataType::UInt16, {1}, {65535}));
  g.addInitializer("u32", tensor<uint32_t>(DataType::UInt32, {1}, {UINT32_MAX}));
  g.addInitializer("u64", tensor<uint64_t>(DataType::UInt64, {1}, {UINT64_MAX}));
  g.addInitializer("b", tensor<uint8_t>(DataType::Bool, {2}, {0, 1}));
  g.addInitializer("b2", tensor<uint8_t>(DataType::Bool, {2}, {1, 2}));            // not 0/1: hex
  g.addInitializer("f16", tensor<uint16_t>(DataType::Float16, {3}, {0x3C00, 0x7E01, 0x8000}));
  g.addInitializer("bf16", tensor<uint16_t>(DataType::BFloat16, {1}, {0x3F80}));
  g.addInitializer("f8", tensor<uint8_t>(DataType::Float8E4M3FN, {2}, {0x7F, 0x01}));
  g.addInitializer("f8b", tensor<uint8_t>(DataType::Float8E5M2FNUZ, {1}, {0x80}));
  g.addInitializer("f8c", tensor<uint8_t>(DataType::Float8E8M0, {1}, {0xFF}));
  g.addInitializer("i4", bytesTensor(DataType::Int4, {3}, std::string("\x8F\x07", 2)));
  g.addInitializer("i4pad", bytesTensor(DataType::Int4, {3}, std::string("\x21\xF3", 2))); // padding: hex
  g.addInitializer("u4", bytesTensor(DataType::UInt4, {2}, std::string("\xF0", 1)));
  g.addInitializer("f4", bytesTensor(DataType::Float4E2M1, {4}, std::string("\x12\x34", 2)));
  g.addInitializer("c64", tensor<float>(DataType::Complex64, {2}, {1.f, 2.f, 3.f, floatBits(0x7F800001)}));
  g.addInitializer("c128", tensor<double>(DataType::Complex128, {1}, {1.0, -2.5}));
  g.addInitializer("str", Tensor::fromStrings({3}, {"a\"b", std::string("\x00\xff", 2), "caf\xc3\xa9"}));
  g.addInitializer("short", bytesTensor(DataType::Float, {3}, std::string(8, '\x01'))); // wrong size: hex
  g.addInitializer("dt99", bytesTensor(static_cast<DataType>(99), {2}, "ab"));
  g.addInitializer("undef", bytesTensor(DataType::Undefined, {}, ""));
  g.addInitializer("empty", tensor<float>(DataType::Float, {0}, {}));
  g.addInitializer("neg_dim", bytesTensor(DataType::Float, {-1}, ""));
  auto ext = tensor<float>(DataType::Float, {2}, {3.f, 4.f});
  ext->encoding = TensorEncoding::External;
  ext->externalData = {{"location", "weights.bin"}, {"offset", "0"}, {"length", "8"}};
  ext->dataLocation = 1;
  ext->segment = std::make_pair(int64_t{0}, int64_t{2});
  g.addInitializer("ext", ext);
  Value *nullInit = g.addInitializer("null_init", nullptr);
  (void)nullInit;
  // Value types that differ from the initializer's data.
  vf32->setType(Type::tensor(DataType::Float, dims({Dim::symbol("S")})));
  vf32->valueInfoOrder = 0;
  vi64->setType(std::nullopt);

  // A sparse initializer and one without data.
  auto sp = std::make_shared<SparseTensor>();
  sp->values = tensor<float>(DataType::Float, {2}, {1.f, 2.f});
  auto idx = tensor<int64_t>(DataType::Int64, {2}, {0, 5});
  idx->name = "sp_idx";
  sp->indices = idx;
  sp->dims = {3, 4};
  Value *vsp = g.addSparseInitializer("sp", sp);
  vsp->setType(Type::sparseTensor(DataType::Float, dims({Dim::value(3), Dim::value(4)})));
  auto sp2 = std::make_shared<SparseTensor>();
  sp2->hasValues = false;
  sp2->indices = tensor<int64_t>(DataType::Int64, {1}, {1});
  g.addSparseInitializer("sp2", sp2);

  // Nodes.
  Node *relu = g.append(g.createNode("Relu", {x}, {"relu out"}));
  relu->setName("relu node");
  relu->docString = "relu doc";
  relu->metadataProps = {{"nk", "nv"}};
  relu->deviceConfigurations = {std::string("\x0a\x03" "cfg", 5)};
  relu->explicitFields = fields({7, 8});
  Node *some = g.append(g.createNode("SomeOp", {relu->result(0), nullptr, w, nullptr}, {"d", "", "e", ""},
                                     "com.microsoft"));
  some->overload = "v2";
  Node *odd = g.append(g.createNode("My-Op", {some->result(0)}, {"odd"}, "my domain"));
  odd->overload = "not an id";
  Node *dotted = g.append(g.createNode("Op", {odd->result(0)}, {"dotted"}, "ai.onnx"));
  Node *sink = g.append(g.createNode("Sink", {dotted->result(0)}, {}, ""));
  (void)sink;
  Node *nanNamed = g.append(g.createNode("Identity", {dotted->result(0)}, {"nan"}));

  // Every attribute kind on one node.
  Node *attrs = g.append(g.createNode("Attrs", {nanNamed->result(0), vf32}, {"attrs_out", "attrs_out2"}, "custom"));
  auto &as = attrs->attributes();
  as.push_back(Attribute::makeInt("i", -7));
  as.push_back(Attribute::makeInt("zero", 0)); // implied explicit [i]
  as.back().explicitFields = fields({3});
  as.push_back(Attribute::makeInt("zero_absent", 0)); // not implied: explicit []
  as.push_back(Attribute::makeFloat("f", 2.0f));
  as.push_back(Attribute::makeFloat("fnan", floatBits(0x7FC00123)));
  as.push_back(Attribute::makeFloat("finf", -std::numeric_limits<float>::infinity()));
  as.push_back(Attribute::makeFloat("ftiny", 1e-45f));
  as.push_back(Attribute::makeString("s", "str \"q\" \n"));
  as.push_back(Attribute::makeInts("ints", {1, -2, INT64_MAX}));
  as.push_back(Attribute::makeInts("no_ints", {}));
  as.push_back(Attribute::makeFloats("floats", {1.0f, 0.5f, -0.0f}));
  as.push_back(Attribute::makeFloats("no_floats", {}));
  {
    Attribute a("strings", AttrKind::Strings);
    a.strings = {"a", "", "\xff"};
    as.push_back(std::move(a));
  }
  {
    Attribute a("no_strings", AttrKind::Strings);
    as.push_back(std::move(a));
  }
  auto attrTensor = tensor<float>(DataType::Float, {2}, {1.f, 2.f});
  attrTensor->name = "const name";
  attrTensor->encoding = TensorEncoding::Typed;
  as.push_back(Attribute::makeTensor("t", attrTensor));
  auto unnamed = tensor<int64_t>(DataType::Int64, {}, {42});
  unnamed->explicitFields = fields({8}); // explicit empty name: printed as ""
  as.push_back(Attribute::makeTensor("t_empty_name", unnamed));
  {
    Attribute a("tensors", AttrKind::Tensors);
    a.tensors = {tensor<int32_t>(DataType::Int32, {1}, {5}), nullptr};
    as.push_back(std::move(a));
  }
  {
    Attribute a("sparse", AttrKind::SparseTensor);
    a.sparseTensor = sp;
    as.push_back(std::move(a));
  }
  {
    Attribute a("sparses", AttrKind::SparseTensors);
    a.sparseTensors = {sp, sp2};
    as.push_back(std::move(a));
  }
  {
    Attribute a("tp", AttrKind::TypeProto);
    a.tp = Type::map(DataType::String, Type::sequence(Type::tensor(DataType::Float, std::nullopt)));
    as.push_back(std::move(a));
  }
  {
    Attribute a("tps", AttrKind::TypeProtos);
    a.typeProtos = {Type::tensor(DataType::Int64, Shape{}), Type(), Type::optional(Type::tensor(DataType::Bool, Shape{}))};
    as.push_back(std::move(a));
  }
  {
    Attribute a("no_tp", AttrKind::TypeProto); // kind set, field absent
    as.push_back(std::move(a));
  }
  {
    Attribute a("no_tensor", AttrKind::Tensor);
    as.push_back(std::move(a));
  }
  {
    Attribute a("undefined_kind", AttrKind::Undefined); // old models: no type, fields set
    a.hasKind = false;
    a.i = 3;
    a.floats = {1.f};
    a.docString = "old";
    as.push_back(std::move(a));
  }
  {
    Attribute a("kind_99", static_cast<AttrKind>(99));
    as.push_back(std::move(a));
  }
  {
    Attribute a("extras", AttrKind::Int);
    a.i = 1;
    a.f = 0.25f;
    a.s = "also";
    a.t = tensor<float>(DataType::Float, {1}, {9.f});
    a.g = tinyGraph("extra_graph");
    a.tp = Type::tensor(DataType::Float, Shape{});
    a.ints = {4};
    a.typeProtos = {Type()};
    a.explicitFields = fields({2, 13});
    as.push_back(std::move(a));
  }
  {
    Attribute a("graphs", AttrKind::Graphs);
    a.graphs.push_back(tinyGraph("g1"));
    a.graphs.push_back(tinyGraph("")); // a name that needs the typed form
    as.push_back(std::move(a));
  }
  {
    Attribute a("float_graph", AttrKind::Graph);
    a.g = tinyGraph("float");
    as.push_back(std::move(a));
  }
  as.push_back(Attribute::makeString("odd name!", "x"));
  for (const Attribute &a : as)
    for (Graph *sg : a.subgraphs())
      sg->setParentNode(attrs);

  // An If whose branches read outer values (and one shadows an outer name).
  Node *cond = g.append(g.createNode("Cast", {scalar}, {"cond"}));
  cond->attributes().push_back(Attribute::makeInt("to", 9));
  Node *iff = g.append(g.createNode("If", {cond->result(0)}, {"if_out"}));
  {
    auto then = std::make_unique<Graph>();
    then->name = "then";
    Node *t1 = then->append(then->createNode("Add", {x, attrs->result(0)}, {"then_out"}));
    then->addOutput(t1->result(0));
    auto els = std::make_unique<Graph>();
    els->name = "else";
    Node *e1 = els->append(els->createNode("Identity", {relu->result(0)}, {"X"})); // shadows the outer X
    Node *e2 = els->append(els->createNode("Neg", {e1->result(0)}, {"else_out"}));
    els->addOutput(e2->result(0), Type::tensor(DataType::Float, std::nullopt));
    els->addOutput(e1->result(0));
    then->addOutput(x); // an outer value straight out
    iff->attributes().push_back(Attribute::makeGraph("then_branch", std::move(then)));
    iff->attributes().push_back(Attribute::makeGraph("else_branch", std::move(els)));
    for (const Attribute &a : iff->attributes())
      for (Graph *sg : a.subgraphs())
        sg->setParentNode(iff);
  }
  Node *zeroIn = g.append(g.createNode("RandomNormal", {}, {"rnd"}));
  (void)zeroIn;

  // value_info: ordered entries with gaps, orphans, type-only declarations.
  Value *ifOut = iff->result(0);
  ifOut->setType(Type::tensor(DataType::Float, dims({Dim::symbol("N")})));
  ifOut->valueInfoOrder = 3;
  ifOut->info.docString = "if doc";
  ifOut->info.explicitFields = fields({3});
  Value *rOut = relu->result(0);
  rOut->setType(Type::tensor(DataType::Float, std::nullopt)); // type-only, no value_info entry
  Value *dOut = some->result(0);
  dOut->valueInfoOrder = 1; // entry without a type
  some->result(2)->info.metadataProps = {{"only", "info"}}; // info-only, no entry
  g.orphanValueInfos.push_back(OrphanValueInfo{2, "ghost", Type::sequence(Type::tensor(DataType::Float, Shape{})), {}});
  g.orphanValueInfos.push_back(OrphanValueInfo{7, "X", std::nullopt, ValueInfoExtras{"dup", {}, fields({1})}});
  g.noteValueInfoOrder(7);

  // Outputs.
  g.addOutput(ifOut, Type::tensor(DataType::Float, dims({Dim::symbol("N")})));
  size_t o = g.addOutput(attrs->result(1));
  g.outputSlot(o).info.docString = "out doc";
  g.addOutput(x, Type::tensor(DataType::Float, std::nullopt));

  // A function with every field.
  auto f = std::make_unique<Function>();
  f->name = "MyFunc";
  f->domain = "local";
  f->overload = "o1";
  f->docString = "function doc";
  f->attributeNames = {"alpha"};
  {
    Attribute beta = Attribute::makeFloat("beta", 1.0f);
    beta.docString = "beta doc";
    f->attributeProtos.push_back(std::move(beta));
  }
  f->opsetImport = {OpsetId{"", 19, fields({1})}};
  f->metadataProps = {{"fk", "fv"}};
  f->explicitFields = fields({8});
  f->body = std::make_unique<Graph>();
  {
    Graph &b = *f->body;
    Value *a = b.addInput("A");
    Value *bb = b.addInput("B");
    a->setType(Type::tensor(DataType::Float, std::nullopt));
    a->valueInfoOrder = 0;
    Node *add = b.append(b.createNode("Add", {a, bb}, {"sum"}));
    Node *mul = b.append(b.createNode("Mul", {add->result(0), a}, {"Z"}));
    Attribute ref("alpha", AttrKind::Float);
    ref.refAttrName = "alpha";
    mul->attributes().push_back(std::move(ref));
    mul->explicitFields = fields({7});
    add->explicitFields = fields({7});
    b.addOutput(mul->result(0));
    size_t slot = b.addOutput(add->result(0), Type::tensor(DataType::Float, Shape{}));
    b.outputSlot(slot).info.docString = "slot doc";
    b.orphanValueInfos.push_back(OrphanValueInfo{1, "B", Type::tensor(DataType::Float, Shape{}), {}});
    b.name = "body name";
    b.docString = "body doc";
  }
  m->functions.push_back(std::move(f));
  auto f2 = std::make_unique<Function>();
  f2->name = "float"; // reserved name, no header fields at all
  f2->body = std::make_unique<Graph>();
  {
    Graph &b = *f2->body;
    Value *in = b.addInput("in");
    b.addOutput(in);
  }
  m->functions.push_back(std::move(f2));
  return m;
}

std::unique_ptr<Model> graphlessModel() {
  auto m = std::make_unique<Model>();
  m->irVersion = 9;
  auto f = std::make_unique<Function>();
  f->name = "F";
  f->body = std::make_unique<Graph>();
  Value *in = f->body->addInput("x");
  Node *n = f->body->append(f->body->createNode("Relu", {in}, {"y"}));
  f->body->addOutput(n->result(0));
  m->functions.push_back(std::move(f));
  return m;
}

std::unique_ptr<Model> subgraphModel() {
  std::string error;
  auto m = parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If(c) <then_branch = t () => (float[2] a) { a = Relu(x) },
                 else_branch = e () => (float[2] b) { b = Neg(x) }>
    }
  )", error);
  return m;
}

std::string roundTrip(const Model &m) {
  PrintOptions all;
  all.printLargeConstants = true;
  std::string text = toText(m, all);
  std::string error;
  auto parsed = parseModelText(text, error, "roundtrip");
  if (!parsed)
    return "parse failed: " + error + "\n--- text ---\n" + text;
  if (auto d = firstDifference(m, *parsed))
    return "round trip differs: " + *d + "\n--- text ---\n" + text;
  std::string again = toText(*parsed, all);
  if (again != text)
    return "printing the parsed model gives different text\n--- first ---\n" + text + "\n--- second ---\n" + again;
  return "";
}

} // namespace onnxslim::testing

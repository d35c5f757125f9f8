//===- tests/text/TextParserTest.cpp - ONNX textual syntax parser ---------===//
//
// Hand-written snippets: standard ONNX text (as onnx.parser accepts it) and
// the annotation extensions, positive and negative. Checks the IR that comes
// out (types, omitted operands, outer-scope uses, every attribute kind,
// functions, the name table) and the `source:line:col: message` errors.
//
//===----------------------------------------------------------------------===//
#include "frontend/TextParser.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace onnxslim {
namespace {

std::unique_ptr<Model> parseOk(const std::string &text) {
  std::string error;
  auto m = parseModelText(text, error);
  EXPECT_TRUE(m) << error;
  if (m) {
    auto problems = verify(*m);
    EXPECT_TRUE(problems.empty()) << problems[0];
  }
  return m;
}

std::string parseError(const std::string &text) {
  std::string error;
  auto m = parseModelText(text, error, "t.onnxtxt");
  EXPECT_FALSE(m) << "parsed, but an error was expected:\n" << text;
  return error;
}

Node *nodeAt(const Graph &g, size_t i) {
  Node *n = g.firstNode();
  while (n && i--)
    n = n->next();
  return n;
}

//===--- Standard syntax ----------------------------------------------------===//

TEST(TextParser, SyntaxDocExample) {
  auto m = parseOk(R"ONNX(
<
  ir_version: 7,
  opset_import: [ "" : 10 ]
>
agraph (float[N, 128] X, float[128, 10] W, float[10] B) => (float[N, 10] C)
{
    T = MatMul(X, W)
    S = Add(T, B)
    C = Softmax(S)
}
)ONNX");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->irVersion, 7);
  ASSERT_EQ(m->opsetImport.size(), 1u);
  EXPECT_EQ(m->opsetImport[0].version, 10);
  const Graph &g = *m->graph();
  EXPECT_EQ(g.name, "agraph");
  ASSERT_EQ(g.inputs().size(), 3u);
  const Type &xt = *g.input(0)->type();
  EXPECT_EQ(xt.elemType(), DataType::Float);
  ASSERT_TRUE(xt.shape());
  EXPECT_EQ((*xt.shape())[0], Dim::symbol("N"));
  EXPECT_EQ((*xt.shape())[1], Dim::value(128));
  EXPECT_EQ(g.numNodes(), 3u);
  Node *matmul = g.firstNode();
  EXPECT_EQ(matmul->opType(), "MatMul");
  EXPECT_EQ(matmul->operand(0), g.input(0));
  EXPECT_EQ(matmul->operand(1), g.input(1));
  EXPECT_TRUE(matmul->result(0)->hasOneUse());
  EXPECT_EQ(matmul->result(0)->users()[0]->opType(), "Add");
  EXPECT_EQ(g.output(0), g.lastNode()->result(0));
  EXPECT_EQ(typeToText(*g.outputSlots()[0].type), "float[N,10]");
  EXPECT_TRUE(m->names().contains("T"));
  EXPECT_TRUE(m->names().contains("X"));
}

TEST(TextParser, StandardForms) {
  // Forms from onnx's parser: typed attributes, attributes after operands,
  // comments, input defaults, value_info, quoted names, overloads, external data.
  auto m = parseOk(R"(
    <ir_version: 9, opset_import: ["" : 18, "com.microsoft" : 1], producer_name: "p",
     producer_version: "1.0", domain: "d", model_version: 2, doc_string: "doc",
     metadata_props: ["a": "b", "c": "d"]>
    g (float[2] "x.in", float[2] w = {1.0, 2.0}) => (float[2] y)   # a comment
      <float[2] t, float[3] ext = ["location": "w.bin", "offset": "0"], int64[2] shape = {1, 2}>
    {
      t = Add <axis: int = 1, alpha: float = 2> ("x.in", w)   # typed; int literal to float
      y = Mul(t, t) <beta = 0.5>
      z = local.MyFunc:over(y)
    }
  )");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->producerName, "p");
  EXPECT_EQ(m->modelVersion, 2);
  EXPECT_EQ(m->metadataProps.size(), 2u);
  const Graph &g = *m->graph();
  EXPECT_EQ(g.input(0)->name(), "x.in");
  Value *w = g.input(1);
  ASSERT_TRUE(w->initializer());
  EXPECT_EQ(w->defKind(), Value::DefKind::GraphInput);
  EXPECT_EQ(w->initializer()->at<float>(1), 2.0f);
  ASSERT_EQ(g.initializers().size(), 3u);
  EXPECT_EQ(g.initializers()[0], w);
  const Tensor &ext = *g.initializers()[1]->initializer();
  EXPECT_EQ(ext.encoding, TensorEncoding::External);
  EXPECT_EQ(ext.dataLocation, 1);
  EXPECT_EQ(ext.externalData[0].second, "w.bin");
  Node *add = g.firstNode();
  EXPECT_EQ(add->attr("axis")->kind, AttrKind::Int);
  EXPECT_EQ(add->attr("alpha")->kind, AttrKind::Float);
  EXPECT_EQ(add->attr("alpha")->f, 2.0f);
  EXPECT_EQ(add->result(0)->valueInfoOrder, 0u);
  EXPECT_EQ(typeToText(*add->result(0)->type()), "float[2]");
  Node *mul = add->next();
  EXPECT_EQ(mul->attrFloat("beta", 0), 0.5f);
  Node *fn = mul->next();
  EXPECT_EQ(fn->domain(), "local");
  EXPECT_EQ(fn->opType(), "MyFunc");
  EXPECT_EQ(fn->overload, "over");
}

TEST(TextParser, MoreStandardSpellings) {
  auto m = parseOk(R"ONNX(
<
  ir_version: 9,
  opset_import: [ "" : 15, "custom" : 1],
  metadata_props: [ "key one" : "value one" ]
>
net (float b = {1.0}, float[N] c, d) => (float[N] out)
<float[5] k = {1e1, 2.0e-1, 3.1E-1, 4E+1, 5.5e-10}, string[2] s = { "a \"quoted\" word", "a backslash \\ here" }>
{
  # whole-line comment
  t = custom.foo<alpha=2.0, gamma=3.0>(c)   # no spaces around '<' and '='
  u = ConcatFromSequence < axis = 0, new_axis = 1 >(d)
  out = Add(t, b)
}

<
domain: "custom",
opset_import: [ "" : 15],
doc_string: "function foo"
>
  foo
  <alpha: float=4.0, gamma>
  (X) => (C)
  {
      ca = Constant<value_float: float=@alpha>()
      cg = Constant<value_float : float = @gamma>()
      cax = Mul(ca, X)
      C = Add(cax, cg)
  }
)ONNX");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph();
  EXPECT_EQ(m->metadataProps[0].first, "key one");
  EXPECT_FALSE(g.input(2)->type());
  EXPECT_EQ(g.initializers().size(), 3u);
  EXPECT_EQ(g.initializers()[1]->initializer()->at<float>(4), 5.5e-10f);
  EXPECT_EQ(g.initializers()[2]->initializer()->strings()[1], "a backslash \\ here");
  EXPECT_EQ(g.firstNode()->attr("alpha")->f, 2.0f);
  const Function &f = *m->functions[0];
  EXPECT_EQ(f.attributeProtos[0].name, "alpha");
  EXPECT_EQ(f.attributeNames[0], "gamma");
  EXPECT_EQ(f.body->firstNode()->attr("value_float")->refAttrName, "alpha");
  EXPECT_EQ(f.body->numNodes(), 4u);
}

TEST(TextParser, TypeForms) {
  auto m = parseOk(R"(<ir_version: 9> g (float a, float[] b, float[?, "batch size", 3] c, seq(int64[N]) d,
      map(string, float) e, optional(seq(float)) f, sparse_tensor(float[3,4]) s, dtype(99)[2] u, undefined v,
      bfloat16[2] @<denotation: "IMAGE"> w, float[N @<denotation: "DATA_BATCH">] x, empty y, z) => () {})");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph();
  auto type = [&](size_t i) { return *g.input(i)->type(); };
  EXPECT_TRUE(type(0).shape() && type(0).shape()->empty()); // `float` is a scalar
  EXPECT_FALSE(type(1).shape());                            // `float[]` has unknown rank
  EXPECT_TRUE((*type(2).shape())[0].isUnknown());
  EXPECT_EQ((*type(2).shape())[1], Dim::symbol("batch size"));
  EXPECT_EQ(type(3).kind(), Type::Kind::Sequence);
  EXPECT_EQ(type(4).kind(), Type::Kind::Map);
  EXPECT_EQ(type(4).elemType(), DataType::String);
  EXPECT_EQ(type(5).inner()->kind(), Type::Kind::Sequence);
  EXPECT_EQ(type(6).kind(), Type::Kind::SparseTensor);
  EXPECT_EQ(static_cast<int>(type(7).elemType()), 99);
  EXPECT_FALSE(type(8).hasElemType);
  EXPECT_EQ(type(9).denotation, "IMAGE");
  EXPECT_EQ((*type(10).shape())[0].denotation, "DATA_BATCH");
  EXPECT_EQ(type(11).kind(), Type::Kind::Empty);
  EXPECT_FALSE(g.input(12)->type());
}

TEST(TextParser, OmittedOptionalInputsAndOutputs) {
  auto m = parseOk(R"(<ir_version: 9> g (float T, float W) => (float D) {
      D, , E = com.microsoft.SomeOp(T, , W)
      F, "" = Op2(, T)
      G = Op3(T, "")
      H = Op4(,)
      I = Op5(T,)
      = Sink(T)
    })");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph();
  Node *some = nodeAt(g, 0);
  EXPECT_EQ(some->domain(), "com.microsoft");
  ASSERT_EQ(some->numResults(), 3u);
  EXPECT_TRUE(some->result(0) && !some->result(1) && some->result(2));
  ASSERT_EQ(some->numOperands(), 3u);
  EXPECT_EQ(some->operand(1), nullptr);
  EXPECT_EQ(some->operand(2), g.input(1));
  Node *op2 = nodeAt(g, 1);
  EXPECT_EQ(op2->numResults(), 2u);
  EXPECT_EQ(op2->result(1), nullptr);
  EXPECT_EQ(op2->numOperands(), 2u);
  EXPECT_EQ(op2->operand(0), nullptr);
  EXPECT_EQ(nodeAt(g, 2)->numOperands(), 2u);
  EXPECT_EQ(nodeAt(g, 3)->numOperands(), 1u); // `Op(,)`: one empty operand
  EXPECT_EQ(nodeAt(g, 4)->numOperands(), 1u); // `Op(x,)`: the trailing comma adds nothing
  EXPECT_EQ(nodeAt(g, 5)->numResults(), 0u);
  EXPECT_EQ(g.input(0)->useCount(), 5u);
}

TEST(TextParser, SubgraphUsesOuterValues) {
  auto m = parseOk(R"(<ir_version: 9> g (bool c, float[2] x) => (float[2] y) {
      t = Relu(x)
      y = If(c) <then_branch = then_g () => (float[2] a) { a = Neg(t) },
                 else_branch = else_g () => (float[2] x) { x = Abs(x) }>
    })");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph();
  Value *t = g.firstNode()->result(0);
  Node *iff = g.lastNode();
  Graph *then = iff->attr("then_branch")->g.get();
  Graph *els = iff->attr("else_branch")->g.get();
  ASSERT_TRUE(then && els);
  EXPECT_EQ(then->parentNode(), iff);
  Node *neg = then->firstNode();
  // The inner use is a real use of the outer value.
  ASSERT_EQ(neg->operand(0), t);
  bool found = false;
  for (Use *u : t->uses())
    found |= u->owner() == neg;
  EXPECT_TRUE(found);
  // Inside else_g, `x = Abs(x)` reads the outer x and defines an inner x
  // that shadows it for the graph output.
  Node *abs = els->firstNode();
  EXPECT_EQ(abs->operand(0), g.input(1));
  EXPECT_EQ(els->output(0), abs->result(0));
  EXPECT_EQ(g.input(1)->useCount(), 2u); // Relu and the inner Abs
}

TEST(TextParser, EveryAttributeKind) {
  auto m = parseOk(R"(<ir_version: 9> g (float x) => () {
    = Op <i = -3, f = 1.5, fi: float = 2, nan_f = nan, inf_f = -inf, s = "a\"b\n\x01",
          ints = [1, 2], floats = [1.0, 2e-3], strings = ["a", "b"], empty_ints: ints = [],
          t = float[2] tname {1, 2}, t2 = int64 = {7}, ts = [float {1}, int32[1] {2}],
          g = body () => (float z) { z = Relu(x) }, gs = [b1 () => () {}, b2 () => () {}],
          sp = sparse_tensor(float[3]) sparse(float[1] {5}, int64[1] {2}),
          sps = [sparse_tensor(float[2]) sparse(float[1] {1}, int64[1] {0})],
          tp = seq(float[N]), tps = [float, map(int64, string)],
          nothing: tensor = none, typed_graph: graph = "odd name" () => () {}> (x)
  })");
  ASSERT_TRUE(m);
  const Node *n = m->graph()->firstNode();
  auto kind = [&](const char *name) { return n->attr(name) ? n->attr(name)->kind : AttrKind::Undefined; };
  EXPECT_EQ(n->attrInt("i", 0), -3);
  EXPECT_EQ(n->attrFloat("f", 0), 1.5f);
  EXPECT_EQ(kind("fi"), AttrKind::Float);
  EXPECT_TRUE(std::isnan(n->attr("nan_f")->f));
  EXPECT_EQ(n->attr("inf_f")->f, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(n->attrString("s", ""), std::string("a\"b\n\x01"));
  EXPECT_EQ(n->attrInts("ints"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(kind("floats"), AttrKind::Floats);
  EXPECT_EQ(n->attr("floats")->floats[1], 2e-3f);
  EXPECT_EQ(kind("strings"), AttrKind::Strings);
  EXPECT_EQ(kind("empty_ints"), AttrKind::Ints);
  EXPECT_EQ(kind("t"), AttrKind::Tensor);
  EXPECT_EQ(n->attr("t")->t->name, "tname");
  EXPECT_EQ(n->attr("t2")->t->at<int64_t>(0), 7);
  EXPECT_EQ(kind("ts"), AttrKind::Tensors);
  EXPECT_EQ(n->attr("ts")->tensors[1]->dtype(), DataType::Int32);
  EXPECT_EQ(kind("g"), AttrKind::Graph);
  EXPECT_EQ(n->attr("g")->g->name, "body");
  EXPECT_EQ(n->attr("g")->g->firstNode()->operand(0), m->graph()->input(0));
  EXPECT_EQ(kind("gs"), AttrKind::Graphs);
  EXPECT_EQ(n->attr("gs")->graphs.size(), 2u);
  EXPECT_EQ(kind("sp"), AttrKind::SparseTensor);
  EXPECT_EQ(n->attr("sp")->sparseTensor->dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(kind("sps"), AttrKind::SparseTensors);
  EXPECT_EQ(kind("tp"), AttrKind::TypeProto);
  EXPECT_EQ(typeToText(*n->attr("tp")->tp), "seq(float[N])");
  EXPECT_EQ(kind("tps"), AttrKind::TypeProtos);
  EXPECT_EQ(typeToText(n->attr("tps")->typeProtos[1]), "map(int64, string)");
  EXPECT_EQ(kind("nothing"), AttrKind::Tensor);
  EXPECT_EQ(n->attr("nothing")->t, nullptr);
  EXPECT_EQ(n->attr("typed_graph")->g->name, "odd name");
  // The value written for a scalar attribute is present (explicit when default).
  auto zero = parseOk("<ir_version: 9> g () => () { = Op <axis = 0> () }");
  EXPECT_TRUE(zero->graph()->firstNode()->attr("axis")->explicitFields.has(3));
}

TEST(TextParser, Functions) {
  auto m = parseOk(R"(<ir_version: 9, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x, float[2] y) => (float[2] z) { z = local.MyFunc <attr1 = 2.0> (x, y) }
    <domain: "local", opset_import: ["" : 17], doc_string: "adds", overload: "o">
    MyFunc <attr1, attr2: float = 1.0> (X, float[2] Y) => (Z) <float[2] T> {
      T = Add(X, Y)
      Z = Mul <alpha: float = @attr1> (T, X)
    }
    Second (a) => (a) {}
  )");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->functions.size(), 2u);
  const Function &f = *m->functions[0];
  EXPECT_EQ(f.name, "MyFunc");
  EXPECT_EQ(f.domain, "local");
  EXPECT_EQ(f.overload, "o");
  EXPECT_EQ(f.docString, "adds");
  EXPECT_EQ(f.attributeNames, (std::vector<std::string>{"attr1"}));
  ASSERT_EQ(f.attributeProtos.size(), 1u);
  EXPECT_EQ(f.attributeProtos[0].name, "attr2");
  EXPECT_EQ(f.attributeProtos[0].f, 1.0f);
  const Graph &b = *f.body;
  ASSERT_EQ(b.inputs().size(), 2u);
  EXPECT_FALSE(b.input(0)->type());
  // A typed parameter is a value_info entry, as in onnx's parser; then the `<...>` list.
  EXPECT_EQ(b.input(1)->valueInfoOrder, 0u);
  EXPECT_EQ(typeToText(*b.input(1)->type()), "float[2]");
  EXPECT_EQ(b.firstNode()->result(0)->valueInfoOrder, 1u);
  const Attribute *ref = b.lastNode()->attr("alpha");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->refAttrName, "attr1");
  EXPECT_EQ(ref->kind, AttrKind::Float);
  EXPECT_EQ(b.output(0), b.lastNode()->result(0));
  EXPECT_EQ(m->functions[1]->body->output(0), m->functions[1]->body->input(0));
}

TEST(TextParser, AnnotationsSetRoundTripFields) {
  auto m = parseOk(R"(<ir_version: 9, opset_import: ["" : 17 @<explicit: []>]>
    @<training_info: ["\x0a\x00"], explicit: [producer_name]>
    g @<doc_string: "gd", node_explicit: [domain]> (float[2] x @<doc_string: "xd">) => (float[2] y @<doc_string: "yd">)
      <float[2] w = {1, 2} @<encoding: typed, doc_string: "wd">, float[2] ghost @<orphan: 1, order: 4>, t @<order: none, doc_string: "td">>
    {
      [n] t = Add(x, w)
      y = Relu(t) @<explicit: [], doc_string: "nd", metadata_props: ["k": "v"], overload: "a b">
    })");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->opsetImport[0].explicitFields.has(1));
  EXPECT_EQ(m->trainingInfo[0], std::string("\x0a\x00", 2));
  EXPECT_TRUE(m->explicitFields.has(2));
  const Graph &g = *m->graph();
  EXPECT_EQ(g.docString, "gd");
  EXPECT_EQ(g.input(0)->info.docString, "xd");
  EXPECT_EQ(g.outputSlots()[0].info.docString, "yd");
  const Tensor &w = *g.initializers()[0]->initializer();
  EXPECT_EQ(w.encoding, TensorEncoding::Typed);
  EXPECT_EQ(w.docString, "wd");
  ASSERT_EQ(g.orphanValueInfos.size(), 1u);
  EXPECT_EQ(g.orphanValueInfos[0].order, 4u);
  Node *add = g.firstNode();
  EXPECT_TRUE(add->explicitFields.has(7)); // the graph's node_explicit default
  EXPECT_EQ(add->result(0)->valueInfoOrder, Value::kNoValueInfo);
  EXPECT_EQ(add->result(0)->info.docString, "td");
  Node *relu = g.lastNode();
  EXPECT_FALSE(relu->explicitFields.has(7));
  EXPECT_EQ(relu->docString, "nd");
  EXPECT_EQ(relu->overload, "a b");
}

TEST(TextParser, StandaloneGraph) {
  std::string error;
  auto g = parseGraphText("g (float x) => (float y) { y = Relu(x) }", error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(g->model(), nullptr);
  EXPECT_FALSE(parseGraphText("g (float x) => (float y) { y = Relu(x) } extra", error));
  EXPECT_NE(error.find("end of input"), std::string::npos) << error;
}

//===--- Errors -------------------------------------------------------------===//

TEST(TextParserErrors, SyntaxErrorsHaveLineAndColumn) {
  EXPECT_EQ(parseError("<ir_version: 8>\ng (float x) => (float y) {\n  y = Relu(x\n}"),
            "t.onnxtxt:4:1: expected ')' to close the operands of Relu, found '}'");
  EXPECT_EQ(parseError("<ir_version: 8>\ng (float x) = (float y) {}"),
            "t.onnxtxt:2:13: expected '=>' between graph inputs and outputs, found '='");
  EXPECT_EQ(parseError("<ir_versio: 8> g () => () {}"), "t.onnxtxt:1:2: unknown model header key 'ir_versio'");
  EXPECT_EQ(parseError("g () => () { y = Op <a = \"unterminated> () }"),
            "t.onnxtxt:1:26: unterminated string literal");
  EXPECT_EQ(parseError("g () => () { y = Op <a = \"\\x4\"> () }"), "t.onnxtxt:1:27: \\x escape needs two hex digits");
  EXPECT_EQ(parseError("g () => () {\n y = Op ()"), "t.onnxtxt:2:11: expected '}' to close graph 'g', found end of input");
  EXPECT_EQ(parseError("g () => () { y = Op <a = $> () }"), "t.onnxtxt:1:26: unexpected character '$'");
}

TEST(TextParserErrors, UndefinedNamesNameTheNodeAndOp) {
  EXPECT_EQ(parseError("g (float x) => (float y) {\n  [relu1] y = Relu(nope)\n}"),
            "t.onnxtxt:2:20: node 'relu1' (Relu): input 'nope' names no value defined before it");
  // Use before definition is an error too (the text is in topological order).
  EXPECT_EQ(parseError("g (float x) => (float y) { y = Relu(t) t = Neg(x) }"),
            "t.onnxtxt:1:37: node (Relu): input 't' names no value defined before it");
  // A subgraph sees only what is defined before its node.
  EXPECT_NE(parseError("g (bool c) => () { = If(c) <then_branch = t () => () { = Use(later) }> later = Op() }")
                .find("node (Use): input 'later'"),
            std::string::npos);
  EXPECT_EQ(parseError("g (float x) => (float y) { z = Relu(x) }"),
            "t.onnxtxt:1:23: graph 'g': output 'y' names no value of the graph or its scope");
  EXPECT_EQ(parseError("g (float x) => () { x = Relu(x) }"), "t.onnxtxt:1:21: value 'x' is defined twice in graph 'g'");
  EXPECT_EQ(parseError("g (float x) => () <float v @<order: none>> {}"),
            "t.onnxtxt:1:26: declaration of 'v', which names no value of graph 'g'");
}

TEST(TextParserErrors, BadTypesAndConstants) {
  EXPECT_EQ(parseError("g (float[2 x) => () {}"), "t.onnxtxt:1:12: expected ']' to close the shape, found 'x'");
  EXPECT_EQ(parseError("g (float[2.5] x) => () {}"),
            "t.onnxtxt:1:10: expected a dimension (a number, a symbol or '?'), found '2.5'");
  EXPECT_EQ(parseError("g (map(foo, float) x) => () {}"), "t.onnxtxt:1:8: unknown element type 'foo'");
  EXPECT_EQ(parseError("g (seq float x) => () {}"), "t.onnxtxt:1:8: expected '(' after 'seq'/'optional', found 'float'");
  EXPECT_EQ(parseError("g (opaque(a) x) => () {}"), "t.onnxtxt:1:4: opaque types are not supported");
  EXPECT_EQ(parseError("g () => () <float[3] w = {1, 2}> {}"),
            "t.onnxtxt:1:13: tensor has 3 elements but 2 are listed");
  EXPECT_EQ(parseError("g () => () <int8[1] w = {300}> {}"), "t.onnxtxt:1:26: element 300 out of range for int8");
  EXPECT_EQ(parseError("g () => () <float[N] w = {1}> {}"), "t.onnxtxt:1:13: a constant's dimensions must be numbers");
  EXPECT_EQ(parseError("g () => () <float[2] w = {...}> {}"),
            "t.onnxtxt:1:27: elided constant data ({...}) cannot be parsed; print with large constants");
  EXPECT_EQ(parseError("g () => () <float[1] w = {1e99}> {}"), "t.onnxtxt:1:27: number out of range for float: 1e99");
  EXPECT_EQ(parseError("g () => () <float[1] w = 0x123> {}"), "t.onnxtxt:1:26: hex data needs an even number of digits");
  EXPECT_EQ(parseError("g () => () { = Op <a = []> () }"),
            "t.onnxtxt:1:24: an empty list needs a declared kind (name: ints = [])");
  EXPECT_EQ(parseError("g () => () { = Op <a: int = 1.5> () }"),
            "t.onnxtxt:1:29: a value of kind 'float' where 'int' is declared");
  EXPECT_EQ(parseError("g () => () { = Op <a: ints = 1> () }"),
            "t.onnxtxt:1:30: expected a '[' list for kind 'ints', found '1'");
  EXPECT_EQ(parseError("g () => () { = Op <a = none> () }"),
            "t.onnxtxt:1:24: 'none' needs a typed attribute (name: kind = none)");
  EXPECT_EQ(parseError("g () => () { = Op () @<colour: 1> }"), "t.onnxtxt:1:24: unknown key 'colour' in node annotation");
  EXPECT_EQ(parseError("g () => () { = Op () @<explicit: [colour]> }"),
            "t.onnxtxt:1:35: 'colour' is not a field of this message");
}

} // namespace
} // namespace onnxslim

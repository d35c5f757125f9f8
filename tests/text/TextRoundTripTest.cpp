//===- tests/text/TextRoundTripTest.cpp - Print, parse, compare -----------===//
//
// Hand-built IR models that use every field go through print -> parse and
// must come back equal (ir/Equivalence) and print to the same text again.
// Also: the equivalence checker itself (it must find planted differences
// and say where), print options, and a small fuzzer that truncates and
// corrupts printed text at every byte position: the parser must fail
// cleanly, never crash (run it under -DONNXSLIM_SANITIZE=ON too).
//
//===----------------------------------------------------------------------===//
#include "TextTestModels.h"

#include "frontend/TextParser.h"
#include "ir/Equivalence.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <sstream>

namespace onnxslim {
namespace {

using testing::kitchenSinkModel;
using testing::roundTrip;

std::unique_ptr<Model> parse(const std::string &text) {
  std::string error;
  auto m = parseModelText(text, error);
  EXPECT_TRUE(m) << error;
  return m;
}

std::string allText(const Model &m) {
  PrintOptions o;
  o.printLargeConstants = true;
  return toText(m, o);
}

TEST(TextRoundTrip, KitchenSinkModel) {
  auto m = kitchenSinkModel();
  ASSERT_TRUE(verify(*m).empty()) << verify(*m)[0];
  EXPECT_EQ(roundTrip(*m), "");
  std::string error;
  auto parsed = parseModelText(allText(*m), error);
  ASSERT_TRUE(parsed) << error;
  std::vector<std::string> problems = verify(*parsed);
  EXPECT_TRUE(problems.empty()) << problems[0];
}

TEST(TextRoundTrip, GraphlessModel) {
  auto m = testing::graphlessModel();
  EXPECT_EQ(roundTrip(*m), "");
  EXPECT_NE(allText(*m).find("graph: none"), std::string::npos);
}

TEST(TextRoundTrip, SubgraphModel) {
  auto m = testing::subgraphModel();
  ASSERT_TRUE(m);
  EXPECT_EQ(roundTrip(*m), "");
}

TEST(TextRoundTrip, EmptyModel) {
  Model m;
  EXPECT_EQ(roundTrip(m), "");
}

TEST(TextRoundTrip, PlainModelNeedsNoAnnotations) {
  // A model with nothing unusual prints as standard ONNX text.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17 @<explicit: []>]>
    g (float[N,4] x, float[4,4] w) => (float[N,4] y) <float[4] b = {1, 2, 3, 4}> {
      [mm] t = MatMul(x, w)
      y = Add(t, b)
    })");
  ASSERT_TRUE(m);
  std::string text = allText(*m);
  EXPECT_EQ(text.find("@<", text.find('>')), std::string::npos) << text;
  EXPECT_EQ(roundTrip(*m), "");
}

//===--- Print options and helpers ------------------------------------------===//

TEST(TextPrinter, ElidesLargeConstants) {
  auto m = parse(R"(<ir_version: 8> g () => (float[20] y) <float[20] w = {0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9}> {
    y = Identity(w) })");
  ASSERT_TRUE(m);
  std::string elided = toText(*m);
  EXPECT_NE(elided.find("float[20] w = {...}"), std::string::npos) << elided;
  std::string error;
  EXPECT_FALSE(parseModelText(elided, error));
  EXPECT_NE(error.find("elided"), std::string::npos) << error;
  PrintOptions big;
  big.largeConstantElements = 20;
  EXPECT_EQ(toText(*m, big).find("{...}"), std::string::npos);
}

TEST(TextPrinter, DropsDocStringsOnRequest) {
  auto m = parse(R"(<ir_version: 8, doc_string: "model doc"> g @<doc_string: "gdoc"> (float x) => (float y) {
    y = Relu(x) @<doc_string: "node doc"> })");
  ASSERT_TRUE(m);
  PrintOptions o;
  o.printDocStrings = false;
  EXPECT_EQ(toText(*m, o).find("doc"), std::string::npos) << toText(*m, o);
  EXPECT_NE(toText(*m).find("node doc"), std::string::npos);
}

TEST(TextPrinter, PrintsOneNode) {
  auto m = parse(R"(<ir_version: 8> g (float x) => (float y, float z) {
    [n] y = Op <a = 1, b = "s"> (x)
    z = com.ms.Relu(y, "")
  })");
  ASSERT_TRUE(m);
  std::ostringstream os;
  printNode(os, *m->graph()->firstNode());
  EXPECT_EQ(os.str(), "[n] y = Op <a = 1, b = \"s\"> (x)");
  os.str("");
  printNode(os, *m->graph()->lastNode());
  EXPECT_EQ(os.str(), "z = com.ms.Relu(y, \"\")");
}

TEST(TextPrinter, PrintsTypes) {
  EXPECT_EQ(typeToText(Type::tensor(DataType::Float, Shape{Dim::symbol("N"), Dim::value(3), Dim::unknown()})),
            "float[N,3,?]");
  EXPECT_EQ(typeToText(Type::tensor(DataType::Float, std::nullopt)), "float[]");
  EXPECT_EQ(typeToText(Type::tensor(DataType::Float, Shape{})), "float");
  EXPECT_EQ(typeToText(Type::sequence(Type::tensor(DataType::Int64, Shape{}))), "seq(int64)");
  EXPECT_EQ(typeToText(Type::map(DataType::String, Type::tensor(DataType::Float, Shape{}))), "map(string, float)");
  EXPECT_EQ(typeToText(Type::sparseTensor(DataType::Float, Shape{Dim::value(2)})), "sparse_tensor(float[2])");
}

TEST(TextPrinter, FloatsAreExact) {
  // Every float bit pattern class round-trips: shortest decimals, -0, inf, NaN payloads.
  std::vector<uint32_t> bits = {0x00000001, 0x3DCCCCCD, 0x80000000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
                                0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFF800001, 0x00800000, 0x4B000001};
  std::vector<float> values(bits.size());
  std::memcpy(values.data(), bits.data(), bits.size() * 4);
  Model m;
  m.setGraph(std::make_unique<Graph>());
  m.graph()->name = "g";
  Value *c = m.graph()->addInitializer("c", Tensor::fromValues<float>(DataType::Float, {12}, values));
  m.graph()->addOutput(c);
  EXPECT_EQ(roundTrip(m), "");
}

//===--- Equivalence --------------------------------------------------------===//

const char *kBase = R"(<ir_version: 8, opset_import: ["" : 17]>
  g (bool c, float[2] x, float[2] x2) => (float[2] y) <float[2] w = {1, 2}> {
    [a] s = Add <axis = 1> (x, w)
    y = If(c) <then_branch = t () => (float[2] r) { r = Relu(s) },
               else_branch = e () => (float[2] r) { r = Neg(x) }>
  })";

std::optional<std::string> diffAfter(const std::string &from, const std::string &to) {
  std::string changed = kBase;
  size_t at = changed.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  changed.replace(at, from.size(), to);
  auto a = parse(kBase);
  auto b = parse(changed);
  if (!a || !b)
    return std::string("parse failed");
  return firstDifference(*a, *b);
}

TEST(Equivalence, EqualModels) {
  auto a = parse(kBase);
  auto b = parse(kBase);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(firstDifference(*a, *b), std::nullopt);
  EXPECT_EQ(firstDifference(*a, *a), std::nullopt);
  auto k1 = kitchenSinkModel(), k2 = kitchenSinkModel();
  EXPECT_EQ(firstDifference(*k1, *k2), std::nullopt);
}

TEST(Equivalence, FindsAttributeValue) {
  auto d = diffAfter("axis = 1", "axis = 2");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("node[0] (Add 'a') / attribute 'axis': i differs: 1 vs 2"), std::string::npos) << *d;
}

TEST(Equivalence, FindsSwappedOperands) {
  auto d = diffAfter("(x, w)", "(w, x)");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("operand[0]: reads 'x' (graph 'g' / input[1] 'x') vs 'w'"), std::string::npos) << *d;
}

TEST(Equivalence, FindsOuterValueReadInSubgraph) {
  auto d = diffAfter("r = Neg(x)", "r = Neg(x2)");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("else_branch"), std::string::npos) << *d;
  EXPECT_NE(d->find("reads 'x'"), std::string::npos) << *d;
}

TEST(Equivalence, FindsTensorBytesTypesAndRoundTripFields) {
  auto d = diffAfter("{1, 2}", "{1, 3}");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("initializer[0] 'w' / initializer: tensor data differs at byte 6 (element 1)"), std::string::npos)
      << *d;
  d = diffAfter("float[2] x2", "float[3] x2");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("type differs: float[2] vs float[3]"), std::string::npos) << *d;
  d = diffAfter("{1, 2}>", "{1, 2} @<encoding: typed>>");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("tensor encoding"), std::string::npos) << *d;
  d = diffAfter("[a] s = Add <axis = 1> (x, w)", "[a] s = Add <axis = 1> (x, w) @<explicit: [domain]>");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("explicit fields differs: {} vs {7}"), std::string::npos) << *d;
  d = diffAfter("{1, 2}>", "{1, 2}, s>");
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("value_info order"), std::string::npos) << *d;
}

TEST(Equivalence, DefinitionPositionMattersNotJustNames) {
  // Two models with the same names everywhere: in one the subgraph node reads
  // the subgraph's own 'v', in the other the outer 'v' it shadows.
  auto build = [](bool readOuter) {
    auto m = std::make_unique<Model>();
    m->setGraph(std::make_unique<Graph>());
    Graph &g = *m->graph();
    g.name = "g";
    Value *v = g.addInput("v", Type::tensor(DataType::Float, Shape{}));
    Node *loop = g.append(g.createNode("Scan", {v}, {"out"}));
    auto body = std::make_unique<Graph>();
    body->name = "body";
    Value *inner = body->addInput("v", Type::tensor(DataType::Float, Shape{}));
    Node *n = body->append(body->createNode("Neg", {readOuter ? v : inner}, {"r"}));
    body->addOutput(n->result(0));
    loop->attributes().push_back(Attribute::makeGraph("body", std::move(body)));
    loop->attributes().back().g->setParentNode(loop);
    g.addOutput(loop->result(0));
    return m;
  };
  auto a = build(false), b = build(true);
  auto d = firstDifference(*a, *b);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("operand[0]: reads 'v' (graph 'g' / node[0] (Scan) / attribute 'body' / graph 'body' / input[0] 'v') "
                    "vs 'v' (graph 'g' / input[0] 'v')"),
            std::string::npos)
      << *d;
}

//===--- Fuzzing ------------------------------------------------------------===//

/// Parses every truncation of `text`, a few corruptions at every byte and,
/// with `deletions`, the text without each byte.
void fuzz(const std::string &text, size_t variantsPerByte, bool deletions) {
  static const char kBytes[] = {'(', ')', '<', '>', '"', '\\', ',', '=', '@', '0', 'x', '\n', '#',
                                '\xff', '{', '}', '[', ']', '-', '.', ':', 'e', 'n', '\0'};
  std::string error;
  size_t parsed = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (parseModelText(std::string_view(text).substr(0, i), error))
      ++parsed;
    for (size_t k = 0; k < variantsPerByte && i < text.size(); ++k) {
      std::string bad = text;
      bad[i] = kBytes[(i * 7 + k * 13) % sizeof(kBytes)];
      if (parseModelText(bad, error))
        ++parsed;
      else
        EXPECT_NE(error.find("<text>:"), std::string::npos) << error;
    }
    if (deletions) {
      std::string removed = text;
      removed.erase(i < text.size() ? i : 0, 1);
      parseModelText(removed, error);
    }
  }
  EXPECT_GT(parsed, 0u);
}

TEST(TextFuzz, SmallModelEveryByteEveryCorruption) { fuzz(allText(*testing::subgraphModel()), 24, true); }

TEST(TextFuzz, KitchenSinkEveryByte) { fuzz(allText(*kitchenSinkModel()), 1, false); }

TEST(TextFuzz, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "<ir_version: 8> g (";
  for (int i = 0; i < 100000; ++i)
    deep += "seq(";
  std::string error;
  EXPECT_FALSE(parseModelText(deep, error));
  EXPECT_NE(error.find("nesting deeper than"), std::string::npos) << error;
  std::string graphs = "<ir_version: 8> g () => () { ";
  for (int i = 0; i < 100000; ++i)
    graphs += "y = Op <a = b () => () { ";
  EXPECT_FALSE(parseModelText(graphs, error));
  // Graph attributes meet the subgraph depth bound (frontend/NestingLimit.h) first.
  EXPECT_NE(error.find("subgraphs nested more than 64 levels deep: Op.a > Op.a > Op.a > ... (59 more) ..."),
            std::string::npos)
      << error;
}

} // namespace
} // namespace onnxslim

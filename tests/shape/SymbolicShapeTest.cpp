//===- tests/shape/SymbolicShapeTest.cpp - Symbolic dims and the interface -===//
//
// The user's symbols through a BERT-style embedding (position ids from
// Shape/Gather/Range/Unsqueeze, an attention mask from an input), the
// Shape -> Gather -> Concat -> Reshape chain, the symbolic-value side table,
// --input-shapes overrides, the existing-type and graph-output policies,
// unknown-domain ops, and the per-node API.
//
//===----------------------------------------------------------------------===//
#include "tests/shape/ShapeTestUtil.h"

namespace onnxslim::testing {
namespace {

/// A BERT-style embedding: word + position + token-type embeddings, position
/// ids from Shape/Gather/Range/Unsqueeze (and, as HuggingFace exports do, a
/// slice of a position buffer up to the sequence length), and an additive
/// attention mask computed from an input.
std::string bertModel() {
  return withOpset(17, R"(
  embed (int64[batch, sequence] input_ids, int64[batch, sequence] attention_mask,
         float[100, 32] word_table, float[64, 32] pos_table, float[2, 32] type_table,
         int64[1, 64] pos_buffer)
     => (float[batch, sequence, 32] embeddings, float[batch, 1, 1, sequence] mask_bias)
     <int64 zero = {0}, int64 one = {1}, int64[1] ax0 = {0},
      int64[1] ax1 = {1}, int64[2] ax12 = {1, 2}, float fone = {1}, float big = {-10000}> {
    shape = Shape(input_ids)
    seq_len = Gather(shape, one)
    positions = Range(zero, seq_len, one)
    position_ids = Unsqueeze(positions, ax0)
    seq_1d = Unsqueeze(seq_len, ax0)
    sliced_ids = Slice(pos_buffer, ax0, seq_1d, ax1)
    words = Gather(word_table, input_ids)
    pos = Gather(pos_table, position_ids)
    type_ids = ConstantOfShape(shape)
    type_ids64 = Cast <to = 7> (type_ids)
    types = Gather(type_table, type_ids64)
    sum1 = Add(words, pos)
    embeddings = Add(sum1, types)
    mask4 = Unsqueeze(attention_mask, ax12)
    maskf = Cast <to = 1> (mask4)
    inv = Sub(fone, maskf)
    mask_bias = Mul(inv, big)
  })");
}

TEST(SymbolicShape, BertEmbeddingKeepsBatchAndSequence) {
  auto r = infer(bertModel());
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
  EXPECT_EQ(r.type("shape"), "int64[2]");
  EXPECT_EQ(r.type("seq_len"), "int64");
  EXPECT_EQ(r.type("positions"), "int64[sequence]");
  EXPECT_EQ(r.type("position_ids"), "int64[1,sequence]");
  // pos_buffer[:, :sequence] has min(sequence, 64) columns: sequence only
  // when sequence <= 64, which nothing in the model proves.
  EXPECT_EQ(r.type("sliced_ids"), "int64[1,?]");
  EXPECT_EQ(r.type("words"), "float[batch,sequence,32]");
  EXPECT_EQ(r.type("pos"), "float[1,sequence,32]");
  EXPECT_EQ(r.type("type_ids"), "float[batch,sequence]");
  EXPECT_EQ(r.type("types"), "float[batch,sequence,32]");
  EXPECT_EQ(r.type("embeddings"), "float[batch,sequence,32]");
  EXPECT_EQ(r.type("mask4"), "int64[batch,1,1,sequence]");
  EXPECT_EQ(r.type("mask_bias"), "float[batch,1,1,sequence]");
  // The interface is untouched.
  const Graph &g = *r.model->graph();
  EXPECT_EQ(typeText(g.input(0)->type()), "int64[batch,sequence]");
  EXPECT_EQ(typeText(g.outputSlots()[0].type), "float[batch,sequence,32]");
}

TEST(SymbolicShape, ShapeGatherConcatReshapeChain) {
  auto r = infer(withOpset(13, R"(
    g (float[batch, seq, 768] x) => (float[batch, seq, 768] y)
      <int64 i0 = {0}, int64 i1 = {1}, int64[1] minus1 = {-1}, int64[1] ax = {0},
       int64[2] heads = {12, 64}> {
      s = Shape(x)
      b = Gather(s, i0)
      q = Gather(s, i1)
      bu = Unsqueeze(b, ax)
      qu = Unsqueeze(q, ax)
      target = Concat <axis = 0> (bu, qu, minus1)
      y = Reshape(x, target)
      split_target = Concat <axis = 0> (bu, qu, heads)
      split = Reshape(x, split_target)
      merged = Reshape(split, target)
      flat = Reshape(x, minus1)
    })"));
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
  EXPECT_EQ(r.type("target"), "int64[3]");
  EXPECT_EQ(r.type("y"), "float[batch,seq,768]");
  EXPECT_EQ(r.type("split"), "float[batch,seq,12,64]");
  EXPECT_EQ(r.type("merged"), "float[batch,seq,768]");
  EXPECT_EQ(r.type("flat"), "float[?]");

  ShapeInferencer inf(*r.model);
  inf.run();
  const Graph &g = *r.model->graph();
  auto value = inf.symbolicValue(findValue(g, "target"));
  ASSERT_TRUE(value);
  ASSERT_EQ(value->size(), 3u);
  EXPECT_EQ((*value)[0], Dim::symbol("batch"));
  EXPECT_EQ((*value)[1], Dim::symbol("seq"));
  EXPECT_EQ((*value)[2], Dim::value(-1));
  auto flatShape = inf.symbolicShape(findValue(g, "flat"));
  ASSERT_TRUE(flatShape);
  EXPECT_EQ((*flatShape)[0].str(), "768*batch*seq");
}

TEST(SymbolicShape, UnnamedDimsStayRelatedThroughShapeChains) {
  // x's first dim has no name; the Reshape target reads it back through Shape.
  auto m = parseModel(withOpset(13, R"(
    g (float[?, 4] x) => () <int64[1] i0 = {0}, int64[1] i1 = {1}, int64[2] tail = {2, 2}> {
      s = Shape(x)
      n = Slice(s, i0, i1)
      t = Concat <axis = 0> (n, tail)
      y = Reshape(x, t)
    })"));
  ASSERT_TRUE(m);
  ShapeInferencer inf(*m);
  ShapeInferenceResult res = inf.run();
  EXPECT_TRUE(res.warnings.empty());
  EXPECT_EQ(typeOf(*m, "y"), "float[?,2,2]");
  auto sx = inf.symbolicShape(m->graph()->input(0));
  auto sy = inf.symbolicShape(findValue(*m->graph(), "y"));
  ASSERT_TRUE(sx && sy);
  EXPECT_TRUE(provablyEqual((*sx)[0], (*sy)[0]));
  auto elems = inf.symbolicElements(findValue(*m->graph(), "t"));
  ASSERT_TRUE(elems);
  EXPECT_TRUE(provablyEqual((*elems)[0], (*sx)[0]));
  // As IR dims, the unnamed size is unknown: no name is invented.
  auto value = inf.symbolicValue(findValue(*m->graph(), "t"));
  ASSERT_TRUE(value);
  EXPECT_TRUE((*value)[0].isUnknown());
}

TEST(SymbolicShape, PadsReorderedThroughSliceAndTranspose) {
  // torch.nn.functional.pad's export: [l, r] pairs reversed and transposed.
  auto r = infer(withOpset(13, R"(
    g (float[N, 576] x) => () <int64[2] given = {64, 0}, int64[2] zeros = {0, 0},
                               int64[2] pairs = {-1, 2}, int64[1] m1 = {-1}, int64[1] big = {-9223372036854775807},
                               int64[1] ax0 = {0}, int64[1] flat = {-1}> {
      all = Concat <axis = 0> (given, zeros)
      p2 = Reshape(all, pairs)
      rev = Slice(p2, m1, big, ax0, m1)
      tr = Transpose <perm = [1, 0]> (rev)
      pads = Reshape(tr, flat)
      y = Pad(x, pads)
    })"));
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
  EXPECT_EQ(r.type("y"), "float[N,640]");
  ShapeInferencer inf(*r.model);
  inf.run();
  auto pads = inf.symbolicValue(findValue(*r.model->graph(), "pads"));
  ASSERT_TRUE(pads);
  ASSERT_EQ(pads->size(), 4u);
  EXPECT_EQ((*pads)[1], Dim::value(64));
  EXPECT_EQ((*pads)[3], Dim::value(0));
}

TEST(SymbolicShape, ExpandWithAShapeFromAnotherInput) {
  auto r = infer(withOpset(13, R"(
    g (float[batch, 1, 8] x, float[batch, heads, 8] y) => () {
      s = Shape(y)
      e = Expand(x, s)
    })"));
  EXPECT_EQ(r.type("e"), "float[batch,heads,8]");
}

TEST(SymbolicShape, InputShapesOverride) {
  ShapeInferenceOptions opts;
  opts.inputShapes["x"] = {Dim::value(1), Dim::value(3), Dim::value(224), Dim::value(224)};
  opts.inputShapes["nope"] = {Dim::value(1)};
  auto r = infer(withOpset(17, R"(
    g (float[N, 3, H, W] x, float[8, 3, 3, 3] w) => (float[N, 8, ?, ?] y) {
      y = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)
    })"),
                 opts);
  EXPECT_EQ(r.type("x"), "float[1,3,224,224]");
  EXPECT_EQ(r.type("y"), "float[1,8,112,112]");
  EXPECT_TRUE(r.warned("input-shapes: the model has no input named 'nope'")) << r.warnings();
  // Declared output types are the interface: untouched.
  EXPECT_EQ(typeText(r.model->graph()->outputSlots()[0].type), "float[N,8,?,?]");
}

TEST(SymbolicShape, ExistingTypesAreFilledNotReplaced) {
  const char *text = R"(
    g (float[2, 3] x) => (float[2, 3] y) <float[?, 3] r, float[7, 3] wrong, float[2, C] named> {
      r = Relu(x)
      wrong = Neg(x)
      named = Abs(x)
      y = Identity(r)
    })";
  auto keep = infer(withOpset(17, text));
  EXPECT_EQ(keep.type("r"), "float[2,3]");
  EXPECT_EQ(keep.type("wrong"), "float[7,3]");
  EXPECT_EQ(keep.type("named"), "float[2,C]");
  EXPECT_EQ(keep.type("y"), "float[2,3]");
  EXPECT_TRUE(keep.warned("result 'wrong' is declared float[7,3] but inferred float[2,3]"))
      << keep.warnings();

  ShapeInferenceOptions overwrite;
  overwrite.overwrite = true;
  auto replaced = infer(withOpset(17, text), overwrite);
  EXPECT_EQ(replaced.type("wrong"), "float[2,3]");
  EXPECT_EQ(replaced.type("named"), "float[2,3]");
  EXPECT_TRUE(replaced.result.warnings.empty()) << replaced.warnings();
}

TEST(SymbolicShape, NewlyTypedResultsGetValueInfoEntries) {
  auto m = parseModel(withOpset(17, R"(
    g (float[2, 3] x) => (float[2, 3] y) <float[2, 3] declared> {
      declared = Relu(x)
      fresh = Neg(declared)
      y = Abs(fresh)
    })"));
  ASSERT_TRUE(m);
  const Graph &g = *m->graph();
  uint32_t declaredOrder = findValue(g, "declared")->valueInfoOrder;
  EXPECT_NE(declaredOrder, Value::kNoValueInfo);
  EXPECT_EQ(findValue(g, "fresh")->valueInfoOrder, Value::kNoValueInfo);
  inferShapes(*m);
  EXPECT_EQ(findValue(g, "declared")->valueInfoOrder, declaredOrder);
  EXPECT_GT(findValue(g, "fresh")->valueInfoOrder, declaredOrder);
  EXPECT_NE(findValue(g, "fresh")->valueInfoOrder, Value::kNoValueInfo);
  EXPECT_EQ(findValue(g, "y")->valueInfoOrder, Value::kNoValueInfo); // a graph output
  ShapeInferenceOptions noEntries;
  noEntries.addValueInfo = false;
  auto m2 = parseModel(withOpset(17, "g (float[2] x) => () { a = Relu(x) }"));
  ASSERT_TRUE(m2);
  inferShapes(*m2, noEntries);
  EXPECT_EQ(typeOf(*m2, "a"), "float[2]");
  EXPECT_EQ(findValue(*m2->graph(), "a")->valueInfoOrder, Value::kNoValueInfo);
}

TEST(SymbolicShape, CountsTypedValuesAndIsIdempotent) {
  auto m = parseModel(withOpset(17, R"(
    g (float[2, 3] x) => (float[2, 3] y) {
      a = Relu(x)
      y = Neg(a)
    })"));
  ASSERT_TRUE(m);
  EXPECT_EQ(inferShapes(*m).valuesTyped, 2u);
  EXPECT_EQ(inferShapes(*m).valuesTyped, 0u);
}

TEST(SymbolicShape, UnknownDomainOpsKeepTheirTypes) {
  auto r = infer(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2, 3] x) => () <float[2, 3] known> {
      known = com.microsoft.FusedGelu(x)
      unknown = com.microsoft.FusedGelu(x)
      after = Relu(known)
      after2 = Relu(unknown)
    })");
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
  EXPECT_EQ(r.type("known"), "float[2,3]");
  EXPECT_EQ(r.type("unknown"), "none");
  EXPECT_EQ(r.type("after"), "float[2,3]");
  EXPECT_EQ(r.type("after2"), "none");
  ShapeInferenceOptions strict;
  strict.strict = true;
  auto s = infer(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2, 3] x) => () {
      [f] unknown = com.microsoft.FusedGelu(x)
    })",
                 strict);
  EXPECT_TRUE(s.warned("result 'unknown' has no type")) << s.warnings();
}

TEST(SymbolicShape, PerNodeApiAfterARewrite) {
  auto m = parseModel(withOpset(17, R"(
    g (float[batch, 4] x) => (float[batch, 4] y) <int64[2] t = {0, 2}> {
      a = Relu(x)
      y = Neg(a)
    })"));
  ASSERT_TRUE(m);
  Graph &g = *m->graph();
  ShapeInferencer inf(*m);
  inf.run();
  // Insert a Reshape between a and y, then re-infer only the new node.
  Value *t = findValue(g, "t");
  Node *neg = g.lastNode();
  Node *reshape = g.insertBefore(neg, g.createNode("Reshape", {findValue(g, "a"), t}, {"r"}));
  neg->setOperand(0, reshape->result(0));
  std::optional<Type> standalone = inferNodeResultType(*reshape, 0);
  ASSERT_TRUE(standalone);
  EXPECT_EQ(typeToText(*standalone), "float[batch,2]");
  EXPECT_EQ(typeText(inf.inferResultType(*reshape, 0)), "float[batch,2]");
  EXPECT_EQ(inf.updateNode(*reshape), 1u);
  EXPECT_EQ(typeOf(*m, "r"), "float[batch,2]");
  // Neg keeps its old (now stale) type until re-inferred... with overwrite.
  ShapeInferenceOptions overwrite;
  overwrite.overwrite = true;
  ShapeInferencer fresh(*m, overwrite);
  fresh.run();
  EXPECT_EQ(typeOf(*m, "y"), "float[batch,2]");
}

TEST(SymbolicShape, PerNodeApiSeesShapeChainsOnDemand) {
  auto m = parseModel(withOpset(13, R"(
    g (float[batch, seq, 64] x) => () <int64 i0 = {0}, int64[1] ax = {0}, int64[1] m1 = {-1}> {
      s = Shape(x)
      b = Gather(s, i0)
      bu = Unsqueeze(b, ax)
      t = Concat <axis = 0> (bu, m1)
      y = Reshape(x, t)
    })"));
  ASSERT_TRUE(m);
  std::optional<Type> y = inferNodeResultType(*m->graph()->lastNode(), 0);
  ASSERT_TRUE(y);
  EXPECT_EQ(typeToText(*y), "float[batch,?]");
}

TEST(SymbolicShape, OpsetVersionPicksSemantics) {
  // Unsqueeze's axes: an attribute before opset 13, an operand from 13 on.
  auto v11 = infer(withOpset(11, R"(
    g (float[3] x) => () { y = Unsqueeze <axes = [0]> (x) })"));
  EXPECT_EQ(v11.type("y"), "float[1,3]");
  auto v13 = infer(withOpset(13, R"(
    g (float[3] x) => () { [u] y = Unsqueeze <axes = [0]> (x) })"));
  EXPECT_EQ(v13.type("y"), "float[]"); // axes operand missing: rank unknown
}

TEST(SymbolicShape, InitializerInputsAreConstantsOnlyBeforeIrVersion4) {
  const char *graph = R"(
    g (float[2, 6] x, int64[2] s) => () <int64[2] s = {3, 4}> {
      y = Reshape(x, s)
    })";
  auto old = infer(std::string("<ir_version: 3, opset_import: [\"\" : 7]>\n") + graph);
  EXPECT_EQ(old.type("y"), "float[3,4]");
  auto current = infer(std::string("<ir_version: 8, opset_import: [\"\" : 13]>\n") + graph);
  EXPECT_EQ(current.type("y"), "float[?,?]"); // a default the caller may override
}

TEST(SymbolicShape, UpdateNodeReinfersAnExistingNode) {
  auto m = parseModel(withOpset(17, R"(
    g (float[batch, 4] x) => () <int64[2] t1 = {0, 4}, int64[3] t2 = {0, 2, 2}, int64[1] bad = {3}> {
      [r] y = Reshape(x, t1)
      z = Relu(y)
    })"));
  ASSERT_TRUE(m);
  Graph &g = *m->graph();
  ShapeInferencer inf(*m);
  EXPECT_EQ(inf.run().valuesTyped, 2u);
  Node *reshape = findNode(g, "y");
  // A pass retargets the Reshape and drops the stale type, then asks again.
  reshape->setOperand(1, findValue(g, "t2"));
  findValue(g, "y")->setType(std::nullopt);
  inf.forget(findValue(g, "y"));
  EXPECT_EQ(inf.updateNode(*reshape), 1u);
  EXPECT_EQ(typeOf(*m, "y"), "float[batch,2,2]");
  // A malformed rewrite is reported each time it is re-inferred.
  reshape->setOperand(1, findValue(g, "bad"));
  std::vector<std::string> warnings;
  inf.updateNode(*reshape, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("node 'r' (Reshape)"), std::string::npos) << warnings[0];
  warnings.clear();
  inf.updateNode(*reshape, &warnings);
  EXPECT_EQ(warnings.size(), 1u);
}

} // namespace
} // namespace onnxslim::testing

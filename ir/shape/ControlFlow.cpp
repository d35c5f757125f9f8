//===- ir/shape/ControlFlow.cpp - Subgraph ops, sequences, optionals ------===//
//
// Inference rules for the ops that own bodies (If, Loop, Scan, SequenceMap),
// the sequence and optional ops, the string ops and the training ops of
// ai.onnx.preview.training.
//
//  - If: both branches are inferred; the result merges them (equal dims are
//    kept, others unknown), or takes the taken branch when the condition is
//    a known constant (the other is inferred without warnings) or when the
//    other branch has a node that is malformed for these shapes.
//  - Loop and Scan: loop-carried values start with the initial types; the
//    body is re-inferred with the merge of the initial and the body's output
//    types until they agree (a few rounds at most: merging only forgets), so
//    a carried value whose shape grows ends with an unknown dim, never a
//    wrong one. Loop scan outputs get a leading dim: the trip count when it
//    is a constant and no condition is given, else unknown.
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <algorithm>

namespace onnxslim::shape {

namespace {

constexpr int kMaxLoopRounds = 6;

const Graph *graphAttr(InferContext &ctx, const char *name) {
  const Attribute *a = ctx.node().attr(name);
  return a && a->kind == AttrKind::Graph && a->g ? a->g.get() : nullptr;
}

/// What is known of operand i's type and shape (not its contents).
std::optional<Facts> typeOnly(const Facts *f) {
  if (!f)
    return std::nullopt;
  Facts out;
  out.type = f->type;
  out.shape = f->shape;
  return out;
}

bool sameFacts(const std::optional<Facts> &a, const std::optional<Facts> &b) {
  if (!a || !b)
    return !a && !b;
  return a->type == b->type && a->shape == b->shape;
}

/// The type a loop-carried value can have on every iteration: the merge of
/// its type so far with the body's output (the type alone, shape forgotten,
/// when the body's output is unknown).
std::optional<Facts> generalize(const std::optional<Facts> &sofar,
                                const std::optional<Facts> &next) {
  if (!sofar)
    return std::nullopt;
  if (!next) {
    Facts f;
    f.type = sofar->type;
    return f;
  }
  if (auto m = mergeFacts(sofar, next)) {
    m->elements.reset();
    return m;
  }
  return std::nullopt;
}

/// A tensor's facts with `dim` inserted at `axis` (for scan outputs).
std::optional<Facts> withDim(const std::optional<Facts> &f, const SymDim &dim, int64_t axis) {
  if (!f || !f->isTensor())
    return std::nullopt;
  Facts out = Facts::tensor(f->elem(), std::nullopt);
  if (f->shape) {
    int64_t r = static_cast<int64_t>(f->shape->size()) + 1;
    if (axis < 0)
      axis += r;
    if (axis < 0 || axis >= r)
      return out;
    out.shape = *f->shape;
    out.shape->insert(out.shape->begin() + axis, dim);
  }
  return out;
}

/// A tensor's facts with dim `axis` removed (a scan input's slice).
std::optional<Facts> withoutDim(const Facts *f, int64_t axis) {
  if (!f || !f->isTensor())
    return std::nullopt;
  Facts out = Facts::tensor(f->elem(), std::nullopt);
  if (f->shape) {
    int64_t r = static_cast<int64_t>(f->shape->size());
    if (axis < 0)
      axis += r;
    if (axis < 0 || axis >= r)
      return out;
    out.shape = *f->shape;
    out.shape->erase(out.shape->begin() + axis);
  }
  return out;
}

//===--- If ------------------------------------------------------------===//

void inferIf(InferContext &ctx) {
  const Graph *thenG = graphAttr(ctx, "then_branch"), *elseG = graphAttr(ctx, "else_branch");
  if (!thenG || !elseG) {
    ctx.fail("missing then_branch or else_branch");
    return;
  }
  // With a known condition the other branch never runs: infer it quietly.
  auto cond = ctx.ints(0);
  bool known = cond && cond->size() == 1;
  bool taken = known && (*cond)[0] != 0;
  bool thenFails = false, elseFails = false;
  auto t = ctx.inferSubgraph(*thenG, {}, known && !taken, &thenFails);
  auto e = ctx.inferSubgraph(*elseG, {}, known && taken, &elseFails);
  // A branch that cannot complete with these shapes never produces the
  // result: any successful run took the other one.
  if (!known && thenFails != elseFails) {
    known = true;
    taken = elseFails;
  }
  if (thenFails && elseFails) {
    ctx.fail("both branches have a node malformed for these shapes");
    return;
  }
  if (known && (taken ? thenFails : elseFails)) {
    ctx.fail(std::string("the ") + (taken ? "then" : "else") +
             "_branch, which runs, has a node malformed for these shapes");
    return;
  }
  if (!t || !e)
    return;
  size_t n = ctx.numOutputs();
  if (t->size() != n || e->size() != n) {
    ctx.fail("branches have " + std::to_string(t->size()) + " and " + std::to_string(e->size()) +
             " outputs; the node has " + std::to_string(n));
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    std::optional<Facts> f;
    if (known)
      f = taken ? (*t)[i] : (*e)[i];
    else
      f = mergeFacts((*t)[i], (*e)[i]);
    if (f)
      ctx.setFacts(i, std::move(*f));
  }
}

//===--- Loop ----------------------------------------------------------===//

void inferLoop(InferContext &ctx) {
  const Graph *body = graphAttr(ctx, "body");
  if (!body) {
    ctx.fail("missing body");
    return;
  }
  if (ctx.numInputs() < 2) {
    ctx.fail("Loop needs operands M and cond (possibly omitted)");
    return;
  }
  size_t carried = ctx.numInputs() - 2;
  if (body->inputs().size() != carried + 2) {
    ctx.fail("body has " + std::to_string(body->inputs().size()) + " inputs; expected " +
             std::to_string(carried + 2));
    return;
  }
  if (body->numOutputs() < carried + 1 || ctx.numOutputs() != body->numOutputs() - 1) {
    ctx.fail("body has " + std::to_string(body->numOutputs()) + " outputs for " +
             std::to_string(carried) + " carried values and " + std::to_string(ctx.numOutputs()) +
             " node results");
    return;
  }
  // The body's first two inputs are the iteration number (int64) and the
  // condition (bool), whatever the Loop's own operands are.
  for (size_t i = 0; i < 2; ++i) {
    const Value *in = body->inputs()[i];
    const Type *declared = in && in->type() ? &*in->type() : nullptr;
    DataType want = i == 0 ? DataType::Int64 : DataType::Bool;
    if (declared && declared->isTensor() && declared->elemType() != DataType::Undefined &&
        declared->elemType() != want) {
      ctx.fail(std::string("the body's ") + (i == 0 ? "iteration number" : "condition") + " input '" + in->name() +
               "' is " + dataTypeName(declared->elemType()) + "; it must be " + dataTypeName(want));
      return;
    }
  }
  // A carried value keeps one element type: the initial value's must be
  // the body input's declared one (the body reads it as declared).
  for (size_t i = 0; i < carried; ++i) {
    const Value *in = body->inputs()[i + 2];
    std::optional<DataType> initial = ctx.elemType(i + 2);
    const Type *declared = in && in->type() ? &*in->type() : nullptr;
    if (initial && declared && declared->isTensor() && declared->elemType() != DataType::Undefined &&
        declared->elemType() != *initial) {
      ctx.fail("loop-carried value " + std::to_string(i) + ": the initial value is " + dataTypeName(*initial) +
               " but the body input '" + in->name() + "' is " + dataTypeName(declared->elemType()));
      return;
    }
  }
  std::vector<std::optional<Facts>> state(carried);
  for (size_t i = 0; i < carried; ++i)
    state[i] = typeOnly(ctx.input(i + 2));
  std::optional<std::vector<std::optional<Facts>>> outs;
  for (int round = 0; round < kMaxLoopRounds; ++round) {
    std::vector<std::optional<Facts>> inputs{Facts::tensor(DataType::Int64, SymShape{}),
                                             Facts::tensor(DataType::Bool, SymShape{})};
    inputs.insert(inputs.end(), state.begin(), state.end());
    outs = ctx.inferSubgraph(*body, inputs);
    if (!outs)
      return;
    bool stable = true;
    for (size_t i = 0; i < carried; ++i) {
      auto next = generalize(state[i], (*outs)[i + 1]);
      stable = stable && sameFacts(next, state[i]);
      state[i] = std::move(next);
    }
    if (stable)
      break;
    if (round + 1 == kMaxLoopRounds)
      for (auto &s : state)
        if (s)
          s->shape.reset();
  }
  for (size_t i = 0; i < carried; ++i)
    if (state[i])
      ctx.setFacts(i, *state[i]);
  // Trip count: exactly M when there is no condition operand.
  SymDim trips;
  if (ctx.hasInput(0) && !ctx.hasInput(1))
    if (auto m = ctx.ints(0); m && m->size() == 1 && (*m)[0] >= 0)
      trips = SymDim::constant((*m)[0]);
  for (size_t k = carried; k < ctx.numOutputs(); ++k)
    if (auto f = withDim((*outs)[k + 1], trips, 0))
      ctx.setFacts(k, *f);
}

//===--- Scan ----------------------------------------------------------===//

void inferScan(InferContext &ctx) {
  const Graph *body = graphAttr(ctx, "body");
  if (!body) {
    ctx.fail("missing body");
    return;
  }
  bool v8 = ctx.opset() < 9;
  size_t first = v8 ? 1 : 0; // opset 8 starts with sequence_lens
  int64_t m = ctx.node().attrInt("num_scan_inputs", -1);
  if (m < 0 || static_cast<size_t>(m) + first > ctx.numInputs()) {
    ctx.fail("missing or invalid num_scan_inputs");
    return;
  }
  size_t nScan = static_cast<size_t>(m);
  size_t nState = ctx.numInputs() - first - nScan;
  if (body->inputs().size() != nState + nScan || body->numOutputs() != ctx.numOutputs() ||
      ctx.numOutputs() < nState) {
    ctx.fail("body inputs/outputs do not match the node's state and scan operands");
    return;
  }
  size_t nScanOut = ctx.numOutputs() - nState;
  std::vector<int64_t> inAxes =
      ctx.node().attrInts("scan_input_axes", std::vector<int64_t>(nScan, 0));
  std::vector<int64_t> outAxes =
      ctx.node().attrInts("scan_output_axes", std::vector<int64_t>(nScanOut, 0));
  if (v8) {
    inAxes.assign(nScan, 1);
    outAxes.assign(nScanOut, 1);
  }
  if (inAxes.size() != nScan || outAxes.size() != nScanOut) {
    ctx.fail("scan_input_axes / scan_output_axes have the wrong length");
    return;
  }
  // Sequence length (and batch, opset 8) from the scan inputs.
  SymDim seq, batch;
  std::vector<std::optional<Facts>> scanSlices(nScan);
  for (size_t j = 0; j < nScan; ++j) {
    const Facts *f = ctx.input(first + nState + j);
    if (f && f->shape) {
      int64_t r = static_cast<int64_t>(f->shape->size());
      auto axis = ctx.normalizeAxis(inAxes[j], r, "scan input axis");
      if (!axis)
        return;
      SymDim d = (*f->shape)[static_cast<size_t>(*axis)];
      seq = j == 0 || provablyEqual(seq, d) ? (j == 0 ? d : seq) : SymDim();
      if (v8)
        batch = (*f->shape)[0];
    }
    auto slice = withoutDim(f, inAxes[j]);
    if (v8 && slice)
      slice = withoutDim(slice ? &*slice : nullptr, 0);
    scanSlices[j] = slice;
  }
  std::vector<std::optional<Facts>> state(nState);
  for (size_t i = 0; i < nState; ++i) {
    const Facts *f = ctx.input(first + i);
    state[i] = v8 ? withoutDim(f, 0) : typeOnly(f);
  }
  std::optional<std::vector<std::optional<Facts>>> outs;
  for (int round = 0; round < kMaxLoopRounds; ++round) {
    std::vector<std::optional<Facts>> inputs(state);
    inputs.insert(inputs.end(), scanSlices.begin(), scanSlices.end());
    outs = ctx.inferSubgraph(*body, inputs);
    if (!outs)
      return;
    bool stable = true;
    for (size_t i = 0; i < nState; ++i) {
      auto next = generalize(state[i], (*outs)[i]);
      stable = stable && sameFacts(next, state[i]);
      state[i] = std::move(next);
    }
    if (stable)
      break;
    if (round + 1 == kMaxLoopRounds)
      for (auto &s : state)
        if (s)
          s->shape.reset();
  }
  for (size_t i = 0; i < nState; ++i) {
    std::optional<Facts> f = v8 ? withDim(state[i], batch, 0) : state[i];
    if (f)
      ctx.setFacts(i, *f);
  }
  for (size_t k = 0; k < nScanOut; ++k) {
    std::optional<Facts> f = withDim((*outs)[nState + k], seq, v8 ? 0 : outAxes[k]);
    if (v8)
      f = withDim(f, batch, 0);
    if (f)
      ctx.setFacts(nState + k, *f);
  }
}

//===--- Sequences -----------------------------------------------------===//

std::optional<Type> tensorTypeOf(const Facts *f) {
  if (!f || !f->isTensor())
    return std::nullopt;
  return f->toType();
}

/// The element type of a sequence operand.
const Type *seqElem(InferContext &ctx, size_t i) {
  const Type *t = ctx.inputType(i);
  return t && t->kind() == Type::Kind::Sequence ? t->inner() : nullptr;
}

void inferSequenceEmpty(InferContext &ctx) {
  DataType dt = dataTypeAttr(ctx.node(), "dtype").value_or(DataType::Float);
  ctx.setType(0, Type::sequence(Type::tensor(dt)));
}

void inferSequenceConstruct(InferContext &ctx) {
  std::optional<Type> elem;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    auto t = tensorTypeOf(ctx.input(i));
    if (!t)
      return;
    if (elem) {
      auto m = mergeTypes(*elem, *t);
      if (!m) {
        ctx.fail("operands have different element types");
        return;
      }
      elem = m;
    } else {
      elem = t;
    }
  }
  if (elem)
    ctx.setType(0, Type::sequence(*elem));
}

void inferSequenceInsert(InferContext &ctx) {
  const Type *elem = seqElem(ctx, 0);
  auto t = tensorTypeOf(ctx.input(1));
  if (!elem || !t)
    return;
  auto m = mergeTypes(*elem, *t);
  if (!m) {
    // An empty sequence of another dtype is still a type mismatch.
    ctx.fail("inserted tensor does not match the sequence's element type");
    return;
  }
  ctx.setType(0, Type::sequence(*m));
}

void inferSequenceErase(InferContext &ctx) {
  if (const Type *t = ctx.inputType(0))
    ctx.setType(0, *t);
}

void inferSequenceAt(InferContext &ctx) {
  if (const Type *elem = seqElem(ctx, 0))
    ctx.setType(0, *elem);
}

void inferSequenceLength(InferContext &ctx) { ctx.setTensor(0, DataType::Int64, SymShape{}); }

void inferSplitToSequence(InferContext &ctx) {
  const Facts *f = ctx.input(0);
  if (!f || !f->isTensor())
    return;
  DataType elem = f->elem();
  if (!f->shape) {
    ctx.setType(0, Type::sequence(Type::tensor(elem)));
    return;
  }
  int64_t r = static_cast<int64_t>(f->shape->size());
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", 0), r);
  if (!axis)
    return;
  SymShape piece = *f->shape;
  size_t a = static_cast<size_t>(*axis);
  if (!ctx.hasInput(1)) {
    if (ctx.node().attrInt("keepdims", 1) != 0)
      piece[a] = SymDim::constant(1);
    else
      piece.erase(piece.begin() + *axis);
  } else {
    auto split = ctx.elements(1);
    const SymShape *ss = ctx.shape(1);
    if (split && ss && ss->empty()) {
      // Scalar chunk size: every piece has it unless the last is shorter.
      auto d = piece[a].constantValue(), c = (*split)[0].constantValue();
      piece[a] = d && c && *c > 0 && *d % *c == 0 ? (*split)[0] : SymDim();
    } else if (split && !split->empty() &&
               std::all_of(split->begin(), split->end(),
                           [&](const SymDim &s) { return provablyEqual(s, (*split)[0]); })) {
      piece[a] = (*split)[0];
    } else {
      piece[a] = SymDim();
    }
  }
  ctx.setType(0, Type::sequence(Type::tensor(elem, toShape(piece))));
}

void inferConcatFromSequence(InferContext &ctx) {
  const Type *elem = seqElem(ctx, 0);
  if (!elem || !elem->isTensor())
    return;
  if (!elem->shape()) {
    ctx.setTensor(0, elem->elemType(), std::nullopt);
    return;
  }
  bool newAxis = ctx.node().attrInt("new_axis", 0) != 0;
  SymShape s = toSymShape(*elem->shape());
  int64_t outRank = static_cast<int64_t>(s.size()) + (newAxis ? 1 : 0);
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", 0), outRank);
  if (!axis)
    return;
  if (newAxis)
    s.insert(s.begin() + *axis, SymDim());
  else
    s[static_cast<size_t>(*axis)] = SymDim();
  ctx.setTensor(0, elem->elemType(), s);
}

void inferSequenceMap(InferContext &ctx) {
  const Graph *body = graphAttr(ctx, "body");
  if (!body) {
    ctx.fail("missing body");
    return;
  }
  if (body->inputs().size() != ctx.numInputs()) {
    ctx.fail("body has " + std::to_string(body->inputs().size()) + " inputs for " +
             std::to_string(ctx.numInputs()) + " operands");
    return;
  }
  std::vector<std::optional<Facts>> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Type *t = ctx.inputType(i);
    if (t && t->kind() == Type::Kind::Sequence && t->inner())
      inputs.push_back(Facts::fromType(*t->inner()));
    else
      inputs.push_back(typeOnly(ctx.input(i)));
  }
  auto outs = ctx.inferSubgraph(*body, inputs);
  if (!outs)
    return;
  if (outs->size() != ctx.numOutputs()) {
    ctx.fail("body has " + std::to_string(outs->size()) + " outputs for " +
             std::to_string(ctx.numOutputs()) + " results");
    return;
  }
  for (size_t i = 0; i < outs->size(); ++i)
    if ((*outs)[i] && (*outs)[i]->type)
      ctx.setType(i, Type::sequence((*outs)[i]->toType()));
}

//===--- Optionals -----------------------------------------------------===//

void inferOptional(InferContext &ctx) {
  if (ctx.hasInput(0)) {
    if (const Facts *f = ctx.input(0))
      ctx.setType(0, Type::optional(f->toType()));
    return;
  }
  const Attribute *a = ctx.node().attr("type");
  if (!a || a->kind != AttrKind::TypeProto || !a->tp) {
    ctx.fail("an empty Optional needs the 'type' attribute");
    return;
  }
  ctx.setType(0, Type::optional(*a->tp));
}

void inferOptionalGetElement(InferContext &ctx) {
  const Type *t = ctx.inputType(0);
  if (!t)
    return;
  if (t->kind() == Type::Kind::Optional) {
    if (t->inner())
      ctx.setType(0, *t->inner());
    return;
  }
  ctx.propagate(0, 0); // opset 18: a plain tensor or sequence passes through
}

void inferOptionalHasElement(InferContext &ctx) { ctx.setTensor(0, DataType::Bool, SymShape{}); }

//===--- Strings and images --------------------------------------------===//

void inferStringNormalizer(InferContext &ctx) {
  const SymShape *s = ctx.shape(0);
  if (!s) {
    ctx.setTensor(0, DataType::String, std::nullopt);
    return;
  }
  if (s->empty() || s->size() > 2) {
    ctx.fail("input must be [C] or [1, C]");
    return;
  }
  SymShape out = *s;
  const Attribute *stop = ctx.node().attr("stopwords");
  if (stop && !stop->strings.empty())
    out.back() = SymDim();
  ctx.setTensor(0, DataType::String, out);
}

void inferStringConcat(InferContext &ctx) {
  auto s = ctx.broadcast({ctx.shape(0), ctx.shape(1)});
  if (!ctx.failed())
    ctx.setTensor(0, DataType::String, s);
}

void inferStringSplit(InferContext &ctx) {
  const SymShape *s = ctx.shape(0);
  std::optional<SymShape> y;
  if (s) {
    y = *s;
    y->push_back(SymDim());
  }
  ctx.setTensor(0, DataType::String, y);
  ctx.setTensor(1, DataType::Int64, s ? std::optional<SymShape>(*s) : std::nullopt);
}

void inferImageDecoder(InferContext &ctx) {
  std::string format = ctx.node().attrString("pixel_format", "RGB");
  ctx.setTensor(0, DataType::UInt8,
                SymShape{SymDim(), SymDim(), SymDim::constant(format == "Grayscale" ? 1 : 3)});
}

//===--- ai.onnx.preview.training --------------------------------------===//

/// Adagrad, Momentum, Adam: inputs R, T, then groups of n tensors (X, G, and
/// one or two state groups); outputs are the new X and states, each typed
/// like the input it replaces (the G group is skipped).
void inferOptimizer(InferContext &ctx) {
  size_t groups = ctx.node().opType() == "Adam" ? 4 : 3;
  if (ctx.numInputs() < 2 || (ctx.numInputs() - 2) % groups != 0) {
    ctx.fail("operand count does not match the optimizer's groups");
    return;
  }
  size_t n = (ctx.numInputs() - 2) / groups;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    size_t group = i / n, j = i % n;
    size_t source = 2 + (group == 0 ? 0 : group + 1) * n + j;
    if (source < ctx.numInputs())
      ctx.propagate(i, source);
  }
}

} // namespace

void addSequenceRules(RuleTable &t) {
  t["If"] = inferIf;
  t["Loop"] = inferLoop;
  t["Scan"] = inferScan;
  t["SequenceEmpty"] = inferSequenceEmpty;
  t["SequenceConstruct"] = inferSequenceConstruct;
  t["SequenceInsert"] = inferSequenceInsert;
  t["SequenceErase"] = inferSequenceErase;
  t["SequenceAt"] = inferSequenceAt;
  t["SequenceLength"] = inferSequenceLength;
  t["SplitToSequence"] = inferSplitToSequence;
  t["ConcatFromSequence"] = inferConcatFromSequence;
  t["SequenceMap"] = inferSequenceMap;
  t["Optional"] = inferOptional;
  t["OptionalGetElement"] = inferOptionalGetElement;
  t["OptionalHasElement"] = inferOptionalHasElement;
  t["StringNormalizer"] = inferStringNormalizer;
  t["StringConcat"] = inferStringConcat;
  t["StringSplit"] = inferStringSplit;
  t["ImageDecoder"] = inferImageDecoder;
  t["ai.onnx.preview.training:Adagrad"] = inferOptimizer;
  t["ai.onnx.preview.training:Momentum"] = inferOptimizer;
  t["ai.onnx.preview.training:Adam"] = inferOptimizer;
}

} // namespace onnxslim::shape

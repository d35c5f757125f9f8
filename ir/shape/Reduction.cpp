//===- ir/shape/Reduction.cpp - Reductions and contractions ---------------===//
//
// Inference rules for Reduce* (axes as attribute, or as an input from opset
// 13 for ReduceSum and 18 for the others), ArgMax/ArgMin, MatMul (1-D
// promotion, batch broadcasting) and its integer/quantized forms, Gemm,
// Einsum (output dims from the equation, ellipsis broadcasting), Det, the
// loss ops and TfIdfVectorizer.
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace onnxslim::shape {

namespace {

DataType elemOf(InferContext &ctx, size_t i) {
  return ctx.elemType(i).value_or(DataType::Undefined);
}

//===--- Reduce* -------------------------------------------------------===//

/// The op's axes: from an operand from `inputOpset` on, else from the attribute.
struct ReduceAxes {
  bool known = true;           ///< False when the axes operand's contents are unknown.
  std::vector<int64_t> axes;   ///< Empty: reduce all (or no-op, see noop).
  std::optional<size_t> count; ///< Number of axes when only that is known.
};

ReduceAxes reduceAxes(InferContext &ctx, int64_t inputOpset) {
  ReduceAxes r;
  if (ctx.opset() >= inputOpset) {
    if (!ctx.hasInput(1))
      return r;
    if (auto a = ctx.ints(1)) {
      r.axes = *a;
      return r;
    }
    r.known = false;
    if (const SymShape *s = ctx.shape(1); s && s->size() == 1)
      if (auto c = (*s)[0].constantValue())
        r.count = static_cast<size_t>(*c);
    return r;
  }
  r.axes = ctx.node().attrInts("axes");
  return r;
}

void reduceContents(InferContext &ctx, const std::string &op, bool all) {
  if (!all || ctx.rank(0) != 1)
    return;
  auto e = ctx.elements(0);
  if (!e || e->empty())
    return;
  // A floating sum or product is exact in any evaluation order (runtimes
  // vectorize reductions) only while the sum / product of magnitudes fits
  // the significand; integers wrap, so only the final value matters.
  DataType dt = ctx.elemType(0).value_or(DataType::Undefined);
  if (isFloatingPoint(dt) && (op == "ReduceSum" || op == "ReduceProd")) {
    uint64_t magnitude = op == "ReduceSum" ? 0 : 1;
    for (const SymDim &x : *e) {
      auto c = x.constantValue();
      if (!c || *c == INT64_MIN)
        return;
      uint64_t m = static_cast<uint64_t>(*c < 0 ? -*c : *c);
      if (op == "ReduceSum")
        magnitude += m;
      else if (m != 0)
        magnitude = m > (uint64_t{1} << 62) / magnitude ? uint64_t{1} << 62 : magnitude * m;
      if (!holdsIntegersUpTo(magnitude, dt))
        return;
    }
  }
  SymDim acc = (*e)[0];
  for (size_t i = 1; i < e->size(); ++i) {
    const SymDim &x = (*e)[i];
    if (op == "ReduceProd") {
      acc = acc * x;
    } else if (op == "ReduceSum") {
      acc = acc + x;
    } else if (op == "ReduceMax" || op == "ReduceMin") {
      auto a = acc.constantValue(), b = x.constantValue();
      if (provablyEqual(acc, x))
        continue;
      if (!a || !b)
        return;
      acc = (op == "ReduceMax") == (*b > *a) ? x : acc;
    } else {
      return;
    }
  }
  ctx.setElements(0, {acc});
}

void inferReduce(InferContext &ctx) {
  const std::string &op = ctx.node().opType();
  int64_t inputOpset = op == "ReduceSum" ? 13 : 18;
  DataType elem = elemOf(ctx, 0);
  bool keep = ctx.node().attrInt("keepdims", 1) != 0;
  bool noop = ctx.opset() >= inputOpset && ctx.node().attrInt("noop_with_empty_axes", 0) != 0;
  ReduceAxes ra = reduceAxes(ctx, inputOpset);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  if (!ra.known) {
    if (keep)
      ctx.setTensor(0, elem, SymShape(in->size()));
    else if (ra.count && *ra.count <= in->size())
      ctx.setTensor(0, elem, SymShape(in->size() - *ra.count));
    else
      ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (ra.axes.empty() && noop) {
    ctx.propagate(0, 0);
    return;
  }
  std::set<int64_t> reduced;
  for (int64_t a : ra.axes) {
    auto n = ctx.normalizeAxis(a, r);
    if (!n)
      return;
    reduced.insert(*n);
  }
  bool all = ra.axes.empty();
  SymShape out;
  for (int64_t i = 0; i < r; ++i) {
    bool red = all || reduced.count(i);
    if (!red)
      out.push_back((*in)[static_cast<size_t>(i)]);
    else if (keep)
      out.push_back(SymDim::constant(1));
  }
  ctx.setTensor(0, elem, out);
  reduceContents(ctx, op, all || (r == 1 && reduced.count(0)));
}

void inferArgReduce(InferContext &ctx) {
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, DataType::Int64, std::nullopt);
    return;
  }
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", 0), static_cast<int64_t>(in->size()));
  if (!axis)
    return;
  SymShape out = *in;
  if (ctx.node().attrInt("keepdims", 1) != 0)
    out[static_cast<size_t>(*axis)] = SymDim::constant(1);
  else
    out.erase(out.begin() + *axis);
  ctx.setTensor(0, DataType::Int64, out);
}

//===--- MatMul and Gemm -----------------------------------------------===//

std::optional<SymShape> matmulShape(InferContext &ctx, size_t ai, size_t bi) {
  const SymShape *a = ctx.shape(ai), *b = ctx.shape(bi);
  if (!a || !b)
    return std::nullopt;
  if (a->empty() || b->empty()) {
    ctx.fail("MatMul operands must have rank >= 1");
    return std::nullopt;
  }
  SymShape x = *a, y = *b;
  bool promoteA = x.size() == 1, promoteB = y.size() == 1;
  if (promoteA)
    x.insert(x.begin(), SymDim::constant(1));
  if (promoteB)
    y.push_back(SymDim::constant(1));
  const SymDim &k1 = x[x.size() - 1], &k2 = y[y.size() - 2];
  if (provablyDifferent(k1, k2)) {
    ctx.fail("inner dims differ: " + str(*a) + " x " + str(*b));
    return std::nullopt;
  }
  SymShape bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  auto batch = ctx.broadcast({&bx, &by});
  if (!batch)
    return std::nullopt;
  SymShape out = *batch;
  if (!promoteA)
    out.push_back(x[x.size() - 2]);
  if (!promoteB)
    out.push_back(y[y.size() - 1]);
  return out;
}

void inferMatMul(InferContext &ctx) {
  auto s = matmulShape(ctx, 0, 1);
  if (ctx.failed())
    return;
  ctx.setTensor(0, elemOf(ctx, 0), s);
}

void inferMatMulInteger(InferContext &ctx) {
  auto s = matmulShape(ctx, 0, 1);
  if (ctx.failed())
    return;
  ctx.setTensor(0, DataType::Int32, s);
}

void inferQLinearMatMul(InferContext &ctx) {
  auto s = matmulShape(ctx, 0, 3);
  if (ctx.failed())
    return;
  DataType dt = ctx.elemType(7).value_or(DataType::UInt8);
  ctx.setTensor(0, dt, s);
}

void inferGemm(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *a = ctx.shape(0), *b = ctx.shape(1);
  if (!a || !b) {
    ctx.setTensor(0, elem, SymShape(2));
    return;
  }
  if (a->size() != 2 || b->size() != 2) {
    ctx.fail("A and B must be 2-D, got " + str(*a) + " and " + str(*b));
    return;
  }
  bool ta = ctx.node().attrInt("transA", 0) != 0, tb = ctx.node().attrInt("transB", 0) != 0;
  SymDim m = (*a)[ta ? 1 : 0], ka = (*a)[ta ? 0 : 1];
  SymDim kb = (*b)[tb ? 1 : 0], n = (*b)[tb ? 0 : 1];
  if (provablyDifferent(ka, kb)) {
    ctx.fail("inner dims differ: " + ka.str() + " vs " + kb.str());
    return;
  }
  SymShape out{m, n};
  if (const SymShape *c = ctx.shape(2)) {
    bool ok = true;
    if (c->size() > 2)
      ok = false;
    for (size_t i = 0; ok && i < c->size(); ++i)
      broadcastDim(out[2 - c->size() + i], (*c)[i], ok);
    if (!ok) {
      ctx.fail("C " + str(*c) + " does not broadcast to " + str(out));
      return;
    }
  }
  ctx.setTensor(0, elem, out);
}

//===--- Einsum --------------------------------------------------------===//

void inferEinsum(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  std::string eq;
  for (char c : ctx.node().attrString("equation", ""))
    if (c != ' ')
      eq += c;
  if (eq.empty()) {
    ctx.fail("missing 'equation'");
    return;
  }
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != ctx.numInputs()) {
    ctx.fail("equation has " + std::to_string(terms.size()) + " operands, the node " +
             std::to_string(ctx.numInputs()));
    return;
  }
  std::map<char, SymDim> letters;
  std::map<char, int> counts;
  std::optional<SymShape> ellipsis = SymShape();
  bool anyEllipsis = false;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string term = terms[t];
    size_t dots = term.find("...");
    bool hasDots = dots != std::string::npos;
    anyEllipsis |= hasDots;
    std::string named = hasDots ? term.substr(0, dots) + term.substr(dots + 3) : term;
    for (char c : named) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        ctx.fail(std::string("invalid character '") + c + "' in the equation");
        return;
      }
      ++counts[c];
    }
    const SymShape *s = ctx.shape(t);
    if (!s) {
      for (char c : named)
        letters.emplace(c, SymDim());
      if (hasDots)
        ellipsis.reset();
      continue;
    }
    if (s->size() < named.size() || (!hasDots && s->size() != named.size())) {
      ctx.fail("operand " + std::to_string(t) + " " + str(*s) + " does not match '" + term + "'");
      return;
    }
    size_t ell = s->size() - named.size();
    size_t before = hasDots ? dots : named.size();
    for (size_t i = 0; i < named.size(); ++i) {
      const SymDim &d = (*s)[i < before ? i : i + ell];
      auto [it, inserted] = letters.emplace(named[i], d);
      if (inserted)
        continue;
      if (provablyDifferent(it->second, d) && it->second.constantValue() != 1 &&
          d.constantValue() != 1) {
        ctx.fail(std::string("dims of '") + named[i] + "' differ: " + it->second.str() + " vs " +
                 d.str());
        return;
      }
      if (it->second.constantValue() == 1 || it->second.isUnknown())
        it->second = d;
    }
    if (hasDots && ellipsis) {
      SymShape part(s->begin() + static_cast<ptrdiff_t>(before),
                    s->begin() + static_cast<ptrdiff_t>(before + ell));
      auto b = ctx.broadcast({&*ellipsis, &part});
      if (ctx.failed())
        return;
      ellipsis = b;
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    out = anyEllipsis ? "..." : "";
    for (auto &[c, n] : counts)
      if (n == 1)
        out += c;
  }
  SymShape result;
  size_t dots = out.find("...");
  if (dots != std::string::npos) {
    if (!ellipsis) {
      ctx.setTensor(0, elem, std::nullopt);
      return;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == dots) {
      result.insert(result.end(), ellipsis->begin(), ellipsis->end());
      i += 2;
      continue;
    }
    auto it = letters.find(out[i]);
    if (it == letters.end()) {
      ctx.fail(std::string("output letter '") + out[i] + "' appears in no operand");
      return;
    }
    result.push_back(it->second);
  }
  ctx.setTensor(0, elem, result);
}

//===--- Others --------------------------------------------------------===//

void inferDet(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (in->size() < 2 || provablyDifferent((*in)[in->size() - 1], (*in)[in->size() - 2])) {
    ctx.fail("input must be [*, M, M], got " + str(*in));
    return;
  }
  ctx.setTensor(0, elem, SymShape(in->begin(), in->end() - 2));
}

void inferLoss(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  std::string reduction = ctx.node().attrString("reduction", "mean");
  if (reduction == "none") {
    const SymShape *labels = ctx.shape(1);
    ctx.setTensor(0, elem, labels ? std::optional<SymShape>(*labels) : std::nullopt);
  } else if (reduction == "mean" || reduction == "sum") {
    ctx.setTensor(0, elem, SymShape{});
  } else {
    ctx.fail("invalid reduction '" + reduction + "'");
    return;
  }
  if (ctx.numOutputs() > 1)
    ctx.propagate(1, 0);
}

void inferTfIdfVectorizer(InferContext &ctx) {
  std::vector<int64_t> idx = ctx.node().attrInts("ngram_indexes");
  SymDim width =
      idx.empty() ? SymDim() : SymDim::constant(*std::max_element(idx.begin(), idx.end()) + 1);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, DataType::Float, std::nullopt);
    return;
  }
  if (in->size() == 1)
    ctx.setTensor(0, DataType::Float, SymShape{width});
  else if (in->size() == 2)
    ctx.setTensor(0, DataType::Float, SymShape{(*in)[0], width});
  else
    ctx.fail("input must be 1-D or 2-D");
}

} // namespace

void addReductionRules(RuleTable &t) {
  for (const char *op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"})
    t[op] = inferReduce;
  t["ArgMax"] = inferArgReduce;
  t["ArgMin"] = inferArgReduce;
  t["MatMul"] = inferMatMul;
  t["MatMulInteger"] = inferMatMulInteger;
  t["QLinearMatMul"] = inferQLinearMatMul;
  t["Gemm"] = inferGemm;
  t["Einsum"] = inferEinsum;
  t["Det"] = inferDet;
  t["SoftmaxCrossEntropyLoss"] = inferLoss;
  t["NegativeLogLikelihoodLoss"] = inferLoss;
  t["TfIdfVectorizer"] = inferTfIdfVectorizer;
}

} // namespace onnxslim::shape

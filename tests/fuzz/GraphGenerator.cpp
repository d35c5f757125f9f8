//===- tests/fuzz/GraphGenerator.cpp - Random valid ONNX graphs -----------===//
//
// See GraphGenerator.h. A Builder holds the values made so far (name, dtype,
// static shape) for one graph body; each emit* function picks operands that
// fit, writes one or a few statements, and records the results. Subgraphs
// (If branches, Loop bodies) get a Builder of their own that sees the
// enclosing values (captures). Shapes stay small (at most 96 elements per
// value) so that a model runs in well under a millisecond.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/GraphGenerator.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

namespace onnxslim::fuzz {

namespace {

using Dims = std::vector<int64_t>;

constexpr int64_t kMaxElements = 96;

struct Val {
  std::string name;
  std::string type; ///< "float", "int64", "bool", ...
  Dims dims;
};

int64_t numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

std::string typeText(const std::string &type, const Dims &dims) {
  std::string s = type + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string fmtFloat(float v) {
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

/// A float attribute value: the text syntax reads a literal without '.' or
/// an exponent as an int, so 0 is written 0.0.
std::string fmtFloatAttr(float v) {
  std::string s = fmtFloat(v);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string listText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Broadcast of two shapes (numpy rules); nullopt-like empty + false when incompatible.
bool broadcast(const Dims &a, const Dims &b, Dims &out) {
  size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

/// What the whole model shares: the byte source, fresh names, the opset.
struct Context {
  explicit Context(FuzzedDataProvider &p) : fdp(p) {}
  FuzzedDataProvider &fdp;
  int opset = 17;
  int counter = 0;
  /// Constants emitted so far (text of the data), for duplicated constants.
  std::vector<std::pair<std::string, std::string>> constants; ///< (type text, data text)

  std::string fresh(const char *prefix) { return prefix + std::to_string(counter++); }
  int pick(int n) { return n <= 1 ? 0 : fdp.ConsumeIntegralInRange<int>(0, n - 1); }
  bool coin() { return fdp.ConsumeBool(); }
  int64_t range(int64_t lo, int64_t hi) { return fdp.ConsumeIntegralInRange<int64_t>(lo, hi); }
};

class Builder {
public:
  Builder(Context &ctx, std::vector<Val> visible, int depth)
      : ctx_(ctx), vals_(std::move(visible)), depth_(depth) {}

  std::string body;                ///< statements, one per line
  std::vector<std::string> inits;  ///< initializer declarations
  std::vector<Val> results;        ///< values made by nodes of this graph

  const std::vector<Val> &vals() const { return vals_; }
  void add(Val v, bool isResult = true) {
    if (isResult)
      results.push_back(v);
    vals_.push_back(std::move(v));
  }

  //===--- Constants ------------------------------------------------------===//

  /// A float constant of `dims` from one of a few value styles.
  std::string floatConst(const Dims &dims, int style = -1) {
    int64_t n = numel(dims);
    if (style < 0)
      style = ctx_.pick(6);
    std::string data;
    for (int64_t i = 0; i < n; ++i) {
      float v;
      switch (style) {
      case 0: v = 0.0f; break;
      case 1: v = 1.0f; break;
      case 2: v = -0.0f; break;
      case 3: v = static_cast<float>(ctx_.range(-8, 8)) * 0.25f; break;
      default: v = ctx_.fdp.ConsumeFloatingPointInRange<float>(-2.0f, 2.0f); break;
      }
      data += (i ? ", " : "") + fmtFloat(v);
    }
    return constant(typeText("float", dims), data, "float", dims);
  }

  std::string intConst(const std::vector<int64_t> &v, bool scalar = false) {
    std::string data;
    for (size_t i = 0; i < v.size(); ++i)
      data += (i ? ", " : "") + std::to_string(v[i]);
    Dims dims = scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())};
    return constant(typeText("int64", dims), data, "int64", dims);
  }

  std::string scalar(float v) { return constant("float", fmtFloat(v), "float", {}); }

  std::string boolConst(bool b) { return constant("bool[]", b ? "1" : "0", "bool", {}); }

  /// Emits a constant as an initializer or a Constant node (sometimes a
  /// duplicate of an earlier one); Result: its name.
  std::string constant(const std::string &type, const std::string &data, const std::string &dtype,
                       const Dims &dims) {
    std::string name = ctx_.fresh("c");
    // Scalars are written `float {1}` (rank 0) in both forms.
    std::string t = dims.empty() ? dtype : type;
    if (ctx_.coin())
      inits.push_back(t + " " + name + " = {" + data + "}");
    else
      body += "  " + name + " = Constant <value = " + t + " {" + data + "}> ()\n";
    ctx_.constants.emplace_back(t, data);
    vals_.push_back({name, dtype, dims});
    return name;
  }

  //===--- Picking operands -----------------------------------------------===//

  const Val *pickOf(const std::function<bool(const Val &)> &ok) {
    std::vector<const Val *> c;
    for (const Val &v : vals_)
      if (ok(v))
        c.push_back(&v);
    if (c.empty())
      return nullptr;
    // Prefer recent values: chains are what the passes match.
    int n = static_cast<int>(c.size());
    int i = ctx_.coin() ? n - 1 - ctx_.pick(std::min(n, 3)) : ctx_.pick(n);
    return c[static_cast<size_t>(i)];
  }
  const Val *pickFloat(size_t minRank = 0) {
    return pickOf([&](const Val &v) { return v.type == "float" && v.dims.size() >= minRank; });
  }

  std::string op(const std::string &out, const std::string &opType, const std::string &attrs,
                 const std::vector<std::string> &ins) {
    std::string s = "  " + out + " = " + opType;
    if (!attrs.empty())
      s += " <" + attrs + ">";
    s += "(";
    for (size_t i = 0; i < ins.size(); ++i)
      s += (i ? ", " : "") + ins[i];
    body += s + ")\n";
    return out;
  }
  /// One result of `type`/`dims`.
  std::string emit(const std::string &opType, const std::string &attrs,
                   const std::vector<std::string> &ins, const std::string &type, const Dims &dims) {
    std::string out = ctx_.fresh("v");
    op(out, opType, attrs, ins);
    add({out, type, dims});
    return out;
  }

  //===--- Op families ----------------------------------------------------===//

  void unary() {
    const Val *x = pickFloat();
    static const char *const ops[] = {"Relu", "Sigmoid", "Neg", "Abs", "Tanh", "Exp", "Sqrt", "Floor",
                                      "Identity", "Erf", "Reciprocal", "Softplus", "Ceil", "Sign"};
    Val v = *x;
    int k = ctx_.pick(static_cast<int>(std::size(ops)) + 3);
    if (k < static_cast<int>(std::size(ops))) {
      emit(ops[k], "", {v.name}, "float", v.dims);
    } else if (k == static_cast<int>(std::size(ops))) {
      emit("LeakyRelu", "alpha = " + fmtFloatAttr(static_cast<float>(ctx_.range(0, 8)) * 0.125f), {v.name}, "float",
           v.dims);
    } else if (k == static_cast<int>(std::size(ops)) + 1) {
      // Clip with constant bounds (either may be missing).
      int form = ctx_.pick(3);
      std::string lo = form != 2 ? scalar(-0.25f * static_cast<float>(ctx_.range(0, 8))) : "";
      std::string hi = form != 1 ? scalar(0.25f * static_cast<float>(ctx_.range(0, 8))) : "";
      std::vector<std::string> ins = {v.name, lo};
      if (!hi.empty())
        ins.push_back(hi);
      emit("Clip", "", ins, "float", v.dims);
    } else {
      // Inference-mode Dropout: with or without ratio/training_mode, mask unused or used.
      std::vector<std::string> ins = {v.name};
      if (ctx_.coin()) {
        ins.push_back(scalar(ctx_.coin() ? 0.5f : 0.0f));
        ins.push_back(boolConst(false));
      }
      if (ctx_.coin()) {
        std::string y = ctx_.fresh("v"), m = ctx_.fresh("m");
        op(y + ", " + m, "Dropout", "", ins);
        add({y, "float", v.dims});
        add({m, "bool", v.dims});
      } else {
        emit("Dropout", "", ins, "float", v.dims);
      }
    }
  }

  /// A second operand for `a` that broadcasts with it: another value or a constant.
  std::string broadcastPartner(const Val &a, Dims &out, int constStyle) {
    if (ctx_.coin()) {
      const Val *b = pickOf([&](const Val &v) {
        Dims o;
        return v.type == "float" && broadcast(a.dims, v.dims, o) && numel(o) <= kMaxElements;
      });
      if (b) {
        broadcast(a.dims, b->dims, out);
        return b->name;
      }
    }
    Dims d;
    int r = static_cast<int>(ctx_.range(0, static_cast<int64_t>(a.dims.size()) + 1));
    for (int i = 0; i < r; ++i) {
      int ai = static_cast<int>(a.dims.size()) - r + i;
      d.push_back(ai < 0 ? 1 : (ctx_.pick(3) == 0 ? 1 : a.dims[static_cast<size_t>(ai)]));
    }
    broadcast(a.dims, d, out);
    return floatConst(d, constStyle);
  }

  void binary() {
    const Val *x = pickFloat();
    Val a = *x;
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
    std::string opType = ops[ctx_.pick(7)];
    // Identity-like constants for the arithmetic ops, random ones otherwise.
    int style = -1;
    if (ctx_.coin()) {
      if (opType == "Add" || opType == "Sub")
        style = ctx_.coin() ? 0 : 2;
      else if (opType == "Mul" || opType == "Div" || opType == "Pow")
        style = 1;
    }
    if (opType == "Pow" && style < 0)
      style = 1 + 2 * ctx_.pick(2); // 1 or a multiple of 0.25
    Dims out;
    std::string b = broadcastPartner(a, out, style);
    bool swap = opType != "Pow" && opType != "Div" && ctx_.coin();
    emit(opType, "", swap ? std::vector<std::string>{b, a.name} : std::vector<std::string>{a.name, b}, "float",
         out);
  }

  void compareWhere() {
    const Val *x = pickFloat();
    Val a = *x;
    Dims out;
    std::string b = broadcastPartner(a, out, 3);
    static const char *const ops[] = {"Greater", "Less", "Equal", "GreaterOrEqual"};
    std::string c = emit(ops[ctx_.pick(4)], "", {a.name, b}, "bool", out);
    if (ctx_.coin())
      c = emit("Not", "", {c}, "bool", out);
    Dims o2;
    std::string other = broadcastPartner(Val{c, "bool", out}, o2, -1);
    emit("Where", "", {c, a.name, other}, "float", o2);
  }

  /// A float value Reshape can take. An empty one only from opset 14, whose
  /// allowzero = 1 makes a 0 in the target a size, not a copy of the input's dim.
  const Val *reshapeable(size_t minRank = 0) {
    return pickOf([&](const Val &v) {
      return v.type == "float" && v.dims.size() >= minRank && (ctx_.opset >= 14 || numel(v.dims) > 0);
    });
  }

  /// Reshape `a` to `out`. An empty `a` gets its target written out in full with
  /// allowzero = 1: a 0 would otherwise copy the input's dim and -1 is ambiguous.
  void emitReshape(const Val &a, const std::vector<int64_t> &target, const Dims &out) {
    if (numel(a.dims) == 0)
      emit("Reshape", "allowzero = 1", {a.name, intConst(out)}, "float", out);
    else
      emit("Reshape", "", {a.name, intConst(target)}, "float", out);
  }

  void reshape() {
    const Val *x = reshapeable();
    if (!x)
      return;
    Val a = *x;
    int64_t n = numel(a.dims);
    std::vector<int64_t> target;
    Dims out;
    switch (ctx_.pick(4)) {
    case 0:
      target = {-1};
      out = {n};
      break;
    case 1:
      if (a.dims.empty())
        return;
      target = {0, -1};
      out = {a.dims[0], a.dims[0] ? n / a.dims[0] : 0};
      if (a.dims.size() == 1)
        out = {a.dims[0], 1};
      break;
    case 2: {
      // Insert 1s at random places.
      for (int64_t d : a.dims) {
        if (ctx_.coin())
          out.push_back(1);
        out.push_back(d);
      }
      if (out.size() > 5)
        return;
      target = out;
      break;
    }
    default: {
      // Split n into two factors.
      int64_t f = 1;
      for (int64_t d = 2; d <= n; ++d)
        if (n % d == 0 && ctx_.coin()) {
          f = d;
          break;
        }
      out = {f, n / f};
      target = ctx_.coin() ? std::vector<int64_t>{f, -1} : out;
      break;
    }
    }
    emitReshape(a, target, out);
  }

  void transpose() {
    const Val *x = pickFloat(2);
    if (!x)
      return;
    Val a = *x;
    std::vector<int64_t> perm(a.dims.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = perm.size(); i > 1; --i)
      std::swap(perm[i - 1], perm[static_cast<size_t>(ctx_.pick(static_cast<int>(i)))]);
    Dims out;
    for (int64_t p : perm)
      out.push_back(a.dims[static_cast<size_t>(p)]);
    std::string t = emit("Transpose", "perm = " + listText(perm), {a.name}, "float", out);
    int follow = ctx_.pick(3);
    if (follow == 0) {
      // The inverse: a cancelling pair.
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      emit("Transpose", "perm = " + listText(inv), {t}, "float", a.dims);
    } else if (follow == 1) {
      // Another random one: composed.
      std::vector<int64_t> p2(perm.size());
      std::iota(p2.begin(), p2.end(), 0);
      std::reverse(p2.begin(), p2.end());
      Dims o2;
      for (int64_t p : p2)
        o2.push_back(out[static_cast<size_t>(p)]);
      emit("Transpose", ctx_.coin() ? "perm = " + listText(p2) : "", {t}, "float", o2);
    }
  }

  void squeezeUnsqueeze() {
    const Val *x = pickFloat();
    Val a = *x;
    std::vector<int64_t> ones;
    for (size_t i = 0; i < a.dims.size(); ++i)
      if (a.dims[i] == 1)
        ones.push_back(static_cast<int64_t>(i));
    if (!ones.empty() && ctx_.coin()) {
      std::vector<int64_t> axes;
      for (int64_t i : ones)
        if (ctx_.coin())
          axes.push_back(ctx_.coin() ? i : i - static_cast<int64_t>(a.dims.size()));
      Dims out;
      for (size_t i = 0; i < a.dims.size(); ++i) {
        bool gone = axes.empty() ? a.dims[i] == 1
                                 : std::find_if(axes.begin(), axes.end(), [&](int64_t ax) {
                                     return (ax < 0 ? ax + static_cast<int64_t>(a.dims.size()) : ax) ==
                                            static_cast<int64_t>(i);
                                   }) != axes.end();
        if (!gone)
          out.push_back(a.dims[i]);
      }
      std::vector<std::string> ins = {a.name};
      if (!axes.empty())
        ins.push_back(intConst(axes));
      emit("Squeeze", "", ins, "float", out);
      return;
    }
    if (a.dims.size() >= 5)
      return;
    int64_t r = static_cast<int64_t>(a.dims.size()) + 1;
    int64_t axis = ctx_.range(-r, r - 1);
    int64_t pos = axis < 0 ? axis + r : axis;
    Dims out = a.dims;
    out.insert(out.begin() + pos, 1);
    emit("Unsqueeze", "", {a.name, intConst({axis})}, "float", out);
  }

  void concat() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t r = static_cast<int64_t>(a.dims.size());
    int64_t axis = ctx_.range(-r, r - 1);
    size_t ax = static_cast<size_t>(axis < 0 ? axis + r : axis);
    std::vector<std::string> ins = {a.name};
    Dims out = a.dims;
    int more = 1 + ctx_.pick(2);
    for (int i = 0; i < more; ++i) {
      const Val *b = pickOf([&](const Val &v) {
        if (v.type != "float" || v.dims.size() != a.dims.size())
          return false;
        for (size_t k = 0; k < v.dims.size(); ++k)
          if (k != ax && v.dims[k] != a.dims[k])
            return false;
        return true;
      });
      Dims d = a.dims;
      std::string name;
      if (b && ctx_.coin()) {
        d = b->dims;
        name = b->name;
      } else {
        d[ax] = 1 + ctx_.pick(2);
        name = floatConst(d);
      }
      out[ax] += d[ax];
      ins.push_back(name);
    }
    if (numel(out) > kMaxElements)
      return;
    emit("Concat", "axis = " + std::to_string(axis), ins, "float", out);
  }

  void slice() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    std::vector<int64_t> starts, ends, axes, steps;
    Dims out = a.dims;
    int64_t r = static_cast<int64_t>(a.dims.size());
    for (int64_t i = 0; i < r; ++i) {
      if (!ctx_.coin())
        continue;
      int64_t d = a.dims[static_cast<size_t>(i)];
      int64_t step = ctx_.pick(4) == 0 ? -1 : (ctx_.pick(4) == 0 ? 2 : 1);
      int64_t s = ctx_.range(-d - 1, d + 1);
      int64_t e = ctx_.pick(5) == 0 ? (step > 0 ? std::numeric_limits<int64_t>::max()
                                                : std::numeric_limits<int64_t>::min())
                                    : ctx_.range(-d - 1, d + 1);
      // ONNX Slice: negative indices count from the end, then clamp.
      int64_t cs = s < 0 ? s + d : s, ce = e;
      if (e != std::numeric_limits<int64_t>::max() && e != std::numeric_limits<int64_t>::min())
        ce = e < 0 ? e + d : e;
      int64_t len;
      if (step > 0) {
        cs = std::clamp<int64_t>(cs, 0, d);
        ce = std::clamp<int64_t>(ce, 0, d);
        len = ce > cs ? (ce - cs + step - 1) / step : 0;
      } else {
        cs = std::clamp<int64_t>(cs, 0, d - 1);
        ce = std::clamp<int64_t>(ce, -1, d - 1);
        len = cs > ce ? (cs - ce + (-step) - 1) / (-step) : 0;
      }
      if (len == 0 && ctx_.pick(8) != 0)
        continue; // empty results are rare
      starts.push_back(s);
      ends.push_back(e);
      axes.push_back(ctx_.coin() ? i : i - r);
      steps.push_back(step);
      out[static_cast<size_t>(i)] = len;
    }
    if (starts.empty())
      return;
    std::vector<std::string> ins = {a.name, intConst(starts), intConst(ends)};
    bool unitSteps = std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; });
    if (!unitSteps || ctx_.coin()) {
      ins.push_back(intConst(axes));
      if (!unitSteps || ctx_.coin())
        ins.push_back(intConst(steps));
    } else {
      // Without axes, starts/ends are for axes 0..k-1: only when they are.
      bool leading = true;
      for (size_t i = 0; i < axes.size(); ++i)
        leading &= (axes[i] < 0 ? axes[i] + r : axes[i]) == static_cast<int64_t>(i);
      if (!leading)
        ins.push_back(intConst(axes));
    }
    emit("Slice", "", ins, "float", out);
  }

  void gather() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t r = static_cast<int64_t>(a.dims.size());
    int64_t axis = ctx_.range(-r, r - 1);
    size_t ax = static_cast<size_t>(axis < 0 ? axis + r : axis);
    int64_t d = a.dims[ax];
    if (d == 0)
      return;
    int irank = ctx_.pick(3);
    Dims idims = irank == 0 ? Dims{} : (irank == 1 ? Dims{1 + ctx_.pick(3)} : Dims{1 + ctx_.pick(2), 2});
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < numel(idims); ++i)
      idx.push_back(ctx_.range(-d, d - 1));
    std::string data;
    for (size_t i = 0; i < idx.size(); ++i)
      data += (i ? ", " : "") + std::to_string(idx[i]);
    std::string ind = constant(typeText("int64", idims), data, "int64", idims);
    Dims out(a.dims.begin(), a.dims.begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), idims.begin(), idims.end());
    out.insert(out.end(), a.dims.begin() + static_cast<std::ptrdiff_t>(ax) + 1, a.dims.end());
    if (numel(out) > kMaxElements)
      return;
    emit("Gather", "axis = " + std::to_string(axis), {a.name, ind}, "float", out);
  }

  /// Shape(x) -> Gather -> (Cast chain | Mul) -> Unsqueeze -> Concat -> Reshape(x).
  void shapeChain() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t r = static_cast<int64_t>(a.dims.size());
    int64_t n = numel(a.dims);
    std::string s;
    Dims sd = a.dims;
    if (ctx_.opset >= 15 && ctx_.coin()) {
      int64_t st = ctx_.range(-r, r - 1);
      int64_t sp = st < 0 ? st + r : st;
      s = emit("Shape", "start = " + std::to_string(st), {a.name}, "int64", {r - sp});
      sd.erase(sd.begin(), sd.begin() + sp);
    } else {
      s = emit("Shape", "", {a.name}, "int64", {r});
    }
    int64_t k = static_cast<int64_t>(sd.size());
    int64_t i = ctx_.range(-k, k - 1);
    int64_t dim = sd[static_cast<size_t>(i < 0 ? i + k : i)];
    std::string g = emit("Gather", "axis = 0", {s, intConst({i}, true)}, "int64", {});
    int form = ctx_.pick(4);
    if (form == 0) {
      // A Cast round trip through a type that holds the value exactly.
      static const char *const types[] = {"1", "6", "11", "7"}; // float, int32, double, int64
      int t = ctx_.pick(4);
      std::string tn = t == 0 ? "float" : t == 1 ? "int32" : t == 2 ? "double" : "int64";
      std::string c = emit("Cast", std::string("to = ") + types[t], {g}, tn, {});
      g = emit("Cast", "to = 7", {c}, "int64", {});
    } else if (form == 2) {
      // Shape arithmetic through a narrowing Cast: the value must wrap, round
      // or saturate as the target type does (a dead end for the Reshape).
      static const int64_t big[] = {100, 300, 2049, 4097, 70000};
      static const char *const to[] = {"2", "10", "1", "6", "3"}; // uint8, float16, float, int32, int8
      static const char *const names[] = {"uint8", "float16", "float", "int32", "int8"};
      int t = ctx_.pick(5);
      std::string m = emit("Mul", "", {g, intConst({big[ctx_.pick(5)]}, true)}, "int64", {});
      std::string c = emit("Cast", std::string("to = ") + to[t], {m}, names[t], {});
      if (t == 2 && ctx_.coin())
        c = emit("Mul", "", {c, c}, "float", {});
      emit("Cast", "to = 7", {c}, "int64", {});
    } else if (form == 1) {
      // Multiply by 1 or add 0 (identity arithmetic on a shape value).
      bool mul = ctx_.coin();
      g = emit(mul ? "Mul" : "Add", "", {g, intConst({mul ? 1 : 0}, true)}, "int64", {});
    }
    if (dim == 0)
      return;
    std::string u = emit("Unsqueeze", "", {g, intConst({0})}, "int64", {1});
    bool first = ctx_.coin();
    std::string rest = intConst({-1});
    std::string target = emit("Concat", "axis = 0", first ? std::vector<std::string>{u, rest}
                                                          : std::vector<std::string>{rest, u},
                              "int64", {2});
    Dims out = first ? Dims{dim, n / dim} : Dims{n / dim, dim};
    emit("Reshape", "", {a.name, target}, "float", out);
  }

  void castChain() {
    const Val *x = pickFloat();
    Val a = *x;
    // Values that round trip or change in a defined way: double, float16,
    // int32 (of floored values in range), bool.
    int k = ctx_.pick(4);
    std::string src = a.name;
    if (k == 2) // int32 of a clipped value: defined for every input
      src = emit("Clip", "", {a.name, scalar(-100.0f), scalar(100.0f)}, "float", a.dims);
    static const char *const to[] = {"11", "10", "6", "9"};
    static const char *const names[] = {"double", "float16", "int32", "bool"};
    std::string c = emit("Cast", std::string("to = ") + to[k], {src}, names[k], a.dims);
    if (ctx_.coin())
      c = emit("Identity", "", {c}, names[k], a.dims);
    emit("Cast", "to = 1", {c}, "float", a.dims);
  }

  void reduce() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t r = static_cast<int64_t>(a.dims.size());
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < r; ++i)
      if (ctx_.coin())
        axes.push_back(ctx_.coin() ? i : i - r);
    bool keep = ctx_.coin();
    Dims out;
    for (int64_t i = 0; i < r; ++i) {
      bool red = axes.empty() || std::find_if(axes.begin(), axes.end(), [&](int64_t ax) {
                                   return (ax < 0 ? ax + r : ax) == i;
                                 }) != axes.end();
      if (!red)
        out.push_back(a.dims[static_cast<size_t>(i)]);
      else if (keep)
        out.push_back(1);
    }
    std::string attrs = std::string("keepdims = ") + (keep ? "1" : "0");
    if (ctx_.coin()) {
      // ReduceSum takes axes as an input since opset 13.
      std::vector<std::string> ins = {a.name};
      if (!axes.empty())
        ins.push_back(intConst(axes));
      emit("ReduceSum", attrs, ins, "float", out);
    } else {
      static const char *const ops[] = {"ReduceMean", "ReduceMax", "ReduceMin"};
      if (!axes.empty())
        attrs += ", axes = " + listText(axes);
      emit(ops[ctx_.pick(3)], attrs, {a.name}, "float", out);
    }
  }

  void softmax() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    int64_t r = static_cast<int64_t>(x->dims.size());
    Val a = *x;
    emit("Softmax", "axis = " + std::to_string(ctx_.range(-r, r - 1)), {a.name}, "float", a.dims);
  }

  /// A rank-4 float value, made by Reshape when none exists.
  const Val *rank4() {
    const Val *x = pickOf([](const Val &v) { return v.type == "float" && v.dims.size() == 4; });
    if (x && ctx_.pick(4) != 0)
      return x;
    const Val *y = reshapeable();
    Val a = *y;
    int64_t n = numel(a.dims);
    int64_t c = (n % 2 == 0 && ctx_.coin()) ? 2 : 1;
    int64_t h = n / c;
    emitReshape(a, {1, c, h, -1}, {1, c, h, 1});
    return &vals_.back();
  }

  void convChain() {
    Val a = *rank4();
    int64_t N = a.dims[0], C = a.dims[1], H = a.dims[2], W = a.dims[3];
    std::string in = a.name;
    bool padFirst = ctx_.pick(3) == 0;
    int64_t pp[4] = {0, 0, 0, 0};
    if (padFirst) {
      for (int64_t &p : pp)
        p = ctx_.pick(2);
      std::vector<int64_t> pads = {0, 0, pp[0], pp[1], 0, 0, pp[2], pp[3]};
      H += pp[0] + pp[2];
      W += pp[1] + pp[3];
      in = emit("Pad", "", {in, intConst(pads), floatConst({}, ctx_.pick(4) == 0 ? 1 : 0)}, "float",
                {N, C, H, W});
    }
    bool depthwise = C > 1 && ctx_.pick(4) == 0;
    int64_t M = depthwise ? C : 1 + ctx_.pick(3);
    int64_t group = depthwise ? C : 1;
    int64_t kh = 1 + ctx_.pick(static_cast<int>(std::min<int64_t>(H, 3)));
    int64_t kw = 1 + ctx_.pick(static_cast<int>(std::min<int64_t>(W, 3)));
    int64_t pad = ctx_.pick(2), stride = 1 + ctx_.pick(2);
    // The window must fit the padded input (an empty plane has no room:
    // C++'s division would round (0 - 1) / 2 up to an output of 1).
    if (H + 2 * pad < kh || W + 2 * pad < kw)
      return;
    int64_t OH = (H + 2 * pad - kh) / stride + 1, OW = (W + 2 * pad - kw) / stride + 1;
    if (N * M * OH * OW > kMaxElements || OH < 1 || OW < 1)
      return;
    std::string w = floatConst({M, C / group, kh, kw}, 4);
    std::vector<std::string> ins = {in, w};
    if (ctx_.coin())
      ins.push_back(floatConst({M}, 3));
    std::string attrs = "kernel_shape = " + listText({kh, kw}) + ", pads = " + listText({pad, pad, pad, pad}) +
                        ", strides = " + listText({stride, stride});
    if (group > 1)
      attrs += ", group = " + std::to_string(group);
    Dims od = {N, M, OH, OW};
    std::string y = emit("Conv", attrs, ins, "float", od);
    int after = ctx_.pick(5);
    if (after == 0) {
      Dims m = {M};
      std::string scale = floatConst(m, 4), bias = floatConst(m, 3), mean = floatConst(m, 3);
      // A positive variance.
      std::string var;
      {
        std::string data;
        for (int64_t i = 0; i < M; ++i)
          data += (i ? ", " : "") + fmtFloat(0.25f + static_cast<float>(ctx_.pick(8)) * 0.25f);
        var = constant(typeText("float", m), data, "float", m);
      }
      y = emit("BatchNormalization", "epsilon = " + fmtFloatAttr(1e-5f), {y, scale, bias, mean, var}, "float", od);
    } else if (after == 1 || after == 2) {
      Dims cd = ctx_.coin() ? Dims{M, 1, 1} : Dims{1, M, 1, 1};
      y = emit(after == 1 ? "Add" : "Mul", "", {y, floatConst(cd, 3)}, "float", od);
    }
    if (ctx_.coin())
      emit("Relu", "", {y}, "float", od);
  }

  void padPool() {
    Val a = *rank4();
    int64_t N = a.dims[0], C = a.dims[1], H = a.dims[2], W = a.dims[3];
    int64_t p[4];
    for (int64_t &x : p)
      x = ctx_.pick(2);
    bool maxPool = ctx_.coin();
    std::vector<int64_t> pads = {0, 0, p[0], p[1], 0, 0, p[2], p[3]};
    float value = maxPool ? -std::numeric_limits<float>::infinity() : 0.0f;
    if (ctx_.pick(4) == 0)
      value = 0.5f;
    std::string pv = scalar(value);
    H += p[0] + p[2];
    W += p[1] + p[3];
    std::string padded = emit("Pad", "", {a.name, intConst(pads), pv}, "float", {N, C, H, W});
    int64_t kh = 1 + ctx_.pick(static_cast<int>(std::min<int64_t>(H, 3)));
    int64_t kw = 1 + ctx_.pick(static_cast<int>(std::min<int64_t>(W, 3)));
    int64_t dil = maxPool && ctx_.pick(3) == 0 ? 2 : 1;
    int64_t ekh = (kh - 1) * dil + 1, ekw = (kw - 1) * dil + 1;
    if (ekh > H || ekw > W)
      return;
    int64_t OH = H - ekh + 1, OW = W - ekw + 1;
    std::string attrs = "kernel_shape = " + listText({kh, kw});
    if (dil > 1)
      attrs += ", dilations = " + listText({dil, dil});
    if (maxPool) {
      emit("MaxPool", attrs, {padded}, "float", {N, C, OH, OW});
    } else {
      attrs += ", count_include_pad = " + std::string(ctx_.coin() ? "1" : "0");
      emit("AveragePool", attrs, {padded}, "float", {N, C, OH, OW});
    }
  }

  void matmulAdd() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t K = a.dims.back();
    int64_t N = 1 + ctx_.pick(4);
    Dims out = a.dims;
    if (out.size() == 1)
      out = {N};
    else
      out.back() = N;
    if (numel(out) > kMaxElements)
      return;
    if (a.dims.size() == 2 && ctx_.pick(3) == 0) {
      // Gemm with optional transB and C.
      bool tb = ctx_.coin();
      std::vector<std::string> ins = {a.name, floatConst(tb ? Dims{N, K} : Dims{K, N}, 4)};
      if (ctx_.coin())
        ins.push_back(floatConst(ctx_.coin() ? Dims{N} : Dims{1, N}, 3));
      emit("Gemm", tb ? "transB = 1" : "", ins, "float", out);
      return;
    }
    std::string y = emit("MatMul", "", {a.name, floatConst({K, N}, 4)}, "float", out);
    if (ctx_.pick(3) != 0) {
      Dims bd = ctx_.coin() ? Dims{N} : Dims{1, N};
      Dims o2;
      broadcast(out, bd, o2);
      std::string b = floatConst(bd, 3);
      emit("Add", "", ctx_.coin() ? std::vector<std::string>{y, b} : std::vector<std::string>{b, y}, "float", o2);
    }
  }

  /// ReduceMean-based LayerNorm: constants of rank 0, 1 or more (rank-raising).
  void layerNorm() {
    const Val *x = pickFloat(1);
    if (!x)
      return;
    Val a = *x;
    int64_t r = static_cast<int64_t>(a.dims.size());
    std::vector<int64_t> axes = {-1};
    if (r >= 2 && ctx_.pick(3) == 0)
      axes = {-2, -1};
    if (ctx_.pick(4) == 0)
      axes = {ctx_.range(0, r - 1)};
    Dims md = a.dims;
    for (int64_t ax : axes)
      md[static_cast<size_t>(ax < 0 ? ax + r : ax)] = 1;
    std::string m = emit("ReduceMean", "axes = " + listText(axes), {a.name}, "float", md);
    std::string d = emit("Sub", "", {a.name, m}, "float", a.dims);
    std::string p;
    if (ctx_.coin()) {
      p = emit("Mul", "", {d, d}, "float", a.dims);
    } else {
      Dims ed = ctx_.pick(3) == 0 ? Dims(static_cast<size_t>(1 + ctx_.pick(r + 1)), 1) : Dims{};
      std::string two = constant(typeText("float", ed), ctx_.pick(4) == 0 ? "3" : "2", "float", ed);
      Dims o;
      broadcast(a.dims, ed, o);
      p = emit("Pow", "", {d, two}, "float", o);
    }
    // p may have a higher rank than x (a rank-raising exponent): reduce the
    // same axes counted from the end.
    Dims pd = vals_.back().dims;
    Dims vd = pd;
    std::vector<int64_t> negAxes;
    for (int64_t ax : axes) {
      negAxes.push_back(ax < 0 ? ax : ax - r);
      vd[static_cast<size_t>(static_cast<int64_t>(pd.size()) + negAxes.back())] = 1;
    }
    std::string v = emit("ReduceMean", "axes = " + listText(negAxes), {p}, "float", vd);
    Dims ed = ctx_.pick(3) == 0 ? Dims(static_cast<size_t>(1 + ctx_.pick(r + 1)), 1) : Dims{};
    std::string eps = constant(typeText("float", ed), fmtFloat(1e-5f), "float", ed);
    Dims ve;
    broadcast(vd, ed, ve);
    std::string vs = emit("Add", "", ctx_.coin() ? std::vector<std::string>{v, eps} : std::vector<std::string>{eps, v},
                          "float", ve);
    std::string s = emit("Sqrt", "", {vs}, "float", ve);
    Dims nd;
    broadcast(a.dims, ve, nd);
    std::string n = emit("Div", "", {d, s}, "float", nd);
    if (ctx_.coin()) {
      Dims gd = {a.dims.back()};
      Dims o;
      broadcast(nd, gd, o);
      n = emit("Mul", "", {n, floatConst(gd, 4)}, "float", o);
      if (ctx_.coin())
        emit("Add", "", {n, floatConst(gd, 3)}, "float", o);
    }
  }

  /// x * 0.5 * (1 + Erf(x / sqrt(2))), with constants of random ranks.
  void gelu() {
    const Val *x = pickFloat();
    Val a = *x;
    auto scalarLike = [&](float v) {
      Dims d = ctx_.pick(4) == 0 ? Dims(static_cast<size_t>(1 + ctx_.pick(3)), 1) : Dims{};
      return std::make_pair(constant(typeText("float", d), fmtFloat(v), "float", d), d);
    };
    auto [c1, d1] = scalarLike(ctx_.pick(4) == 0 ? 1.5f : 1.41421354f);
    Dims o1;
    broadcast(a.dims, d1, o1);
    std::string q = emit("Div", "", {a.name, c1}, "float", o1);
    std::string e = emit("Erf", "", {q}, "float", o1);
    auto [c2, d2] = scalarLike(1.0f);
    Dims o2;
    broadcast(o1, d2, o2);
    std::string p = emit("Add", "", {e, c2}, "float", o2);
    Dims o3;
    broadcast(a.dims, o2, o3);
    std::string m = emit("Mul", "", {a.name, p}, "float", o3);
    auto [c3, d3] = scalarLike(0.5f);
    Dims o4;
    broadcast(o3, d3, o4);
    emit("Mul", "", {m, c3}, "float", o4);
  }

  void expandTileFlatten() {
    const Val *x = pickFloat();
    Val a = *x;
    int k = ctx_.pick(2);
    if (k == 0) {
      Dims target = a.dims;
      for (int64_t &d : target)
        if (d == 1 && ctx_.coin())
          d = 2;
      if (ctx_.coin() && target.size() < 4)
        target.insert(target.begin(), 1 + ctx_.pick(2));
      if (numel(target) > kMaxElements)
        return;
      std::vector<int64_t> t(target.begin(), target.end());
      emit("Expand", "", {a.name, intConst(t)}, "float", target);
    } else {
      int64_t r = static_cast<int64_t>(a.dims.size());
      if (r == 0)
        return;
      int64_t axis = ctx_.range(-r, r);
      int64_t ax = axis < 0 ? axis + r : axis;
      int64_t lo = 1, hi = 1;
      for (int64_t i = 0; i < r; ++i)
        (i < ax ? lo : hi) *= a.dims[static_cast<size_t>(i)];
      emit("Flatten", "axis = " + std::to_string(axis), {a.name}, "float", {lo, hi});
    }
  }

  /// A graph body of a few shape-preserving ops on `x`, ending in `outName`.
  std::string subgraph(const std::string &name, const Val &x, const std::vector<Val> &outer,
                       const std::string &params, const std::string &outDecl, const std::string &outName,
                       const std::string &extraBody) {
    Builder sub(ctx_, outer, depth_ + 1);
    Val cur = x;
    int steps = ctx_.pick(4);
    for (int i = 0; i < steps; ++i) {
      int k = ctx_.pick(depth_ < 2 ? 5 : 4);
      if (k == 0) {
        static const char *const ops[] = {"Relu", "Neg", "Identity", "Abs", "Sigmoid"};
        cur.name = sub.emit(ops[ctx_.pick(5)], "", {cur.name}, "float", cur.dims);
      } else if (k == 1 || k == 2) {
        static const char *const ops[] = {"Add", "Mul", "Sub", "Max"};
        // Keep the output shape: a constant whose dims are a suffix pattern of cur's.
        Dims cd;
        size_t rr = static_cast<size_t>(ctx_.pick(static_cast<int>(cur.dims.size()) + 1));
        for (size_t j = cur.dims.size() - rr; j < cur.dims.size(); ++j)
          cd.push_back(ctx_.coin() ? cur.dims[j] : 1);
        std::string c = sub.floatConst(cd, k == 1 ? ctx_.pick(3) : -1);
        cur.name = sub.emit(ops[ctx_.pick(4)], "", {cur.name, c}, "float", cur.dims);
      } else if (k == 3) {
        // Use another outer float value of the same shape.
        const Val *o = sub.pickOf([&](const Val &v) { return v.type == "float" && v.dims == cur.dims; });
        if (o)
          cur.name = sub.emit("Add", "", {cur.name, o->name}, "float", cur.dims);
      } else {
        sub.nestedIf(cur);
        cur = sub.vals_.back();
      }
    }
    sub.body += extraBody;
    sub.op(outName, "Identity", "", {cur.name});
    std::string s = name + " (" + params + ") => (" + outDecl + ")";
    if (!sub.inits.empty()) {
      s += " <";
      for (size_t i = 0; i < sub.inits.size(); ++i)
        s += (i ? ", " : "") + sub.inits[i];
      s += ">";
    }
    s += " {\n" + sub.body + "  }";
    return s;
  }

  /// An If whose branches compute from `x` (captured); constant or computed condition.
  void nestedIf(const Val &x) {
    std::string cond;
    int k = ctx_.pick(3);
    if (k == 0) {
      cond = boolConst(ctx_.coin());
    } else if (k == 1) {
      // A condition the pipeline can fold: Shape(x)[0] == dim.
      std::string s = emit("Shape", "", {x.name}, "int64", {static_cast<int64_t>(x.dims.size())});
      if (x.dims.empty()) {
        cond = boolConst(true);
      } else {
        std::string g = emit("Gather", "axis = 0", {s, intConst({0}, true)}, "int64", {});
        cond = emit("Equal", "", {g, intConst({x.dims[0] + ctx_.pick(2)}, true)}, "bool", {});
      }
    } else {
      std::string r = emit("ReduceSum", "keepdims = 0", {x.name}, "float", {});
      cond = emit("Greater", "", {r, floatConst({}, 3)}, "bool", {});
    }
    std::string t = ctx_.fresh("t"), e = ctx_.fresh("e");
    std::string decl = typeText("float", x.dims);
    std::string tb = subgraph(ctx_.fresh("then"), x, vals_, "", decl + " " + t, t, "");
    std::string eb = subgraph(ctx_.fresh("else"), x, vals_, "", decl + " " + e, e, "");
    std::string out = ctx_.fresh("v");
    op(out, "If", "then_branch = " + tb + ", else_branch = " + eb, {cond});
    add({out, "float", x.dims});
  }

  void ifOp() {
    if (depth_ >= 3)
      return;
    Val x = *pickFloat();
    nestedIf(x);
  }

  /// Loop(M, cond, v0): a body updating v from v and captures; trip count 0-3.
  void loop() {
    if (depth_ >= 3)
      return;
    Val x = *pickFloat();
    std::string m = intConst({ctx_.range(0, 3)}, true);
    std::string c = ctx_.coin() ? boolConst(true) : std::string();
    std::string it = ctx_.fresh("i"), ci = ctx_.fresh("ci"), co = ctx_.fresh("co"), v = ctx_.fresh("lv"),
                vo = ctx_.fresh("lo");
    std::string decl = typeText("float", x.dims);
    Val inner{v, "float", x.dims};
    std::vector<Val> visible = vals_;
    visible.push_back(inner);
    std::string extra = "  " + co + " = Identity(" + ci + ")\n";
    std::string body = subgraph(ctx_.fresh("body"), inner, visible,
                                "int64 " + it + ", bool " + ci + ", " + decl + " " + v,
                                "bool " + co + ", " + decl + " " + vo, vo, extra);
    std::string out = ctx_.fresh("v");
    op(out, "Loop", "body = " + body, {m, c, x.name});
    add({out, "float", x.dims});
  }

  void duplicateConstant() {
    if (ctx_.constants.empty())
      return;
    auto [t, data] = ctx_.constants[static_cast<size_t>(ctx_.pick(static_cast<int>(ctx_.constants.size())))];
    if (t.rfind("float", 0) != 0)
      return;
    // Re-emit the same data under a new name and use it.
    Dims dims;
    size_t lb = t.find('[');
    if (lb != std::string::npos) {
      std::string inner = t.substr(lb + 1, t.size() - lb - 2);
      size_t pos = 0;
      while (pos < inner.size()) {
        size_t comma = inner.find(',', pos);
        if (comma == std::string::npos)
          comma = inner.size();
        dims.push_back(std::stoll(inner.substr(pos, comma - pos)));
        pos = comma + 1;
      }
    }
    std::string name = constant(t, data, "float", dims);
    const Val *x = pickFloat();
    Dims out;
    if (x && broadcast(x->dims, dims, out) && numel(out) <= kMaxElements) {
      std::string xn = x->name;
      emit("Add", "", {xn, name}, "float", out);
    }
  }

  void step() {
    switch (ctx_.pick(22)) {
    case 0: case 1: case 2: unary(); break;
    case 3: case 4: case 5: binary(); break;
    case 6: reshape(); break;
    case 7: transpose(); break;
    case 8: squeezeUnsqueeze(); break;
    case 9: concat(); break;
    case 10: slice(); break;
    case 11: gather(); break;
    case 12: shapeChain(); break;
    case 13: castChain(); break;
    case 14: convChain(); break;
    case 15: padPool(); break;
    case 16: matmulAdd(); break;
    case 17: layerNorm(); break;
    case 18: gelu(); break;
    case 19: ctx_.coin() ? ifOp() : loop(); break;
    case 20: ctx_.coin() ? compareWhere() : reduce(); break;
    default: ctx_.pick(3) == 0 ? duplicateConstant() : ctx_.coin() ? expandTileFlatten() : softmax(); break;
    }
  }

private:
  Context &ctx_;
  std::vector<Val> vals_;
  int depth_;
};

} // namespace

std::string generateModelText(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  Context ctx(fdp);
  ctx.opset = 13 + ctx.pick(5);
  // Graph inputs: 1-3 float tensors, ranks 1-4, dims 1-4, small; some share a shape.
  std::vector<Val> inputs;
  int numInputs = 1 + ctx.pick(3);
  for (int i = 0; i < numInputs; ++i) {
    Dims d;
    if (i > 0 && ctx.coin()) {
      d = inputs[static_cast<size_t>(ctx.pick(i))].dims;
    } else {
      int rank = 1 + ctx.pick(4); // (rank-0 values come from reductions and Gather)
      for (int k = 0; k < rank; ++k)
        d.push_back(1 + ctx.pick(4));
      for (size_t k = d.size(); numel(d) > 48 && k > 0; --k)
        d[k - 1] = 1;
    }
    inputs.push_back({"x" + std::to_string(i), "float", d});
  }
  Builder b(ctx, inputs, 0);
  int steps = 1 + ctx.pick(12);
  for (int i = 0; i < steps && fdp.remaining_bytes() > 0; ++i)
    b.step();
  if (b.results.empty())
    b.emit("Relu", "", {inputs[0].name}, "float", inputs[0].dims);
  // Outputs: the last result and up to two others (distinct).
  std::vector<Val> outs = {b.results.back()};
  int more = ctx.pick(3);
  for (int i = 0; i < more; ++i) {
    const Val &v = b.results[static_cast<size_t>(ctx.pick(static_cast<int>(b.results.size())))];
    bool dup = std::any_of(outs.begin(), outs.end(), [&](const Val &o) { return o.name == v.name; });
    if (!dup)
      outs.push_back(v);
  }
  std::string text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(ctx.opset) + "]>\n";
  text += "fuzz (";
  for (size_t i = 0; i < inputs.size(); ++i)
    text += (i ? ", " : "") + typeText(inputs[i].type, inputs[i].dims) + " " + inputs[i].name;
  text += ") => (";
  for (size_t i = 0; i < outs.size(); ++i)
    text += (i ? ", " : "") + typeText(outs[i].type, outs[i].dims) + " " + outs[i].name;
  text += ")";
  if (!b.inits.empty()) {
    text += " <";
    for (size_t i = 0; i < b.inits.size(); ++i)
      text += (i ? ", " : "") + b.inits[i];
    text += ">";
  }
  text += " {\n" + b.body + "}\n";
  return text;
}

} // namespace onnxslim::fuzz

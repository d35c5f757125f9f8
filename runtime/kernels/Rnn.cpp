//===- runtime/kernels/Rnn.cpp - RNN, GRU and LSTM -------------------------===//
//
// The recurrent ops of the default domain, every version: directions
// forward/reverse/bidirectional, layout 0 and 1 (opset 14), sequence_lens,
// initial states, LSTM peepholes and input_forget, GRU linear_before_reset,
// custom activations with activation_alpha/activation_beta, and clip.
//
// Per direction the input projection of every time step is one GEMM
// (X W^T plus both biases where they can be folded); each step then adds
// H_{t-1} R^T with a small GEMM and applies the gate equations. Batch rows
// whose sequence has ended keep their state and write zeros to Y. Layout 1
// is handled by transposing X and the initial states into layout 0 and the
// outputs back.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace onnxslim::rt {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

enum class ActKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  ActKind kind = ActKind::Sigmoid;
  double alpha = 0, beta = 0;

  template <typename C> C operator()(C x) const {
    switch (kind) {
    case ActKind::Relu:
      return x > 0 ? x : C(0);
    case ActKind::Tanh:
      return std::tanh(x);
    case ActKind::Sigmoid:
      return x >= 0 ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
    case ActKind::Affine:
      return static_cast<C>(alpha * x + beta);
    case ActKind::LeakyRelu:
      return x >= 0 ? x : static_cast<C>(alpha * x);
    case ActKind::ThresholdedRelu:
      return x > alpha ? x : C(0);
    case ActKind::ScaledTanh:
      return static_cast<C>(alpha * std::tanh(beta * x));
    case ActKind::HardSigmoid:
      return static_cast<C>(std::clamp(alpha * x + beta, 0.0, 1.0));
    case ActKind::Elu:
      return x >= 0 ? x : static_cast<C>(alpha * (std::exp(static_cast<double>(x)) - 1));
    case ActKind::Softsign:
      return x / (C(1) + std::abs(x));
    case ActKind::Softplus:
      return static_cast<C>(std::log1p(std::exp(static_cast<double>(x))));
    }
    return x;
  }
};

/// Parses `activations` (or the defaults) for every direction, consuming
/// activation_alpha/beta entries in order for the functions that take them.
Status parseActivations(const KernelContext &ctx, const std::vector<ActKind> &defaults,
                        int64_t dirs, std::vector<Activation> &out) {
  std::vector<std::string> names;
  if (const Attribute *a = ctx.attr("activations"); a && a->kind == AttrKind::Strings)
    names = a->strings;
  std::vector<float> alphas, betas;
  if (const Attribute *a = ctx.attr("activation_alpha"); a && a->kind == AttrKind::Floats)
    alphas = a->floats;
  if (const Attribute *a = ctx.attr("activation_beta"); a && a->kind == AttrKind::Floats)
    betas = a->floats;
  size_t per = defaults.size();
  size_t need = per * static_cast<size_t>(dirs);
  if (names.empty()) {
    for (int64_t d = 0; d < dirs; ++d)
      for (ActKind k : defaults)
        out.push_back(Activation{k, 0, 0});
    return Status::success();
  }
  if (names.size() == per && dirs == 2) // one list shared by both directions
    names.insert(names.end(), names.begin(), names.end());
  if (names.size() != need)
    return KernelContext::error("activations has " + std::to_string(names.size()) +
                                " entries, expected " + std::to_string(need));
  size_t ai = 0, bi = 0;
  for (const std::string &raw : names) {
    std::string n;
    for (char c : raw)
      n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Activation act;
    double defA = 0, defB = 0;
    bool usesA = false, usesB = false;
    if (n == "relu") {
      act.kind = ActKind::Relu;
    } else if (n == "tanh") {
      act.kind = ActKind::Tanh;
    } else if (n == "sigmoid") {
      act.kind = ActKind::Sigmoid;
    } else if (n == "affine") {
      act.kind = ActKind::Affine, defA = 1, defB = 0, usesA = usesB = true;
    } else if (n == "leakyrelu") {
      act.kind = ActKind::LeakyRelu, defA = 0.01, usesA = true;
    } else if (n == "thresholdedrelu") {
      act.kind = ActKind::ThresholdedRelu, defA = 1, usesA = true;
    } else if (n == "scaledtanh") {
      act.kind = ActKind::ScaledTanh, defA = 1, defB = 1, usesA = usesB = true;
    } else if (n == "hardsigmoid") {
      act.kind = ActKind::HardSigmoid, defA = 0.2, defB = 0.5, usesA = usesB = true;
    } else if (n == "elu") {
      act.kind = ActKind::Elu, defA = 1, usesA = true;
    } else if (n == "softsign") {
      act.kind = ActKind::Softsign;
    } else if (n == "softplus") {
      act.kind = ActKind::Softplus;
    } else {
      return KernelContext::error("unknown activation '" + raw + "'");
    }
    act.alpha = usesA && ai < alphas.size() ? alphas[ai++] : defA;
    act.beta = usesB && bi < betas.size() ? betas[bi++] : defB;
    out.push_back(act);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Shared input handling
//===----------------------------------------------------------------------===//

enum class Cell { Rnn, Gru, Lstm };

/// The inputs of a recurrent op in layout 0, in the compute type.
template <typename T> struct RnnProblem {
  using C = ComputeType<T>;
  Cell cell;
  int64_t gates = 1;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverseOnly = false;
  bool layout1 = false;
  FloatInput<T> Xin, W, R, B, P;
  bool hasB = false, hasP = false;
  std::vector<C> x;       ///< [seq, batch, input]
  std::vector<int64_t> lens; ///< per batch row
  std::vector<C> h0, c0;  ///< [dirs, batch, hidden]
  std::vector<Activation> acts;
  bool hasClip = false;
  C clip = 0;
};

/// Reads an optional initial state into layout-0 [dirs, batch, hidden].
template <typename T>
Status readInitialState(const KernelContext &ctx, size_t index, const char *what,
                        RnnProblem<T> &p, std::vector<ComputeType<T>> &out) {
  using C = ComputeType<T>;
  size_t n = static_cast<size_t>(p.dirs * p.batch * p.hidden);
  out.assign(n, C(0));
  FloatInput<T> in;
  bool present = false;
  ONNXSLIM_RETURN_IF_ERROR(optionalFloatInput(ctx, index, what, in, present));
  if (!present)
    return Status::success();
  std::vector<int64_t> expect = p.layout1 ? std::vector<int64_t>{p.batch, p.dirs, p.hidden}
                                          : std::vector<int64_t>{p.dirs, p.batch, p.hidden};
  if (in.dims() != expect)
    return KernelContext::error(std::string(what) + " has shape " + shapeString(in.dims()) +
                                ", expected " + shapeString(expect));
  for (int64_t d = 0; d < p.dirs; ++d)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.hidden; ++h)
        out[static_cast<size_t>((d * p.batch + b) * p.hidden + h)] =
            p.layout1 ? in[(b * p.dirs + d) * p.hidden + h] : in[(d * p.batch + b) * p.hidden + h];
  return Status::success();
}

template <typename T>
Status readProblem(const KernelContext &ctx, Cell cell, RnnProblem<T> &p) {
  using C = ComputeType<T>;
  p.cell = cell;
  p.gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", p.Xin));
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 1, "weight W", p.W));
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 2, "recurrence weight R", p.R));
  ONNXSLIM_RETURN_IF_ERROR(optionalFloatInput(ctx, 3, "bias B", p.B, p.hasB));
  std::string direction = ctx.attrString("direction", "forward");
  if (direction == "forward" || direction == "reverse")
    p.dirs = 1;
  else if (direction == "bidirectional")
    p.dirs = 2;
  else
    return KernelContext::error("unknown direction '" + direction + "'");
  p.reverseOnly = direction == "reverse";
  p.layout1 = ctx.opsetVersion() >= 14 && ctx.attrInt("layout", 0) != 0;
  if (p.Xin.rank() != 3)
    return KernelContext::error("input X must be 3-D, got " + shapeString(p.Xin.dims()));
  p.seq = p.layout1 ? p.Xin.dims()[1] : p.Xin.dims()[0];
  p.batch = p.layout1 ? p.Xin.dims()[0] : p.Xin.dims()[1];
  p.input = p.Xin.dims()[2];
  if (p.W.rank() != 3 || p.R.rank() != 3)
    return KernelContext::error("W and R must be 3-D");
  p.hidden = ctx.attrInt("hidden_size", p.R.dims()[2]);
  int64_t G = p.gates, H = p.hidden;
  if (H <= 0)
    return KernelContext::error("hidden_size must be positive");
  std::vector<int64_t> wExpect = {p.dirs, G * H, p.input}, rExpect = {p.dirs, G * H, H};
  if (p.W.dims() != wExpect)
    return KernelContext::error("W has shape " + shapeString(p.W.dims()) + ", expected " +
                                shapeString(wExpect));
  if (p.R.dims() != rExpect)
    return KernelContext::error("R has shape " + shapeString(p.R.dims()) + ", expected " +
                                shapeString(rExpect));
  if (p.hasB && p.B.dims() != std::vector<int64_t>{p.dirs, 2 * G * H})
    return KernelContext::error("B has shape " + shapeString(p.B.dims()) + ", expected " +
                                shapeString({p.dirs, 2 * G * H}));
  // X in layout 0.
  p.x.resize(static_cast<size_t>(p.Xin.size()));
  if (!p.layout1) {
    std::copy(p.Xin.data(), p.Xin.data() + p.Xin.size(), p.x.begin());
  } else {
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t t = 0; t < p.seq; ++t)
        std::copy(p.Xin.data() + (b * p.seq + t) * p.input,
                  p.Xin.data() + (b * p.seq + t + 1) * p.input,
                  p.x.begin() + (t * p.batch + b) * p.input);
  }
  // sequence_lens.
  p.lens.assign(static_cast<size_t>(p.batch), p.seq);
  if (const Tensor *sl = ctx.tensor(4)) {
    std::vector<int64_t> v;
    ONNXSLIM_RETURN_IF_ERROR(readAs(*sl, v));
    if (static_cast<int64_t>(v.size()) != p.batch)
      return KernelContext::error("sequence_lens has " + std::to_string(v.size()) +
                                  " entries, expected " + std::to_string(p.batch));
    for (size_t b = 0; b < v.size(); ++b) {
      if (v[b] < 0 || v[b] > p.seq)
        return KernelContext::error("sequence_lens entry " + std::to_string(v[b]) +
                                    " is outside [0, " + std::to_string(p.seq) + "]");
      p.lens[b] = v[b];
    }
  }
  ONNXSLIM_RETURN_IF_ERROR(readInitialState(ctx, 5, "initial_h", p, p.h0));
  if (cell == Cell::Lstm) {
    ONNXSLIM_RETURN_IF_ERROR(readInitialState(ctx, 6, "initial_c", p, p.c0));
    ONNXSLIM_RETURN_IF_ERROR(optionalFloatInput(ctx, 7, "peepholes P", p.P, p.hasP));
    if (p.hasP && p.P.dims() != std::vector<int64_t>{p.dirs, 3 * H})
      return KernelContext::error("P has shape " + shapeString(p.P.dims()) + ", expected " +
                                  shapeString({p.dirs, 3 * H}));
  }
  std::vector<ActKind> defaults =
      cell == Cell::Lstm  ? std::vector<ActKind>{ActKind::Sigmoid, ActKind::Tanh, ActKind::Tanh}
      : cell == Cell::Gru ? std::vector<ActKind>{ActKind::Sigmoid, ActKind::Tanh}
                          : std::vector<ActKind>{ActKind::Tanh};
  ONNXSLIM_RETURN_IF_ERROR(parseActivations(ctx, defaults, p.dirs, p.acts));
  if (const Attribute *a = ctx.attr("clip"); a && a->kind == AttrKind::Float) {
    p.hasClip = true;
    p.clip = static_cast<C>(a->f);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// The recurrence
//===----------------------------------------------------------------------===//

template <typename T> struct RnnOutputs {
  using C = ComputeType<T>;
  std::vector<C> y;  ///< [seq, dirs, batch, hidden]
  std::vector<C> yh; ///< [dirs, batch, hidden]
  std::vector<C> yc; ///< [dirs, batch, hidden]
};

/// Runs direction `d` (reverse when `reverse`) and fills its slices of the outputs.
template <typename T>
void runDirection(const KernelContext &ctx, RnnProblem<T> &p, int64_t d, bool reverse,
                  RnnOutputs<T> &out) {
  using C = ComputeType<T>;
  const int64_t S = p.seq, Bn = p.batch, H = p.hidden, G = p.gates, I = p.input;
  const int64_t GH = G * H;
  const C *W = p.W.data() + d * GH * I;
  const C *R = p.R.data() + d * GH * H;
  const C *Wb = p.hasB ? p.B.data() + d * 2 * GH : nullptr;
  const C *Rb = p.hasB ? Wb + GH : nullptr;
  const Activation *act = &p.acts[static_cast<size_t>(d * (p.cell == Cell::Lstm ? 3 : p.cell == Cell::Gru ? 2 : 1))];
  bool lbr = p.cell == Cell::Gru && ctx.attrInt("linear_before_reset", 0) != 0;
  bool inputForget = p.cell == Cell::Lstm && ctx.attrInt("input_forget", 0) != 0;

  // xw[t, b, :] = X[t, b] W^T + Wb + Rb (GRU with linear_before_reset keeps
  // Rbh for the reset product).
  std::vector<C> xw(static_cast<size_t>(S * Bn * GH), C(0));
  if (p.hasB)
    for (int64_t r = 0; r < S * Bn; ++r)
      for (int64_t j = 0; j < GH; ++j) {
        bool keepRb = lbr && j >= 2 * H;
        xw[static_cast<size_t>(r * GH + j)] = Wb[j] + (keepRb ? C(0) : Rb[j]);
      }
  gemm(false, true, S * Bn, GH, I, C(1), p.x.data(), I, W, I, p.hasB ? C(1) : C(0), xw.data(),
       GH);

  std::vector<C> h(p.h0.begin() + d * Bn * H, p.h0.begin() + (d + 1) * Bn * H);
  std::vector<C> c;
  if (p.cell == Cell::Lstm)
    c.assign(p.c0.begin() + d * Bn * H, p.c0.begin() + (d + 1) * Bn * H);
  std::vector<C> gates(static_cast<size_t>(Bn * GH)), hr(static_cast<size_t>(Bn * H)),
      rh(static_cast<size_t>(Bn * H));
  const C *Pi = p.hasP ? p.P.data() + d * 3 * H : nullptr;
  const C *Po = Pi ? Pi + H : nullptr;
  const C *Pf = Pi ? Pi + 2 * H : nullptr;
  auto clip = [&](C v) { return p.hasClip ? std::clamp(v, -p.clip, p.clip) : v; };

  for (int64_t step = 0; step < S; ++step) {
    int64_t t = reverse ? S - 1 - step : step;
    std::copy(xw.begin() + t * Bn * GH, xw.begin() + (t + 1) * Bn * GH, gates.begin());
    if (p.cell == Cell::Gru && !lbr) {
      // z and r use H_{t-1} R^T; h uses (r . H_{t-1}) Rh^T, computed below.
      gemm(false, true, Bn, 2 * H, H, C(1), h.data(), H, R, H, C(1), gates.data(), GH);
    } else if (p.cell == Cell::Gru) {
      gemm(false, true, Bn, 2 * H, H, C(1), h.data(), H, R, H, C(1), gates.data(), GH);
      gemm(false, true, Bn, H, H, C(1), h.data(), H, R + 2 * H * H, H, C(0), hr.data(), H);
    } else {
      gemm(false, true, Bn, GH, H, C(1), h.data(), H, R, H, C(1), gates.data(), GH);
    }
    if (p.cell == Cell::Gru && !lbr) {
      // r = f(gates_r) first, then (r . h) Rh^T.
      for (int64_t b = 0; b < Bn; ++b)
        for (int64_t j = 0; j < H; ++j)
          rh[static_cast<size_t>(b * H + j)] =
              act[0](clip(gates[static_cast<size_t>(b * GH + H + j)])) * h[static_cast<size_t>(b * H + j)];
      gemm(false, true, Bn, H, H, C(1), rh.data(), H, R + 2 * H * H, H, C(0), hr.data(), H);
    }
    for (int64_t b = 0; b < Bn; ++b) {
      bool active = t < p.lens[static_cast<size_t>(b)];
      C *yrow = out.y.data() + ((t * p.dirs + d) * Bn + b) * H;
      if (!active)
        continue; // Y stays zero; the state is kept.
      const C *g = gates.data() + b * GH;
      C *hb = h.data() + b * H;
      for (int64_t j = 0; j < H; ++j) {
        switch (p.cell) {
        case Cell::Rnn:
          hb[j] = act[0](clip(g[j]));
          break;
        case Cell::Gru: {
          C z = act[0](clip(g[j]));
          C hh;
          if (lbr) {
            C r = act[0](clip(g[H + j]));
            C rbh = p.hasB ? Rb[2 * H + j] : C(0);
            hh = act[1](clip(g[2 * H + j] + r * (hr[static_cast<size_t>(b * H + j)] + rbh)));
          } else {
            hh = act[1](clip(g[2 * H + j] + hr[static_cast<size_t>(b * H + j)]));
          }
          hb[j] = (C(1) - z) * hh + z * hb[j];
          break;
        }
        case Cell::Lstm: {
          C *cb = c.data() + b * H;
          C cPrev = cb[j];
          C iv = act[0](clip(g[j] + (Pi ? Pi[j] * cPrev : C(0))));
          C fv = inputForget ? C(1) - iv : act[0](clip(g[2 * H + j] + (Pf ? Pf[j] * cPrev : C(0))));
          C cand = act[1](clip(g[3 * H + j]));
          C cNew = fv * cPrev + iv * cand;
          C ov = act[0](clip(g[H + j] + (Po ? Po[j] * cNew : C(0))));
          cb[j] = cNew;
          hb[j] = ov * act[2](cNew);
          break;
        }
        }
      }
      std::copy(hb, hb + H, yrow);
    }
  }
  std::copy(h.begin(), h.end(), out.yh.begin() + d * Bn * H);
  if (p.cell == Cell::Lstm)
    std::copy(c.begin(), c.end(), out.yc.begin() + d * Bn * H);
}

/// Writes a layout-0 result into output `index` in the requested layout.
template <typename T>
Status writeOutput(KernelContext &ctx, size_t index, const std::vector<ComputeType<T>> &data,
                   std::vector<int64_t> dims0, const std::vector<int64_t> &perm) {
  if (!ctx.wantsOutput(index))
    return Status::success();
  std::vector<int64_t> dims(dims0.size());
  for (size_t i = 0; i < perm.size(); ++i)
    dims[i] = dims0[static_cast<size_t>(perm[i])];
  FloatOutput<T> out;
  ONNXSLIM_RETURN_IF_ERROR(out.init(dims));
  // Transpose by walking the output and computing the source offset.
  std::vector<int64_t> srcStride(dims0.size(), 1);
  for (size_t i = dims0.size() - 1; i-- > 0;)
    srcStride[i] = srcStride[i + 1] * dims0[i + 1];
  std::vector<int64_t> idx(dims.size(), 0);
  auto *dst = out.data();
  for (int64_t e = 0; e < out.size(); ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      off += idx[i] * srcStride[static_cast<size_t>(perm[i])];
    dst[e] = data[static_cast<size_t>(off)];
    for (size_t i = dims.size(); i-- > 0;) {
      if (++idx[i] < dims[i])
        break;
      idx[i] = 0;
    }
  }
  ctx.setOutput(index, out.finish());
  return Status::success();
}

template <typename T> Status rnnTyped(KernelContext &ctx, Cell cell) {
  RnnProblem<T> p;
  ONNXSLIM_RETURN_IF_ERROR(readProblem(ctx, cell, p));
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements({p.seq, p.batch, p.gates * p.hidden},
                                              DataType::Float, count));
  ONNXSLIM_RETURN_IF_ERROR(
      checkedNumElements({p.seq, p.dirs, p.batch, p.hidden}, DataType::Float, count));
  RnnOutputs<T> out;
  out.y.assign(static_cast<size_t>(count), 0);
  out.yh.assign(static_cast<size_t>(p.dirs * p.batch * p.hidden), 0);
  if (cell == Cell::Lstm)
    out.yc.assign(out.yh.size(), 0);
  for (int64_t d = 0; d < p.dirs; ++d)
    runDirection(ctx, p, d, p.reverseOnly || d == 1, out);
  std::vector<int64_t> yDims = {p.seq, p.dirs, p.batch, p.hidden};
  std::vector<int64_t> hDims = {p.dirs, p.batch, p.hidden};
  std::vector<int64_t> yPerm = p.layout1 ? std::vector<int64_t>{2, 0, 1, 3}
                                         : std::vector<int64_t>{0, 1, 2, 3};
  std::vector<int64_t> hPerm = p.layout1 ? std::vector<int64_t>{1, 0, 2}
                                         : std::vector<int64_t>{0, 1, 2};
  ONNXSLIM_RETURN_IF_ERROR(writeOutput<T>(ctx, 0, out.y, yDims, yPerm));
  ONNXSLIM_RETURN_IF_ERROR(writeOutput<T>(ctx, 1, out.yh, hDims, hPerm));
  if (cell == Cell::Lstm)
    ONNXSLIM_RETURN_IF_ERROR(writeOutput<T>(ctx, 2, out.yc, hDims, hPerm));
  return Status::success();
}

Status rnnKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return rnnTyped<typename decltype(tag)::type>(ctx, Cell::Rnn);
  });
}
Status gruKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return rnnTyped<typename decltype(tag)::type>(ctx, Cell::Gru);
  });
}
Status lstmKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return rnnTyped<typename decltype(tag)::type>(ctx, Cell::Lstm);
  });
}

} // namespace

void registerRnnKernels(OpRegistry &registry) {
  registry.add("RNN", 1, kLatestOpset, rnnKernel);
  registry.add("GRU", 1, kLatestOpset, gruKernel);
  registry.add("LSTM", 1, kLatestOpset, lstmKernel);
}

} // namespace onnxslim::rt

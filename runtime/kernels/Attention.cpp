//===- runtime/kernels/Attention.cpp - Attention and RotaryEmbedding ------===//
//
// Attention (23): Y = softmax(softcap(Q K^T * scale) + bias) V per batch and
// head, Q/K/V either 4-D [B, heads, S, D] or 3-D [B, S, heads * D] (with
// q_num_heads / kv_num_heads); past_key/past_value are concatenated ahead
// of K/V (present_key/present_value); the mask is additive (float) or
// boolean (true = attend), broadcast to [B, q_heads, Sq, Skv] with a last
// dim that may be shorter than Skv (the rest masked out); is_causal masks
// key j for query i when j > i + past length; grouped-query attention
// repeats each KV head q_heads / kv_heads times; qk_matmul_output is the
// product (mode 0), after softcap (1), after the mask (2) or the softmax (3).
//
// RotaryEmbedding (23): input 4-D [B, heads, S, D] or 3-D [B, S, heads * D]
// (num_heads); cos/sin caches [B, S, R/2], or [max_pos, R/2] indexed by
// position_ids [B, S]; the first R = rotary_embedding_dim (0 = D) channels
// are rotated as halves (x1 = x[:R/2], x2 = x[R/2:R]) or interleaved pairs
// (x1 = x[0::2], x2 = x[1::2]): (x1 cos - x2 sin, x1 sin + x2 cos).
//
// Everything is computed in double and rounded once to the output type.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <cmath>
#include <limits>

namespace onnxslim::rt {
namespace {

using namespace nn;

/// A [B, heads, S, D] view of a 3-D or 4-D input, as doubles.
struct Heads {
  std::vector<double> data;
  int64_t batch = 0, heads = 0, seq = 0, dim = 0;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return data[static_cast<size_t>(((b * heads + h) * seq + s) * dim + d)];
  }
};

/// Given a 3-D [B, S, heads * D] or 4-D [B, heads, S, D] tensor and (for
/// 3-D) the head count, Result: its [B, heads, S, D] form.
Status readHeads(const Tensor &t, int64_t numHeads, const char *what, Heads &out) {
  std::vector<double> raw;
  ONNXSLIM_RETURN_IF_ERROR(readAs(t, raw));
  const std::vector<int64_t> &d = t.dims();
  if (d.size() == 4) {
    out = Heads{std::move(raw), d[0], d[1], d[2], d[3]};
    return Status::success();
  }
  if (d.size() != 3)
    return KernelContext::error(std::string(what) + " must be 3-D or 4-D, got " + shapeString(d));
  if (numHeads <= 0 || d[2] % numHeads != 0)
    return KernelContext::error(std::string(what) + " is 3-D " + shapeString(d) +
                                " and the head count attribute is missing or does not divide its last dim");
  out.batch = d[0], out.heads = numHeads, out.seq = d[1], out.dim = d[2] / numHeads;
  out.data.resize(raw.size());
  for (int64_t b = 0; b < out.batch; ++b)
    for (int64_t s = 0; s < out.seq; ++s)
      for (int64_t h = 0; h < out.heads; ++h)
        for (int64_t i = 0; i < out.dim; ++i)
          out.data[static_cast<size_t>(((b * out.heads + h) * out.seq + s) * out.dim + i)] =
              raw[static_cast<size_t>(((b * out.seq + s) * out.heads + h) * out.dim + i)];
  return Status::success();
}

/// Given values in [B, heads, S, D] order, the element type and whether the
/// result is 3-D, Result: the output tensor.
Status writeHeads(DataType dtype, const std::vector<double> &v, int64_t B, int64_t H, int64_t S, int64_t D,
                  bool threeD, TensorPtr &out) {
  return dispatchType<FloatTypes>(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    std::optional<TensorBuilder> b;
    std::vector<int64_t> dims = threeD ? std::vector<int64_t>{B, S, H * D} : std::vector<int64_t>{B, H, S, D};
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, dims, b));
    T *p = b->dataAs<T>();
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t i = 0; i < D; ++i) {
            size_t src = static_cast<size_t>(((bi * H + h) * S + s) * D + i);
            int64_t dst = threeD ? ((bi * S + s) * H + h) * D + i : static_cast<int64_t>(src);
            p[dst] = convertElem<T>(v[src]);
          }
    out = b->finish();
    return Status::success();
  });
}

/// Given a [B, H, S, D] view and past values [B, H, P, D] (or none),
/// Result: their concatenation along S.
Status concatPast(const Tensor *past, const char *what, const Heads &cur, Heads &out) {
  if (!past) {
    out = cur;
    return Status::success();
  }
  Heads p;
  ONNXSLIM_RETURN_IF_ERROR(readHeads(*past, 0, what, p));
  if (past->rank() != 4 || p.batch != cur.batch || p.heads != cur.heads || p.dim != cur.dim)
    return KernelContext::error(std::string(what) + " " + shapeString(past->dims()) +
                                " does not match the current keys/values");
  out.batch = cur.batch, out.heads = cur.heads, out.seq = p.seq + cur.seq, out.dim = cur.dim;
  out.data.resize(static_cast<size_t>(out.batch * out.heads * out.seq * out.dim));
  for (int64_t b = 0; b < out.batch; ++b)
    for (int64_t h = 0; h < out.heads; ++h)
      for (int64_t s = 0; s < out.seq; ++s)
        for (int64_t i = 0; i < out.dim; ++i)
          out.data[static_cast<size_t>(((b * out.heads + h) * out.seq + s) * out.dim + i)] =
              s < p.seq ? p.at(b, h, s, i) : cur.at(b, h, s - p.seq, i);
  return Status::success();
}

Status attentionKernel(KernelContext &ctx) {
  const Tensor *qT = nullptr, *kT = nullptr, *vT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, qT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, kT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, vT));
  if (!typeIn<FloatTypes>(qT->dtype()) || kT->dtype() != qT->dtype() || vT->dtype() != qT->dtype())
    return KernelContext::error("Q, K and V must have one floating-point type");
  if (qT->rank() != kT->rank() || qT->rank() != vT->rank())
    return KernelContext::error("Q, K and V must have the same rank");
  bool threeD = qT->rank() == 3;
  int64_t qHeadsAttr = ctx.attrInt("q_num_heads", 0), kvHeadsAttr = ctx.attrInt("kv_num_heads", 0);
  Heads Q, K0, V0, K, V;
  ONNXSLIM_RETURN_IF_ERROR(readHeads(*qT, qHeadsAttr, "Q", Q));
  ONNXSLIM_RETURN_IF_ERROR(readHeads(*kT, kvHeadsAttr, "K", K0));
  ONNXSLIM_RETURN_IF_ERROR(readHeads(*vT, kvHeadsAttr, "V", V0));
  if (K0.batch != Q.batch || V0.batch != Q.batch || K0.heads != V0.heads || K0.seq != V0.seq ||
      K0.dim != Q.dim || K0.heads == 0 || Q.heads % K0.heads != 0)
    return KernelContext::error("Q " + shapeString(qT->dims()) + ", K " + shapeString(kT->dims()) + " and V " +
                                shapeString(vT->dims()) + " do not fit together");
  ONNXSLIM_RETURN_IF_ERROR(concatPast(ctx.tensor(4), "past_key", K0, K));
  ONNXSLIM_RETURN_IF_ERROR(concatPast(ctx.tensor(5), "past_value", V0, V));
  if (K.seq != V.seq)
    return KernelContext::error("past_key and past_value have different lengths");
  int64_t B = Q.batch, Hq = Q.heads, Hkv = K.heads, Sq = Q.seq, Skv = K.seq, D = Q.dim, Dv = V.dim;
  int64_t pastLen = Skv - K0.seq;
  double scale = 1.0 / std::sqrt(static_cast<double>(D));
  if (ctx.attr("scale"))
    scale = ctx.attrFloat("scale", 1.0f);
  double softcap = ctx.attrFloat("softcap", 0.0f);
  bool causal = ctx.attrInt("is_causal", 0) != 0;
  int64_t mode = ctx.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return KernelContext::error("qk_matmul_output_mode must be 0 to 3, got " + std::to_string(mode));

  // The mask, right-aligned against [B, Hq, Sq, L] with L <= Skv.
  const Tensor *maskT = ctx.tensor(3);
  std::vector<double> mask;
  std::vector<int64_t> maskStride(4, 0);
  int64_t maskLen = Skv;
  bool boolMask = false;
  if (maskT) {
    boolMask = maskT->dtype() == DataType::Bool;
    if (!boolMask && maskT->dtype() != qT->dtype())
      return KernelContext::error("attn_mask must be bool or Q's type");
    ONNXSLIM_RETURN_IF_ERROR(readAs(*maskT, mask));
    const std::vector<int64_t> &md = maskT->dims();
    if (md.empty() || md.size() > 4)
      return KernelContext::error("attn_mask must have rank 1 to 4, got " + shapeString(md));
    maskLen = md.back();
    const int64_t full[4] = {B, Hq, Sq, maskLen};
    int64_t stride = 1;
    for (size_t i = 0; i < md.size(); ++i) {
      size_t axis = 4 - 1 - i, mi = md.size() - 1 - i;
      if (md[mi] != 1 && md[mi] != full[axis])
        return KernelContext::error("attn_mask " + shapeString(md) + " does not broadcast to [B, q_heads, Sq, Skv]");
      maskStride[axis] = md[mi] == 1 ? 0 : stride;
      stride *= md[mi];
    }
    if (maskLen > Skv)
      return KernelContext::error("attn_mask's last dim exceeds the key length");
  }

  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> Y(static_cast<size_t>(B * Hq * Sq * Dv), 0.0);
  std::vector<double> qk(ctx.wantsOutput(3) ? static_cast<size_t>(B * Hq * Sq * Skv) : 0);
  std::vector<double> row(static_cast<size_t>(Skv));
  int64_t group = Hq / Hkv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t hk = h / group;
      for (int64_t i = 0; i < Sq; ++i) {
        size_t qkBase = static_cast<size_t>(((b * Hq + h) * Sq + i) * Skv);
        for (int64_t j = 0; j < Skv; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < D; ++d)
            dot += Q.at(b, h, i, d) * K.at(b, hk, j, d);
          double s = dot * scale;
          if (!qk.empty() && mode == 0)
            qk[qkBase + static_cast<size_t>(j)] = s;
          if (softcap > 0.0)
            s = softcap * std::tanh(s / softcap);
          if (!qk.empty() && mode == 1)
            qk[qkBase + static_cast<size_t>(j)] = s;
          if (maskT) {
            if (j >= maskLen) {
              s = ninf;
            } else {
              double m = mask[static_cast<size_t>(b * maskStride[0] + h * maskStride[1] + i * maskStride[2] +
                                                  j * maskStride[3])];
              s = boolMask ? (m != 0.0 ? s : ninf) : s + m;
            }
          }
          if (causal && j > i + pastLen)
            s = ninf;
          if (!qk.empty() && mode == 2)
            qk[qkBase + static_cast<size_t>(j)] = s;
          row[static_cast<size_t>(j)] = s;
        }
        double mx = ninf;
        for (double s : row)
          mx = std::max(mx, s);
        double sum = 0.0;
        for (double &s : row) {
          s = mx == ninf ? 0.0 : std::exp(s - mx);
          sum += s;
        }
        for (int64_t j = 0; j < Skv; ++j) {
          double p = sum > 0.0 ? row[static_cast<size_t>(j)] / sum : 0.0;
          if (!qk.empty() && mode == 3)
            qk[qkBase + static_cast<size_t>(j)] = p;
          for (int64_t d = 0; d < Dv; ++d)
            Y[static_cast<size_t>(((b * Hq + h) * Sq + i) * Dv + d)] += p * V.at(b, hk, j, d);
        }
      }
    }
  TensorPtr y;
  ONNXSLIM_RETURN_IF_ERROR(writeHeads(qT->dtype(), Y, B, Hq, Sq, Dv, threeD, y));
  ctx.setOutput(0, y);
  if (ctx.wantsOutput(1)) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(writeHeads(qT->dtype(), K.data, B, Hkv, Skv, D, false, t));
    ctx.setOutput(1, t);
  }
  if (ctx.wantsOutput(2)) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(writeHeads(qT->dtype(), V.data, B, Hkv, Skv, Dv, false, t));
    ctx.setOutput(2, t);
  }
  if (ctx.wantsOutput(3)) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(writeHeads(qT->dtype(), qk, B, Hq, Sq, Skv, false, t));
    ctx.setOutput(3, t);
  }
  return Status::success();
}

Status rotaryEmbeddingKernel(KernelContext &ctx) {
  const Tensor *xT = nullptr, *cosT = nullptr, *sinT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, xT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, cosT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, sinT));
  if (!typeIn<FloatTypes>(xT->dtype()) || cosT->dtype() != xT->dtype() || sinT->dtype() != xT->dtype())
    return KernelContext::error("input, cos_cache and sin_cache must have one floating-point type");
  bool threeD = xT->rank() == 3;
  Heads X;
  ONNXSLIM_RETURN_IF_ERROR(readHeads(*xT, ctx.attrInt("num_heads", 0), "input", X));
  int64_t B = X.batch, H = X.heads, S = X.seq, D = X.dim;
  int64_t R = ctx.attrInt("rotary_embedding_dim", 0);
  if (R == 0)
    R = D;
  if (R < 0 || R > D || R % 2 != 0)
    return KernelContext::error("rotary_embedding_dim " + std::to_string(R) + " must be even and <= the head size " +
                                std::to_string(D));
  int64_t half = R / 2;
  bool interleaved = ctx.attrInt("interleaved", 0) != 0;
  std::vector<double> cosV, sinV;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*cosT, cosV));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*sinT, sinV));
  if (cosT->dims() != sinT->dims() || cosT->dims().empty() || cosT->dims().back() != half)
    return KernelContext::error("cos_cache " + shapeString(cosT->dims()) + " and sin_cache " +
                                shapeString(sinT->dims()) + " must have one shape ending in rotary_dim / 2 = " +
                                std::to_string(half));
  // Row of the caches for (b, s).
  std::vector<int64_t> rowOf(static_cast<size_t>(B * S));
  if (const Tensor *posT = ctx.tensor(3)) {
    std::vector<int64_t> pos;
    ONNXSLIM_RETURN_IF_ERROR(readAs(*posT, pos));
    if (posT->dims() != std::vector<int64_t>{B, S} || cosT->rank() != 2)
      return KernelContext::error("position_ids must be [B, S] and the caches 2-D, got " + shapeString(posT->dims()) +
                                  " and " + shapeString(cosT->dims()));
    for (size_t i = 0; i < pos.size(); ++i) {
      if (pos[i] < 0 || pos[i] >= cosT->dims()[0])
        return KernelContext::error("position id " + std::to_string(pos[i]) + " is outside the caches");
      rowOf[i] = pos[i];
    }
  } else {
    if (cosT->dims() != std::vector<int64_t>{B, S, half})
      return KernelContext::error("without position_ids the caches must be [B, S, rotary_dim / 2], got " +
                                  shapeString(cosT->dims()));
    for (size_t i = 0; i < rowOf.size(); ++i)
      rowOf[i] = static_cast<int64_t>(i);
  }
  std::vector<double> out = X.data;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        size_t base = static_cast<size_t>(((b * H + h) * S + s) * D);
        size_t cacheRow = static_cast<size_t>(rowOf[static_cast<size_t>(b * S + s)] * half);
        for (int64_t i = 0; i < half; ++i) {
          size_t i1 = base + static_cast<size_t>(interleaved ? 2 * i : i);
          size_t i2 = base + static_cast<size_t>(interleaved ? 2 * i + 1 : i + half);
          double c = cosV[cacheRow + static_cast<size_t>(i)], sn = sinV[cacheRow + static_cast<size_t>(i)];
          double x1 = X.data[i1], x2 = X.data[i2];
          out[i1] = x1 * c - x2 * sn;
          out[i2] = x1 * sn + x2 * c;
        }
      }
  TensorPtr y;
  ONNXSLIM_RETURN_IF_ERROR(writeHeads(xT->dtype(), out, B, H, S, D, threeD, y));
  ctx.setOutput(0, y);
  return Status::success();
}

} // namespace

void registerAttentionKernels(OpRegistry &registry) {
  registry.add("Attention", 23, kLatestOpset, attentionKernel);
  registry.add("RotaryEmbedding", 23, kLatestOpset, rotaryEmbeddingKernel);
}

} // namespace onnxslim::rt

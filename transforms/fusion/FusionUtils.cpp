//===- transforms/fusion/FusionUtils.cpp - Helpers shared by the fusions --===//
//
// Implements the helpers of FusionUtils.h: constant conversion to and from
// doubles (16-bit floats through runtime/Float16.h), single-user questions,
// per-channel broadcasting checks, opset imports and chain erasure.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"

#include "runtime/Compare.h"
#include "runtime/Float16.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cmath>

namespace onnxslim {

int64_t defaultOpset(const Node &node) {
  const Graph *g = node.graph();
  const Model *m = g ? g->model() : nullptr;
  return m ? m->opsetVersion("") : -1;
}

bool hasSingleNodeUse(const Value *value) {
  return value && value->hasOneUse() && !(*value->uses().begin())->isGraphOutput() && !value->isGraphOutput();
}

Node *singleUser(const Value *value) { return hasSingleNodeUse(value) ? (*value->uses().begin())->owner() : nullptr; }

Node *producerOp(const Value *value, std::string_view op) {
  Node *n = value ? value->definingNode() : nullptr;
  return n && n->is(op) ? n : nullptr;
}

bool isFloatLike(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

std::optional<std::vector<double>> toDoubles(const Tensor &tensor) {
  if (!isFloatLike(tensor.dtype()) || !tensor.isConsistent())
    return std::nullopt;
  size_t n = static_cast<size_t>(tensor.numElements());
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (tensor.dtype()) {
    case DataType::Float:
      out[i] = tensor.at<float>(i);
      break;
    case DataType::Double:
      out[i] = tensor.at<double>(i);
      break;
    case DataType::Float16:
      out[i] = rt::halfBitsToFloat(tensor.at<uint16_t>(i));
      break;
    default:
      out[i] = rt::bfloat16BitsToFloat(tensor.at<uint16_t>(i));
      break;
    }
  }
  return out;
}

TensorPtr fromDoubles(DataType dtype, std::vector<int64_t> dims, const std::vector<double> &values) {
  switch (dtype) {
  case DataType::Double:
    return Tensor::fromValues(dtype, std::move(dims), values);
  case DataType::Float16:
  case DataType::BFloat16: {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      bits[i] = dtype == DataType::Float16 ? rt::doubleToHalfBits(values[i]) : rt::doubleToBFloat16Bits(values[i]);
    return Tensor::fromValues(dtype, std::move(dims), bits);
  }
  default: {
    std::vector<float> f(values.begin(), values.end());
    return Tensor::fromValues(DataType::Float, std::move(dims), f);
  }
  }
}

bool nearConstant(double x, double c, DataType t) {
  int mantissa = t == DataType::Double     ? 52
                 : t == DataType::Float    ? 23
                 : t == DataType::Float16  ? 10
                 : t == DataType::BFloat16 ? 7
                                           : -1;
  if (mantissa < 0 || c == 0)
    return x == c;
  int e = 0;
  std::frexp(std::fabs(c), &e); // |c| = f * 2^e, f in [0.5, 1)
  double ulps = 2 * std::ldexp(1.0, e - 1 - mantissa);
  double share = rt::toleranceFor(t).rtol / 10 * std::fabs(c);
  return std::fabs(x - c) <= std::max(ulps, share);
}

std::optional<std::vector<double>> constantDoubles(const Value *value) {
  TensorPtr t = constantTensor(value);
  if (!t)
    return std::nullopt;
  return toDoubles(*t);
}

std::optional<std::vector<double>> perChannelValues(const Tensor &constant, size_t rank, int64_t channels,
                                                    const char *&reason) {
  const std::vector<int64_t> &dims = constant.dims();
  if (dims.size() > rank || rank < 2) {
    reason = "the constant has a higher rank than the output (broadcasting would grow it)";
    return std::nullopt;
  }
  size_t offset = rank - dims.size();
  bool perChannel = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    size_t axis = offset + i;
    if (dims[i] == 1)
      continue;
    if (axis == 1 && dims[i] == channels) {
      perChannel = true;
      continue;
    }
    reason = "the constant does not broadcast per channel ([C,1,...], [1,C,1,...] or one element)";
    return std::nullopt;
  }
  std::optional<std::vector<double>> v = toDoubles(constant);
  if (!v) {
    reason = "the constant is not a floating tensor";
    return std::nullopt;
  }
  if (perChannel)
    return v;
  return std::vector<double>(static_cast<size_t>(channels), v->empty() ? 0.0 : (*v)[0]);
}

std::optional<ConvChannelOperand> matchConvChannelOperand(const Node &node, bool allowTranspose,
                                                          const char *&reason) {
  if (node.numOperands() != 2 || !node.operand(0) || !node.operand(1) || !node.result(0)) {
    reason = "not two inputs and one result";
    return std::nullopt;
  }
  auto isConv = [&](const Value *v) {
    return producerOp(v, "Conv") || (allowTranspose && producerOp(v, "ConvTranspose"));
  };
  size_t side = isConv(node.operand(0)) ? 0 : 1;
  Node *conv = isConv(node.operand(side)) ? node.operand(side)->definingNode() : nullptr;
  if (!conv) {
    reason = allowTranspose ? "no operand is a Conv or ConvTranspose result" : "no operand is a Conv result";
    return std::nullopt;
  }
  if (!hasSingleNodeUse(conv->result(0))) {
    reason = "the Conv result has other users or is a graph output";
    return std::nullopt;
  }
  TensorPtr w = conv->numOperands() >= 2 ? constantTensor(conv->operand(1)) : nullptr;
  if (!w || !isFloatLike(w->dtype()) || w->rank() < 3 || w->numElements() <= 0) {
    reason = "the Conv weights are not a non-empty floating constant of rank >= 3";
    return std::nullopt;
  }
  TensorPtr k = constantTensor(node.operand(1 - side));
  if (!k) {
    reason = "the other operand is not a constant";
    return std::nullopt;
  }
  if (k->dtype() != w->dtype()) {
    reason = "the constant's dtype differs from the weights'";
    return std::nullopt;
  }
  int64_t channels = w->dims()[0];
  if (conv->is("ConvTranspose")) {
    int64_t group = conv->attrInt("group", 1);
    if (group < 1) {
      reason = "bad group";
      return std::nullopt;
    }
    channels = w->dims()[1] * group;
  }
  if (conv->numOperands() > 2 && conv->operand(2)) {
    TensorPtr b = constantTensor(conv->operand(2));
    if (!b || b->dtype() != w->dtype() || b->dims() != std::vector<int64_t>{channels}) {
      reason = "the Conv bias is not a constant [C] of the weights' dtype";
      return std::nullopt;
    }
  }
  std::optional<std::vector<double>> values = perChannelValues(*k, static_cast<size_t>(w->rank()), channels, reason);
  if (!values)
    return std::nullopt;
  return ConvChannelOperand{conv, w, channels, std::move(*values)};
}

bool ensureOpsetImport(Model &model, const std::string &domain, int64_t version) {
  for (const OpsetId &id : model.opsetImport)
    if (id.domain == domain)
      return id.version >= version;
  model.opsetImport.push_back(OpsetId{domain, version, {}});
  return true;
}

void replaceFusedNode(Node *node, Value *replacement, Rewriter &rewriter, std::string_view what, bool takeName) {
  Value *result = node->result(0);
  bool rename = result->isGraphOutput() || takeName;
  if (!rename || !replacement->definingNode() || replacement->isGraphOutput()) {
    replaceNodeWithValue(node, replacement, rewriter, what);
    return;
  }
  if (rewriter.debugEnabled())
    rewriter.notifyRewrite(node, std::string(what) + ": now computed by " + nodeLabel(*replacement->definingNode()));
  std::string name = result->name();
  if (!replacement->type())
    replacement->setType(result->type());
  replacement->valueInfoOrder = result->valueInfoOrder;
  replacement->info = result->info;
  rewriter.replaceAllUsesWith(result, replacement);
  rewriter.eraseNode(node);
  rewriter.renameValue(replacement, name);
}

void eraseDeadChain(const std::vector<Node *> &nodes, Rewriter &rewriter) {
  std::vector<Node *> left = nodes;
  bool progress = true;
  while (progress && !left.empty()) {
    progress = false;
    for (Node *&n : left) {
      if (n && n->resultsUnused()) {
        rewriter.eraseNode(n);
        n = nullptr;
        progress = true;
      }
    }
  }
}

} // namespace onnxslim

//===- runtime/kernels/MathGradient.cpp - The training Gradient op --------===//
//
// ai.onnx.preview.training Gradient: the gradient of graph value `y` (seeded
// with ones) with respect to the values named by `xs`, which are also the
// node's first inputs (followed by the `zs` values). The kernel re-evaluates
// the ancestors of y in its graph in double precision, starting from the
// node's inputs and the graph's initializers, then runs reverse-mode
// differentiation over them. Supported ops: Add, Sub, Mul, Div, Neg,
// Identity (numpy broadcasting; gradients are summed back to each operand's
// shape). Anything else in the differentiated slice is a clear error.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <map>
#include <set>
#include <unordered_map>

namespace onnxslim::rt {
namespace {

/// A dense double tensor.
struct DTensor {
  std::vector<int64_t> dims;
  std::vector<double> data;
};

/// out = op(a, b) with broadcasting.
template <typename Op> Status broadcastOp(const DTensor &a, const DTensor &b, Op op, DTensor &out) {
  BroadcastPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(plan.init({a.dims, b.dims}));
  out.dims = plan.outDims();
  out.data.assign(static_cast<size_t>(plan.outSize()), 0.0);
  int64_t sa = plan.innerStride(0), sb = plan.innerStride(1);
  plan.forEachRun([&](int64_t o, const int64_t *off, int64_t n) {
    for (int64_t j = 0; j < n; ++j)
      out.data[static_cast<size_t>(o + j)] =
          op(a.data[static_cast<size_t>(off[0] + j * sa)], b.data[static_cast<size_t>(off[1] + j * sb)]);
  });
  return Status::success();
}

/// Sums g (of a broadcast shape) back to `dims`.
Status reduceTo(const DTensor &g, const std::vector<int64_t> &dims, DTensor &out) {
  BroadcastPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(plan.initTo({dims}, g.dims));
  out.dims = dims;
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  out.data.assign(static_cast<size_t>(n), 0.0);
  int64_t s = plan.innerStride(0);
  plan.forEachRun([&](int64_t o, const int64_t *off, int64_t len) {
    for (int64_t j = 0; j < len; ++j)
      out.data[static_cast<size_t>(off[0] + j * s)] += g.data[static_cast<size_t>(o + j)];
  });
  return Status::success();
}

Status toDTensor(const Tensor &t, DTensor &out) {
  if (!typeIn<NumericTypes>(t.dtype()))
    return Status::error("unsupported element type '" + dataTypeName(t.dtype()) + "'");
  out.dims = t.dims();
  return readAs(t, out.data);
}

Status gradientKernel(KernelContext &ctx) {
  const Node &node = ctx.node();
  std::vector<std::string> xs, zs;
  if (const Attribute *a = ctx.attr("xs"))
    xs = a->strings;
  if (const Attribute *a = ctx.attr("zs"))
    zs = a->strings;
  std::string yName = ctx.attrString("y", "");
  if (xs.empty() || yName.empty())
    return ctx.error("attributes 'xs' and 'y' are required");
  if (ctx.numInputs() != xs.size() + zs.size())
    return ctx.error("expects one input per name in 'xs' and 'zs'");
  const Graph *g = node.graph();
  if (!g)
    return ctx.error("node is not in a graph");
  // Values by name: graph inputs/initializers and node results before this node.
  std::unordered_map<std::string, const Value *> byName;
  for (const Value *v : g->inputs())
    byName[v->name()] = v;
  for (const Value *v : g->initializers())
    byName[v->name()] = v;
  for (const Node *n : g->nodes()) {
    if (n == &node)
      break;
    for (const Value *r : n->results())
      if (r)
        byName[r->name()] = r;
  }
  auto yIt = byName.find(yName);
  if (yIt == byName.end())
    return ctx.error("y '" + yName + "' is not computed before the Gradient node");
  // Leaves: the node's inputs (xs then zs).
  std::map<const Value *, DTensor> vals;
  std::vector<const Value *> xValues;
  for (size_t i = 0; i < xs.size() + zs.size(); ++i) {
    const std::string &name = i < xs.size() ? xs[i] : zs[i - xs.size()];
    auto it = byName.find(name);
    const Tensor *t = ctx.tensor(i);
    if (it == byName.end() || !t)
      return ctx.error("'" + name + "' is not a value of the graph or its input is missing");
    ONNXSLIM_RETURN_IF_ERROR(toDTensor(*t, vals[it->second]));
    if (i < xs.size())
      xValues.push_back(it->second);
  }
  // Forward: evaluate the ancestors of y in graph order.
  std::set<const Node *> needed;
  std::vector<const Value *> stack = {yIt->second};
  while (!stack.empty()) {
    const Value *v = stack.back();
    stack.pop_back();
    if (vals.count(v))
      continue;
    if (const Node *d = v->definingNode()) {
      if (needed.insert(d).second)
        for (const Value *o : d->operands())
          if (o)
            stack.push_back(o);
    } else if (v->initializer()) {
      ONNXSLIM_RETURN_IF_ERROR(toDTensor(*v->initializer(), vals[v]));
    } else {
      return ctx.error("'" + v->name() + "' is needed to differentiate but is not an input");
    }
  }
  std::vector<const Node *> order;
  for (const Node *n : g->nodes())
    if (needed.count(n))
      order.push_back(n);
  auto operand = [&](const Node *n, size_t i) -> const DTensor * {
    const Value *v = n->operand(i);
    auto it = v ? vals.find(v) : vals.end();
    return it == vals.end() ? nullptr : &it->second;
  };
  for (const Node *n : order) {
    const std::string &op = n->opType();
    const DTensor *a = operand(n, 0), *b = operand(n, 1);
    DTensor out;
    if (!a || !n->result(0))
      return ctx.error("cannot evaluate node '" + n->name() + "' (" + op + ")");
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      if (!b)
        return ctx.error("node '" + n->name() + "' (" + op + ") has no second operand");
      char k = op[0];
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(*a, *b, [k](double x, double y) {
        return k == 'A' ? x + y : k == 'S' ? x - y : k == 'M' ? x * y : x / y;
      }, out));
    } else if (op == "Neg" || op == "Identity") {
      out = *a;
      if (op == "Neg")
        for (double &v : out.data)
          v = -v;
    } else {
      return ctx.error("cannot differentiate through " + op + " (node '" + n->name() + "')");
    }
    vals[n->result(0)] = std::move(out);
  }
  // Reverse: seed dy = ones and propagate.
  std::map<const Value *, DTensor> grads;
  const DTensor &y = vals[yIt->second];
  grads[yIt->second] = DTensor{y.dims, std::vector<double>(y.data.size(), 1.0)};
  auto accumulate = [&](const Value *v, DTensor d) {
    auto it = grads.find(v);
    if (it == grads.end()) {
      grads[v] = std::move(d);
      return;
    }
    for (size_t i = 0; i < d.data.size() && i < it->second.data.size(); ++i)
      it->second.data[i] += d.data[i];
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node *n = *it;
    auto gi = grads.find(n->result(0));
    if (gi == grads.end())
      continue;
    const DTensor gy = gi->second;
    const std::string &op = n->opType();
    const Value *va = n->operand(0), *vb = n->operand(1);
    const DTensor &a = vals[va];
    if (op == "Neg" || op == "Identity") {
      DTensor d = gy;
      if (op == "Neg")
        for (double &v : d.data)
          v = -v;
      accumulate(va, std::move(d));
      continue;
    }
    const DTensor &b = vals[vb];
    DTensor da, db, t;
    if (op == "Add" || op == "Sub") {
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(gy, a.dims, da));
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(gy, b.dims, db));
      if (op == "Sub")
        for (double &v : db.data)
          v = -v;
    } else if (op == "Mul") {
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(gy, b, [](double x, double y) { return x * y; }, t));
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(t, a.dims, da));
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(gy, a, [](double x, double y) { return x * y; }, t));
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(t, b.dims, db));
    } else { // Div: d(a/b) = g/b, -g*a/b^2
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(gy, b, [](double x, double y) { return x / y; }, t));
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(t, a.dims, da));
      DTensor q;
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(a, b, [](double x, double y) { return -x / (y * y); }, q));
      ONNXSLIM_RETURN_IF_ERROR(broadcastOp(gy, q, [](double x, double y) { return x * y; }, t));
      ONNXSLIM_RETURN_IF_ERROR(reduceTo(t, b.dims, db));
    }
    accumulate(va, std::move(da));
    accumulate(vb, std::move(db));
  }
  // Outputs: dy/dx_i in x_i's element type (zeros when y does not depend on it).
  for (size_t i = 0; i < xValues.size() && i < ctx.numOutputs(); ++i) {
    if (!ctx.wantsOutput(i))
      continue;
    const Tensor *x = ctx.tensor(i);
    auto gx = grads.find(xValues[i]);
    std::vector<double> d = gx != grads.end() ? gx->second.data
                                              : std::vector<double>(static_cast<size_t>(x->numElements()), 0.0);
    TensorPtr out;
    ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      ComputeOutput<T> o;
      ONNXSLIM_RETURN_IF_ERROR(o.init(x->dims()));
      if (static_cast<size_t>(o.size()) != d.size())
        return Status::error("gradient shape mismatch");
      for (size_t e = 0; e < d.size(); ++e)
        o.data()[e] = convertElem<ComputeType<T>>(d[e]);
      out = o.finish();
      return Status::success();
    }));
    ctx.setOutput(i, std::move(out));
  }
  return Status::success();
}

} // namespace

void registerMathGradientKernels(OpRegistry &r) {
  r.add(KernelDef{"ai.onnx.preview.training", "Gradient", 1, kLatestOpset, gradientKernel, true});
}

} // namespace onnxslim::rt

//===- transforms/opset/ExpandScatter.cpp - Scatter reductions, batched GatherND, Reshape allowzero ===//
//
// Downgrades whose newer version added an attribute the older one cannot
// drop, written exactly in the older ops (see Adapter.h). Each replaces
// the step's adapter of VersionBumps.cpp for that attribute's non-default
// values and hands it every other node:
//
//   step (key)                  written as
//   ScatterND-16 -> 13          reduction add/mul (and, from ScatterND-18
//   ScatterND-18 -> 16          -> 16, max/min): a Loop over the update
//                               rows, indices flattened to [N, k] and
//                               updates to [N, P], applying row i in turn:
//                                 cur = ScatterND(cur, idx_i,
//                                         GatherND(cur, idx_i) OP upd_i)
//                               Applying the rows in order is the
//                               reduction's definition (duplicates
//                               accumulate). Targets from 11 (the body
//                               holds ScatterND and GatherND and is
//                               written directly at the target).
//   ScatterElements-16 -> 13    reduction add/mul (max/min from 18): each
//   ScatterElements-18 -> 16    element's full index tuple (the index
//                               grids of the other axes by Range/Expand,
//                               the axis' index wrapped when negative),
//                               then the same Loop with k = rank, P = 1.
//   GatherND-12 -> 11           batch_dims = b > 0: the batch coordinates
//                               (a constant grid for a static index shape,
//                               else Range/Expand) concatenated in front of
//                               each index, then GatherND with batch_dims 0.
//   Reshape-14 -> 13            allowzero = 1: a constant shape without 0,
//                               or data of known non-zero size (its shape
//                               cannot hold a 0), drops the attribute; a
//                               constant shape with 0 makes an empty
//                               Constant of that shape; a runtime shape is
//                               If(shape has a 0) {ConstantOfShape(shape)}
//                               else {Reshape(data, shape)} (targets from
//                               11: the branches differ in shape).
//
// The Loop body and the If branches are written in their form at the
// target opset (the driver walks only what nodeBefore writes); their ops
// take no attribute whose meaning changed since 11.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Body.h"

#include "transforms/ValueUtils.h"

#include <algorithm>
#include <memory>

namespace onnxslim {
namespace opset {

namespace {

/// The adapters these replace for the default attribute values.
AdapterFn gScatterND18 = nullptr;
AdapterFn gScatterND16 = nullptr;
AdapterFn gScatterElements18 = nullptr;
AdapterFn gScatterElements16 = nullptr;
AdapterFn gGatherND12 = nullptr;
AdapterFn gReshape14 = nullptr;

std::string passOn(AdapterFn prev, Node &node, StepContext &ctx) { return prev ? prev(node, ctx) : std::string(); }

std::string typeName(std::optional<DataType> t) { return t ? dataTypeName(*t) : std::string("unknown"); }

std::optional<int64_t> knownRank(const Value *v) {
  std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
  return s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
}

/// A graph (Loop body, If branch) written node by node in its form at the
/// target, its names fresh in the model.
class SubgraphWriter {
public:
  SubgraphWriter(Body &b, std::string_view what) : b_(b), g_(std::make_unique<Graph>()) {
    g_->name = fresh(what);
  }
  Value *input(std::string_view what, Type t) { return g_->addInput(fresh(what), std::move(t)); }
  Value *op(std::string type, const std::vector<Value *> &in, std::string_view what, std::vector<Attr> attrs = {}) {
    std::string name = fresh(what);
    Node *n = g_->createNode(std::move(type), in, {name});
    n->setName(b_.ctx().model.names().fresh(name + "_node"));
    for (const Attr &a : attrs)
      n->setAttr(a.make());
    g_->append(n);
    return n->result(0);
  }
  void output(Value *v, Type t) { g_->addOutput(v, std::move(t)); }
  std::unique_ptr<Graph> take() { return std::move(g_); }

private:
  std::string fresh(std::string_view what) { return b_.ctx().model.names().fresh(nodeBase(b_.node(), what)); }
  Body &b_;
  std::unique_ptr<Graph> g_;
};

//===----------------------------------------------------------------------===//
// The row Loop (ScatterND, ScatterElements)
//===----------------------------------------------------------------------===//

/// The op a reduction applies, or null for none / an unknown one.
const char *reductionOp(std::string_view r) {
  if (r == "add")
    return "Add";
  if (r == "mul")
    return "Mul";
  if (r == "max")
    return "Max";
  if (r == "min")
    return "Min";
  return nullptr;
}

/// Given the reduction's op, the data's element type and the target,
/// Result: "" when the Loop body (ScatterND, GatherND, the op) takes that
/// type at the target, else why not.
std::string rowLoopTypeOk(const char *op, std::optional<DataType> t, int64_t target) {
  if (!t)
    return "the element type of its data is unknown (the Loop body's types)";
  using D = DataType;
  bool isFloat = *t == D::Float || *t == D::Double || *t == D::Float16 || *t == D::BFloat16;
  bool smallInt = *t == D::Int8 || *t == D::UInt8 || *t == D::Int16 || *t == D::UInt16;
  bool wideInt = *t == D::Int32 || *t == D::UInt32 || *t == D::Int64 || *t == D::UInt64;
  if (!isFloat && !smallInt && !wideInt)
    return "its element type " + dataTypeName(*t) + " has no " + op;
  if (*t == D::BFloat16 && target < 16)
    return "ScatterND takes bfloat16 from opset 16 (the Loop body's)";
  std::string_view o = op;
  if ((o == "Add" || o == "Mul") && smallInt && target < 14)
    return std::string(op) + " takes " + dataTypeName(*t) + " from opset 14 (the Loop body's)";
  if ((o == "Max" || o == "Min") && !isFloat && target < 12)
    return std::string(op) + " takes " + dataTypeName(*t) + " from opset 12 (the Loop body's)";
  return "";
}

/// Given a body writer, the data (element type t), its index rows [N, k]
/// (int64), update rows [N, P] and the reduction's op, Execute: the node
/// becomes
///   count = Where(P == 0, 0, N)           (no row changes anything then)
///   y = Loop(count, true, data) body (i, c, cur) ->
///         idx = Gather(rows, Reshape(i, [1]))                 [1, k]
///         g = GatherND(cur, idx)                              [1, ...]
///         u = Reshape(Gather(updateRows, [i]), Shape(g))      [1, ...]
///         (c, ScatterND(cur, idx, OP(g, u)))
/// its body in its form at the target.
void writeRowLoop(Body &b, Value *data, DataType t, Value *rows, Value *updateRows, const char *op) {
  Value *rowsShape = b.op("Shape", {updateRows}, "rows_shape");
  Value *n = b.op("Gather", {rowsShape, b.ints({0}, "n_at", true)}, "n");
  Value *p = b.op("Gather", {rowsShape, b.ints({1}, "p_at", true)}, "p");
  Value *zero = b.ints({0}, "zero", true);
  Value *count = b.op("Where", {b.op("Equal", {p, zero}, "empty_rows"), zero, n}, "count");
  Value *cond = b.constant(DataType::Bool, {}, {1}, "cond");
  Value *one = b.ints({1}, "row_at_shape");

  SubgraphWriter w(b, "row_body");
  Value *i = w.input("i", Type::tensor(DataType::Int64, Shape{}));
  Value *c = w.input("cond_in", Type::tensor(DataType::Bool, Shape{}));
  std::optional<Shape> ds = knownShape(data);
  Value *cur = w.input("cur", Type::tensor(t, ds));
  Value *at = w.op("Reshape", {i, one}, "row_at");
  Value *idx = w.op("Gather", {rows, at}, "row_index");
  Value *g = w.op("GatherND", {cur, idx}, "row_old");
  Value *u = w.op("Reshape", {w.op("Gather", {updateRows, at}, "row_update_flat"), w.op("Shape", {g}, "row_shape")},
                  "row_update");
  Value *v = w.op(op, {g, u}, "row_new");
  Value *next = w.op("ScatterND", {cur, idx, v}, "next");
  w.output(w.op("Identity", {c}, "cond_out"), Type::tensor(DataType::Bool, Shape{}));
  w.output(next, Type::tensor(t, ds));

  b.finish("Loop", {count, cond, data});
  b.node().setAttr(Attribute::makeGraph("body", w.take()));
}

/// The reduction a downgrade from `ctx.from` must write out: add/mul below
/// 16, max/min below 18; "" when the step's own adapter takes the node.
std::string reductionToWrite(const Node &node, const StepContext &ctx) {
  std::string r = node.attrString("reduction", "none");
  if (ctx.direction == Direction::Up || r == "none")
    return "";
  if (ctx.from == 18 && r != "max" && r != "min")
    return "";
  return r;
}

/// Why the row Loop cannot be written for this node at this target, or "".
std::string rowLoopOk(const StepContext &ctx, const std::string &r, std::optional<DataType> t) {
  if (!reductionOp(r))
    return "its reduction '" + r + "' is not one ONNX defines";
  if (ctx.target < 11)
    return "its reduction '" + r + "' is written as a Loop applying ScatterND row by row, and ScatterND has no " +
           "form below opset 11";
  return rowLoopTypeOk(reductionOp(r), t, ctx.target);
}

/// ScatterND-16 -> 13 (reduction add, mul) and ScatterND-18 -> 16 (max,
/// min): the row Loop (writeRowLoop):
///   Before (opset 16):                       After (opset 13):
///     y = ScatterND<reduction = "add">(x, i, u)  rows = Flatten<axis = q-1>(i)      [N, k]
///                                                ups = Flatten<axis = q-1>(u)       [N, P]
///                                                y = Loop(count, true, x) {cur ->
///                                                  ScatterND(cur, idx_i,
///                                                    Add(GatherND(cur, idx_i), u_i))}
/// Needs the rank q of the indices and the data's element type.
std::string scatterNDReduced(Node &node, StepContext &ctx) {
  std::string r = reductionToWrite(node, ctx);
  if (r.empty())
    return passOn(ctx.from == 18 ? gScatterND18 : gScatterND16, node, ctx);
  Value *data = node.operand(0), *indices = node.operand(1), *updates = node.operand(2);
  if (!data || !indices || !updates)
    return "it has no data, indices or updates";
  std::optional<DataType> t = knownElemType(data);
  if (std::string why = rowLoopOk(ctx, r, t); !why.empty())
    return why;
  std::optional<int64_t> q = knownRank(indices);
  if (!q || *q < 1)
    return "the rank of its indices is unknown (the update rows' split)";
  Body b(node, ctx);
  Value *rows = b.op("Flatten", {indices}, "index_rows", {aInt("axis", *q - 1)});
  Value *updateRows = b.op("Flatten", {updates}, "update_rows", {aInt("axis", *q - 1)});
  writeRowLoop(b, data, *t, rows, updateRows, reductionOp(r));
  return "";
}

/// ScatterElements-16 -> 13 (reduction add, mul) and -18 -> 16 (max, min):
/// element e at position (j_0, ..., j_{r-1}) of the indices updates data at
/// (j_0, ..., indices[e], ..., j_{r-1}) (the axis' place), so its full
/// index tuple is the grids of the other axes and the wrapped index:
///   c_d = Expand(Reshape(Range(0, Shape(i)[d], 1), [1.., -1, ..1]), Shape(i))  (d != axis)
///   c_axis = Where(i < 0, i + Shape(x)[axis], i)      (int64)
///   rows = Concat(Reshape(c_0, [-1, 1]), ..., axis = 1)       [N, r]
///   ups = Reshape(u, [-1, 1])                                 [N, 1]
/// then the row Loop of ScatterND (writeRowLoop). Needs the rank.
std::string scatterElementsReduced(Node &node, StepContext &ctx) {
  std::string r = reductionToWrite(node, ctx);
  if (r.empty())
    return passOn(ctx.from == 18 ? gScatterElements18 : gScatterElements16, node, ctx);
  Value *data = node.operand(0), *indices = node.operand(1), *updates = node.operand(2);
  if (!data || !indices || !updates)
    return "it has no data, indices or updates";
  std::optional<DataType> t = knownElemType(data);
  if (std::string why = rowLoopOk(ctx, r, t); !why.empty())
    return why;
  std::optional<int64_t> rank = knownRank(data);
  if (!rank)
    rank = knownRank(indices);
  if (!rank)
    rank = knownRank(updates);
  if (!rank || *rank < 1)
    return "the rank of its data is unknown (the length of an element's index tuple)";
  int64_t axis = node.attrInt("axis", 0);
  if (axis < -*rank || axis >= *rank)
    return "its axis " + std::to_string(axis) + " is outside its rank " + std::to_string(*rank);
  if (axis < 0)
    axis += *rank;
  std::optional<DataType> it = knownElemType(indices);
  if (!it)
    return "the element type of its indices is unknown";
  Body b(node, ctx);
  Value *idx = indices;
  if (*it != DataType::Int64)
    idx = b.op("Cast", {indices}, "indices64", {castTo(DataType::Int64)});
  Value *zero = b.ints({0}, "zero", true);
  Value *dimAxis = b.op("Gather", {b.op("Shape", {data}, "data_shape"), b.ints({axis}, "axis_at", true)}, "axis_dim");
  idx = b.op("Where", {b.op("Less", {idx, zero}, "negative"), b.op("Add", {idx, dimAxis}, "from_end"), idx},
             "indices_wrapped");
  Value *ishape = b.op("Shape", {indices}, "indices_shape");
  Value *column = b.ints({-1, 1}, "column");
  std::vector<Value *> cols;
  for (int64_t d = 0; d < *rank; ++d) {
    Value *comp = idx;
    if (d != axis) {
      std::string at = "grid" + std::to_string(d);
      Value *len = b.op("Gather", {ishape, b.ints({d}, at + "_at", true)}, at + "_len");
      Value *range = b.op("Range", {zero, len, b.ints({1}, "one", true)}, at + "_range");
      std::vector<int64_t> along(static_cast<size_t>(*rank), 1);
      along[static_cast<size_t>(d)] = -1;
      comp = b.op("Expand", {b.op("Reshape", {range, b.ints(along, at + "_along")}, at + "_line"), ishape}, at);
    }
    cols.push_back(b.op("Reshape", {comp, column}, "col" + std::to_string(d)));
  }
  Value *rows = cols.size() == 1 ? cols[0] : b.op("Concat", cols, "index_rows", {aInt("axis", 1)});
  Value *updateRows = b.op("Reshape", {updates, column}, "update_rows");
  writeRowLoop(b, data, *t, rows, updateRows, reductionOp(r));
  return "";
}

//===----------------------------------------------------------------------===//
// GatherND-12 -> 11 (batch_dims)
//===----------------------------------------------------------------------===//

/// GatherND-12 -> 11 with batch_dims = b > 0: GatherND(x, i) with batch
/// dims b reads, for index position (j_0, ..., j_{q-2}), x at (j_0, ...,
/// j_{b-1}, i[j, :]); so the same GatherND with batch_dims 0 over indices
/// with the batch coordinates in front:
///   Before (opset 13, x: [2,2,2], i: int64[2,1]):   After (opset 11):
///     y = GatherND<batch_dims = 1>(x, i)              grid = Constant<int64[2,1] {0, 1}>
///                                                     y = GatherND(x, Concat<axis = 1>(grid, i))
/// The grid is a constant for a static index shape, else, per batch dim d,
///   Expand(Reshape(Range(0, Shape(i)[d], 1), [1.., -1, ..1]), Concat(Shape(i)[:-1], [1]))
/// Indices other than int64 are cast. Needs the rank q of the indices.
std::string gatherNDBatched(Node &node, StepContext &ctx) {
  int64_t bd = node.attrInt("batch_dims", 0);
  if (ctx.direction == Direction::Up || bd == 0)
    return passOn(gGatherND12, node, ctx);
  Value *data = node.operand(0), *indices = node.operand(1);
  if (!data || !indices)
    return "it has no data or indices";
  std::optional<Shape> is = knownShape(indices);
  if (!is)
    return "the rank of its indices is unknown (where the batch coordinates go)";
  auto q = static_cast<int64_t>(is->size());
  if (bd < 0 || bd >= q)
    return "its batch_dims " + std::to_string(bd) + " is not below the rank " + std::to_string(q) + " of its indices";
  std::optional<DataType> it = knownElemType(indices);
  if (!it)
    return "the element type of its indices is unknown";
  Body b(node, ctx);
  Value *idx = indices;
  if (*it != DataType::Int64)
    idx = b.op("Cast", {indices}, "indices64", {castTo(DataType::Int64)});
  std::vector<Value *> parts;
  std::vector<int64_t> lead;
  for (int64_t d = 0; d + 1 < q; ++d)
    if (const Dim &dim = (*is)[static_cast<size_t>(d)]; dim.isValue())
      lead.push_back(dim.getValue());
  if (static_cast<int64_t>(lead.size()) == q - 1) {
    // grid[j, d] = j_d for every leading position j (row-major).
    int64_t count = 1;
    for (int64_t v : lead)
      count *= v;
    std::vector<int64_t> grid;
    grid.reserve(static_cast<size_t>(count * bd));
    for (int64_t pos = 0; pos < count; ++pos) {
      std::vector<int64_t> coord(lead.size());
      for (int64_t d = q - 2, rest = pos; d >= 0; --d) {
        coord[static_cast<size_t>(d)] = rest % lead[static_cast<size_t>(d)];
        rest /= lead[static_cast<size_t>(d)];
      }
      for (int64_t d = 0; d < bd; ++d)
        grid.push_back(coord[static_cast<size_t>(d)]);
    }
    std::vector<int64_t> dims = lead;
    dims.push_back(bd);
    parts.push_back(b.constant(Tensor::fromValues(DataType::Int64, dims, grid), "batch_grid"));
  } else {
    Value *ishape = b.op("Shape", {indices}, "indices_shape");
    Value *leadShape = b.op("Concat",
                            {b.op("Slice", {ishape, b.ints({0}, "lead_start"), b.ints({-1}, "lead_end")}, "lead"),
                             b.ints({1}, "one_column")},
                            "grid_shape", {aInt("axis", 0)});
    for (int64_t d = 0; d < bd; ++d) {
      std::string at = "batch" + std::to_string(d);
      Value *len = b.op("Gather", {ishape, b.ints({d}, at + "_at", true)}, at + "_len");
      Value *range = b.op("Range", {b.ints({0}, "zero", true), len, b.ints({1}, "one", true)}, at + "_range");
      std::vector<int64_t> along(static_cast<size_t>(q), 1);
      along[static_cast<size_t>(d)] = -1;
      parts.push_back(b.op("Expand", {b.op("Reshape", {range, b.ints(along, at + "_along")}, at + "_line"), leadShape},
                           at));
    }
  }
  parts.push_back(idx);
  Value *full = b.op("Concat", parts, "full_indices", {aInt("axis", q - 1)});
  b.finish("GatherND", {data, full});
  return "";
}

//===----------------------------------------------------------------------===//
// Reshape-14 -> 13 (allowzero)
//===----------------------------------------------------------------------===//

/// Reshape-14 -> 13 with allowzero = 1 (a 0 in the shape is a zero dim,
/// where Reshape-13 copies the input's dim):
///   - a constant shape without 0, or data of known non-zero size (a valid
///     shape then holds no 0): the attribute is dropped;
///   - a constant shape with 0 (the data is then empty): the node becomes
///     a Constant of an empty tensor of that shape;
///   - a runtime shape (targets from 11):
///       y = If(ReduceSum(Cast(Equal(shape, 0))) > 0)
///             {ConstantOfShape<value = T[1] {0}>(shape)}
///             else {Reshape(data, shape)}
std::string reshapeAllowzero(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrInt("allowzero", 0) == 0)
    return passOn(gReshape14, node, ctx);
  Value *data = node.operand(0), *shape = node.operand(1);
  if (!data || !shape)
    return "it has no data or shape";
  std::optional<std::vector<int64_t>> cs = constantInts(shape);
  std::optional<Shape> ds = knownShape(data);
  std::optional<int64_t> size = ds ? staticNumElements(*ds) : std::nullopt;
  if ((cs && std::find(cs->begin(), cs->end(), 0) == cs->end()) || (size && *size > 0)) {
    node.removeAttr("allowzero");
    return "";
  }
  std::optional<DataType> t = knownElemType(data);
  if (cs) {
    if (std::find(cs->begin(), cs->end(), -1) != cs->end())
      return "its shape holds both 0 and -1, which allowzero = 1 forbids";
    if (!t)
      return "the element type of its data is unknown (its result is an empty tensor of that type)";
    TensorPtr empty = *t == DataType::String ? Tensor::fromStrings(*cs, {})
                                             : std::make_shared<Tensor>(*t, *cs, Buffer());
    Body b(node, ctx);
    b.finish("Constant", {}, {aTensor("value", empty)});
    return "";
  }
  if (ctx.target < 11)
    return "its shape ('" + shape->name() + "') is not a constant, and the form choosing between an empty tensor " +
           "and the Reshape needs If with branches of different shapes (opset 11)";
  TensorPtr zeroValue = t ? typedTensor(*t, {1}, {0}) : nullptr;
  if (!zeroValue || *t == DataType::BFloat16)
    return "its shape is not a constant and its data's element type " + typeName(t) +
           " is not one ConstantOfShape takes below opset 20 (the empty result)";
  Body b(node, ctx);
  Value *zero = b.ints({0}, "zero", true);
  Value *zeros = b.op("Cast", {b.op("Equal", {shape, zero}, "is_zero")}, "zero_count_each", {castTo(DataType::Int64)});
  Value *count = b.axesOp("ReduceSum", zeros, {0}, "zero_count", {aInt("keepdims", 0)});
  Value *hasZero = b.op("Greater", {count, zero}, "has_zero");

  // Both branches make the node's result (its declared type, when a tensor's).
  const std::optional<Type> &declared = node.result(0)->type();
  Type out = declared && declared->isTensor() && declared->elemType() == *t ? *declared : Type::tensor(*t);
  SubgraphWriter thenW(b, "empty");
  thenW.output(thenW.op("ConstantOfShape", {shape}, "empty_out", {aTensor("value", zeroValue)}), out);
  SubgraphWriter elseW(b, "reshaped");
  elseW.output(elseW.op("Reshape", {data, shape}, "reshaped_out"), out);

  b.finish("If", {hasZero});
  b.node().setAttr(Attribute::makeGraph("then_branch", thenW.take()));
  b.node().setAttr(Attribute::makeGraph("else_branch", elseW.take()));
  return "";
}

} // namespace

void registerScatterExpansions(AdapterRegistry &r) {
  // Registered after VersionBumps.cpp: these replace its Down adapters of
  // the same steps and hand them the nodes with the default attributes.
  if (!gScatterND18) {
    gScatterND18 = r.find("ScatterND", 18, Direction::Down);
    gScatterND16 = r.find("ScatterND", 16, Direction::Down);
    gScatterElements18 = r.find("ScatterElements", 18, Direction::Down);
    gScatterElements16 = r.find("ScatterElements", 16, Direction::Down);
    gGatherND12 = r.find("GatherND", 12, Direction::Down);
    gReshape14 = r.find("Reshape", 14, Direction::Down);
  }
  r.add("ScatterND", 18, Direction::Down, scatterNDReduced);
  r.add("ScatterND", 16, Direction::Down, scatterNDReduced);
  r.add("ScatterElements", 18, Direction::Down, scatterElementsReduced);
  r.add("ScatterElements", 16, Direction::Down, scatterElementsReduced);
  r.add("GatherND", 12, Direction::Down, gatherNDBatched);
  r.add("Reshape", 14, Direction::Down, reshapeAllowzero);
}

} // namespace opset
} // namespace onnxslim

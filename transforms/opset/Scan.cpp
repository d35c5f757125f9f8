//===- transforms/opset/Scan.cpp - Scan-9's batch axis, Scan-11's axes ----===//
//
// Scan-8 loops over a leading batch axis of every input and output (an
// optional sequence_lens input first; `directions` per scan input); Scan-9
// has no batch axis and no sequence_lens, and renames `directions` to
// scan_input_directions (adding scan_input_axes, scan_output_axes and
// scan_output_directions, all 0 by default). The body is the same: it
// sees one batch element either way.
//
//   Before (opset 8, batch 1):                  After (target=9):
//     y, z = Scan <num_scan_inputs = 1,           i0 = Squeeze <axes = [0]> (init)
//                  directions = [0]>              x0 = Squeeze <axes = [0]> (x)
//              ("", init, x)                      y0, z0 = Scan <num_scan_inputs = 1,
//     (init [1, 2], x [1, 3, 2])                      scan_input_directions = [0]> (i0, x0)
//                                                 y = Unsqueeze <axes = [0]> (y0)
//                                                 z = Unsqueeze <axes = [0]> (z0)
//
// Upgrade (8 -> 9): every input's batch dim is known to be 1 (Scan-9
// cannot loop over a batch) and sequence_lens is omitted (else refused).
// Downgrade (9 -> 8): the reverse, with a batch of 1 added; refused unless
// scan_input_axes, scan_output_axes and scan_output_directions are all 0
// (Scan-8 scans axis 1 of each batch element and writes outputs forward).
// Scan-11 allows negative scan_input_axes and scan_output_axes: going below
// 11 they are made non-negative with the rank of the scan input, resp.
// output, they count in (refused when unknown).
// Squeeze and Unsqueeze are written in their form at the target opset
// (axes an attribute before 13, an input from 13). The results keep their
// names (they may be graph outputs): the Unsqueeze/Squeeze after the Scan
// takes each one over.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

#include <algorithm>

namespace onnxslim {
namespace opset {

namespace {

/// The type of `v` with its leading dim dropped (`drop`) or a leading 1
/// added; nullopt when unknown.
std::optional<Type> batchType(const Value *v, bool drop) {
  std::optional<Shape> s = knownShape(v);
  std::optional<DataType> dt = knownElemType(v);
  if (!s || !dt || (drop && s->empty()))
    return std::nullopt;
  if (drop)
    s->erase(s->begin());
  else
    s->insert(s->begin(), Dim::value(1));
  return Type::tensor(*dt, *s);
}

/// Given a checked Scan, Execute: squeezes (`drop`, 8 -> 9) or unsqueezes
/// axis 0 of every input (dropping or adding the omitted sequence_lens),
/// renames `directions` to scan_input_directions or back, and wraps every
/// result the other way.
void rebatch(Node &node, StepContext &ctx, bool drop) {
  std::vector<Value *> operands;
  if (!drop)
    operands.push_back(nullptr); // sequence_lens
  for (size_t i = drop ? 1 : 0; i < node.numOperands(); ++i) {
    Node *n = createAxesOp(node, ctx, drop ? "Squeeze" : "Unsqueeze", node.operand(i), {0},
                           nodeBase(node, drop ? "unbatched" : "batched"));
    node.graph()->insertBefore(&node, n);
    n->result(0)->setType(batchType(node.operand(i), drop));
    operands.push_back(n->result(0));
  }
  node.resizeOperands(operands.size());
  for (size_t i = 0; i < operands.size(); ++i)
    node.setOperand(i, operands[i]);
  const char *from = drop ? "directions" : "scan_input_directions", *to = drop ? "scan_input_directions" : "directions";
  if (const Attribute *d = node.attr(from)) {
    std::vector<int64_t> dirs = d->ints;
    node.removeAttr(from);
    node.setAttr(Attribute::makeInts(to, dirs));
  }
  for (size_t i = node.numResults(); i-- > 0;) { // each goes right after the Scan
    Value *r = node.result(i);
    if (!r)
      continue;
    std::optional<Type> inner = batchType(r, drop);
    Node *w = createAxesOp(node, ctx, drop ? "Unsqueeze" : "Squeeze", r, {0}, r->name() + "_tmp");
    wrapResult(node, i, w, ctx, std::move(inner), drop ? "unbatched" : "batched");
  }
}

std::string batchAxis9(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (node.numOperands() > 0 && node.operand(0))
      return "its sequence_lens input ('" + node.operand(0)->name() + "') has no form in Scan-9";
    if (node.numOperands() < 2)
      return "it has no state or scan input";
    for (size_t i = 1; i < node.numOperands(); ++i) {
      std::optional<Shape> s = node.operand(i) ? knownShape(node.operand(i)) : std::nullopt;
      if (!s || s->empty() || !(*s)[0].isValue() || (*s)[0].getValue() != 1)
        return "the batch dim of its input " + std::to_string(i) +
               " is not known to be 1 (Scan-9 has no batch axis to loop over)";
    }
    rebatch(node, ctx, true);
    return "";
  }
  for (const char *a : {"scan_input_axes", "scan_output_axes", "scan_output_directions"}) {
    std::vector<int64_t> v = node.attrInts(a);
    if (std::any_of(v.begin(), v.end(), [](int64_t x) { return x != 0; }))
      return std::string(a) + " is not all 0, which Scan-8 (axis 1 of each batch element, outputs forward) cannot say";
  }
  for (size_t i = 0; i < node.numOperands(); ++i)
    if (!node.operand(i))
      return "its input " + std::to_string(i) + " is omitted";
  for (const char *a : {"scan_input_axes", "scan_output_axes", "scan_output_directions"})
    node.removeAttr(a);
  rebatch(node, ctx, false);
  return "";
}

/// Rank of `v` when known.
std::optional<int64_t> rankOf(const Value *v) {
  std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
  return s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
}

/// Scan-11 -> Scan-9: negative scan_input_axes and scan_output_axes came at
/// 11. Going down, each negative one is made non-negative with the rank of
/// the value it counts in: scan input i (operand N + i, N states), scan
/// output j (result N + j, else its body output's rank + 1); refused when
/// that rank is unknown.
std::string scanAxes11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  int64_t m = node.attrInt("num_scan_inputs", 0);
  if (m < 0 || m > static_cast<int64_t>(node.numOperands()))
    return "num_scan_inputs " + std::to_string(m) + " does not fit its " + std::to_string(node.numOperands()) +
           " inputs";
  size_t states = node.numOperands() - static_cast<size_t>(m);
  const Attribute *body = node.attr("body");
  std::vector<Value *> bodyOutputs = body && body->g ? body->g->outputs() : std::vector<Value *>{};
  for (const char *name : {"scan_input_axes", "scan_output_axes"}) {
    bool inputs = name[5] == 'i';
    std::vector<int64_t> axes = node.attrInts(name);
    if (std::none_of(axes.begin(), axes.end(), [](int64_t a) { return a < 0; }))
      continue;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] >= 0)
        continue;
      size_t k = states + i;
      std::optional<int64_t> rank = inputs ? rankOf(k < node.numOperands() ? node.operand(k) : nullptr)
                                           : rankOf(k < node.numResults() ? node.result(k) : nullptr);
      if (!rank && !inputs && k < bodyOutputs.size())
        if (std::optional<int64_t> r = rankOf(bodyOutputs[k]))
          rank = *r + 1;
      if (!rank)
        return std::string(name) + "[" + std::to_string(i) +
               "] is negative (allowed from opset 11) and the rank it counts in is unknown";
      axes[i] += *rank;
    }
    node.setAttr(Attribute::makeInts(name, axes));
  }
  return "";
}

} // namespace

void registerScan(AdapterRegistry &r) {
  r.addBoth("Scan", 9, batchAxis9);
  r.addBoth("Scan", 11, scanAxes11);
}

} // namespace opset
} // namespace onnxslim

//===- transforms/folding/FoldUtils.cpp - Turning values into constants ---===//
//
// Materializes constants per the project convention (initializers in the
// main graph, Constant nodes in subgraphs) and replaces a node's results by
// constants named like them.
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"

#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

bool constantsAreInitializers(const Graph &graph) { return graph.parentNode() == nullptr; }

Value *materializeConstant(Rewriter &rewriter, Graph &graph, Node *before, std::string_view nameBase,
                           TensorPtr tensor) {
  if (constantsAreInitializers(graph) || !before) {
    Value *v = rewriter.addInitializer(graph, nameBase, std::move(tensor));
    nameConstant(rewriter, v, v->name());
    return v;
  }
  Node *c = rewriter.createNodeBefore(before, "Constant", {}, {std::string(nameBase)});
  c->setAttr(Attribute::makeTensor("value", std::move(tensor)));
  return c->result(0);
}

void nameConstant(Rewriter &rewriter, Value *constant, const std::string &name) {
  rewriter.renameValue(constant, name);
  const TensorPtr &t = constant->initializer();
  if (constant->defKind() != Value::DefKind::Initializer || !t || (t->name == name && t->explicitFields == ExplicitFields()))
    return;
  // The serialized TensorProto name follows the value's (a copy shares the bytes).
  auto renamed = std::make_shared<Tensor>(*t);
  renamed->name = name;
  renamed->explicitFields = ExplicitFields();
  constant->setInitializer(std::move(renamed));
}

std::vector<Value *> replaceNodeWithConstants(Rewriter &rewriter, Node *node,
                                              const std::vector<TensorPtr> &tensors) {
  Graph &graph = *node->graph();
  std::vector<Value *> made(node->numResults(), nullptr);
  std::vector<std::string> names(node->numResults());
  for (size_t i = 0; i < node->numResults(); ++i) {
    Value *r = node->result(i);
    if (!r || !r->hasUses() || i >= tensors.size() || !tensors[i])
      continue;
    names[i] = r->name();
    made[i] = materializeConstant(rewriter, graph, node, r->name(), tensors[i]);
    rewriter.replaceAllUsesWith(r, made[i]);
  }
  rewriter.eraseNode(node);
  // The results are gone: their names can go to the constants.
  for (size_t i = 0; i < made.size(); ++i)
    if (made[i])
      nameConstant(rewriter, made[i], names[i]);
  return made;
}

bool constantNodeToInitializer(Rewriter &rewriter, Node *node) {
  Value *r = node->result(0);
  if (!r || node->numResults() != 1 || !node->is("Constant"))
    return false;
  Graph *main = node->graph();
  while (main->parentNode())
    main = main->parentNode()->graph();
  // A body's output must be produced in the body: that Constant stays.
  if (main != node->graph() && r->isGraphOutput())
    return false;
  TensorPtr t = constantNodeTensor(*node);
  if (!t || !t->isConsistent())
    return false;
  std::string name = r->name();
  Value *init = rewriter.addInitializer(*main, name, std::move(t));
  rewriter.replaceAllUsesWith(r, init);
  rewriter.eraseNode(node);
  nameConstant(rewriter, init, name);
  return true;
}

size_t tensorBytes(DataType dtype, int64_t numElements) {
  if (numElements <= 0)
    return 0;
  return storageSize(dtype, numElements);
}

std::optional<size_t> staticValueBytes(const Value *value) {
  if (!value || !value->type() || !value->type()->isTensor() || !value->type()->shape())
    return std::nullopt;
  std::optional<int64_t> n = staticNumElements(*value->type()->shape());
  DataType dt = value->type()->elemType();
  if (!n || elementBits(dt) == 0)
    return std::nullopt;
  return tensorBytes(dt, *n);
}

} // namespace onnxslim

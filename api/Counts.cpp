//===- api/Counts.cpp - Counts of a model -----------------------------------===//
#include "onnxslim/onnxslim.h"

namespace onnxslim {

namespace {
size_t tensorBytes(const TensorPtr &t) {
  if (!t)
    return 0;
  if (t->dtype() == DataType::String) {
    size_t n = 0;
    for (const std::string &s : t->strings())
      n += s.size();
    return n;
  }
  return t->byteSize();
}
} // namespace

ModelCounts countModel(const Model &model) {
  ModelCounts c;
  const Graph *g = model.graph();
  if (!g)
    return c;
  c.initializers = g->initializers().size() + g->sparseInitializers().size();
  for (const Value *v : g->initializers())
    c.constantBytes += tensorBytes(v->initializer());
  g->walk([&](Node *n) {
    ++c.nodes;
    ++c.opCounts[n->isDefaultDomain() ? n->opType() : n->domain() + "." + n->opType()];
    if (n->is("Constant"))
      if (const Attribute *a = n->attr("value"))
        c.constantBytes += tensorBytes(a->t);
  });
  return c;
}

} // namespace onnxslim

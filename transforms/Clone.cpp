//===- transforms/Clone.cpp - Deep copies of graphs and models ------------===//
#include "transforms/Clone.h"

#include <algorithm>

namespace onnxslim {

namespace {

void copyValueData(const Value &from, Value &to) {
  to.setType(from.type());
  to.valueInfoOrder = from.valueInfoOrder;
  to.info = from.info;
}

Value *lookup(const ValueMap &map, const Value *v, bool &ok) {
  if (!v)
    return nullptr;
  auto it = map.find(v);
  if (it == map.end()) {
    ok = false;
    return nullptr;
  }
  return it->second;
}

void reserveNames(const Graph &g, NameTable &names) {
  for (const Value *v : g.inputs())
    names.reserve(v->name());
  for (const Value *v : g.initializers())
    names.reserve(v->name());
  for (const Value *v : g.sparseInitializers())
    names.reserve(v->name());
  for (const Node *n : g.nodes()) {
    for (const Value *r : n->results())
      if (r)
        names.reserve(r->name());
    for (const Graph *sg : n->subgraphs())
      reserveNames(*sg, names);
  }
}

} // namespace

bool cloneAttribute(const Attribute &a, Attribute &out, ValueMap &map) {
  out.name = a.name;
  out.kind = a.kind;
  out.refAttrName = a.refAttrName;
  out.docString = a.docString;
  out.f = a.f;
  out.i = a.i;
  out.s = a.s;
  out.t = a.t;
  out.sparseTensor = a.sparseTensor;
  out.tp = a.tp;
  out.floats = a.floats;
  out.ints = a.ints;
  out.strings = a.strings;
  out.tensors = a.tensors;
  out.sparseTensors = a.sparseTensors;
  out.typeProtos = a.typeProtos;
  out.explicitFields = a.explicitFields;
  out.hasKind = a.hasKind;
  if (a.g) {
    out.g = cloneGraph(*a.g, map);
    if (!out.g)
      return false;
  }
  for (const auto &g : a.graphs) {
    if (!g) {
      out.graphs.emplace_back();
      continue;
    }
    out.graphs.push_back(cloneGraph(*g, map));
    if (!out.graphs.back())
      return false;
  }
  return true;
}

std::unique_ptr<Graph> cloneGraph(const Graph &graph, ValueMap &map) {
  auto copy = std::make_unique<Graph>();
  Graph &g = *copy;
  g.name = graph.name;
  g.docString = graph.docString;
  g.metadataProps = graph.metadataProps;
  g.quantizationAnnotations = graph.quantizationAnnotations;
  g.orphanValueInfos = graph.orphanValueInfos;
  g.explicitFields = graph.explicitFields;
  uint32_t maxOrder = 0;
  bool anyOrder = false;
  auto noteOrder = [&](const Value &v) {
    if (v.valueInfoOrder != Value::kNoValueInfo) {
      maxOrder = std::max(maxOrder, v.valueInfoOrder);
      anyOrder = true;
    }
  };

  for (const Value *in : graph.inputs()) {
    Value *v = g.addInput(in->name(), in->type());
    copyValueData(*in, *v);
    noteOrder(*in);
    map[in] = v;
  }
  for (const Value *init : graph.initializers()) {
    if (init->isGraphInput()) {
      g.addInitializerToInput(map.at(init), init->initializer());
      continue;
    }
    Value *v = g.addInitializer(init->name(), init->initializer());
    copyValueData(*init, *v);
    noteOrder(*init);
    map[init] = v;
  }
  for (const Value *sp : graph.sparseInitializers()) {
    if (map.count(sp))
      continue;
    Value *v = g.addSparseInitializer(sp->name(), sp->sparseInitializer());
    copyValueData(*sp, *v);
    noteOrder(*sp);
    map[sp] = v;
  }

  bool ok = true;
  for (const Node *n : graph.nodes()) {
    std::vector<Value *> operands;
    operands.reserve(n->numOperands());
    for (const Value *v : n->operands())
      operands.push_back(lookup(map, v, ok));
    if (!ok)
      return nullptr;
    std::vector<std::string> names;
    for (const Value *r : n->results())
      names.push_back(r ? r->name() : std::string());
    Node *c = g.createNode(n->opType(), operands, names, n->domain());
    // Link first: subgraph copies look up enclosing values through the map.
    g.append(c);
    c->setName(n->name());
    c->docString = n->docString;
    c->overload = n->overload;
    c->metadataProps = n->metadataProps;
    c->deviceConfigurations = n->deviceConfigurations;
    c->explicitFields = n->explicitFields;
    for (const Attribute &a : n->attributes()) {
      Attribute attr;
      if (!cloneAttribute(a, attr, map))
        return nullptr;
      c->setAttr(std::move(attr));
    }
    for (size_t i = 0; i < n->numResults(); ++i)
      if (const Value *r = n->result(i)) {
        copyValueData(*r, *c->result(i));
        noteOrder(*r);
        map[r] = c->result(i);
      }
  }

  for (size_t i = 0; i < graph.numOutputs(); ++i) {
    const GraphOutput &o = graph.outputSlots()[i];
    Value *v = lookup(map, o.use.get(), ok);
    if (!ok)
      return nullptr;
    g.addOutput(v, o.type);
    g.outputSlot(i).info = o.info;
  }
  for (const OrphanValueInfo &o : graph.orphanValueInfos) {
    maxOrder = std::max(maxOrder, o.order);
    anyOrder = true;
  }
  if (anyOrder)
    g.noteValueInfoOrder(maxOrder);
  return copy;
}

std::unique_ptr<Graph> cloneGraph(const Graph &graph) {
  ValueMap map;
  return cloneGraph(graph, map);
}

std::unique_ptr<Model> cloneModel(const Model &model) {
  auto m = std::make_unique<Model>();
  m->irVersion = model.irVersion;
  m->producerName = model.producerName;
  m->producerVersion = model.producerVersion;
  m->domain = model.domain;
  m->modelVersion = model.modelVersion;
  m->docString = model.docString;
  m->opsetImport = model.opsetImport;
  m->metadataProps = model.metadataProps;
  m->trainingInfo = model.trainingInfo;
  m->configuration = model.configuration;
  m->explicitFields = model.explicitFields;
  for (const auto &f : model.functions) {
    auto c = std::make_unique<Function>();
    c->name = f->name;
    c->domain = f->domain;
    c->overload = f->overload;
    c->docString = f->docString;
    c->attributeNames = f->attributeNames;
    c->opsetImport = f->opsetImport;
    c->metadataProps = f->metadataProps;
    c->explicitFields = f->explicitFields;
    ValueMap map;
    for (const Attribute &a : f->attributeProtos) {
      Attribute attr;
      if (!cloneAttribute(a, attr, map))
        return nullptr;
      c->attributeProtos.push_back(std::move(attr));
    }
    if (f->body) {
      c->body = cloneGraph(*f->body, map);
      if (!c->body)
        return nullptr;
    }
    m->functions.push_back(std::move(c));
  }
  if (model.graph()) {
    std::unique_ptr<Graph> g = cloneGraph(*model.graph());
    if (!g)
      return nullptr;
    m->setGraph(std::move(g));
    // The graph was built free-standing: reserve its names in the new table.
    reserveNames(*m->graph(), m->names());
  }
  return m;
}

} // namespace onnxslim

namespace onnxslim {

void moveModelContents(Model &dst, Model &src) {
  dst.irVersion = src.irVersion;
  dst.producerName = std::move(src.producerName);
  dst.producerVersion = std::move(src.producerVersion);
  dst.domain = std::move(src.domain);
  dst.modelVersion = src.modelVersion;
  dst.docString = std::move(src.docString);
  dst.opsetImport = std::move(src.opsetImport);
  dst.metadataProps = std::move(src.metadataProps);
  dst.functions = std::move(src.functions);
  dst.trainingInfo = std::move(src.trainingInfo);
  dst.configuration = std::move(src.configuration);
  dst.explicitFields = std::move(src.explicitFields);
  dst.names() = src.names();
  dst.setGraph(src.releaseGraph());
}

} // namespace onnxslim

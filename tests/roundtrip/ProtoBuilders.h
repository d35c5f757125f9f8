//===- tests/roundtrip/ProtoBuilders.h - Build small ONNX protos in tests -*- C++ -*-===//
#pragma once

#include "schema/onnx.pb.h"

#include <cstring>
#include <string>
#include <vector>

namespace onnxslim::testing {

/// A model with ir_version 8, the default opset 17 and an empty graph named `g`.
inline onnx::ModelProto baseModel(const std::string &graphName = "g") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("onnxslim-tests");
  auto *op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  m.mutable_graph()->set_name(graphName);
  return m;
}

inline onnx::ValueInfoProto *addValueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *list,
                                          const std::string &name, int elem = 1,
                                          std::vector<int64_t> dims = {2}) {
  auto *vi = list->Add();
  vi->set_name(name);
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto *shape = tt->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
  return vi;
}

inline onnx::ValueInfoProto *addInput(onnx::GraphProto &g, const std::string &name, int elem = 1,
                                      std::vector<int64_t> dims = {2}) {
  return addValueInfo(g.mutable_input(), name, elem, std::move(dims));
}

inline onnx::ValueInfoProto *addOutput(onnx::GraphProto &g, const std::string &name, int elem = 1,
                                       std::vector<int64_t> dims = {2}) {
  return addValueInfo(g.mutable_output(), name, elem, std::move(dims));
}

inline onnx::NodeProto *addNode(onnx::GraphProto &g, const std::string &op,
                                std::vector<std::string> inputs, std::vector<std::string> outputs,
                                const std::string &name = "") {
  auto *n = g.add_node();
  n->set_op_type(op);
  if (!name.empty())
    n->set_name(name);
  for (auto &i : inputs)
    n->add_input(i);
  for (auto &o : outputs)
    n->add_output(o);
  return n;
}

/// A float initializer stored in raw_data.
inline onnx::TensorProto *addRawInitializer(onnx::GraphProto &g, const std::string &name,
                                            const std::vector<float> &values) {
  auto *t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  std::string raw(values.size() * sizeof(float), '\0');
  if (!values.empty())
    std::memcpy(raw.data(), values.data(), raw.size());
  t->set_raw_data(raw);
  return t;
}

/// A small valid model: y = Add(x, w) with a raw initializer w of `n` floats.
inline onnx::ModelProto addModel(size_t n = 2) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x", 1, {static_cast<int64_t>(n)});
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i)
    w[i] = static_cast<float>(i) * 0.5f;
  addRawInitializer(g, "w", w);
  addNode(g, "Add", {"x", "w"}, {"y"}, "add0");
  addOutput(g, "y", 1, {static_cast<int64_t>(n)});
  return m;
}

} // namespace onnxslim::testing

//===- ir/DataValue.h - A value stored in a data file ----------*- C++ -*-===//
//
// What one ONNX data file (.pb) holds: a tensor (TensorProto), a sequence of
// tensors (SequenceProto) or an optional (OptionalProto: empty, or holding a
// tensor or a sequence of tensors). These are the values a model's inputs
// and outputs take; the conformance suite stores them as input_N.pb /
// output_N.pb, `onnxslim run` reads and writes them. frontend/DataFile reads
// them, backend/Writer writes them; the runtime converts them to its own
// values (runtime/Inputs.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Tensor.h"
#include "Type.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxslim {

struct DataValue {
  enum class Kind : uint8_t { Tensor, Sequence, Optional };
  Kind kind = Kind::Tensor;
  /// The file's name field (TensorProto.name, SequenceProto.name, OptionalProto.name).
  std::string name;
  TensorPtr tensor;                          ///< Kind::Tensor
  std::vector<TensorPtr> sequence;           ///< Kind::Sequence
  std::shared_ptr<const DataValue> optional; ///< Kind::Optional: the held value, or null (empty)
  /// Kind::Optional when empty: the type it was declared to hold, if known
  /// (written as OptionalProto.elem_type).
  std::optional<Type> emptyOf;

  static DataValue ofTensor(TensorPtr t, std::string name = {}) {
    DataValue v;
    v.kind = Kind::Tensor;
    v.tensor = std::move(t);
    v.name = std::move(name);
    return v;
  }
  static DataValue ofSequence(std::vector<TensorPtr> items, std::string name = {}) {
    DataValue v;
    v.kind = Kind::Sequence;
    v.sequence = std::move(items);
    v.name = std::move(name);
    return v;
  }
  /// An optional holding `held` (null: empty).
  static DataValue ofOptional(std::shared_ptr<const DataValue> held, std::string name = {}) {
    DataValue v;
    v.kind = Kind::Optional;
    v.optional = std::move(held);
    v.name = std::move(name);
    return v;
  }
};

/// The protobuf message that stores a value of this kind ("TensorProto"...).
inline const char *dataMessageName(DataValue::Kind k) {
  switch (k) {
  case DataValue::Kind::Tensor: return "TensorProto";
  case DataValue::Kind::Sequence: return "SequenceProto";
  case DataValue::Kind::Optional: return "OptionalProto";
  }
  return "?";
}

} // namespace onnxslim

//===- frontend/DataFile.h - Read ONNX data files (.pb) --------*- C++ -*-===//
//
// Reads the values a model takes and gives: a serialized TensorProto,
// SequenceProto (of tensors) or OptionalProto (empty, or holding a tensor or
// a sequence of tensors), as the ONNX conformance suite stores them
// (input_N.pb, output_N.pb) and `onnxslim run` reads and writes them. The
// three messages share field numbers and carry no type tag, so the caller
// says which kind it expects (the graph's declared type does), or lets the
// reader try TensorProto, SequenceProto, then OptionalProto.
//
// Parsing is strict: a field the message does not have, a wire type it does
// not use for a field, a truncated record, a tensor without a data type,
// with data that does not fit its type and dims, or a segment is an error, one line naming the file; when the bytes
// parse as another of the three kinds, the message says so. Tensor payloads
// (raw_data) are views into the mapped file, never copied.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/DataValue.h"
#include "ir/IR.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace onnxslim {

/// Given bytes kept alive by `keepAlive` and the kind they must hold,
/// Execute: parses them strictly (see above; external data is resolved
/// against `baseDir`), Result: true and `out`, or false with `error`
/// starting with `displayName`.
bool loadDataFromBytes(const uint8_t *data, size_t size, std::shared_ptr<const void> keepAlive,
                       const std::string &displayName, const std::string &baseDir, DataValue::Kind kind,
                       DataValue &out, std::string &error);

/// Given a path and the kind the file must hold, Execute: maps and parses it.
bool loadDataFile(const std::string &path, DataValue::Kind kind, DataValue &out, std::string &error);

/// Given a path, Execute: parses the file as the first of TensorProto,
/// SequenceProto, OptionalProto that it is, Result: the value (its kind
/// says which), or false with the TensorProto reading's error. Some bytes
/// are two kinds at once (an OptionalProto holding one tensor is also a
/// SequenceProto of one; an empty OptionalProto of elem_type TENSOR is also
/// an empty SequenceProto): the first wins, so read by the declared type
/// when there is one.
bool loadDataFileAnyKind(const std::string &path, DataValue &out, std::string &error);

/// Given a value's declared type (none: unknown), Result: the kind of data
/// file that stores it (unknown and tensor types: Tensor), or nullopt for
/// types no data file of these three kinds holds (maps, sparse tensors,
/// sequences of non-tensors).
std::optional<DataValue::Kind> dataKindOf(const std::optional<Type> &type);

/// Given a graph, a data file and the name of the graph input it feeds
/// (empty: the input named by the file's own name field), Execute: reads the
/// file as the kind that input's type declares. Tensors declared bfloat16
/// but stored with data_type UINT16 (ONNX's test data before 1.13 wrote
/// bfloat16 so; the bytes are the same) are relabelled bfloat16.
/// Result: the input's position in graph.inputs() and its value, or false
/// with `error` naming the file (and the input, when the file does not fit it).
bool loadInputFile(const Graph &graph, const std::string &name, const std::string &path, size_t &index,
                   DataValue &out, std::string &error);

/// Given a value read for a place declared `type`, Execute: relabels its
/// UINT16 tensors as bfloat16 where `type` declares bfloat16 (see above).
void relabelStoredBFloat16(DataValue &value, const std::optional<Type> &type);

} // namespace onnxslim

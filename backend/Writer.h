//===- backend/Writer.h - Write the IR as ONNX protobuf files --*- C++ -*-===//
//
// The entry points of the backend. A model is written as a stream
// (backend/Emitter): protobuf encodes everything but tensor payloads, and
// every raw tensor — initializer or Constant, in the main graph or a
// subgraph — is written straight from its IR buffer (the mapped input,
// external data, owned bytes): no giant message, no copy of the weights.
// Files are replaced atomically: a temporary file in the target directory,
// fsync, rename. Only regular files (or new names) are replaced; a symbolic
// link is followed to the file it names, /dev/null is written through, and
// a directory, device, FIFO or socket is refused (backend/AtomicFile.h).
//
// A model loaded by frontend/Loader and saved with no change comes back equal
// field by field (MessageDifferencer::Equals) to the file that was read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/DataValue.h"
#include "ir/IR.h"
#include "ir/Tensor.h"

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace onnxslim {

struct SaveOptions {
  /// Write tensors of at least `externalThreshold` bytes to one external-data
  /// file beside the output. Tensors loaded from external data stay external
  /// whatever this says.
  bool externalData = false;
  /// File name of the external data, relative to the output's directory;
  /// empty: `<output file name>.data` (out.onnx → out.onnx.data).
  std::string externalDataFile;
  size_t externalThreshold = 1024;
  /// When the model would pass protobuf's 2 GB limit, write external data
  /// anyway (with a note to `onNote`) instead of failing.
  bool autoExternalOver2GB = true;
  /// Copy unchanged external tensors from their mapped file with
  /// copy_file_range (where the kernel refuses it, read/write in chunks);
  /// false: always read/write in chunks (tests, or file systems where the
  /// kernel copy misbehaves). The bytes written are the same either way.
  bool copyFileRange = true;
  /// Receives notes for the user (the library prints nothing itself).
  std::function<void(const std::string &)> onNote;
};

/// Given a model and a path, Execute: writes the model (and its external
/// data, if any) atomically, Result: false with `error` naming the path and
/// the cause on failure (no partial file is left).
bool saveModel(const Model &model, const std::string &path, std::string &error,
               const SaveOptions &opts = {});

/// Given a model, Execute: serializes it in memory (all tensors inline; a
/// tensor loaded from external data is written inline too), Result: the
/// ModelProto bytes, or an empty string with `error` set.
std::string serializeModel(const Model &model, std::string &error);
/// Like above; on error returns an empty string.
std::string serializeModel(const Model &model);

/// Given a tensor and a path, Execute: writes it as a standalone serialized
/// TensorProto (the conformance suite's .pb format), atomically.
bool saveTensorFile(const Tensor &tensor, const std::string &path, std::string &error);

/// Given a value, Execute: serializes it as the data file of its kind — a
/// TensorProto (string tensors as string_data), a SequenceProto
/// (elem_type TENSOR) or an OptionalProto (elem_type of the held value; of
/// `emptyOf` when empty) — with `value.name` as the name field,
/// Result: the bytes, or false with `error` set.
bool serializeDataValue(const DataValue &value, std::string &bytes, std::string &error);

/// Given a value and a path, Execute: writes serializeDataValue's bytes
/// atomically, Result: false with `error` naming the path on failure.
bool saveDataFile(const DataValue &value, const std::string &path, std::string &error);

/// Given the names of the values written to one directory, in order,
/// Result: the file name of each, as `onnxslim run --output-dir` writes and
/// tools/oracle/oracle.js names its own files:
///  - every byte of the name's UTF-8 outside [A-Za-z0-9._-] becomes '_',
///    then ".pb" (logits:0 -> logits_0.pb);
///  - where different names would share a file so, each of them that needed
///    a change gets "." and the FNV-1a 32-bit hash of its bytes (8 lowercase
///    hex digits) before ".pb", and the one that needed none, if any, keeps
///    NAME.pb: a_b, a/b and a:b -> a_b.pb, a_b.3a8e75c1.pb, a_b.08bd8540.pb.
///    A name's file so depends on the other names only through whether they
///    collide with it, never on their order;
///  - should a hashed name be taken as well (names made to clash), ".2",
///    ".3", ... is added before ".pb", in the order of `names`, until it is
///    free.
/// The same name given twice gets the same file.
std::vector<std::string> dataFileNames(const std::vector<std::string> &names);

/// Given a path and a writer, Execute: creates a temporary file in the target
/// directory, lets `writer` fill it through a buffered stream, fsyncs it and
/// renames it over `path`, Result: false with `error` (path + OS error, or
/// the writer's message) on failure, the temporary file removed. The old
/// file, if any, stays intact (and readable by existing mappings) until the
/// rename.
bool writeFileAtomically(const std::string &path,
                         const std::function<bool(std::ostream &, std::string &)> &writer,
                         std::string &error);

} // namespace onnxslim

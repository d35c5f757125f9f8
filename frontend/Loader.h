//===- frontend/Loader.h - Read ONNX protobuf files into the IR -*- C++ -*-===//
//
// The entry points of the protobuf frontend. A model file is memory-mapped
// and its wire format scanned directly, so the big tensor payloads
// (initializer raw_data, external-data files) become views into the mapping
// and are never copied; the remaining fields are parsed by protobuf and
// lowered into the IR (frontend/ProtoImporter). Loading keeps everything the
// IR needs to write the model back field-for-field equal (see backend/Writer).
//
// Errors are one line naming the file and, where known, the tensor, node,
// op type and subgraph path; a malformed file never crashes the loader.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace onnxslim {

struct LoadOptions {
  /// Map the files named by external_data entries and view the tensors in
  /// them. When false, such tensors keep their external_data entries but have
  /// no bytes (the model can be inspected but not saved or run).
  bool loadExternalData = true;
};

/// Given a path, Execute: maps and parses the model (and its external data),
/// Result: the model, or null with `error` set to a one-line message.
std::unique_ptr<Model> loadModel(const std::string &path, std::string &error,
                                 const LoadOptions &opts = {});

/// Given a mapped file, Execute: parses it as a model; tensor payloads are
/// views into the mapping (Buffer::isMapped()). `displayName` prefixes
/// errors; external data is resolved against `baseDir`.
std::unique_ptr<Model> loadModelFromBytes(std::shared_ptr<MappedFile> file,
                                          const std::string &displayName,
                                          const std::string &baseDir, std::string &error,
                                          const LoadOptions &opts = {});

/// Given bytes kept alive by `keepAlive`, Execute: parses them as a model;
/// tensor payloads are views into those bytes.
std::unique_ptr<Model> loadModelFromBytes(const uint8_t *data, size_t size,
                                          std::shared_ptr<const void> keepAlive,
                                          const std::string &displayName,
                                          const std::string &baseDir, std::string &error,
                                          const LoadOptions &opts = {});

/// Given serialized bytes, Execute: takes ownership and parses them
/// (convenience for tests and in-memory pipelines).
std::unique_ptr<Model> loadModelFromString(std::string bytes, const std::string &displayName,
                                           const std::string &baseDir, std::string &error,
                                           const LoadOptions &opts = {});

/// Given the path of a standalone serialized TensorProto (the conformance
/// suite's input_N.pb / output_N.pb), Execute: maps and parses it,
/// Result: the tensor (raw_data viewed in the mapping), or null with `error`.
TensorPtr loadTensorFile(const std::string &path, std::string &error);

/// Given the bytes of a serialized TensorProto kept alive by `keepAlive`,
/// Execute: parses them (raw_data viewed in place; external data resolved
/// against `baseDir`), Result: the tensor, or null with `error` prefixed by
/// `displayName`.
TensorPtr loadTensorFromBytes(const uint8_t *data, size_t size, std::shared_ptr<const void> keepAlive,
                              const std::string &displayName, const std::string &baseDir,
                              std::string &error);

} // namespace onnxslim

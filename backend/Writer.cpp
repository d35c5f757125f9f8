//===- backend/Writer.cpp - Write the IR as ONNX protobuf files -----------===//
//
// Streaming writer. backend/Emitter turns the model into pieces: protobuf
// bytes for everything but tensor payloads, and references to the payloads
// themselves (the mapped input file, external data, owned buffers), so the
// weights are written straight from the IR buffers and never copied into a
// message. All sizes are known before the first byte is written, which also
// tells whether the model passes protobuf's 2 GB limit. Files are written to
// a temporary file, fsynced and renamed (backend/AtomicFile).
//
// External data that comes unchanged from a mapped file is streamed file to
// file (copy_file_range, falling back to read/write in chunks), so saving a
// model of many GB keeps its weights out of this process's resident set;
// other mapped bytes are released from it as soon as they are written. The
// input files are only read.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"

#include "backend/AtomicFile.h"
#include "backend/Emitter.h"
#include "backend/ProtoExporter.h"
#include "schema/onnx.pb.h"

#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

namespace onnxslim {

using backend::AtomicFile;
using backend::baseOf;
using backend::dirOf;
using backend::WriteTarget;
using backend::Emitter;
using backend::Pieces;
using backend::ExportOptions;
using backend::ExternalSink;
using backend::ProtoExporter;

namespace {

/// Protobuf refuses messages of 2 GB and more.
constexpr uint64_t kProtobufLimit = INT_MAX;

/// Given a model and export options, Execute: serializes it into pieces
/// (registering external tensors with the sink), Result: false with `error`.
bool buildPieces(const Model &m, const ExportOptions &eo, Pieces &out, std::string &error) {
  Emitter emitter(eo);
  if (!emitter.model(m, out)) {
    error = emitter.error();
    return false;
  }
  return true;
}

bool validLocation(const std::string &loc) {
  if (loc.empty() || loc.front() == '/')
    return false;
  for (size_t start = 0; start <= loc.size();) {
    size_t slash = loc.find('/', start);
    if (slash == std::string::npos)
      slash = loc.size();
    std::string part = loc.substr(start, slash - start);
    if (part == ".." || part.empty() || part == ".")
      return false;
    start = slash + 1;
  }
  return true;
}

/// Chunks this large that view a mapped file are copied file to file.
constexpr size_t kCopyFrom = 64 * 1024;

/// Given the external tensors and the open data file, Execute: writes each
/// at its offset (zeros in between). A tensor of kCopyFrom bytes or more
/// that views a mapped file (external data, the input model) is copied from
/// that file by copyRange, so its pages are never mapped into this process;
/// any other mapped tensor is written from the mapping and its pages are
/// released right after (Buffer::releasePages). Result: false with `error`.
bool writeExternalData(const ExternalSink &sink, AtomicFile &file, backend::CopyMethod method,
                       std::string &error) {
  std::ostream &os = file.stream();
  static const char zeros[4096] = {};
  uint64_t pos = 0;
  for (const ExternalSink::Chunk &c : sink.chunks()) {
    while (pos < c.offset) {
      auto n = static_cast<std::streamsize>(std::min<uint64_t>(sizeof zeros, c.offset - pos));
      os.write(zeros, n);
      pos += static_cast<uint64_t>(n);
    }
    const MappedFile *from = c.bytes.mappedFile();
    if (from && from->fd() >= 0 && c.bytes.size() >= kCopyFrom) {
      if (!file.flush(error))
        return false;
      uint64_t at = static_cast<uint64_t>(c.bytes.data() - from->data());
      std::string err;
      if (!backend::copyRange(from->fd(), at, c.bytes.size(), file.fd(), method, err)) {
        error = "cannot copy " + std::to_string(c.bytes.size()) + " bytes at offset " + std::to_string(at) +
                " of '" + from->path() + "' into the external data file: " + err;
        return false;
      }
    } else {
      os.write(reinterpret_cast<const char *>(c.bytes.data()), static_cast<std::streamsize>(c.bytes.size()));
      c.bytes.releasePages();
    }
    pos += c.bytes.size();
  }
  return true;
}

} // namespace

bool writeFileAtomically(const std::string &path,
                         const std::function<bool(std::ostream &, std::string &)> &writer,
                         std::string &error) {
  AtomicFile file;
  if (!file.open(path, error))
    return false;
  std::string err;
  if (!writer(file.stream(), err)) {
    error = err.empty() ? "cannot write '" + path + "'" : err;
    file.discard();
    return false;
  }
  return file.finish(error) && file.commit(error);
}

bool saveModel(const Model &model, const std::string &path, std::string &error,
               const SaveOptions &opts) {
  std::string location = opts.externalDataFile.empty() ? baseOf(path) + ".data" : opts.externalDataFile;
  if (!validLocation(location) || location == baseOf(path)) {
    error = path + ": external data file name '" + location +
            "' must be a relative path inside the output's directory, not the model itself";
    return false;
  }
  ExternalSink sink(location);
  ExportOptions eo;
  eo.external = &sink;
  eo.externalizeLarge = opts.externalData;
  eo.threshold = opts.externalThreshold;
  Pieces pieces;
  if (!buildPieces(model, eo, pieces, error)) {
    error = path + ": " + error;
    return false;
  }
  if (pieces.size() > kProtobufLimit && !opts.externalData && opts.autoExternalOver2GB) {
    if (opts.onNote)
      opts.onNote(path + " would be " + std::to_string(pieces.size()) +
                  " bytes, over protobuf's 2 GB limit; writing tensors of " +
                  std::to_string(opts.externalThreshold) + " bytes or more to the external data file '" +
                  location + "'");
    sink = ExternalSink(location);
    eo.externalizeLarge = true;
    pieces = Pieces();
    if (!buildPieces(model, eo, pieces, error)) {
      error = path + ": " + error;
      return false;
    }
  }
  if (pieces.size() > kProtobufLimit) {
    error = path + ": the model would be " + std::to_string(pieces.size()) +
            " bytes, over protobuf's 2 GB limit" +
            (opts.externalData ? std::string(" even with external data")
                               : std::string("; save it with external data"));
    return false;
  }

  AtomicFile dataFile, modelFile;
  if (!modelFile.open(path, error))
    return false;
  if (!sink.chunks().empty()) {
    // The data file is found relative to the path the model is read by (as
    // ONNX readers resolve it); a model written to /dev/null takes its data
    // there too instead of leaving a file in /dev.
    std::string dataPath = modelFile.target().kind == WriteTarget::Kind::DevNull
                               ? modelFile.target().path
                               : dirOf(path) + "/" + location;
    if (!dataFile.open(dataPath, error))
      return false;
    // finish() reports any error of the buffered writes.
    if (!writeExternalData(sink, dataFile, opts.copyFileRange ? backend::CopyMethod::Auto : backend::CopyMethod::ReadWrite,
                           error))
      return false;
    if (!dataFile.finish(error))
      return false;
  }
  std::ostream &os = modelFile.stream();
  pieces.emit([&](const char *p, size_t n) { os.write(p, static_cast<std::streamsize>(n)); });
  if (!modelFile.finish(error))
    return false;
  if (!sink.chunks().empty() && !dataFile.commit(error))
    return false;
  return modelFile.commit(error);
}

std::string serializeModel(const Model &model, std::string &error) {
  ExportOptions eo; // no external sink: every tensor inline
  Pieces pieces;
  if (!buildPieces(model, eo, pieces, error))
    return {};
  if (pieces.size() > kProtobufLimit) {
    error = "the model would be " + std::to_string(pieces.size()) +
            " bytes, over protobuf's 2 GB limit; save it to a file with external data";
    return {};
  }
  std::string out;
  out.reserve(pieces.size());
  pieces.emit([&](const char *p, size_t n) { out.append(p, n); });
  return out;
}

std::string serializeModel(const Model &model) {
  std::string error;
  return serializeModel(model, error);
}

bool saveTensorFile(const Tensor &tensor, const std::string &path, std::string &error) {
  ExportOptions eo;
  ProtoExporter ex(eo);
  onnx::TensorProto tp;
  if (!ex.exportTensor(tensor, tp, nullptr, false, false)) {
    error = path + ": " + ex.error();
    return false;
  }
  return writeFileAtomically(
      path,
      [&](std::ostream &os, std::string &err) {
        if (!tp.SerializeToOstream(&os)) {
          err = "cannot write '" + path + "': serialization failed";
          return false;
        }
        return true;
      },
      error);
}

namespace {

// Field numbers of onnx-data.proto (SequenceProto, OptionalProto) and the
// values of their DataType enums.
constexpr uint32_t kNameField = 1, kElemTypeField = 2, kTensorField = 3, kSequenceField = 5;
constexpr uint64_t kElemTensor = 1, kElemSequence = 3;

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void putVarintField(std::string &out, uint32_t number, uint64_t v) {
  putVarint(out, uint64_t{number} << 3);
  putVarint(out, v);
}

void putLenField(std::string &out, uint32_t number, const std::string &payload) {
  putVarint(out, (uint64_t{number} << 3) | 2);
  putVarint(out, payload.size());
  out += payload;
}

bool serializeTensor(const Tensor &t, const std::string &name, std::string &bytes, std::string &error) {
  ExportOptions eo;
  ProtoExporter ex(eo);
  onnx::TensorProto tp;
  if (!ex.exportTensor(t, tp, &name, false, false)) {
    error = ex.error();
    return false;
  }
  if (name.empty())
    tp.clear_name();
  if (tp.ByteSizeLong() > kProtobufLimit) {
    error = "the tensor would be over protobuf's 2 GB limit";
    return false;
  }
  bytes = tp.SerializeAsString();
  return true;
}

bool serializeSequence(const std::vector<TensorPtr> &items, const std::string &name, std::string &bytes,
                       std::string &error) {
  bytes.clear();
  if (!name.empty())
    putLenField(bytes, kNameField, name);
  putVarintField(bytes, kElemTypeField, kElemTensor);
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item;
    if (!items[i]) {
      error = "sequence element #" + std::to_string(i) + " has no tensor";
      return false;
    }
    if (!serializeTensor(*items[i], "", item, error)) {
      error = "sequence element #" + std::to_string(i) + ": " + error;
      return false;
    }
    putLenField(bytes, kTensorField, item);
  }
  return true;
}

} // namespace

bool serializeDataValue(const DataValue &value, std::string &bytes, std::string &error) {
  switch (value.kind) {
  case DataValue::Kind::Tensor:
    if (!value.tensor) {
      error = "no tensor to write";
      return false;
    }
    return serializeTensor(*value.tensor, value.name, bytes, error);
  case DataValue::Kind::Sequence:
    return serializeSequence(value.sequence, value.name, bytes, error);
  case DataValue::Kind::Optional: {
    bytes.clear();
    if (!value.name.empty())
      putLenField(bytes, kNameField, value.name);
    const DataValue *held = value.optional.get();
    if (!held) {
      uint64_t elem = 0; // UNDEFINED
      if (value.emptyOf && value.emptyOf->kind() == Type::Kind::Tensor)
        elem = kElemTensor;
      else if (value.emptyOf && value.emptyOf->kind() == Type::Kind::Sequence)
        elem = kElemSequence;
      putVarintField(bytes, kElemTypeField, elem);
      return true;
    }
    std::string inner;
    if (held->kind == DataValue::Kind::Tensor && held->tensor) {
      if (!serializeTensor(*held->tensor, "", inner, error))
        return false;
      putVarintField(bytes, kElemTypeField, kElemTensor);
      putLenField(bytes, kTensorField, inner);
      return true;
    }
    if (held->kind == DataValue::Kind::Sequence) {
      if (!serializeSequence(held->sequence, "", inner, error))
        return false;
      putVarintField(bytes, kElemTypeField, kElemSequence);
      putLenField(bytes, kSequenceField, inner);
      return true;
    }
    error = "an optional can hold a tensor or a sequence, not an optional";
    return false;
  }
  }
  error = "unknown value kind";
  return false;
}

bool saveDataFile(const DataValue &value, const std::string &path, std::string &error) {
  std::string bytes;
  if (!serializeDataValue(value, bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeFileAtomically(
      path,
      [&](std::ostream &os, std::string &) {
        os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return true;
      },
      error);
}

namespace {

/// The name with every byte outside [A-Za-z0-9._-] replaced by '_'.
std::string fileNameStem(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      c = '_';
  return out;
}

/// FNV-1a, 32 bits, over the bytes of `s` (the oracle's fnv1a32).
uint32_t fnv1a32(const std::string &s) {
  uint32_t h = 0x811c9dc5u;
  for (unsigned char b : s) {
    h ^= b;
    h *= 0x01000193u;
  }
  return h;
}

} // namespace

std::vector<std::string> dataFileNames(const std::vector<std::string> &names) {
  // The distinct names that would share each stem.
  std::map<std::string, std::set<std::string>> byStem;
  for (const std::string &n : names)
    byStem[fileNameStem(n)].insert(n);
  std::map<std::string, std::string> fileOf;
  std::set<std::string> taken;
  // First the plain files: names that need no change, and names alone on
  // their stem (these cannot clash with each other).
  std::vector<const std::string *> hashed;
  for (const std::string &n : names) {
    if (fileOf.count(n))
      continue;
    std::string stem = fileNameStem(n);
    if (stem == n || byStem[stem].size() == 1) {
      fileOf[n] = stem + ".pb";
      taken.insert(stem + ".pb");
    } else {
      fileOf[n] = "";
      hashed.push_back(&n);
    }
  }
  for (const std::string *n : hashed) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(fnv1a32(*n)));
    std::string stem = fileNameStem(*n) + "." + hex;
    std::string file = stem + ".pb";
    for (int k = 2; taken.count(file); ++k)
      file = stem + "." + std::to_string(k) + ".pb";
    fileOf[*n] = file;
    taken.insert(file);
  }
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const std::string &n : names)
    out.push_back(fileOf[n]);
  return out;
}

} // namespace onnxslim

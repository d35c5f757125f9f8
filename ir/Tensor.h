//===- ir/Tensor.h - Immutable, shared tensor data -------------*- C++ -*-===//
//
// A Tensor is an immutable constant: element type, dims and bytes. The bytes
// are a Buffer: either owned, or a view into a memory-mapped file (the input
// model or an external-data file) that stays mapped while any view lives.
// Tensors are shared by std::shared_ptr<const Tensor>; a pass that folds a
// constant makes a new Tensor and never copies weights it does not change.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "DataType.h"
#include "Support.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace onnxslim {

class MappedFile;

/// A read-only byte range kept alive by `owner` (a mapping or an owned block).
class Buffer {
public:
  Buffer() = default;
  Buffer(const uint8_t *data, size_t size, std::shared_ptr<const void> owner)
      : data_(data), size_(size), owner_(std::move(owner)) {}

  /// Given bytes, Execute: moves them into a new heap block, Result: a buffer owning them.
  static Buffer fromString(std::string bytes);
  /// Given a range, Execute: copies it, Result: a buffer owning the copy.
  static Buffer copyOf(const void *data, size_t size);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  /// True when the bytes are a view into a mapped file rather than owned memory.
  bool isMapped() const { return mapped_; }
  /// The mapped file these bytes view (kept alive by the buffer), or null:
  /// owned bytes, or a mapping whose loader did not say which file.
  /// data() - file->data() is then the bytes' offset in the file.
  const MappedFile *mappedFile() const { return file_; }
  void markMapped(const MappedFile *file = nullptr) {
    mapped_ = true;
    file_ = file;
  }
  /// Given a mapped buffer, Execute: drops this process's page-table entries
  /// for the pages it spans (madvise MADV_DONTNEED), so bytes read once stop
  /// counting in the resident set; the next access faults them back in from
  /// the file (the mapping is read-only, so nothing is lost), Result: none.
  /// No effect on owned buffers.
  void releasePages() const;
  /// True when this buffer owns heap bytes that no other Buffer shares (a
  /// runtime may then reuse them for a result once the tensor dies).
  bool soleOwner() const { return !mapped_ && owner_ && owner_.use_count() == 1; }

private:
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;
  const MappedFile *file_ = nullptr;
  bool mapped_ = false;
};

/// A read-only memory mapping of a whole file. Views into it share ownership.
class MappedFile {
public:
  /// Maps `path` read-only. On failure returns nullptr and sets `error`.
  static std::shared_ptr<MappedFile> open(const std::string &path, std::string &error);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// The file, open read-only while the mapping lives (-1 past 256 live
  /// mappings), so a writer can copy ranges without the mapping.
  int fd() const { return fd_; }
  /// A Buffer viewing [offset, offset+length) that keeps this mapping alive.
  Buffer view(const std::shared_ptr<MappedFile> &self, size_t offset, size_t length) const;

private:
  MappedFile() = default;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
  std::string path_;
};

/// How a tensor's data was (or should be) serialized.
enum class TensorEncoding : uint8_t {
  Raw,      ///< raw_data bytes
  Typed,    ///< the typed repeated field (float_data, int32_data, int64_data, ...)
  External, ///< external_data (location/offset/length in another file)
};

class Tensor {
public:
  Tensor() = default;
  Tensor(DataType dtype, std::vector<int64_t> dims, Buffer data)
      : dtype_(dtype), dims_(std::move(dims)), data_(std::move(data)) {}
  Tensor(const Tensor &o);
  Tensor &operator=(const Tensor &) = delete;

  /// Given a dtype, dims and host values, Execute: copies them, Result: a new tensor.
  template <typename T>
  static std::shared_ptr<Tensor> fromValues(DataType dtype, std::vector<int64_t> dims,
                                            const std::vector<T> &values) {
    return std::make_shared<Tensor>(dtype, std::move(dims),
                                    Buffer::copyOf(values.data(), values.size() * sizeof(T)));
  }
  static std::shared_ptr<Tensor> fromStrings(std::vector<int64_t> dims,
                                             std::vector<std::string> strings);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t> &dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  /// Product of dims (1 for a scalar); 0 if any dim is 0 or negative.
  int64_t numElements() const;

  /// Element bytes in little-endian layout (empty for String tensors).
  const Buffer &buffer() const { return data_; }
  const uint8_t *rawData() const { return data_.data(); }
  size_t byteSize() const { return data_.size(); }
  template <typename T> const T *dataAs() const {
    return reinterpret_cast<const T *>(data_.data());
  }
  /// Reads element i as T (unaligned-safe). Caller checks bounds and dtype.
  /// A bool element is true when its byte is not 0 (a byte other than 0/1,
  /// read as a C++ bool, would be undefined behaviour).
  template <typename T> T at(size_t i) const {
    if constexpr (std::is_same_v<T, bool>) {
      return data_.data()[i] != 0;
    } else {
      T v;
      std::memcpy(&v, data_.data() + i * sizeof(T), sizeof(T));
      return v;
    }
  }
  /// Elements of a String tensor.
  const std::vector<std::string> &strings() const { return strings_; }

  /// Whether byte size matches dtype and dims (false for a malformed model).
  bool isConsistent() const;
  /// Equal dtype, dims and element bytes (or strings); serialization details ignored.
  bool sameContent(const Tensor &o) const;

  //===--- Serialization details kept for a lossless round trip --------===//
  std::string name;
  std::string docString;
  TensorEncoding encoding = TensorEncoding::Raw;
  /// external_data key/value entries as read (location, offset, length, ...).
  StringPairs externalData;
  /// data_location field value (0 = DEFAULT, 1 = EXTERNAL).
  int32_t dataLocation = 0;
  std::optional<std::pair<int64_t, int64_t>> segment;
  StringPairs metadataProps;
  ExplicitFields explicitFields;

  /// Cached content hash (0 = not computed yet); set by whoever hashes
  /// (transforms/), so every tensor is hashed at most once.
  mutable std::atomic<uint64_t> cachedHash{0};

  // Mutation is for the frontend, which builds a tensor before sharing it.
  void setDims(std::vector<int64_t> dims) { dims_ = std::move(dims); }
  void setDataType(DataType t) { dtype_ = t; }
  void setBuffer(Buffer b) { data_ = std::move(b); }
  void setStrings(std::vector<std::string> s) { strings_ = std::move(s); }

private:
  DataType dtype_ = DataType::Undefined;
  std::vector<int64_t> dims_;
  Buffer data_;
  std::vector<std::string> strings_;
};

using TensorPtr = std::shared_ptr<const Tensor>;

/// A sparse tensor: values (1-D, NNZ), indices ([NNZ] linear or [NNZ, rank]) and dense dims.
struct SparseTensor {
  TensorPtr values;
  TensorPtr indices;
  std::vector<int64_t> dims;
  bool hasValues = true;
  bool hasIndices = true;
};

} // namespace onnxslim

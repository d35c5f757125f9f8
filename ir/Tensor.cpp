//===- ir/Tensor.cpp - Immutable, shared tensor data ----------------------===//
#include "ir/Tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace onnxslim {

Buffer Buffer::fromString(std::string bytes) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  const auto *p = reinterpret_cast<const uint8_t *>(owned->data());
  size_t n = owned->size();
  return Buffer(p, n, std::move(owned));
}

Buffer Buffer::copyOf(const void *data, size_t size) {
  return fromString(std::string(static_cast<const char *>(data), size));
}

namespace {

/// Descriptors kept open by live mappings. Past the cap a mapping closes its
/// file like before (fd() is -1; writers then read through the mapping), so
/// a model split into thousands of external files still loads within the
/// usual limit of 1024 open files.
std::atomic<int> keptFds{0};
constexpr int kMaxKeptFds = 256;

} // namespace

void Buffer::releasePages() const {
  if (!mapped_ || size_ == 0)
    return;
  // The mapping starts on a page boundary and ends on one (the kernel maps
  // whole pages), so the rounded range stays inside it.
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(data_) & ~(page - 1);
  auto end = (reinterpret_cast<uintptr_t>(data_) + size_ + page - 1) & ~(page - 1);
  ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::string("cannot stat: ") + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void *p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = std::string("cannot map: ") + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    file->data_ = static_cast<const uint8_t *>(p);
  }
  if (keptFds.fetch_add(1) < kMaxKeptFds) {
    file->fd_ = fd;
  } else {
    keptFds.fetch_sub(1);
    ::close(fd);
  }
  return file;
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  if (fd_ >= 0) {
    ::close(fd_);
    keptFds.fetch_sub(1);
  }
}

Buffer MappedFile::view(const std::shared_ptr<MappedFile> &self, size_t offset,
                        size_t length) const {
  Buffer b(data_ + offset, length, self);
  b.markMapped(this);
  return b;
}

Tensor::Tensor(const Tensor &o)
    : name(o.name), docString(o.docString), encoding(o.encoding), externalData(o.externalData),
      dataLocation(o.dataLocation), segment(o.segment), metadataProps(o.metadataProps),
      explicitFields(o.explicitFields), cachedHash(o.cachedHash.load()), dtype_(o.dtype_),
      dims_(o.dims_), data_(o.data_), strings_(o.strings_) {}

std::shared_ptr<Tensor> Tensor::fromStrings(std::vector<int64_t> dims,
                                            std::vector<std::string> strings) {
  auto t = std::make_shared<Tensor>(DataType::String, std::move(dims), Buffer());
  t->setStrings(std::move(strings));
  return t;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d <= 0)
      return 0;
    if (n > INT64_MAX / d)
      return 0;
    n *= d;
  }
  return n;
}

bool Tensor::isConsistent() const {
  for (int64_t d : dims_)
    if (d < 0)
      return false;
  if (dtype_ == DataType::String)
    return static_cast<int64_t>(strings_.size()) == numElements();
  if (elementBits(dtype_) == 0)
    return false;
  return data_.size() == storageSize(dtype_, numElements());
}

bool Tensor::sameContent(const Tensor &o) const {
  if (dtype_ != o.dtype_ || dims_ != o.dims_)
    return false;
  if (dtype_ == DataType::String)
    return strings_ == o.strings_;
  return data_.size() == o.data_.size() &&
         (data_.size() == 0 || std::memcmp(data_.data(), o.data_.data(), data_.size()) == 0);
}

} // namespace onnxslim

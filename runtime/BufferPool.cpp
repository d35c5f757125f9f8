//===- runtime/BufferPool.cpp - Recycled tensor storage -------------------===//
//
// A mutex-guarded map from size class to free blocks. The cache outlives
// every tensor (it is never destroyed), so a tensor freed during static
// destruction still finds it.
//
//===----------------------------------------------------------------------===//
#include "runtime/BufferPool.h"

#include <bit>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace onnxslim::rt {
namespace {

constexpr size_t kAlign = 64;
/// Blocks below this go straight to the allocator (its own free lists serve
/// them well and they never reach the OS).
constexpr size_t kMinPooled = size_t{64} << 10;
/// The cache holds at most this many bytes of free blocks.
constexpr size_t kMaxCached = size_t{512} << 20;

uint8_t *allocate(size_t bytes) {
  return static_cast<uint8_t *>(::operator new(bytes, std::align_val_t{kAlign}));
}
void deallocate(uint8_t *p) { ::operator delete(p, std::align_val_t{kAlign}); }

class Cache {
public:
  /// A cached block of class `size`, or null.
  uint8_t *take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty())
      return nullptr;
    uint8_t *p = it->second.back();
    it->second.pop_back();
    bytes_ -= size;
    return p;
  }
  /// Keeps `p` (of class `size`) for reuse, or frees it when the cache is full.
  void give(uint8_t *p, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes_ + size <= kMaxCached) {
        free_[size].push_back(p);
        bytes_ += size;
        return;
      }
    }
    deallocate(p);
  }
  void clear() {
    std::unordered_map<size_t, std::vector<uint8_t *>> old;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      old.swap(free_);
      bytes_ = 0;
    }
    for (auto &[size, blocks] : old)
      for (uint8_t *p : blocks)
        deallocate(p);
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<uint8_t *>> free_;
  size_t bytes_ = 0;
};

Cache &cache() {
  static Cache *c = new Cache; // never destroyed: tensors may die after main
  return *c;
}

} // namespace

size_t bufferSizeClass(size_t bytes) {
  size_t aligned = (bytes + kAlign - 1) & ~(kAlign - 1);
  if (aligned < kMinPooled)
    return aligned;
  size_t granule = std::bit_floor(aligned) / 8;
  return (aligned + granule - 1) / granule * granule;
}

std::shared_ptr<uint8_t[]> acquireBuffer(size_t bytes) {
  size_t size = bufferSizeClass(bytes);
  if (size < kMinPooled)
    return std::shared_ptr<uint8_t[]>(allocate(size), deallocate);
  uint8_t *p = cache().take(size);
  if (!p)
    p = allocate(size);
  return std::shared_ptr<uint8_t[]>(p, [size](uint8_t *q) { cache().give(q, size); });
}

void releaseCachedBuffers() { cache().clear(); }

size_t cachedBufferBytes() { return cache().bytes(); }

} // namespace onnxslim::rt

//===- runtime/BufferPool.cpp - Reuse of freed tensor blocks --------------===//
#include "runtime/BufferPool.h"

#include <map>
#include <mutex>
#include <new>

namespace onnxslim::rt {

namespace {

struct Pool {
  std::mutex mutex;
  int scopes = 0;
  std::multimap<size_t, uint8_t *> free; ///< capacity -> kept block
  size_t cachedBytes = 0;
};

/// Never destroyed: blocks may be released by static destructors at exit.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}

uint8_t *rawAllocate(size_t bytes) {
  return static_cast<uint8_t *>(::operator new[](bytes, std::align_val_t{64}));
}

void rawFree(uint8_t *p) { ::operator delete[](p, std::align_val_t{64}); }

/// Given a block of `capacity` bytes its owners let go of, Execute: keeps it
/// while a scope lives and the cap allows, frees it otherwise.
void release(uint8_t *p, size_t capacity) {
  Pool &pl = pool();
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    if (pl.scopes > 0 && pl.cachedBytes + capacity <= kMaxCachedBytes) {
      pl.free.emplace(capacity, p);
      pl.cachedBytes += capacity;
      return;
    }
  }
  rawFree(p);
}

std::shared_ptr<uint8_t[]> own(uint8_t *p, size_t capacity) {
  return std::shared_ptr<uint8_t[]>(p, [capacity](uint8_t *q) { release(q, capacity); });
}

} // namespace

std::shared_ptr<uint8_t[]> allocateBlock(size_t bytes) {
  if (bytes < kMinPooledBytes)
    return std::shared_ptr<uint8_t[]>(rawAllocate(bytes), rawFree);
  Pool &pl = pool();
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto it = pl.free.lower_bound(bytes);
    if (it != pl.free.end() && it->first <= bytes + bytes / 4) {
      auto [capacity, p] = *it;
      pl.free.erase(it);
      pl.cachedBytes -= capacity;
      return own(p, capacity);
    }
  }
  return own(rawAllocate(bytes), bytes);
}

BufferPoolScope::BufferPoolScope() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  ++pool().scopes;
}

BufferPoolScope::~BufferPoolScope() {
  std::multimap<size_t, uint8_t *> kept;
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    if (--pool().scopes > 0)
      return;
    kept.swap(pool().free);
    pool().cachedBytes = 0;
  }
  for (auto &[capacity, p] : kept)
    rawFree(p);
}

size_t bufferPoolCachedBytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().cachedBytes;
}

} // namespace onnxslim::rt

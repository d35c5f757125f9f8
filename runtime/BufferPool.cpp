//===- runtime/BufferPool.cpp - Reuse of freed tensor blocks --------------===//
#include "runtime/BufferPool.h"

#include <map>
#include <mutex>
#include <new>

namespace onnxslim::rt {

namespace {

/// Largest kept block handed to a request, as a multiple of its size.
constexpr size_t kMaxReuseFactor = 4;

struct Pool {
  std::mutex mutex;
  int scopes = 0;
  /// capacity -> (when it was freed, kept block)
  std::multimap<size_t, std::pair<uint64_t, uint8_t *>> free;
  uint64_t released = 0; ///< blocks released so far (their order)
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
      pl.free.emplace(capacity, std::make_pair(++pl.released, p));
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
    // Of the blocks that fit (up to kMaxReuseFactor times the request),
    // the one freed last: its bytes are the likeliest still in cache, and
    // a run's values then cycle through few blocks.
    auto best = pl.free.end();
    for (auto it = pl.free.lower_bound(bytes);
         it != pl.free.end() && it->first <= bytes * kMaxReuseFactor; ++it)
      if (best == pl.free.end() || it->second.first > best->second.first)
        best = it;
    if (best != pl.free.end()) {
      const size_t capacity = best->first;
      uint8_t *p = best->second.second;
      pl.free.erase(best);
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
  std::multimap<size_t, std::pair<uint64_t, uint8_t *>> kept;
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    if (--pool().scopes > 0)
      return;
    kept.swap(pool().free);
    pool().cachedBytes = 0;
  }
  for (auto &[capacity, entry] : kept)
    rawFree(entry.second);
}

size_t bufferPoolCachedBytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().cachedBytes;
}

} // namespace onnxslim::rt

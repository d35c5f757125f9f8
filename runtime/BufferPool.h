//===- runtime/BufferPool.h - Reuse of freed tensor blocks -----*- C++ -*-===//
//
// Kernel results are fresh 64-byte aligned blocks (TensorBuilder). A block
// of 128 KiB or more comes from mmap in glibc's allocator and goes back to
// the OS when freed, so every such result of every node page-faults each of
// its pages in again: on mlsd_tiny that was three quarters of the run (a
// Clip over 4 MB costing as much as the Conv before it).
//
// While an Interpreter lives (it holds a BufferPoolScope, as a runtime's
// session holds its arena), freed blocks of kMinPooledBytes or more are kept
// and handed to the next request they fit: of the blocks at most four times
// as large as asked, the one freed last, whose bytes are the likeliest
// still in cache (a run's values then cycle through a few blocks that stay
// in the caches, as a runtime's arena reuses its offsets; bench/
// conv_notes.md), so a run reuses the pages of the values that died before
// it, and a second run reuses the first one's. When the last scope
// ends every kept block is freed; so is a block released outside any scope
// or beyond kMaxCachedBytes. Thread-safe (one mutex; taken once per large
// block, not per element). Contents of a reused block are not zeroed here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace onnxslim::rt {

/// Blocks smaller than this go straight to the allocator (its bins reuse
/// them well already).
inline constexpr size_t kMinPooledBytes = size_t{64} << 10;
/// Freed bytes kept at most; beyond, blocks are freed at once.
inline constexpr size_t kMaxCachedBytes = size_t{1} << 30;

/// Given a size in bytes (a multiple of 64), Result: a 64-byte aligned block
/// of at least that many bytes, uninitialized, freed (or kept) when the last
/// owner lets go.
std::shared_ptr<uint8_t[]> allocateBlock(size_t bytes);

/// While one is alive, freed blocks are kept for reuse (see above).
class BufferPoolScope {
public:
  BufferPoolScope();
  ~BufferPoolScope();
  BufferPoolScope(const BufferPoolScope &) = delete;
  BufferPoolScope &operator=(const BufferPoolScope &) = delete;
};

/// Bytes currently kept for reuse (for tests).
size_t bufferPoolCachedBytes();

} // namespace onnxslim::rt

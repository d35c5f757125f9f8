//===- runtime/BufferPool.h - Recycled tensor storage -----------*- C++ -*-===//
//
// Storage for the tensors kernels write. A model's activations are large
// (megabytes) and short-lived: each is freed a few steps after it is made,
// and the next step asks for a block of the same size. Returned to the C
// allocator, such blocks go back to the OS (munmap, heap trim) and every new
// tensor pays a page fault per 4 KiB on first touch, which on the real models
// cost as much as the arithmetic. So blocks of 64 KiB and more are kept, when
// their last owner drops them, in a process-wide cache keyed by size class
// (sizes rounded up to 1/8 of their power of two), bounded in bytes, and
// handed out again; smaller blocks use the allocator directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace onnxslim::rt {

/// Given a byte count, Result: a 64-byte aligned block of at least that many
/// bytes, contents unspecified (a recycled block keeps old bytes); when its
/// last owner drops it, a large block returns to the cache.
std::shared_ptr<uint8_t[]> acquireBuffer(size_t bytes);

/// Given nothing, Execute: frees every cached block, Result: none.
void releaseCachedBuffers();

/// The bytes of free blocks held in the cache now.
size_t cachedBufferBytes();

/// The size class a request of `bytes` is rounded up to (exposed for tests).
size_t bufferSizeClass(size_t bytes);

} // namespace onnxslim::rt

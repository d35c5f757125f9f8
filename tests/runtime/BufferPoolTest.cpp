//===- tests/runtime/BufferPoolTest.cpp - Recycled tensor storage tests ---===//
//
// The buffer cache behind TensorBuilder (runtime/BufferPool.h): size classes
// cover the request with bounded waste, large blocks come back from the cache
// after their last owner drops them, small ones never enter it, and a
// recycled block handed to a zero-filled TensorBuilder is zeroed again.
//
//===----------------------------------------------------------------------===//
#include "runtime/BufferPool.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

TEST(BufferPool, SizeClassesCoverTheRequestWithBoundedWaste) {
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{64}, size_t{65535}, size_t{65536},
                       size_t{65537}, size_t{100000}, size_t{3} << 20, (size_t{3} << 20) + 1,
                       size_t{10000019}}) {
    size_t c = bufferSizeClass(bytes);
    EXPECT_GE(c, bytes) << bytes;
    EXPECT_EQ(c % 64, 0u) << bytes;
    EXPECT_LE(c, bytes + bytes / 8 + 64) << bytes;
    EXPECT_EQ(bufferSizeClass(c), c) << "a class is its own class: " << bytes;
  }
}

TEST(BufferPool, LargeBlocksAreRecycledSmallOnesAreNot) {
  releaseCachedBuffers();
  ASSERT_EQ(cachedBufferBytes(), 0u);
  const size_t big = size_t{1} << 20;
  uint8_t *first = nullptr;
  {
    auto a = acquireBuffer(big);
    first = a.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    EXPECT_EQ(cachedBufferBytes(), 0u) << "a live block is not in the cache";
  }
  EXPECT_EQ(cachedBufferBytes(), bufferSizeClass(big));
  {
    auto b = acquireBuffer(big - 100); // same size class
    EXPECT_EQ(b.get(), first) << "the freed block is handed out again";
    EXPECT_EQ(cachedBufferBytes(), 0u);
  }
  { auto small = acquireBuffer(1000); }
  EXPECT_EQ(cachedBufferBytes(), bufferSizeClass(big)) << "small blocks bypass the cache";
  releaseCachedBuffers();
  EXPECT_EQ(cachedBufferBytes(), 0u);
}

TEST(BufferPool, RecycledStorageIsZeroedForZeroFilledTensors) {
  releaseCachedBuffers();
  const std::vector<int64_t> dims = {1, 64, 64, 64}; // 1 MiB of floats
  {
    TensorBuilder dirty(DataType::Float, dims, TensorBuilder::Fill::Uninitialized);
    std::memset(dirty.data(), 0xab, dirty.byteSize());
    TensorPtr t = dirty.finish();
  }
  ASSERT_GT(cachedBufferBytes(), 0u);
  TensorBuilder clean(DataType::Float, dims);
  const float *p = clean.dataAs<float>();
  for (int64_t i = 0; i < clean.numElements(); ++i)
    ASSERT_EQ(p[i], 0.0f) << "element " << i;
  TensorBuilder again(DataType::Float, {3, 5}, TensorBuilder::Fill::Uninitialized);
  // The padding after the elements is zero even when the data is not filled.
  const uint8_t *tail = again.data() + again.byteSize();
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(tail[i], 0) << i;
}

} // namespace

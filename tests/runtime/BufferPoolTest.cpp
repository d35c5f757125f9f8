//===- tests/runtime/BufferPoolTest.cpp - Reuse of freed tensor blocks ----===//
#include "runtime/BufferPool.h"
#include "runtime/Interpreter.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace onnxslim::rt {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferPool, KeepsFreedBlocksWhileAScopeLives) {
  BufferPoolScope scope;
  uint8_t *first = nullptr;
  {
    std::shared_ptr<uint8_t[]> a = allocateBlock(kMiB);
    first = a.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  EXPECT_EQ(bufferPoolCachedBytes(), kMiB);
  std::shared_ptr<uint8_t[]> b = allocateBlock(kMiB - 64 * 100); // fits
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(bufferPoolCachedBytes(), 0u);
}

TEST(BufferPool, TakesTheLastFreedBlockThatFits) {
  BufferPoolScope scope;
  uint8_t *small = nullptr;
  uint8_t *big = nullptr;
  {
    std::shared_ptr<uint8_t[]> s = allocateBlock(kMiB);
    std::shared_ptr<uint8_t[]> b = allocateBlock(4 * kMiB);
    small = s.get();
    big = b.get();
  } // b is freed first, then s
  // Both fit a 1 MiB request: the one freed last, whose bytes are the
  // likeliest still in cache. A 2 MiB one then takes the 4 MiB block.
  std::shared_ptr<uint8_t[]> d = allocateBlock(kMiB);
  EXPECT_EQ(d.get(), small);
  std::shared_ptr<uint8_t[]> e = allocateBlock(2 * kMiB);
  EXPECT_EQ(e.get(), big);
  EXPECT_EQ(bufferPoolCachedBytes(), 0u);
}

TEST(BufferPool, NeverABlockOverFourTimesTheRequest) {
  BufferPoolScope scope;
  uint8_t *big = nullptr;
  {
    std::shared_ptr<uint8_t[]> b = allocateBlock(4 * kMiB);
    big = b.get();
  }
  std::shared_ptr<uint8_t[]> d = allocateBlock(kMiB - 64);
  EXPECT_NE(d.get(), big);
  EXPECT_EQ(bufferPoolCachedBytes(), 4 * kMiB);
}

TEST(BufferPool, FreesEverythingWhenTheLastScopeEnds) {
  std::shared_ptr<uint8_t[]> outlives;
  {
    BufferPoolScope outer;
    {
      BufferPoolScope inner;
      allocateBlock(kMiB); // released at once: kept
      outlives = allocateBlock(2 * kMiB);
    }
    EXPECT_EQ(bufferPoolCachedBytes(), kMiB); // the outer scope still lives
  }
  EXPECT_EQ(bufferPoolCachedBytes(), 0u);
  outlives.reset(); // released outside any scope: freed, not kept
  EXPECT_EQ(bufferPoolCachedBytes(), 0u);
}

TEST(BufferPool, SmallBlocksAreNotPooled) {
  BufferPoolScope scope;
  allocateBlock(kMinPooledBytes - 64);
  EXPECT_EQ(bufferPoolCachedBytes(), 0u);
}

TEST(BufferPool, ZeroedResultsStayZeroedInAReusedBlock) {
  BufferPoolScope scope;
  {
    TensorBuilder dirty(DataType::Float, {1 << 18}, TensorBuilder::Fill::Uninitialized);
    float *p = dirty.dataAs<float>();
    for (int i = 0; i < (1 << 18); ++i)
      p[i] = 1.0f;
    TensorPtr t = dirty.finish();
  }
  ASSERT_GT(bufferPoolCachedBytes(), 0u);
  TensorBuilder clean(DataType::Float, {1 << 18});
  EXPECT_EQ(bufferPoolCachedBytes(), 0u); // the dirty block was reused...
  const float *q = clean.dataAs<float>();
  for (int i = 0; i < (1 << 18); ++i)
    ASSERT_EQ(q[i], 0.0f) << i; // ...and zeroed
}

} // namespace
} // namespace onnxslim::rt

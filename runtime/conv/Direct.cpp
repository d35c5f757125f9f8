//===- runtime/conv/Direct.cpp - Convolution with no column matrix --------===//
//
// The convolutions that run as direct products (convProductDirect in
// runtime/conv/Kernels.h), reading their B straight from input planes:
//  - convDirect: float 1-D/2-D convolution at strides 1 and 2 over
//    zero-padded (phase-split when strided) copies of the input planes,
//    a band of output rows per task, each band's planes filled by the
//    thread that multiplies them (so they are still in its L2);
//  - pointwiseDirect: float 1x1 convolution over the input planes
//    themselves (row c of B is plane c), when it reduces channels or has
//    few inputs; on threads, reductions on small planes by parts of K.
// Their filters are packed once into the engine's row panels, and kept
// packed in the node's state for a constant W (PackedFilters).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Common.h"
#include "runtime/conv/Kernels.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace onnxslim::rt::nn {
namespace {

/// Elements of a direct convolution band's zero-padded planes (256 KB of
/// floats: with its output, the band stays in a core's L2 from its fill to
/// its product).
constexpr int64_t kDirectBandElements = int64_t{1} << 16;

/// Fewest virtual columns of a direct convolution band (each block of a
/// band re-reads the filters).
constexpr int64_t kDirectMinBandColumns = 1024;

/// Given the filters w of a float convolution ([group * Mg, rows]),
/// Result: them packed for convProductDirect, group after group
/// (directFilterElements(Mg, rows) apart): from `kept` when it holds them
/// packed from the same w for the same geometry and engine, else packed
/// into `kept` (kept for the next call) or, without it, into scratch.
const float *directFilters(const float *w, int64_t group, int64_t Mg, int64_t rows,
                           PackedFilters *kept) {
  const int64_t size = directFilterElements(Mg, rows);
  if (kept && kept->holds(w, group, Mg, rows, false, group * size))
    return kept->data.data();
  float *packed = kept ? kept->data.data() : scratch<float, 4>(group * size);
  for (int64_t gi = 0; gi < group; ++gi)
    packDirectFilters(Mg, rows, w + gi * Mg * rows, rows, packed + gi * size);
  return packed;
}

/// pointwiseDirect of one group by parts of K, on the threads: task
/// (part, piece) sums its part's input channels for a range of whole
/// column tiles (pieces of the plane when there are more threads than
/// parts), part 0 into y and the others into partial planes; then each
/// thread adds up a range of output channels, in part order, with the
/// bias, and applies the epilogue. The sums are those of one
/// convProductDirect call over all parts (DirectSlices).
void pointwiseDirectByParts(const float *x, const float *filters, const float *bias, float *y,
                            int64_t N, int64_t Cg, int64_t M, int64_t planeSize, int64_t parts,
                            const Epilogue<float> &epilogue) {
  const int64_t tile = directColumnTile(), tiles = planeSize / tile;
  // A part per slice of K (convProductDirect's cut: kDirectSlice may make
  // more than asked).
  parts = directSliceCount(Cg, parts);
  const int64_t sliceK = (Cg + parts - 1) / parts;
  const int64_t pieces = std::clamp<int64_t>(threadCount() / parts, 1, std::max<int64_t>(1, tiles));
  std::vector<int64_t> offsets(static_cast<size_t>(Cg)), blockOffsets(static_cast<size_t>(Cg));
  for (int64_t c = 0; c < Cg; ++c) {
    offsets[static_cast<size_t>(c)] = c * planeSize;
    blockOffsets[static_cast<size_t>(c)] = (c - c / sliceK * sliceK) * tile;
  }
  const int64_t outSize = M * planeSize;
  float *partials = scratch<float, 21>(N * (parts - 1) * outSize);
  parallelFor(N * parts * pieces, [&](int64_t k) {
    const int64_t n = k / (parts * pieces), part = k / pieces % parts, t = k % pieces;
    const int64_t j0 = tiles * t / pieces * tile, j1 = tiles * (t + 1) / pieces * tile;
    const int64_t c0 = std::min(Cg, part * sliceK), c1 = std::min(Cg, c0 + sliceK);
    const DirectSlices range{parts, part, part + 1};
    const float *xn = x + n * Cg * planeSize;
    float *dst = part == 0 ? y + n * outSize : partials + (n * (parts - 1) + part - 1) * outSize;
    if (j1 > j0)
      convProductDirect(M, Cg, filters, xn + j0, offsets.data(), 1, j1 - j0, j1 - j0, dst + j0,
                        planeSize, nullptr, nullptr, 0, -1, range);
    // The columns short of a tile, the last piece's: the part's channels
    // copied into a tile-wide block.
    const int64_t end = t + 1 == pieces ? planeSize : j1;
    if (end > j1 && c1 > c0) {
      float *block = scratch<float, 5>((c1 - c0) * tile);
      for (int64_t c = c0; c < c1; ++c) {
        float *row = block + (c - c0) * tile;
        std::memcpy(row, xn + c * planeSize + j1, static_cast<size_t>(end - j1) * sizeof(float));
        std::fill(row + (end - j1), row + tile, 0.0f);
      }
      convProductDirect(M, Cg, filters, block, blockOffsets.data(), 1, tile, end - j1, dst + j1,
                        planeSize, nullptr, nullptr, 0, -1, range);
    }
  });
  const int64_t chunks = std::min<int64_t>(N * M, threadCount());
  parallelFor(chunks, [&](int64_t t) {
    for (int64_t r = N * M * t / chunks; r < N * M * (t + 1) / chunks; ++r) {
      const int64_t n = r / M, m = r % M;
      float *d = y + r * planeSize;
      for (int64_t part = 1; part < parts; ++part)
        addFloats(d, partials + (n * (parts - 1) + part - 1) * outSize + m * planeSize, planeSize);
      if (bias)
        for (int64_t j = 0; j < planeSize; ++j)
          d[j] = d[j] + bias[m];
      if (epilogue.on())
        epilogue(d, planeSize);
    }
  });
}

} // namespace

/// Two for a product worth splitting that reduces channels at least
/// twofold on a plane split by channels (kChannelSplitPlane). Its producer
/// (a depthwise convolution, an expansion, an elementwise op) split by
/// channels left each half of the input on one core; a thread that
/// multiplies by all of it reads the other half across the cores, and the
/// other core's next write to those lines waits for them to be taken back
/// from this core's caches. By parts, each thread reads the input its
/// core wrote.
int64_t pointwiseKParts(int64_t Mg, int64_t Cg, int64_t planeSize) {
  const bool reduces = 2 * Mg <= Cg && Mg * Cg * planeSize >= kParallelMinMultiplyAdds;
  return planeSize < kChannelSplitPlane && reduces ? 2 : 1;
}

/// Float 1-D/2-D convolution straight from zero-padded input planes (the
/// layout of planPadded, split by column phase when strided), with no
/// column matrix: row k = (c, tap) of the virtual column matrix is plane c
/// at the tap's offset, and output row oy starts oy * stride padded rows
/// in (convProductDirect). The output rows are cut into bands, each a
/// task that copies the padded rows its outputs read (its rows plus the
/// kernel's halo) into its own thread's planes and runs the product on
/// them, so the planes are still in that core's L2 when the product reads
/// them for every tap. A column's result does not depend on the bands, so
/// neither does the output on the thread count.
void convDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                int64_t Cin, int64_t M, int64_t group, const Window::Dims3 &g,
                const PaddedPlan &plan, const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t Cg = Cin / group, Mg = M / group, kS = g.kernel[1] * g.kernel[2];
  const int64_t rows = Cg * kS, inS = g.in[1] * g.in[2], outS = g.out[1] * g.out[2];
  const int64_t oh = g.out[1], ow = g.out[2], pitch = plan.rowPitch, sy = g.strides[1];
  // Padded rows read by a band of n output rows: (n - 1) * sy + reach.
  const int64_t reach = plan.rows - (oh - 1) * sy;
  const int64_t filterSize = directFilterElements(Mg, rows);
  const float *filters = directFilters(w, group, Mg, rows, kept);
  // Bands within kDirectBandElements, of at least kDirectMinBandColumns;
  // with threads, at least four per thread (a late worker then leaves its
  // share to the others).
  int64_t bandRows =
      std::clamp<int64_t>(std::max((kDirectBandElements / (Cg * pitch) - reach) / sy + 1,
                                   (kDirectMinBandColumns + pitch - 1) / pitch),
                          1, oh);
  int64_t bands = (oh + bandRows - 1) / bandRows;
  const bool split = worthSplitting(N * M * rows * outS, N * (Cin * inS + M * outS));
  // Threads take blocks of output channels on small planes
  // (kChannelSplitPlane; a band of a few short rows would leave most of
  // each column tile empty), bands of rows on larger ones.
  const int64_t panels = directPanels(Mg);
  int64_t blocks = 1;
  if (split && outS < kChannelSplitPlane && panels >= threadCount())
    blocks = std::min<int64_t>(panels, 4 * threadCount());
  else if (split)
    bands = std::max(bands, std::min<int64_t>(oh, 4 * threadCount()));
  bandRows = (oh + bands - 1) / bands;
  bands = (oh + bandRows - 1) / bandRows;
  // A clamp alone is applied as the product stores; after a fused Add, the
  // epilogue does both over the band's output.
  const bool clampInProduct = epilogue.clamps && !epilogue.addend;
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  auto band = [&](int64_t job) {
    const int64_t bl = job % blocks, task = job / blocks;
    const int64_t b = task % bands, gi = task / bands % group, n = task / bands / group;
    const int64_t p0 = panels * bl / blocks, p1 = panels * (bl + 1) / blocks;
    const int64_t m0 = directPanelStart(Mg, p0), m1 = directPanelStart(Mg, p1);
    const int64_t oy0 = b * bandRows, oy1 = std::min(oh, oy0 + bandRows);
    const int64_t bandIn = (oy1 - oy0 - 1) * sy + reach, planeSize = bandIn * pitch;
    // The product reads up to kConvDirectSlack elements past the last plane.
    float *planes = scratch<float, 2>(Cg * planeSize + kConvDirectSlack);
    std::fill(planes + Cg * planeSize, planes + Cg * planeSize + kConvDirectSlack, 0.0f);
    thread_local std::vector<int64_t> offsets;
    offsets.resize(static_cast<size_t>(rows));
    const float *xg = x + (n * Cin + gi * Cg) * inS;
    for (int64_t c = 0; c < Cg; ++c) {
      fillPaddedRows(xg + c * inS, g, plan, oy0 * sy, oy0 * sy + bandIn, planes + c * planeSize);
      for (int64_t t = 0; t < kS; ++t)
        offsets[static_cast<size_t>(c * kS + t)] = c * planeSize + plan.tapRel[t];
    }
    float *yb = y + (n * M + gi * Mg) * outS + oy0 * ow;
    convProductDirect(Mg, rows, filters + gi * filterSize, planes, offsets.data(), oy1 - oy0,
                      sy * pitch, ow, yb, outS, bias ? bias + gi * Mg : nullptr,
                      clampInProduct ? &sc : nullptr, p0, p1);
    if (epilogue.addend)
      for (int64_t m = m0; m < m1; ++m)
        epilogue(yb + m * outS, (oy1 - oy0) * ow);
  };
  parallelForIf(split, N * group * bands * blocks, band);
}

/// Whether a pointwise product of M output and K input channels per group
/// runs as a direct product (pointwiseDirect) rather than a GEMM: when it
/// reduces channels or has very few (the GEMM's packing of B, a strided
/// copy of the input, then costs more than it saves; expansions reuse each
/// packed panel for many rows and keep it) or has more output channels
/// than the plane has columns (the GEMM would pack filters larger than its
/// B on every call, the direct product keeps them packed); and only when
/// the plane has more columns than the GEMM's dot products take
/// (kFewColumns), which pack nothing either.
bool pointwiseIsDirect(int64_t M, int64_t K, int64_t planeSize) {
  return planeSize > kFewColumns && (M <= K || K <= 16 || M > planeSize);
}

/// Pointwise float convolution (1x1 kernel, unit strides, no padding) as a
/// direct product over the input planes themselves (convProductDirect with
/// one output row: row c of the product's B is plane c), with no packed
/// copy of B. Tasks are pieces of whole column tiles (the product then
/// reads nothing past a plane) times blocks of whole row panels when the
/// pieces are too few for the threads. The last columns short of a tile
/// (all of a plane smaller than one) are copied into a tile-wide block,
/// zeros past them, and multiplied by the same packed filters: the same
/// columns whatever the thread count, and no column's result depends on its
/// task. (Through the GEMM instead, every call packed all the filters again
/// for a few columns: on 7x7 planes that cost as much as the product.)
/// Reductions of channels on small planes sum K in parts
/// (pointwiseKParts), on threads each part on its own
/// (pointwiseDirectByParts).
void pointwiseDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                     int64_t Cin, int64_t M, int64_t group, int64_t planeSize,
                     const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t Cg = Cin / group, Mg = M / group, tile = directColumnTile();
  const int64_t panels = directPanels(Mg);
  const int64_t tiles = planeSize / tile, filterSize = directFilterElements(Mg, Cg);
  const float *filters = directFilters(w, group, Mg, Cg, kept);
  const bool split = worthSplitting(N * M * Cg * planeSize, N * (Cin + M) * planeSize);
  const int64_t parts = pointwiseKParts(Mg, Cg, planeSize);
  if (split && parts > 1 && group == 1) {
    pointwiseDirectByParts(x, filters, bias, y, N, Cg, M, planeSize, parts, epilogue);
    return;
  }
  std::vector<int64_t> offsets(static_cast<size_t>(Cg)), blockOffsets(static_cast<size_t>(Cg));
  for (int64_t c = 0; c < Cg; ++c) {
    offsets[static_cast<size_t>(c)] = c * planeSize;
    blockOffsets[static_cast<size_t>(c)] = c * tile;
  }
  int64_t pieces = std::max<int64_t>(1, tiles * tile / kMinChunkColumns), blocks = 1;
  if (split) {
    pieces = std::max<int64_t>(pieces, 4 * threadCount());
    pieces = std::clamp<int64_t>(pieces, 1,
                                 std::max<int64_t>(1, tiles * tile / kMinThreadColumns));
    // Narrow planes by blocks of output channels alone (kChannelSplitPlane).
    if (planeSize < kChannelSplitPlane && panels >= threadCount())
      pieces = 1;
    blocks = std::clamp<int64_t>((4 * threadCount() + pieces - 1) / pieces, 1, panels);
    // A whole number of tasks per thread where the panels allow, so that
    // no core idles while another runs the last task.
    for (int64_t b = blocks; b <= panels; ++b)
      if (pieces * b % threadCount() == 0) {
        blocks = b;
        break;
      }
    // Panels that do not share evenly (mobilenet_v2's 32-channel
    // projections: three panels, two for one core) are cut by positions
    // as well, one piece per thread.
    if (pieces * blocks % threadCount() != 0 && tiles >= threadCount())
      pieces = threadCount();
  } else
    pieces = std::clamp<int64_t>(pieces, 1, std::max<int64_t>(1, tiles));
  const bool clampInProduct = epilogue.clamps && !epilogue.addend;
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  const int64_t perGroup = pieces * blocks, tasks = N * group * perGroup;
  auto task = [&](int64_t k) {
    const int64_t t = k % perGroup / blocks, bl = k % blocks;
    const int64_t gi = k / perGroup % group, n = k / perGroup / group;
    const int64_t j0 = tiles * t / pieces * tile, j1 = tiles * (t + 1) / pieces * tile;
    const int64_t p0 = panels * bl / blocks, p1 = panels * (bl + 1) / blocks;
    const int64_t m0 = directPanelStart(Mg, p0), m1 = directPanelStart(Mg, p1);
    const float *xg = x + (n * Cin + gi * Cg) * planeSize;
    float *yg = y + (n * M + gi * Mg + m0) * planeSize;
    if (j1 > j0)
      convProductDirect(Mg, Cg, filters + gi * filterSize, xg + j0, offsets.data(), 1, j1 - j0,
                        j1 - j0, y + (n * M + gi * Mg) * planeSize + j0, planeSize,
                        bias ? bias + gi * Mg : nullptr, clampInProduct ? &sc : nullptr, p0, p1,
                        DirectSlices{parts});
    // The columns short of a tile: the last piece's.
    const int64_t end = t + 1 == pieces ? planeSize : j1;
    if (end > j1) {
      float *block = scratch<float, 5>(Cg * tile);
      for (int64_t c = 0; c < Cg; ++c) {
        std::memcpy(block + c * tile, xg + c * planeSize + j1, static_cast<size_t>(end - j1) * sizeof(float));
        std::fill(block + c * tile + (end - j1), block + (c + 1) * tile, 0.0f);
      }
      convProductDirect(Mg, Cg, filters + gi * filterSize, block, blockOffsets.data(), 1, tile,
                        end - j1, y + (n * M + gi * Mg) * planeSize + j1, planeSize,
                        bias ? bias + gi * Mg : nullptr, clampInProduct ? &sc : nullptr, p0, p1,
                        DirectSlices{parts});
    }
    if (epilogue.addend)
      for (int64_t m = 0; m < m1 - m0; ++m)
        epilogue(yg + m * planeSize + j0, end - j0);
  };
  parallelForIf(split, tasks, task);
}

} // namespace onnxslim::rt::nn

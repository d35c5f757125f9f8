//===- runtime/conv/Algorithms.h - The convolution algorithms --*- C++ -*-===//
//
// One entry point per algorithm of runtime/conv/, each for the geometry
// runtime/kernels/Conv.cpp (convForward) chose it for. Every one writes
// every output of y (bias, then the epilogue, included) and computes each
// output with operations that do not depend on the thread count. Float
// only where the signature says float; the templates are instantiated for
// float and double.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/conv/Common.h"

#include <cstdint>

namespace onnxslim::rt::nn {

//===----------------------------------------------------------------------===//
// Depthwise: groups of one input channel (runtime/conv/Depthwise.cpp)
//===----------------------------------------------------------------------===//

/// Depthwise convolution (a channel multiplier up to 4) over zero-padded
/// copies of the input planes laid out by `p` (planPadded), or read
/// straight from the input by the AVX-512 row kernels where they apply.
template <typename C>
void depthwisePadded(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                     int64_t M, int64_t group, const Window::Dims3 &g, const PaddedPlan &p,
                     const Epilogue<C> &epilogue);

/// Whether depthwiseBlocked takes a depthwise convolution: float 2-D, one
/// output channel per input channel, narrow output rows, on AVX-512.
bool depthwiseBlockedFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group);

/// Float 2-D depthwise convolution sixteen channels at a time, channels last
/// (runtime/conv/DepthwiseBlocked.cpp): the bits of depthwisePadded. The
/// blocks of channels run on threads when `split`.
void depthwiseBlocked(const float *x, const float *w, const float *bias, float *y, int64_t N,
                      int64_t C, const Window::Dims3 &g, const Epilogue<float> &epilogue,
                      bool split);

/// Whether depthwiseChannelsLast takes a depthwise convolution: float 2-D,
/// one output channel per input channel, at most 7x7 taps, on AVX-512.
bool depthwiseChannelsLastFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group);
/// depthwiseBlocked with a channels-last output (y holds image n's pixel p,
/// channel c at (n * pixels + p) * C + c), from a channels-last input (x
/// the same; xLast) or planes: the bits of depthwisePadded, with no
/// transposes but the input block's from planes; the blocks of channels
/// run on threads. The epilogue may clamp, not add.
void depthwiseChannelsLast(const float *x, bool xLast, const float *w, const float *bias,
                           float *y, int64_t N, int64_t C, const Window::Dims3 &g,
                           const Epilogue<float> &epilogue);
/// Whether maxPoolBlocked takes a max pooling: float 2-D, a plane of at
/// most 128x128, at most 13x13 taps, on AVX-512.
bool maxPoolBlockedFits(const Window::Dims3 &g);

/// Float 2-D max pooling of `planes` planes sixteen at a time, channels last
/// (runtime/conv/DepthwiseBlocked.cpp): the MaxPool kernel's comparisons in
/// its tap order, so its bits; the blocks run on threads when `split`.
void maxPoolBlocked(const float *x, float *y, int64_t planes, const Window::Dims3 &g, bool split);

/// Depthwise convolution of any geometry (3-D, or where planPadded
/// declines): row by row with scalar edges.
template <typename C>
void depthwiseConv(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                   int64_t group, const Window::Dims3 &g, const Epilogue<C> &epilogue);

//===----------------------------------------------------------------------===//
// Direct products: no column matrix (runtime/conv/Direct.cpp)
//===----------------------------------------------------------------------===//

/// Float 1-D/2-D convolution at strides 1 and 2 as direct products over
/// zero-padded copies of the input planes laid out by `plan`, band by band.
void convDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                int64_t Cin, int64_t M, int64_t group, const Window::Dims3 &g,
                const PaddedPlan &plan, const Epilogue<float> &epilogue, PackedFilters *kept);

/// Whether a pointwise product of M output and K input channels per group
/// over planes of planeSize elements runs as pointwiseDirect.
bool pointwiseIsDirect(int64_t M, int64_t K, int64_t planeSize);

/// Parts of K a pointwise product of Mg output and Cg input channels per
/// group on planes of planeSize positions sums apart, then adds up: each
/// part on its own thread when split. From the shape alone, so that the
/// bits do not depend on the thread count (pointwiseDirect,
/// pointwiseTransposed and pointwiseChannelsLast take it).
int64_t pointwiseKParts(int64_t Mg, int64_t Cg, int64_t planeSize);

/// Float pointwise convolution as a direct product over the input planes.
void pointwiseDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                     int64_t Cin, int64_t M, int64_t group, int64_t planeSize,
                     const Epilogue<float> &epilogue, PackedFilters *kept);

//===----------------------------------------------------------------------===//
// Winograd F(2x2, 3x3) (runtime/conv/Winograd.cpp)
//===----------------------------------------------------------------------===//

/// Whether a float convolution runs as convWinograd.
bool winogradFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group);

/// A float 3x3 convolution at unit strides and dilations, one group, as
/// Winograd F(2x2, 3x3) products.
void convWinograd(const float *x, const float *w, const float *bias, float *y, int64_t N,
                  int64_t Cin, int64_t M, const Window::Dims3 &g, const Epilogue<float> &epilogue,
                  PackedFilters *kept);

//===----------------------------------------------------------------------===//
// Lowered to GEMM (runtime/conv/Im2col.cpp)
//===----------------------------------------------------------------------===//

/// Whether a float pointwise product of M output and K input channels per
/// group over planes of planeSize elements runs as pointwiseTransposed.
bool pointwiseIsTransposed(int64_t M, int64_t K, int64_t planeSize);

/// Float pointwise convolution on small planes as the transposed product
/// (positions by output channels: the vectors run along the channels) with
/// the filters kept packed as its B, transposed back into the planes.
void pointwiseTransposed(const float *x, const float *w, const float *bias, float *y, int64_t N,
                         int64_t Cin, int64_t M, int64_t group, int64_t planeSize,
                         const Epilogue<float> &epilogue, PackedFilters *kept);

/// Whether convPositionRows takes a float convolution: 2-D, one group, 16
/// or more input channels, and either 9 to 64 output positions and 64 or
/// more output channels, or up to 1024 output positions, 128 or more
/// output channels and strides (or output rows that would leave over 1/8
/// of the direct product's tiles empty, where Winograd does not apply).
bool positionRowsFit(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group);

/// Float 2-D convolution as the transposed product of pointwiseTransposed
/// over the column matrix (positions by output channels, all of K in one
/// product), transposed back into the planes.
void convPositionRows(const float *x, const float *w, const float *bias, float *y, int64_t N,
                      int64_t Cin, int64_t M, const Window::Dims3 &g,
                      const Epilogue<float> &epilogue, PackedFilters *kept);

/// Float pointwise convolution of one group on planes of P positions with
/// channels-last input (xLast: image n's pixel p, channel k at (n * P + p)
/// * K + k), output (yLast), or both: the product of pointwiseTransposed,
/// so its bits. With yLast the epilogue may clamp, not add.
void pointwiseChannelsLast(const float *x, bool xLast, const float *w, const float *bias, float *y,
                           bool yLast, int64_t N, int64_t K, int64_t M, int64_t P,
                           const Epilogue<float> &epilogue, PackedFilters *kept);
/// Whether a pointwise or depthwise convolution writes a channels-last
/// output when asked: on planes where the pointwise products run transposed
/// anyway (larger ones run faster as direct products on channels-first
/// planes).
bool channelsLastPlaneFits(int64_t planeSize);
/// Whether convTapRegions takes a float 2-D convolution: one group, and at
/// most half of its tap-output pairs read input (the rest read padding).
bool tapRegionsFit(const Window::Dims3 &g, int64_t group);

/// Float 2-D convolution (one group) as one product per kernel tap over the
/// rectangle of outputs that tap reads input for (runtime/conv/TapRegions.cpp),
/// the filters kept packed per tap.
void convTapRegions(const float *x, const float *w, const float *bias, float *y, int64_t N,
                    int64_t Cin, int64_t M, const Window::Dims3 &g,
                    const Epilogue<float> &epilogue, PackedFilters *kept);

/// Pointwise convolution (1x1 kernel, unit strides, no padding) as GEMMs on X.
template <typename C>
void convPointwiseGemm(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                       int64_t M, int64_t group, const Window &win, const Epilogue<C> &epilogue);

/// Convolution with at most kFewColumns outputs per image: dot products of
/// the filters with the gathered receptive fields.
template <typename C>
void convFewColumns(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                    int64_t M, int64_t group, const Window::Dims3 &g, const Epilogue<C> &epilogue);

/// Any other convolution: im2col chunks into the GEMM's packed panels.
template <typename C>
void convIm2col(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                int64_t group, const Window &win, const Epilogue<C> &epilogue);

//===----------------------------------------------------------------------===//
// ConvTranspose and Col2Im (runtime/conv/ConvTranspose.cpp)
//===----------------------------------------------------------------------===//

/// The adjoint of im2col over grid rows [r0, r0 + nRows): adds each column
/// entry into the image element it was read from (padding dropped).
template <typename C>
void col2imAdd(const C *col, int64_t channels, const Window::Dims3 &g, int64_t r0, int64_t nRows,
               C *img);

} // namespace onnxslim::rt::nn

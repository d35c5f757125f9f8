//===- runtime/Kernels.cpp - The list of built-in kernel families ---------===//
//
// Each kernel family lives in its own file under runtime/kernels/ and exposes
// one registration function; this file calls them all. Add a line per family.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"

namespace onnxslim::rt {

// Declarations of the family registration functions (one per kernels/*.cpp).
#define ONNXSLIM_KERNEL_FAMILY(fn) void fn(OpRegistry &);
#include "runtime/KernelFamilies.def"
#undef ONNXSLIM_KERNEL_FAMILY

void registerBuiltinKernels(OpRegistry &registry) {
#define ONNXSLIM_KERNEL_FAMILY(fn) fn(registry);
#include "runtime/KernelFamilies.def"
#undef ONNXSLIM_KERNEL_FAMILY
}

} // namespace onnxslim::rt

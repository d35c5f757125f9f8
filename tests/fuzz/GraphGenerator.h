//===- tests/fuzz/GraphGenerator.h - Random valid ONNX graphs --*- C++ -*-===//
//
// The structure-aware half of fuzz_differential: the fuzzer's bytes drive a
// generator that writes a random but *valid* ONNX model in textual syntax
// (frontend/TextParser reads it). Every op is emitted with the right arity,
// attributes, dtypes and static shapes, so the model loads, verifies and
// runs in the interpreter; the generator keeps the shape of every value it
// made and only combines values whose shapes fit.
//
// The ops are chosen for the rewrites the default pipeline makes: identity
// patterns (x*1, x+0, x-0, x/1, Identity, Dropout), cancelling and composed
// Transposes, Reshape/Squeeze/Unsqueeze/Concat/Slice/Gather chains, Shape
// chains that build Reshape targets, Cast chains, Conv+BatchNormalization
// (+Add/Mul/Relu), MatMul+Add, Gemm, Pad+Conv/MaxPool, LayerNorm and Gelu
// decompositions (with constants of odd ranks), Where/comparisons,
// reductions, duplicated constants, dead nodes, If with constant and
// computed conditions, and Loop bodies that capture outer values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxslim::fuzz {

/// Given the fuzzer's bytes, Result: the text of one valid model.
std::string generateModelText(const uint8_t *data, size_t size);

} // namespace onnxslim::fuzz

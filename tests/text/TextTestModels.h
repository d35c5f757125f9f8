//===- tests/text/TextTestModels.h - IR models for text tests --*- C++ -*-===//
//
// Models built through the IR API that exercise every field the text form
// must carry: every element type and attribute kind, odd names, doc strings
// and metadata everywhere, explicit-default fields, value_info order gaps,
// orphan value infos, tensor encodings, functions, opaque bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <memory>
#include <string>

namespace onnxslim::testing {

/// A model using (nearly) every IR field at least once.
std::unique_ptr<Model> kitchenSinkModel();
/// A model with no graph, only functions.
std::unique_ptr<Model> graphlessModel();
/// A small If model whose branches read an outer value.
std::unique_ptr<Model> subgraphModel();
/// Print (all constants), parse, compare and print again; returns "" on
/// success or a description of the first failure.
std::string roundTrip(const Model &m);

} // namespace onnxslim::testing

//===- api/OptionNames.h - An option's name on each surface ----*- C++ -*-===//
//
// The library's messages name the option a problem came from; the user
// called one of three surfaces, each with its own spelling of it
// (OptimizeOptions::inputShapes, --input-shapes, input_shapes). Messages are
// written with a marker, "{option:inputShapes}" (the C++ field's name, or
// "listPasses" for the list of passes), and the API turns markers into the
// spelling of OptimizeOptions::surface before a Status leaves it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "onnxslim/onnxslim.h"

#include <string>
#include <string_view>

namespace onnxslim {

/// Given an option's C++ name ("inputShapes") and a surface, Result: its
/// spelling there ("--input-shapes", "input_shapes"); the name itself when
/// the table does not know it.
std::string optionName(std::string_view cppName, Surface surface);

/// Given a message with "{option:NAME}" markers and a surface, Result: the
/// message with each marker replaced by that surface's spelling.
std::string resolveOptionMarkers(std::string message, Surface surface);

/// Given a Status and a surface, Result: the same status, its message resolved.
Status resolveOptionMarkers(Status status, Surface surface);

} // namespace onnxslim

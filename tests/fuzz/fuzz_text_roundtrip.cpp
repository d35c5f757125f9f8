//===- tests/fuzz/fuzz_text_roundtrip.cpp - Text -> parse -> print -> parse ===//
//
// libFuzzer entry point: the input is ONNX textual syntax. Text that parses
// into a sound IR is printed (ir/Printer, every constant in full) and parsed
// again; the two IRs must be structurally equal (ir/Equivalence), and
// printing the second must give the same text (the printer is a function of
// the IR). Findings (abort): a crash or sanitizer report, printed text that
// does not parse, a difference, or unstable printing.
//
//===----------------------------------------------------------------------===//
#include "frontend/TextParser.h"
#include "ir/Equivalence.h"
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "tests/fuzz/FuzzSupport.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

using namespace onnxslim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::unique_ptr<Model> first = parseModelText(text, error, "fuzz.onnxtxt");
  if (!first || !verify(*first, 1).empty())
    return 0;
  std::string printed = fuzz::modelText(*first);
  std::unique_ptr<Model> second = parseModelText(printed, error, "printed.onnxtxt");
  if (!second)
    fuzz::finding("the printed text does not parse: " + error, std::string(text), printed);
  if (std::optional<std::string> diff = firstDifference(*first, *second))
    fuzz::finding("print -> parse changed the IR: " + *diff, std::string(text), printed);
  std::string reprinted = fuzz::modelText(*second);
  if (reprinted != printed)
    fuzz::finding("printing the re-parsed IR gives other text", printed, reprinted);
  return 0;
}

//===- ir/Support.h - Small shared IR helpers ------------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace onnxslim {

/// Ordered string key/value pairs (ONNX metadata_props, external_data, ...).
using StringPairs = std::vector<std::pair<std::string, std::string>>;

/// Records which optional fields of the serialized form were present even
/// though they held their default value (an explicit `domain: ""`, say). The
/// frontend sets them and the backend honours them, so a model loaded and
/// saved comes back field-for-field equal. Bits are indexed by the field
/// number of the corresponding ONNX message; passes never need to touch them.
class ExplicitFields {
public:
  bool has(unsigned field) const { return field < 64 && (bits_ >> field & 1u); }
  void set(unsigned field) {
    if (field < 64)
      bits_ |= uint64_t{1} << field;
  }
  bool operator==(const ExplicitFields &o) const { return bits_ == o.bits_; }
  bool operator!=(const ExplicitFields &o) const { return bits_ != o.bits_; }

private:
  uint64_t bits_ = 0;
};

} // namespace onnxslim

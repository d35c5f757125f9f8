//===- runtime/Inputs.h - Seeded inputs for running a model ----*- C++ -*-===//
//
// Makes the inputs `onnxslim run` and `onnxslim verify` feed a model: for
// each graph input, a tensor of the declared element type and shape
// (symbolic dims resolved from a SYMBOL=N map, default 1; unknown dims 1),
// filled with seeded pseudo-random values: floats uniform in [-1, 1) (or a
// given range), integers small and non-negative ([0, 9]), bools random. A
// per-input spec (from tests/models/models.json or the caller) can fix the
// dtype, the shape, a range or a constant value. The generator is a fixed
// algorithm (splitmix64), so a seed gives the same values on every machine.
// Values read from or written to data files (ir/DataValue.h) convert to and
// from runtime values here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/DataValue.h"
#include "runtime/Kernel.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onnxslim::rt {

/// How to make one graph input; unset fields come from the graph's type.
struct InputSpec {
  std::string name;
  std::optional<DataType> dtype;
  std::optional<std::vector<int64_t>> shape;
  /// Floats: uniform in [lo, hi). Integers: uniform in [lo, hi].
  std::optional<std::pair<double, double>> range;
  /// Every element equals this value.
  std::optional<double> value;
};

struct InputOptions {
  uint64_t seed = 0;
  /// Sizes of symbolic dims by name (`--dim batch=4`).
  std::map<std::string, int64_t> dims;
  /// Size of a symbolic dim not in `dims`, and of an unknown dim.
  int64_t defaultDim = 1;
  /// Per-input overrides, matched by name.
  std::vector<InputSpec> specs;
  /// Inputs the caller feeds itself (from files): left None, not generated.
  std::set<std::string> provided;
};

/// Given a graph and options, Execute: makes one value per graph input, in
/// order (inputs backed by an initializer are left None so they read it),
/// Result: `inputs`, or an error naming the input it cannot make.
Status makeInputs(const Graph &graph, const InputOptions &opts, std::vector<RtValue> &inputs);

/// Given a dtype, dims and a seed, Result: a tensor of seeded values
/// (honouring spec->range / spec->value when `spec` is non-null).
Status makeRandomTensor(DataType dtype, const std::vector<int64_t> &dims, uint64_t seed,
                        const InputSpec *spec, TensorPtr &out);

/// Given the path of a models.json file (see tests/models/models.json) and a
/// model's name, Result: the input specs listed for it.
Status loadInputSpecs(const std::string &jsonPath, const std::string &modelName,
                      std::vector<InputSpec> &specs);

/// Given "SYMBOL=N" (or "SYMBOL:N"), Execute: records it in `dims`; error on bad syntax.
Status parseDimFlag(std::string_view flag, std::map<std::string, int64_t> &dims);

/// Given a value read from a data file, Result: the same runtime value.
RtValue fromDataValue(const DataValue &value);

/// Given a runtime value and the name to store it under, Execute: converts
/// it to a data-file value, Result: `out`, or an error for a missing value
/// (Kind::None, or an optional holding an optional).
Status toDataValue(const RtValue &value, const std::string &name, DataValue &out);

} // namespace onnxslim::rt

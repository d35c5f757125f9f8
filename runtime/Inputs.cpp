//===- runtime/Inputs.cpp - Seeded inputs for running a model -------------===//
//
// Seeded input generation (splitmix64 streams, one per input, so an input's
// values do not depend on the other inputs) and a small JSON reader for the
// input specs of tests/models/models.json.
//
//===----------------------------------------------------------------------===//
#include "runtime/Inputs.h"

#include "runtime/kernels/TensorHelpers.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace onnxslim::rt {

namespace {

/// splitmix64: a tiny, well-mixed, platform-independent generator.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state_;
};

uint64_t mixSeed(uint64_t seed, uint64_t salt) {
  Rng r(seed ^ (salt * 0xD1B54A32D192ED03ull));
  return r.next();
}

//===----------------------------------------------------------------------===//
// A minimal JSON reader (objects, arrays, strings, numbers, literals).
//===----------------------------------------------------------------------===//

struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  // An object's keys and values, in order. (Not a vector of pair<string,
  // Json>: clang rejects that pair while Json is still incomplete.)
  std::vector<std::string> keys;
  std::vector<Json> values;

  const Json *get(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key)
        return &values[i];
    return nullptr;
  }
};

class JsonParser {
public:
  explicit JsonParser(std::string_view text) : s_(text) {}
  bool parse(Json &out, std::string &error) {
    if (!value(out, 0) || (skip(), pos_ != s_.size())) {
      error = error_.empty() ? "unexpected text at offset " + std::to_string(pos_) : error_;
      return false;
    }
    return true;
  }

private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool failAt(const std::string &what) {
    if (error_.empty())
      error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }
  bool string(std::string &out) {
    if (pos_ >= s_.size() || s_[pos_] != '"')
      return failAt("expected a string");
    ++pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        break;
      char e = s_[pos_++];
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        if (pos_ + 4 > s_.size())
          return failAt("bad \\u escape");
        unsigned cp = 0;
        auto r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
        if (r.ec != std::errc())
          return failAt("bad \\u escape");
        pos_ += 4;
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        break;
      }
      default: out += e;
      }
    }
    if (pos_ >= s_.size())
      return failAt("unterminated string");
    ++pos_;
    return true;
  }
  bool value(Json &out, int depth) {
    if (depth > 64)
      return failAt("nesting too deep");
    skip();
    if (pos_ >= s_.size())
      return failAt("unexpected end");
    char c = s_[pos_];
    if (c == '{') {
      out.kind = Json::Kind::Object;
      ++pos_;
      skip();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      while (true) {
        skip();
        std::string key;
        if (!string(key))
          return false;
        skip();
        if (pos_ >= s_.size() || s_[pos_] != ':')
          return failAt("expected ':'");
        ++pos_;
        Json v;
        if (!value(v, depth + 1))
          return false;
        out.keys.push_back(std::move(key));
        out.values.push_back(std::move(v));
        skip();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == '}') {
          ++pos_;
          return true;
        }
        return failAt("expected ',' or '}'");
      }
    }
    if (c == '[') {
      out.kind = Json::Kind::Array;
      ++pos_;
      skip();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        Json v;
        if (!value(v, depth + 1))
          return false;
        out.items.push_back(std::move(v));
        skip();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
          return true;
        }
        return failAt("expected ',' or ']'");
      }
    }
    if (c == '"') {
      out.kind = Json::Kind::String;
      return string(out.str);
    }
    if (literal("true")) {
      out.kind = Json::Kind::Bool;
      out.b = true;
      return true;
    }
    if (literal("false")) {
      out.kind = Json::Kind::Bool;
      return true;
    }
    if (literal("null"))
      return true;
    size_t end = pos_;
    while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '-' ||
                               s_[end] == '+' || s_[end] == '.' || s_[end] == 'e' || s_[end] == 'E'))
      ++end;
    if (end == pos_)
      return failAt("unexpected character");
    std::string num(s_.substr(pos_, end - pos_));
    char *stop = nullptr;
    out.num = std::strtod(num.c_str(), &stop);
    if (!stop || *stop)
      return failAt("bad number");
    out.kind = Json::Kind::Number;
    pos_ = end;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

const InputSpec *findSpec(const InputOptions &opts, const std::string &name) {
  for (const InputSpec &s : opts.specs)
    if (s.name == name)
      return &s;
  return nullptr;
}

} // namespace

Status makeRandomTensor(DataType dtype, const std::vector<int64_t> &dims, uint64_t seed,
                        const InputSpec *spec, TensorPtr &out) {
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(dims, dtype, count));
  TensorBuilder b(dtype, dims);
  Rng rng(seed);
  if (dtype == DataType::String) {
    for (int64_t i = 0; i < count; ++i)
      b.strings()[i] = "s" + std::to_string(rng.next() % 100);
    out = b.finish();
    return Status::success();
  }
  const bool hasValue = spec && spec->value.has_value();
  const double fixed = hasValue ? *spec->value : 0.0;
  const bool hasRange = spec && spec->range.has_value();
  const double rangeLo = hasRange ? spec->range->first : 0.0;
  const double rangeHi = hasRange ? spec->range->second : 0.0;
  bool handled = tops::visitNumeric(dtype, [&]<typename T>() {
    constexpr bool isFloat = std::is_floating_point_v<T> || std::is_same_v<T, tops::F16> ||
                             std::is_same_v<T, tops::BF16>;
    for (int64_t i = 0; i < count; ++i) {
      double v;
      if (hasValue) {
        v = fixed;
      } else if constexpr (std::is_same_v<T, bool>) {
        v = static_cast<double>(rng.next() >> 63);
      } else if constexpr (isFloat) {
        double lo = hasRange ? rangeLo : -1.0, hi = hasRange ? rangeHi : 1.0;
        v = lo + (hi - lo) * rng.uniform();
      } else {
        double lo = hasRange ? rangeLo : 0.0, hi = hasRange ? rangeHi : 9.0;
        auto span = static_cast<uint64_t>(std::max(0.0, std::floor(hi) - std::ceil(lo)) + 1);
        v = std::ceil(lo) + static_cast<double>(rng.next() % span);
      }
      tops::store<T>(b.data(), i, tops::fromDouble<T>(v));
    }
  });
  if (!handled)
    return Status::error("cannot generate values of element type " + dataTypeName(dtype));
  out = b.finish();
  return Status::success();
}

Status makeInputs(const Graph &graph, const InputOptions &opts, std::vector<RtValue> &inputs) {
  inputs.assign(graph.inputs().size(), RtValue());
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value *in = graph.input(i);
    const InputSpec *spec = findSpec(opts, in->name());
    if ((in->initializer() && !spec) || opts.provided.count(in->name()))
      continue;
    std::string label = "input '" + in->name() + "'";
    const std::optional<Type> &ty = in->type();
    if (ty && ty->kind() != Type::Kind::Tensor)
      return Status::error(label + ": only tensor inputs can be generated");
    std::optional<DataType> dtype = spec && spec->dtype ? spec->dtype : std::nullopt;
    if (!dtype && ty && ty->elemType() != DataType::Undefined)
      dtype = ty->elemType();
    if (!dtype)
      return Status::error(label + " has no element type; give one in an input spec");
    std::vector<int64_t> dims;
    if (spec && spec->shape) {
      dims = *spec->shape;
    } else if (ty && ty->shape()) {
      for (const Dim &d : *ty->shape()) {
        if (d.isValue()) {
          dims.push_back(d.getValue());
        } else if (d.isSymbol()) {
          auto it = opts.dims.find(d.getSymbol());
          dims.push_back(it != opts.dims.end() ? it->second : opts.defaultDim);
        } else {
          dims.push_back(opts.defaultDim);
        }
      }
    } else {
      return Status::error(label + " has no shape; give one in an input spec");
    }
    for (int64_t d : dims)
      if (d < 0)
        return Status::error(label + " has a negative dim " + tops::dimsToString(dims));
    TensorPtr t;
    Status s = makeRandomTensor(*dtype, dims, mixSeed(opts.seed, i + 1), spec, t);
    if (!s.ok())
      return Status::error(label + ": " + s.message());
    inputs[i] = RtValue::fromTensor(std::move(t));
  }
  return Status::success();
}

Status loadInputSpecs(const std::string &jsonPath, const std::string &modelName,
                      std::vector<InputSpec> &specs) {
  std::ifstream f(jsonPath, std::ios::binary);
  if (!f)
    return Status::error(jsonPath + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  Json root;
  std::string error;
  if (!JsonParser(text).parse(root, error))
    return Status::error(jsonPath + ": " + error);
  const Json *models = root.get("models");
  if (!models || models->kind != Json::Kind::Array)
    return Status::error(jsonPath + ": no \"models\" array");
  for (const Json &m : models->items) {
    const Json *name = m.get("name");
    if (!name || name->str != modelName)
      continue;
    specs.clear();
    const Json *ins = m.get("inputs");
    if (!ins || ins->kind != Json::Kind::Array)
      return Status::success();
    for (const Json &in : ins->items) {
      InputSpec spec;
      if (const Json *n = in.get("name"))
        spec.name = n->str;
      if (const Json *d = in.get("dtype")) {
        std::optional<DataType> dt = parseDataTypeName(d->str);
        if (!dt)
          return Status::error(jsonPath + ": model '" + modelName + "' input '" + spec.name +
                               "': unknown dtype '" + d->str + "'");
        spec.dtype = dt;
      }
      if (const Json *sh = in.get("shape"); sh && sh->kind == Json::Kind::Array) {
        std::vector<int64_t> dims;
        for (const Json &d : sh->items)
          dims.push_back(static_cast<int64_t>(d.num));
        spec.shape = dims;
      }
      if (const Json *r = in.get("range"); r && r->kind == Json::Kind::Array && r->items.size() == 2)
        spec.range = std::make_pair(r->items[0].num, r->items[1].num);
      if (const Json *v = in.get("value"); v && v->kind == Json::Kind::Number)
        spec.value = v->num;
      specs.push_back(std::move(spec));
    }
    return Status::success();
  }
  return Status::error(jsonPath + ": no model named '" + modelName + "'");
}

Status parseDimFlag(std::string_view flag, std::map<std::string, int64_t> &dims) {
  size_t eq = flag.find_last_of("=:"); // SYMBOL=N or SYMBOL:N (N holds neither)
  if (eq == std::string_view::npos || eq == 0)
    return Status::error("expected SYMBOL=N, got '" + std::string(flag) + "'");
  std::string_view num = flag.substr(eq + 1);
  int64_t v = 0;
  auto r = std::from_chars(num.data(), num.data() + num.size(), v);
  if (r.ec != std::errc() || r.ptr != num.data() + num.size() || v < 0)
    return Status::error("expected a non-negative integer after '=' in '" + std::string(flag) + "'");
  dims[std::string(flag.substr(0, eq))] = v;
  return Status::success();
}

namespace {

/// `t`, or a 64-byte aligned copy of it when its bytes sit at an offset that
/// kernels could not view in place (a file's raw_data can start anywhere):
/// copied once here rather than by every kernel that reads it, at every run.
TensorPtr aligned(const TensorPtr &t) {
  if (!t || t->dtype() == DataType::String || t->byteSize() == 0 ||
      reinterpret_cast<uintptr_t>(t->rawData()) % 64 == 0 || !t->isConsistent())
    return t;
  TensorBuilder b(t->dtype(), t->dims(), TensorBuilder::Fill::Uninitialized);
  std::memcpy(b.data(), t->rawData(), t->byteSize());
  return b.finish();
}

} // namespace

RtValue fromDataValue(const DataValue &value) {
  switch (value.kind) {
  case DataValue::Kind::Tensor:
    return RtValue::fromTensor(aligned(value.tensor));
  case DataValue::Kind::Sequence: {
    std::vector<TensorPtr> elements;
    for (const TensorPtr &t : value.sequence)
      elements.push_back(aligned(t));
    return RtValue::fromSequence(std::move(elements));
  }
  case DataValue::Kind::Optional: {
    RtValue out;
    out.kind = RtValue::Kind::Optional;
    if (value.optional)
      out.optional = std::make_shared<const RtValue>(fromDataValue(*value.optional));
    else
      out.elemType = value.emptyOf;
    return out;
  }
  }
  return RtValue();
}

Status toDataValue(const RtValue &value, const std::string &name, DataValue &out) {
  switch (value.kind) {
  case RtValue::Kind::None:
    break;
  case RtValue::Kind::Tensor:
    if (!value.tensor)
      break;
    out = DataValue::ofTensor(value.tensor, name);
    return Status::success();
  case RtValue::Kind::Sequence:
    out = DataValue::ofSequence(value.sequence, name);
    return Status::success();
  case RtValue::Kind::Optional: {
    if (!value.optional) {
      out = DataValue::ofOptional(nullptr, name);
      out.emptyOf = value.elemType;
      return Status::success();
    }
    if (value.optional->kind == RtValue::Kind::Optional)
      return Status::error("'" + name + "' is an optional holding an optional, which no OptionalProto file here stores");
    auto held = std::make_shared<DataValue>();
    Status s = toDataValue(*value.optional, "", *held);
    if (!s.ok())
      return s;
    out = DataValue::ofOptional(std::move(held), name);
    return Status::success();
  }
  }
  return Status::error("'" + name + "' has no value");
}

} // namespace onnxslim::rt

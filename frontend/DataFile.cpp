//===- frontend/DataFile.cpp - Read ONNX data files (.pb) -----------------===//
//
// The field numbers are those of onnx/onnx-data.proto (SequenceProto,
// OptionalProto) and onnx.proto (TensorProto). SequenceProto and
// OptionalProto have a handful of fields and are walked here with the
// bounds-checked wire reader; every tensor, top-level or nested, is checked
// against TensorProto's fields and then lowered by the loader's TensorProto
// path (frontend/Loader: raw_data viewed in place).
//
//===----------------------------------------------------------------------===//
#include "frontend/DataFile.h"

#include "frontend/Loader.h"
#include "frontend/WireFormat.h"

#include <algorithm>

namespace onnxslim {
namespace {

using wire::WireType;
using Kind = DataValue::Kind;

/// The bytes being read, what keeps them alive, and how errors name them.
struct Bytes {
  const uint8_t *base;
  const uint8_t *begin;
  const uint8_t *end;
  std::shared_ptr<const void> keepAlive;
  std::string baseDir;
};

const char *wireTypeName(WireType t) {
  switch (t) {
  case WireType::Varint: return "varint";
  case WireType::Fixed64: return "fixed64";
  case WireType::Len: return "length-delimited";
  case WireType::Fixed32: return "fixed32";
  default: return "group";
  }
}

/// Whether the tensor's bytes (or strings) are exactly what its type and
/// dims need; element counts of 2^56 and more never are (their byte count
/// could overflow, and no data file holds that much).
bool dataFits(const Tensor &t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return false;
    if (d == 0)
      return t.isConsistent();
    if (n > (int64_t{1} << 56) / d)
      return false;
    n *= d;
  }
  return t.isConsistent();
}

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string fieldDesc(const wire::Field &f) {
  return "field " + std::to_string(f.number) + " (" + wireTypeName(f.type) + ")";
}

/// SequenceProto.DataType / OptionalProto.DataType.
enum ElemKind : uint64_t { kUndefined = 0, kTensor = 1, kSparse = 2, kSequence = 3, kMap = 4, kOptional = 5 };

/// Whether TensorProto has field `number` with wire type `t` (packed or not
/// for repeated numbers). Unknown numbers are accepted (newer schemas).
bool tensorFieldFits(uint32_t number, WireType t) {
  bool len = t == WireType::Len, varint = t == WireType::Varint;
  switch (number) {
  case 1: case 5: case 7: case 11: return len || varint;          // dims, int32/int64/uint64_data
  case 2: case 14: return varint;                                  // data_type, data_location
  case 3: case 6: case 8: case 9: case 12: case 13: case 16: return len;
  case 4: return len || t == WireType::Fixed32;                    // float_data
  case 10: return len || t == WireType::Fixed64;                   // double_data
  default: return true;
  }
}

class DataReader {
public:
  explicit DataReader(const Bytes &b) : b_(b) {}

  /// Given a range and a kind, Execute: parses it strictly, Result: false
  /// with error() ("where: why") on failure.
  bool read(const uint8_t *begin, const uint8_t *end, Kind kind, const std::string &where, DataValue &out) {
    switch (kind) {
    case Kind::Tensor: {
      TensorPtr t = tensor(begin, end, where);
      if (!t)
        return false;
      out = DataValue::ofTensor(t, t->name);
      return true;
    }
    case Kind::Sequence:
      return sequence(begin, end, where, out);
    case Kind::Optional:
      return optional(begin, end, where, out);
    }
    return false;
  }

  const std::string &error() const { return error_; }
  /// Whether the failure is about the structure of the message (so that the
  /// bytes may be another kind) rather than a tensor's contents.
  bool structural() const { return structural_; }

private:
  TensorPtr tensor(const uint8_t *begin, const uint8_t *end, const std::string &where) {
    wire::Reader rd(b_.base, begin, end);
    wire::Field f;
    bool hasType = false;
    uint64_t dtype = 0;
    while (rd.next(f)) {
      if (!tensorFieldFits(f.number, f.type))
        return structuralFail(where, fieldDesc(f) + " is not a TensorProto field"), nullptr;
      if (f.number == 3)
        return structuralFail(where, "holds a tensor segment (field 3); a data file holds a whole tensor"),
               nullptr;
      if (f.number == 2) {
        hasType = true;
        dtype = f.varint;
      }
    }
    if (rd.failed())
      return structuralFail(where, "malformed TensorProto: " + rd.error()), nullptr;
    if (!hasType || dtype == 0)
      return structuralFail(where, "the TensorProto has no data_type"), nullptr;
    std::string err;
    TensorPtr t = loadTensorFromBytes(begin, static_cast<size_t>(end - begin), b_.keepAlive, where, b_.baseDir, err);
    if (!t) {
      error_ = err;
      structural_ = false;
      return nullptr;
    }
    if (t->encoding != TensorEncoding::External && !dataFits(*t))
      return structuralFail(where, "the TensorProto's data does not fit its data_type and dims (" +
                                       dataTypeName(t->dtype()) + dimsText(t->dims()) + ")"),
             nullptr;
    return t;
  }

  bool sequence(const uint8_t *begin, const uint8_t *end, const std::string &where, DataValue &out) {
    out = DataValue::ofSequence({});
    wire::Reader rd(b_.base, begin, end);
    wire::Field f;
    std::optional<uint64_t> elemType;
    while (rd.next(f)) {
      bool len = f.type == WireType::Len;
      if (f.number == 1 && len) {
        out.name.assign(reinterpret_cast<const char *>(f.payload), f.payloadSize());
      } else if (f.number == 2 && f.type == WireType::Varint) {
        // UNDEFINED is no valid element type either (and is how an empty
        // OptionalProto, otherwise byte-identical, says it holds nothing).
        if (f.varint == kUndefined || f.varint > kOptional)
          return structuralFail(where, "SequenceProto elem_type " + std::to_string(f.varint) + " is not a valid value");
        elemType = f.varint;
      } else if (f.number == 3 && len) {
        std::string item = where + ": sequence element #" + std::to_string(out.sequence.size());
        TensorPtr t = tensor(f.payload, f.end, item);
        if (!t)
          return false;
        out.sequence.push_back(std::move(t));
      } else if (f.number >= 4 && f.number <= 7 && len) {
        return unsupported(where, "a sequence of " + elemName(f.number - 2) + "s");
      } else {
        return structuralFail(where, fieldDesc(f) + " is not a SequenceProto field");
      }
    }
    if (rd.failed())
      return structuralFail(where, "malformed SequenceProto: " + rd.error());
    if (!out.sequence.empty() && elemType && *elemType != kTensor)
      return structuralFail(where, "SequenceProto elem_type is " + elemName(*elemType) + " but it holds tensors");
    return true;
  }

  bool optional(const uint8_t *begin, const uint8_t *end, const std::string &where, DataValue &out) {
    out = DataValue::ofOptional(nullptr);
    wire::Reader rd(b_.base, begin, end);
    wire::Field f;
    std::optional<uint64_t> elemType;
    uint64_t heldKind = kUndefined;
    while (rd.next(f)) {
      bool len = f.type == WireType::Len;
      if (f.number == 1 && len) {
        out.name.assign(reinterpret_cast<const char *>(f.payload), f.payloadSize());
      } else if (f.number == 2 && f.type == WireType::Varint) {
        if (f.varint > kOptional)
          return structuralFail(where, "OptionalProto elem_type " + std::to_string(f.varint) + " is not a valid value");
        elemType = f.varint;
      } else if ((f.number == 3 || f.number == 5) && len) {
        if (out.optional)
          return structuralFail(where, "the OptionalProto holds more than one value");
        auto held = std::make_shared<DataValue>();
        if (f.number == 3) {
          TensorPtr t = tensor(f.payload, f.end, where + ": optional value");
          if (!t)
            return false;
          *held = DataValue::ofTensor(std::move(t));
          heldKind = kTensor;
        } else {
          if (!sequence(f.payload, f.end, where + ": optional value", *held))
            return false;
          held->name.clear();
          heldKind = kSequence;
        }
        out.optional = std::move(held);
      } else if ((f.number == 4 || f.number == 6 || f.number == 7) && len) {
        return unsupported(where, "an optional " + elemName(f.number - 2));
      } else {
        return structuralFail(where, fieldDesc(f) + " is not an OptionalProto field");
      }
    }
    if (rd.failed())
      return structuralFail(where, "malformed OptionalProto: " + rd.error());
    if (out.optional && elemType && *elemType != heldKind)
      return structuralFail(where, "OptionalProto elem_type is " + elemName(*elemType) + " but it holds a " +
                                       elemName(heldKind));
    return true;
  }

  static std::string elemName(uint64_t k) {
    switch (k) {
    case kTensor: return "tensor";
    case kSparse: return "sparse tensor";
    case kSequence: return "sequence";
    case kMap: return "map";
    case kOptional: return "optional";
    default: return "undefined";
    }
  }

  bool structuralFail(const std::string &where, const std::string &why) {
    error_ = where + ": " + why;
    structural_ = true;
    return false;
  }

  bool unsupported(const std::string &where, const std::string &what) {
    error_ = where + ": " + what + " is not supported (only tensors and sequences of tensors)";
    structural_ = false;
    return false;
  }

  const Bytes &b_;
  std::string error_;
  bool structural_ = false;
};

/// Given bytes that do not parse as `failed`, Result: the other kinds they
/// parse as, "a SequenceProto or an OptionalProto" ("" when none).
std::string otherKinds(const Bytes &b, Kind failed) {
  std::string fits;
  for (Kind k : {Kind::Tensor, Kind::Sequence, Kind::Optional}) {
    if (k == failed)
      continue;
    DataReader probe(b);
    DataValue ignored;
    if (probe.read(b.begin, b.end, k, "", ignored))
      fits += std::string(fits.empty() ? "" : " or ") + (k == Kind::Optional ? "an " : "a ") + dataMessageName(k);
  }
  return fits;
}

bool readBytes(const Bytes &b, const std::string &displayName, Kind kind, const std::string &wanted, DataValue &out,
               std::string &error) {
  if (b.begin == b.end) {
    // An empty message is a valid empty optional; a tensor always has a data
    // type, and a sequence names its element type.
    if (kind == Kind::Optional) {
      out = DataValue::ofOptional(nullptr);
      return true;
    }
    error = displayName + ": the file is empty (not a serialized " + dataMessageName(kind) + ")";
    return false;
  }
  DataReader reader(b);
  if (reader.read(b.begin, b.end, kind, displayName, out))
    return true;
  error = reader.error();
  if (!reader.structural())
    return false;
  // Say what the file is rather than what is wrong with it as another kind.
  std::string fits = otherKinds(b, kind);
  if (!fits.empty())
    error = displayName + ": the file holds " + fits + ", not " + (kind == Kind::Optional ? "an " : "a ") +
            dataMessageName(kind) + (wanted.empty() ? "" : wanted);
  return false;
}

std::string dirName(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool mapFile(const std::string &path, Bytes &b, std::string &error) {
  std::string err;
  auto file = MappedFile::open(path, err);
  if (!file) {
    error = path + ": " + err;
    return false;
  }
  b = Bytes{file->data(), file->data(), file->data() + file->size(), file, dirName(path)};
  return true;
}

/// Reads the bytes as the first of TensorProto, SequenceProto, OptionalProto
/// they are (see loadDataFileAnyKind).
bool readAnyKind(const Bytes &b, const std::string &displayName, DataValue &out, std::string &error) {
  std::string tensorError;
  if (readBytes(b, displayName, Kind::Tensor, "", out, tensorError))
    return true;
  for (Kind k : {Kind::Sequence, Kind::Optional}) {
    std::string ignored;
    // An empty file would read as an empty optional: not for a guess.
    if (b.begin != b.end && readBytes(b, displayName, k, "", out, ignored))
      return true;
  }
  error = tensorError;
  return false;
}

std::string typeText(const std::optional<Type> &t) {
  if (!t)
    return "of unknown type";
  switch (t->kind()) {
  case Type::Kind::Tensor: return "a tensor";
  case Type::Kind::Sequence: return "a sequence";
  case Type::Kind::Optional: return "an optional";
  case Type::Kind::SparseTensor: return "a sparse tensor";
  case Type::Kind::Map: return "a map";
  default: return "of unknown type";
  }
}

/// The innermost tensor type under sequences and optionals.
const Type *tensorTypeIn(const Type *t) {
  while (t && (t->kind() == Type::Kind::Sequence || t->kind() == Type::Kind::Optional))
    t = t->inner();
  return t && t->isTensor() ? t : nullptr;
}

TensorPtr relabelled(const TensorPtr &t, const Type *declared) {
  if (!t || !declared || declared->elemType() != DataType::BFloat16 || t->dtype() != DataType::UInt16)
    return t;
  auto copy = std::make_shared<Tensor>(*t);
  copy->setDataType(DataType::BFloat16);
  return copy;
}

} // namespace

bool loadDataFromBytes(const uint8_t *data, size_t size, std::shared_ptr<const void> keepAlive,
                       const std::string &displayName, const std::string &baseDir, Kind kind, DataValue &out,
                       std::string &error) {
  Bytes b{data, data, data + size, std::move(keepAlive), baseDir};
  return readBytes(b, displayName, kind, "", out, error);
}

bool loadDataFile(const std::string &path, Kind kind, DataValue &out, std::string &error) {
  Bytes b;
  return mapFile(path, b, error) && readBytes(b, path, kind, "", out, error);
}

bool loadDataFileAnyKind(const std::string &path, DataValue &out, std::string &error) {
  Bytes b;
  return mapFile(path, b, error) && readAnyKind(b, path, out, error);
}

std::optional<Kind> dataKindOf(const std::optional<Type> &type) {
  if (!type)
    return Kind::Tensor;
  switch (type->kind()) {
  case Type::Kind::Empty:
  case Type::Kind::Tensor:
    return Kind::Tensor;
  case Type::Kind::Sequence:
    if (type->inner() && type->inner()->kind() != Type::Kind::Tensor)
      return std::nullopt;
    return Kind::Sequence;
  case Type::Kind::Optional: {
    const Type *inner = type->inner();
    if (inner && inner->kind() != Type::Kind::Tensor && dataKindOf(*inner) != Kind::Sequence)
      return std::nullopt;
    return Kind::Optional;
  }
  default:
    return std::nullopt;
  }
}

void relabelStoredBFloat16(DataValue &value, const std::optional<Type> &type) {
  const Type *declared = type ? tensorTypeIn(&*type) : nullptr;
  if (!declared)
    return;
  value.tensor = relabelled(value.tensor, declared);
  for (TensorPtr &t : value.sequence)
    t = relabelled(t, declared);
  if (value.optional) {
    DataValue held = *value.optional;
    relabelStoredBFloat16(held, type);
    value.optional = std::make_shared<const DataValue>(std::move(held));
  }
}

bool loadInputFile(const Graph &graph, const std::string &name, const std::string &path, size_t &index,
                   DataValue &out, std::string &error) {
  Bytes b;
  if (!mapFile(path, b, error))
    return false;
  std::string wanted = name;
  std::optional<DataValue> guessed;
  if (wanted.empty()) {
    // The file names its input: read it as whatever it is first.
    guessed.emplace();
    if (!readAnyKind(b, path, *guessed, error))
      return false;
    if (guessed->name.empty()) {
      error = path + ": the " + std::string(dataMessageName(guessed->kind)) +
              " has no name; say which input it is (NAME=FILE.pb)";
      return false;
    }
    wanted = guessed->name;
  }
  auto it = std::find_if(graph.inputs().begin(), graph.inputs().end(),
                         [&](const Value *v) { return v->name() == wanted; });
  if (it == graph.inputs().end()) {
    std::string names;
    for (const Value *v : graph.inputs())
      if (!v->isInitializer())
        names += (names.empty() ? "" : ", ") + v->name();
    error = path + ": '" + wanted + "' is not an input of the model (inputs: " + names + ")";
    return false;
  }
  index = static_cast<size_t>(it - graph.inputs().begin());
  const std::optional<Type> &type = (*it)->type();
  std::optional<Kind> kind = dataKindOf(type);
  if (!kind) {
    error = path + ": input '" + wanted + "' is " + typeText(type) +
            ", which no TensorProto, SequenceProto or OptionalProto file holds";
    return false;
  }
  std::string forInput = " that input '" + wanted + "' (" + typeText(type) + ") needs";
  if (guessed && guessed->kind == *kind)
    out = std::move(*guessed);
  else if (!readBytes(b, path, *kind, forInput, out, error))
    return false;
  relabelStoredBFloat16(out, type);
  return true;
}

} // namespace onnxslim

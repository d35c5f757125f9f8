//===- frontend/Npy.cpp - NumPy .npy files as tensors ---------------------===//
#include "frontend/Npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace onnxslim {

namespace {

/// The value of `key` in the header dict: the text after "'key':" up to the
/// next top-level ',' or '}' (a tuple's commas are inside parentheses).
bool dictValue(const std::string &header, const std::string &key, std::string &value) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return false;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return false;
  size_t i = colon + 1, depth = 0;
  std::string out;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(')
      ++depth;
    if (c == ')' && depth)
      --depth;
    if (depth == 0 && (c == ',' || c == '}'))
      break;
    out += c;
  }
  size_t b = out.find_first_not_of(" \t"), e = out.find_last_not_of(" \t");
  value = b == std::string::npos ? "" : out.substr(b, e - b + 1);
  return true;
}

struct Descr {
  DataType dtype;
  size_t size;
};

bool parseDescr(std::string d, Descr &out) {
  if (d.size() < 2 || (d.front() != '\'' && d.front() != '"'))
    return false;
  d = d.substr(1, d.size() - 2);
  if (d.size() < 3)
    return false;
  char order = d[0];
  std::string kind = d.substr(1);
  static const struct {
    const char *kind;
    DataType dtype;
    size_t size;
  } kTypes[] = {{"b1", DataType::Bool, 1},    {"i1", DataType::Int8, 1},     {"u1", DataType::UInt8, 1},
                {"i2", DataType::Int16, 2},   {"u2", DataType::UInt16, 2},   {"i4", DataType::Int32, 4},
                {"u4", DataType::UInt32, 4},  {"i8", DataType::Int64, 8},    {"u8", DataType::UInt64, 8},
                {"f2", DataType::Float16, 2}, {"f4", DataType::Float, 4},    {"f8", DataType::Double, 8}};
  for (const auto &t : kTypes)
    if (kind == t.kind) {
      // Multi-byte elements must be little-endian ('<'); '|' (no order) and
      // '=' (native, little-endian here) are accepted too.
      if (t.size > 1 && order != '<' && order != '=')
        return false;
      out = {t.dtype, t.size};
      return true;
    }
  return false;
}

} // namespace

TensorPtr parseNpy(const std::string &bytes, const std::string &name, std::string &error) {
  auto fail = [&](const std::string &why) -> TensorPtr {
    error = name + ": " + why;
    return nullptr;
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return fail("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen = 0, headerStart = 0;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated .npy header");
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    headerStart = 12;
  } else {
    return fail(".npy version " + std::to_string(major) + " is not supported (1-3)");
  }
  if (headerStart + headerLen > bytes.size())
    return fail("truncated .npy header");
  std::string header = bytes.substr(headerStart, headerLen);
  std::string descr, fortran, shapeText;
  if (!dictValue(header, "descr", descr) || !dictValue(header, "fortran_order", fortran) ||
      !dictValue(header, "shape", shapeText))
    return fail("malformed .npy header: " + header);
  Descr d{};
  if (!parseDescr(descr, d))
    return fail("unsupported .npy element type " + descr +
                " (bool, int8-64, uint8-64, float16/32/64, little-endian)");
  if (fortran != "False")
    return fail("Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  if (shapeText.size() < 2 || shapeText.front() != '(' || shapeText.back() != ')')
    return fail("malformed shape " + shapeText);
  std::vector<int64_t> dims;
  std::stringstream ss(shapeText.substr(1, shapeText.size() - 2));
  std::string item;
  size_t count = 1;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    if (b == std::string::npos)
      continue;
    char *end = nullptr;
    long long v = std::strtoll(item.c_str() + b, &end, 10);
    if (v < 0 || end == item.c_str() + b)
      return fail("malformed shape " + shapeText);
    dims.push_back(v);
    if (v != 0 && count > (size_t{1} << 40) / static_cast<size_t>(v))
      return fail("shape " + shapeText + " is too large");
    count *= static_cast<size_t>(v);
  }
  size_t dataStart = headerStart + headerLen;
  size_t want = count * d.size;
  if (bytes.size() - dataStart != want)
    return fail("holds " + std::to_string(bytes.size() - dataStart) + " data bytes, shape " + shapeText + " needs " +
                std::to_string(want));
  return std::make_shared<Tensor>(d.dtype, std::move(dims), Buffer::copyOf(bytes.data() + dataStart, want));
}

TensorPtr loadNpyFile(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return nullptr;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return parseNpy(buf.str(), path, error);
}

} // namespace onnxslim

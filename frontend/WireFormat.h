//===- frontend/WireFormat.h - Bounds-checked protobuf wire reader -*- C++ -*-===//
//
// A minimal reader of the protobuf wire format: it walks the field records of
// one message (tag, wire type, payload range) without decoding them. The
// loader uses it to find the big byte ranges (the graph, its initializers,
// their raw_data) so that protobuf never copies tensor payloads; everything
// else is handed to protobuf range by range. Every read is bounds-checked: a
// truncated or corrupted file yields an error, never an out-of-bounds read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxslim::wire {

enum class WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  Len = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
};

/// One field record of a message.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::Varint;
  const uint8_t *begin = nullptr;   ///< First byte of the tag.
  const uint8_t *payload = nullptr; ///< First payload byte (after the length for Len).
  const uint8_t *end = nullptr;     ///< One past the record.
  uint64_t varint = 0;              ///< The value, for Varint records.

  size_t payloadSize() const { return static_cast<size_t>(end - payload); }
};

/// Walks the field records of the message stored in [begin, end). `base` is
/// the start of the whole file, used only to report byte offsets in errors.
class Reader {
public:
  Reader(const uint8_t *base, const uint8_t *begin, const uint8_t *end)
      : base_(base), pos_(begin), end_(end) {}

  /// Given nothing, Execute: decodes the next record, Result: true with `f`
  /// filled, or false at the end of the message or on malformed input (then
  /// error() says what is wrong and where).
  bool next(Field &f) {
    if (pos_ >= end_)
      return false;
    f.begin = pos_;
    uint64_t tag = 0;
    if (!readVarint(tag))
      return failVarint(f.begin, "field tag");
    f.number = static_cast<uint32_t>(tag >> 3);
    unsigned wt = static_cast<unsigned>(tag & 7);
    if (f.number == 0 || (tag >> 3) > 0x1FFFFFFF)
      return fail(f.begin, "invalid field number " + std::to_string(tag >> 3));
    if (wt > 5)
      return fail(f.begin, "invalid wire type " + std::to_string(wt) + " for field " +
                               std::to_string(f.number));
    f.type = static_cast<WireType>(wt);
    switch (f.type) {
    case WireType::Varint:
      f.payload = pos_;
      if (!readVarint(f.varint))
        return failVarint(f.payload, "varint value of field " + std::to_string(f.number));
      break;
    case WireType::Fixed64:
      return fixed(f, 8);
    case WireType::Fixed32:
      return fixed(f, 4);
    case WireType::Len: {
      uint64_t len = 0;
      const uint8_t *lenStart = pos_;
      if (!readVarint(len))
        return failVarint(lenStart, "length of field " + std::to_string(f.number));
      if (len > static_cast<uint64_t>(end_ - pos_))
        return fail(f.begin, "field " + std::to_string(f.number) + " claims " + std::to_string(len) +
                                 " bytes but only " + std::to_string(end_ - pos_) +
                                 " remain (truncated or corrupted file)");
      f.payload = pos_;
      pos_ += len;
      break;
    }
    case WireType::StartGroup:
      f.payload = pos_;
      if (!skipGroup(f.number, 0))
        return false;
      break;
    case WireType::EndGroup:
      return fail(f.begin, "unexpected end-group tag for field " + std::to_string(f.number));
    }
    f.end = pos_;
    return true;
  }

  bool failed() const { return !error_.empty(); }
  const std::string &error() const { return error_; }
  /// Byte offset of `p` in the file.
  size_t offsetOf(const uint8_t *p) const { return static_cast<size_t>(p - base_); }

private:
  /// Reads a varint; on failure leaves pos_ at the end (truncated) or past
  /// the tenth byte (overlong), and the caller reports it with failVarint.
  bool readVarint(uint64_t &v) {
    v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
      if (pos_ >= end_)
        return false;
      uint8_t b = *pos_++;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80))
        return true;
      if (shift == 63)
        break;
    }
    return false;
  }

  bool failVarint(const uint8_t *start, const std::string &what) {
    bool truncated = pos_ >= end_;
    return fail(start, what + (truncated ? " runs past the end (truncated or corrupted file)"
                                         : " is not a valid varint"));
  }

  bool fixed(Field &f, size_t n) {
    if (static_cast<size_t>(end_ - pos_) < n)
      return fail(f.begin, "fixed-size field " + std::to_string(f.number) +
                               " runs past the end (truncated or corrupted file)");
    f.payload = pos_;
    pos_ += n;
    f.end = pos_;
    return true;
  }

  bool skipGroup(uint32_t number, unsigned depth) {
    if (depth > 32)
      return fail(pos_, "groups nested too deeply");
    Field inner;
    while (pos_ < end_) {
      const uint8_t *start = pos_;
      uint64_t tag = 0;
      if (!readVarint(tag))
        return failVarint(start, "field tag");
      auto wt = static_cast<unsigned>(tag & 7);
      auto num = static_cast<uint32_t>(tag >> 3);
      if (wt == 4)
        return num == number ? true : fail(start, "mismatched end-group tag");
      pos_ = start;
      if (wt == 3) {
        readVarint(tag);
        if (!skipGroup(num, depth + 1))
          return false;
        continue;
      }
      if (!next(inner))
        return false;
    }
    return fail(pos_, "group of field " + std::to_string(number) + " is not closed");
  }

  bool fail(const uint8_t *at, const std::string &msg) {
    if (error_.empty())
      error_ = msg + " (at byte " + std::to_string(at - base_) + ")";
    pos_ = end_;
    return false;
  }

  const uint8_t *base_;
  const uint8_t *pos_;
  const uint8_t *end_;
  std::string error_;
};

} // namespace onnxslim::wire

//===- transforms/PointerMap.h - Flat hash map keyed by pointers -*- C++ -*-===//
//
// An open-addressing hash map from IR object pointers (nodes, values) to a
// small value, for the tables passes keep per node: the greedy driver's
// worklist index, liveness, memos. One flat array of slots with linear
// probing and tombstones, so inserts, lookups and erases touch one or two
// cache lines and never allocate per entry (std::unordered_map allocates a
// node per insert, which dominated the driver's profile on large graphs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnxslim {

template <typename V> class PointerMap {
public:
  /// Given an expected number of entries, Execute: sizes the table so that
  /// that many inserts do not rehash.
  void reserve(size_t n) {
    size_t want = 16;
    while (want * 7 < n * 10 + 10)
      want *= 2;
    if (want > slots_.size())
      rehash(want);
  }

  /// The value stored for `key`, or null.
  V *find(const void *key) {
    if (slots_.empty())
      return nullptr;
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.key == key)
        return &s.value;
      if (s.key == kEmpty)
        return nullptr;
    }
  }
  bool contains(const void *key) { return find(key) != nullptr; }

  /// Given a key and a value, Execute: inserts them unless the key is present,
  /// Result: the stored value and whether it was inserted.
  std::pair<V *, bool> insert(const void *key, V value) {
    if ((used_ + 1) * 10 > slots_.size() * 7)
      rehash(slots_.empty() ? 16 : (size_ + 1) * 10 > slots_.size() * 5 ? slots_.size() * 2 : slots_.size());
    Slot *tomb = nullptr;
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.key == key)
        return {&s.value, false};
      if (s.key == kTombstone && !tomb)
        tomb = &s;
      if (s.key == kEmpty) {
        Slot *target = tomb ? tomb : &s;
        if (!tomb)
          ++used_;
        target->key = key;
        target->value = value;
        ++size_;
        return {&target->value, true};
      }
    }
  }

  /// Given a key, Execute: removes it if present, Result: whether it was.
  bool erase(const void *key) {
    if (slots_.empty())
      return false;
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.key == key) {
        s.key = kTombstone;
        --size_;
        return true;
      }
      if (s.key == kEmpty)
        return false;
    }
  }

  /// Removes every entry (keeps the capacity).
  void clear() {
    for (Slot &s : slots_)
      s.key = kEmpty;
    size_ = used_ = 0;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

private:
  struct Slot {
    const void *key = nullptr;
    V value{};
  };
  static constexpr const void *kEmpty = nullptr;
  static inline const void *const kTombstone = reinterpret_cast<const void *>(uintptr_t{1});

  size_t bucket(const void *key) const {
    uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    size_ = used_ = 0;
    for (const Slot &s : old)
      if (s.key != kEmpty && s.key != kTombstone)
        insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t used_ = 0; ///< live entries plus tombstones
};

/// A set of pointers (a PointerMap without values).
class PointerSet {
public:
  void reserve(size_t n) { map_.reserve(n); }
  /// Result: whether `key` was newly inserted.
  bool insert(const void *key) { return map_.insert(key, 1).second; }
  bool contains(const void *key) const { return const_cast<PointerMap<uint8_t> &>(map_).find(key) != nullptr; }
  bool erase(const void *key) { return map_.erase(key); }
  void clear() { map_.clear(); }
  size_t size() const { return map_.size(); }

private:
  PointerMap<uint8_t> map_;
};

} // namespace onnxslim

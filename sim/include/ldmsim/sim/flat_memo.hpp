// A memo for the control core's hot lookups: the blocking search asks tens of thousands of times per layer for
// the prices of a few thousand distinct reads, and std::unordered_map's node chasing and prime modulo cost more
// than the pricing they save. Open addressing with linear probing in one flat array; grow-only.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

namespace ldmsim {

/// Mixes words into a hash for a FlatMemo key (FlatMemo remixes it, so this may be weak in its low bits).
inline std::size_t hash_words(std::initializer_list<std::size_t> words) {
  std::size_t h = 0;
  for (const std::size_t v : words) h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
  return h;
}

/// Keys and values are small and cheap to copy; `Hash` may be weak in its low bits (the slot is taken from
/// the high bits of a multiplicative remix).
template <typename Key, typename Value, typename Hash = std::hash<Key>>
class FlatMemo {
 public:
  /// The value memoised for `key`, or `make()`'s, stored.
  template <typename Make>
  Value get_or(const Key& key, Make&& make) {
    if (slots_.empty()) rehash(kInitialSlots);
    std::size_t at = slot_of(key);
    for (; used(slots_[at]); at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at].key == key) return slots_[at].value;
    }
    assert(!making_ && "a FlatMemo's make() must not use the same memo");
    making_ = true;
    struct Making {
      bool& flag;
      ~Making() { flag = false; }  // also when make() throws
    } making{making_};
    const Value value = make();
    if (2 * (size_ + 1) > slots_.size()) {
      rehash(2 * slots_.size());
      at = free_slot(key);
    }
    slots_[at] = {key, stamp_, value};
    ++size_;
    return value;
  }
  std::size_t size() const { return size_; }
  /// Forgets every value (and gives the table's memory back).
  void clear() {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
    shift_ = 0;
    stamp_ = 1;
  }
  /// Forgets every value but keeps the table, in constant time: for a memo refilled many times (one per search)
  /// that would otherwise grow from nothing, and fault its memory in, each time.
  void forget() {
    size_ = 0;
    if (++stamp_ == 0) {  // the stamps wrapped: slots of 2^32 fills ago would look used
      std::fill(slots_.begin(), slots_.end(), Slot{});
      stamp_ = 1;
    }
  }

 private:
  static constexpr std::size_t kInitialSlots = 64;
  struct Slot {  // the stamp before the value: in the bytes the value's alignment leaves after a key that does not
                 // fill them
    Key key;
    std::uint32_t stamp;  ///< the fill that wrote the slot: used when it is the current one (0: never written)
    Value value;
  };
  bool used(const Slot& slot) const { return slot.stamp == stamp_; }

  std::size_t slot_of(const Key& key) const {
    const std::uint64_t mixed = static_cast<std::uint64_t>(Hash{}(key)) * 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(mixed >> (64 - shift_));
  }
  std::size_t free_slot(const Key& key) const {
    std::size_t at = slot_of(key);
    while (used(slots_[at])) at = (at + 1) & (slots_.size() - 1);
    return at;
  }
  void rehash(std::size_t slots) {
    std::vector<Slot> old(slots, Slot{});
    old.swap(slots_);
    shift_ = static_cast<unsigned>(std::countr_zero(slots));
    for (const Slot& slot : old) {
      if (used(slot)) slots_[free_slot(slot.key)] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  unsigned shift_ = 0;       // log2 of the slot count
  std::uint32_t stamp_ = 1;  // the current fill (forget() starts another)
  bool making_ = false;
};

}  // namespace ldmsim

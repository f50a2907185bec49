// Constant packs: building them on the control core, reading them on a compute core (constant_pack.hpp).
#include "ldmsim/kernels/constant_pack.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "ldmsim/kernels/tiling.hpp"

namespace ldmsim::packing {

namespace {

constexpr std::size_t kWord = sizeof(std::uint32_t);

std::uint32_t word_at(std::span<const std::byte> bytes, std::size_t word) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + word * kWord, kWord);
  return v;
}

void put_word(std::vector<std::byte>& bytes, std::size_t word, std::uint32_t v) {
  std::memcpy(bytes.data() + word * kWord, &v, kWord);
}

std::size_t value_words(std::size_t count) {
  return (count + 1) / 2;
}

}  // namespace

std::size_t build_size(std::span<const PackEntry> entries) {
  std::size_t words = kHeaderWords + kEntryWords * entries.size();
  for (const PackEntry& e : entries) words += value_words(e.count);
  return words * kWord;
}

std::vector<std::byte> build_pack(std::span<const PackEntry> entries, std::span<const std::span<const f16>> inputs) {
  for (const PackEntry& e : entries) {
    if (e.input >= inputs.size() || inputs[e.input].empty()) {
      throw PackError(fmt::format("constant pack: entry for input {} has no values to pack", e.input));
    }
    if (e.count == 0 || e.count > inputs[e.input].size() || e.begin >= inputs[e.input].size()) {
      throw PackError(fmt::format("constant pack: entry for input {} asks for {} values from index {} of {}", e.input,
                                  e.count, e.begin, inputs[e.input].size()));
    }
  }
  const std::size_t bytes = build_size(entries);
  if (bytes > std::numeric_limits<std::uint32_t>::max()) {
    throw PackError(fmt::format("constant pack: {} bytes do not fit the marker area's 32-bit size", bytes));
  }
  std::vector<std::byte> out(bytes);
  put_word(out, 0, kPackMagic);
  put_word(out, 1, static_cast<std::uint32_t>(entries.size()));
  put_word(out, 2, static_cast<std::uint32_t>(out.size()));
  std::size_t at = kHeaderWords + kEntryWords * entries.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const PackEntry& e = entries[i];
    const std::span<const f16> values = inputs[e.input];
    const std::size_t marker = kHeaderWords + kEntryWords * i;
    put_word(out, marker, e.input);
    put_word(out, marker + 1, e.begin);
    put_word(out, marker + 2, e.count);
    put_word(out, marker + 3, static_cast<std::uint32_t>(at * kWord));
    auto* dst = reinterpret_cast<f16*>(out.data() + at * kWord);
    for (std::size_t j = 0; j < e.count; ++j) dst[j] = values[(e.begin + j) % values.size()];
    at += value_words(e.count);
  }
  return out;
}

PackView PackView::parse(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderWords * kWord || bytes.size() % kWord != 0) {
    throw PackError(fmt::format("constant pack: {} bytes is not a whole marker area (at least {} bytes, whole words)",
                                bytes.size(), kHeaderWords * kWord));
  }
  if (const std::uint32_t magic = word_at(bytes, 0); magic != kPackMagic) {
    throw PackError(fmt::format("constant pack: magic is {:#010x}, expected {:#010x}", magic, kPackMagic));
  }
  const std::size_t words = bytes.size() / kWord;
  const std::uint32_t size = word_at(bytes, 2);
  if (size != bytes.size()) {
    throw PackError(fmt::format("constant pack: its size field says {} bytes, {} were read", size, bytes.size()));
  }
  const std::uint32_t count = word_at(bytes, 1);
  if (count > (words - kHeaderWords) / kEntryWords) {
    throw PackError(
        fmt::format("constant pack: entry count {} does not fit a marker area in {} bytes", count, bytes.size()));
  }
  PackView view;
  view.bytes_ = bytes;
  const std::size_t values_from = (kHeaderWords + kEntryWords * count) * kWord;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t marker = kHeaderWords + kEntryWords * i;
    const PackEntry e{word_at(bytes, marker), word_at(bytes, marker + 1), word_at(bytes, marker + 2),
                      word_at(bytes, marker + 3)};
    const std::uint64_t end = static_cast<std::uint64_t>(e.offset) + static_cast<std::uint64_t>(e.count) * sizeof(f16);
    if (e.count == 0) throw PackError(fmt::format("constant pack: entry {} (input {}) holds no values", i, e.input));
    if (e.offset % kWord != 0 || e.offset < values_from || end > bytes.size()) {
      throw PackError(
          fmt::format("constant pack: entry {} (input {}) has offset {} and {} values, outside the values "
                      "area [{}, {}) or not on a word",
                      i, e.input, e.offset, e.count, values_from, bytes.size()));
    }
    view.entries_.push_back(e);
  }
  return view;
}

std::span<const f16> PackView::values(std::size_t i) const {
  const PackEntry& e = entries_.at(i);
  return {reinterpret_cast<const f16*>(bytes_.data() + e.offset), e.count};
}

std::size_t PackView::find(std::uint32_t input) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].input == input) return i;
  }
  throw PackError(fmt::format("constant pack: no entry of input {}", input));
}

PackFetch fetch_pack(Core& core, const StagedPacks& packs, LdmSpan<f16> buffer, std::source_location site) {
  const std::size_t me = tiling::worker_index(core);
  if (me >= packs.addr.size() || packs.addr[me] == 0) return {};
  const std::size_t bytes = packs.bytes[me];
  if (bytes > buffer.size() * sizeof(f16)) {
    throw PackError(
        fmt::format("constant pack: core's pack is {} bytes, its buffer {}", bytes, buffer.size() * sizeof(f16)));
  }
  const LdmSpan<f16> dst = buffer.first(bytes / sizeof(f16));
  return {core.get(dst, DevicePtr<const f16>(packs.addr[me]), site), bytes};
}

LdmSpan<f16> alloc_pack_buffer(Core& core, const StagedPacks& packs) {
  const std::size_t line = core.arch().dma.transaction_bytes;
  const std::size_t bytes = (packs.max_bytes + line - 1) / line * line;
  return core.ldm().alloc<f16>(bytes / sizeof(f16), line);
}

}  // namespace ldmsim::packing

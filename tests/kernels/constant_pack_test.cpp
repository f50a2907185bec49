// Constant packs (kernels/constant_pack.hpp): the marker area and values round-trip, cyclic ranges, and every
// malformed pack is refused by name, never read out of bounds (a deterministic mutation sweep stands in for the
// fuzz harness in CI).
#include "ldmsim/kernels/constant_pack.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

using namespace ldmsim;
using namespace ldmsim::packing;

namespace {

std::vector<f16> halves(std::initializer_list<float> values) {
  std::vector<f16> out;
  for (float v : values) out.emplace_back(v);
  return out;
}

std::uint32_t word(const std::vector<std::byte>& pack, std::size_t i) {
  std::uint32_t v = 0;
  std::memcpy(&v, pack.data() + 4 * i, 4);
  return v;
}

void set_word(std::vector<std::byte>& pack, std::size_t i, std::uint32_t v) {
  std::memcpy(pack.data() + 4 * i, &v, 4);
}

struct Sample {
  std::vector<f16> a = halves({1, 2, 3, 4, 5}), b = halves({-1, -2, -3});
  std::vector<std::span<const f16>> inputs{std::span<const f16>(), a, b};
  std::vector<PackEntry> entries{{1, 3, 4, 0}, {2, 0, 3, 0}};  // a[3], a[4], a[0], a[1] (wrapping); all of b
  std::vector<std::byte> pack = build_pack(entries, inputs);
};

}  // namespace

TEST_CASE("a constant pack holds its marker area, then each entry's values on a word", "[kernels][packs]") {
  const Sample s;
  // 3 header words, 2 entries of 4 words, then ceil(4 / 2) + ceil(3 / 2) value words.
  REQUIRE(s.pack.size() == 4 * (3 + 8 + 2 + 2));
  CHECK(word(s.pack, 0) == kPackMagic);
  CHECK(word(s.pack, 1) == 2);
  CHECK(word(s.pack, 2) == s.pack.size());
  CHECK(word(s.pack, 3) == 1);       // entry 0: input 1,
  CHECK(word(s.pack, 4) == 3);       // from index 3,
  CHECK(word(s.pack, 5) == 4);       // 4 values,
  CHECK(word(s.pack, 6) == 4 * 11);  // right after the marker area
  CHECK(word(s.pack, 10) == 4 * 13);
  const PackView view = PackView::parse(s.pack);
  REQUIRE(view.entries().size() == 2);
  CHECK(view.entries()[0] == PackEntry{1, 3, 4, 44});
  const auto a = view.values(0);
  REQUIRE(a.size() == 4);
  CHECK(static_cast<float>(a[0]) == 4.0f);
  CHECK(static_cast<float>(a[1]) == 5.0f);
  CHECK(static_cast<float>(a[2]) == 1.0f);  // wrapped to index 0
  CHECK(static_cast<float>(a[3]) == 2.0f);
  CHECK(view.find(1) == 0);
  CHECK(view.find(2) == 1);
  CHECK(static_cast<float>(view.values(view.find(2))[2]) == -3.0f);
  CHECK_THROWS_WITH(view.find(3), Catch::Contains("no entry of input 3"));
}

TEST_CASE("building a pack refuses entries its inputs cannot fill", "[kernels][packs]") {
  const Sample s;
  const std::vector<PackEntry> missing{{0, 0, 1, 0}};
  CHECK_THROWS_WITH(build_pack(missing, s.inputs), Catch::Contains("input 0 has no values"));
  const std::vector<PackEntry> beyond{{3, 0, 1, 0}};
  CHECK_THROWS_WITH(build_pack(beyond, s.inputs), Catch::Contains("input 3 has no values"));
  const std::vector<PackEntry> too_many{{2, 0, 4, 0}};
  CHECK_THROWS_WITH(build_pack(too_many, s.inputs), Catch::Contains("asks for 4 values from index 0 of 3"));
  const std::vector<PackEntry> past_end{{2, 3, 1, 0}};
  CHECK_THROWS_WITH(build_pack(past_end, s.inputs), Catch::Contains("from index 3 of 3"));
  const std::vector<PackEntry> none{{2, 0, 0, 0}};
  CHECK_THROWS_WITH(build_pack(none, s.inputs), Catch::Contains("asks for 0 values"));
}

TEST_CASE("a malformed pack is refused naming the field", "[kernels][packs]") {
  const Sample s;
  auto broken = [&](auto&& edit) {
    std::vector<std::byte> p = s.pack;
    edit(p);
    return p;
  };
  CHECK_THROWS_WITH(PackView::parse(std::span<const std::byte>(s.pack).first(8)),
                    Catch::Contains("8 bytes is not a whole marker area"));
  CHECK_THROWS_WITH(PackView::parse(std::span<const std::byte>(s.pack).first(s.pack.size() - 2)),
                    Catch::Contains("not a whole marker area"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 0, 0x12345678); })),
                    Catch::Contains("magic is 0x12345678"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 2, 12); })),
                    Catch::Contains("size field says 12 bytes, 60 were read"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 1, 0xffffffffu); })),
                    Catch::Contains("entry count 4294967295 does not fit"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 6, 4 * 60); })),
                    Catch::Contains("entry 0 (input 1) has offset 240"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 6, 4); })),  // inside the marker area
                    Catch::Contains("outside the values area [44, 60)"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 6, 46); })), Catch::Contains("not on a word"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 9, 0xfffffff0u); })),  // count past the end
                    Catch::Contains("entry 1 (input 2)"));
  CHECK_THROWS_WITH(PackView::parse(broken([](auto& p) { set_word(p, 9, 0); })),
                    Catch::Contains("entry 1 (input 2) holds no values"));
}

TEST_CASE("any corruption of a pack parses within its bytes or is refused", "[kernels][packs]") {
  const Sample s;
  std::mt19937 rng(7);
  std::size_t refused = 0, parsed = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::byte> p = s.pack;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) p[rng() % p.size()] = static_cast<std::byte>(rng());
    if (rng() % 8 == 0) p.resize(rng() % (p.size() + 8));
    try {
      const PackView view = PackView::parse(p);
      for (std::size_t i = 0; i < view.entries().size(); ++i) {
        const auto values = view.values(i);
        const auto* begin = reinterpret_cast<const std::byte*>(values.data());
        REQUIRE(begin >= p.data());
        REQUIRE(begin + values.size_bytes() <= p.data() + p.size());
      }
      ++parsed;
    } catch (const PackError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(parsed > 0);  // value bytes may change freely
}

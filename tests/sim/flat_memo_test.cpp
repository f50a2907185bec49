// FlatMemo: every key's value made once and found again, through growth and with weak hashes.
#include "ldmsim/sim/flat_memo.hpp"

#include <catch2/catch.hpp>
#include <cstdint>

namespace {

struct Pair {
  std::uint64_t a, b;
  bool operator==(const Pair&) const = default;
};
struct PairHash {
  std::size_t operator()(const Pair& p) const { return ldmsim::hash_words({p.a, p.b}); }
};
struct ConstantHash {  // every key collides: only probing tells them apart
  std::size_t operator()(const Pair&) const { return 7; }
};

template <typename Hash>
void check_memo() {
  ldmsim::FlatMemo<Pair, double, Hash> memo;
  int made = 0;
  const auto value_of = [](const Pair& p) { return static_cast<double>(p.a) * 1000.0 + static_cast<double>(p.b); };
  for (std::uint64_t a = 0; a < 40; ++a) {
    for (std::uint64_t b = 0; b < 25; ++b) {
      const Pair key{a << 20, b};  // high bits only in `a`: a hash weak in its low bits
      CHECK(memo.get_or(key, [&] { return ++made, value_of(key); }) == value_of(key));
    }
  }
  CHECK(made == 1000);
  CHECK(memo.size() == 1000);
  for (std::uint64_t a = 0; a < 40; ++a) {
    for (std::uint64_t b = 0; b < 25; ++b) {
      const Pair key{a << 20, b};
      CHECK(memo.get_or(key, [&] { return ++made, -1.0; }) == value_of(key));
    }
  }
  CHECK(made == 1000);  // nothing made twice, across every growth of the table
}

}  // namespace

TEST_CASE("a flat memo makes each value once and keeps it through growth", "[flat_memo]") {
  check_memo<PairHash>();
}

TEST_CASE("a flat memo stays correct when every key hashes alike", "[flat_memo]") {
  check_memo<ConstantHash>();
}

TEST_CASE("a cleared flat memo makes its values again", "[flat_memo]") {
  ldmsim::FlatMemo<Pair, double, PairHash> memo;
  int made = 0;
  for (std::uint64_t a = 0; a < 100; ++a) memo.get_or({a, 1}, [&] { return ++made, 1.0; });
  memo.clear();
  CHECK(memo.size() == 0);
  CHECK(memo.get_or({5, 1}, [&] { return ++made, 2.0; }) == 2.0);
  CHECK(made == 101);
  CHECK(memo.size() == 1);
}

TEST_CASE("a forgotten flat memo makes its values again in the table it kept", "[flat_memo]") {
  ldmsim::FlatMemo<Pair, double, PairHash> memo;
  int made = 0;
  for (std::uint64_t a = 0; a < 300; ++a) memo.get_or({a, 1}, [&] { return ++made, 1.0; });
  memo.forget();
  CHECK(memo.size() == 0);
  // Every key is made again, with its new value: no slot of the first fill answers for the second.
  for (std::uint64_t a = 0; a < 300; ++a) CHECK(memo.get_or({a, 1}, [&] { return ++made, 2.0; }) == 2.0);
  CHECK(made == 600);
  CHECK(memo.size() == 300);
  for (std::uint64_t a = 0; a < 300; ++a) CHECK(memo.get_or({a, 1}, [&] { return ++made, 3.0; }) == 2.0);
  CHECK(made == 600);
  // A smaller fill after a larger one probes past the stale slots it finds.
  memo.forget();
  for (std::uint64_t a = 0; a < 5; ++a) CHECK(memo.get_or({a, 1}, [&] { return ++made, 4.0; }) == 4.0);
  CHECK(memo.get_or({299, 1}, [&] { return ++made, 5.0; }) == 5.0);
  CHECK(made == 606);
}

// ProductQueue: the host products of cores that share a B tile, queued and run as one multiply_add over all their
// rows. What the queue runs must be bit-identical to calling multiply_add for each product in the order they were
// added, whichever products share a tile, however the rows are split, and whenever the queue is made to run.
#include "../../kernels/src/ops/product_queue.hpp"  // white box: a kernel's private helper

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "../../kernels/src/ops/tile_math.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace {

using ldmsim::ops::b_pitch_for;
using ldmsim::ops::multiply_add;
using ldmsim::ops::ProductQueue;
using ldmsim::ops::zero_padding;

/// fp16 values as floats, as multiply_add's operands are.
std::vector<float> random_floats(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-2.0F, 2.0F);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(ldmsim::f16(value(rng)));
  return v;
}

/// A B tile in multiply_add's layout (padding columns zero).
std::vector<float> b_tile(std::size_t depth, std::size_t cols, std::mt19937& rng) {
  std::vector<float> b = random_floats(depth * b_pitch_for(cols), rng);
  zero_padding(b.data(), depth, cols, b_pitch_for(cols));
  return b;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

/// One core's part: its A rows for each chunk, and its accumulators.
struct Member {
  std::size_t rows;
  std::vector<std::vector<float>> a;  ///< per chunk, rows x depth
  std::vector<float> acc;             ///< rows x cols, pitch cols
};

}  // namespace

TEST_CASE("queued products of a team give the bits of one multiply_add per member in turn") {
  std::mt19937 rng(11);
  const std::size_t depth = 40, cols = 72, chunks = 3;
  // Members with 2 rows each and one with 3 and one with 1: the joint call's 4-row blocks straddle members.
  const std::vector<std::size_t> member_rows{2, 2, 3, 1, 2, 2};
  std::vector<std::vector<float>> tiles;
  for (std::size_t c = 0; c < chunks; ++c) tiles.push_back(b_tile(depth, cols, rng));
  std::vector<Member> queued, direct;
  for (const std::size_t rows : member_rows) {
    Member m{rows, {}, random_floats(rows * cols, rng)};
    for (std::size_t c = 0; c < chunks; ++c) m.a.push_back(random_floats(rows * depth, rng));
    queued.push_back(m);
    direct.push_back(m);
  }
  ProductQueue queue;
  for (std::size_t c = 0; c < chunks; ++c) {
    for (std::size_t i = 0; i < member_rows.size(); ++i) {  // each member in turn, as a team runs after its barrier
      Member& d = direct[i];
      multiply_add(d.a[c].data(), tiles[c].data(), d.acc.data(), d.rows, cols, depth, cols, b_pitch_for(cols));
      Member& q = queued[i];
      // The member's next chunk runs its earlier one first: the queue then holds one chunk of the whole team.
      queue.add(q.a[c].data(), tiles[c].data(), q.acc.data(), q.rows, cols, depth, cols, b_pitch_for(cols));
      if (c == 0 && i == 0) CHECK_FALSE(queue.empty());
    }
  }
  queue.flush();
  CHECK(queue.empty());
  for (std::size_t i = 0; i < member_rows.size(); ++i) CHECK(same_bits(queued[i].acc, direct[i].acc));
}

TEST_CASE("products of different tiles interleaved in the queue keep each accumulator's order") {
  std::mt19937 rng(12);
  const std::size_t depth = 17, cols = 33, pitch = b_pitch_for(cols);
  const std::vector<float> b1 = b_tile(depth, cols, rng), b2 = b_tile(depth, cols, rng);
  std::vector<float> acc1 = random_floats(2 * cols, rng), acc2 = random_floats(3 * cols, rng);
  std::vector<float> want1 = acc1, want2 = acc2;
  const std::vector<float> a1 = random_floats(2 * depth, rng), a2 = random_floats(3 * depth, rng);
  const std::vector<float> a3 = random_floats(2 * depth, rng);
  // b2's products would run as one call before b1's, whose first product came later: acc1 would gain a3 b2
  // before a1 b1.
  ProductQueue queue;
  queue.add(a2.data(), b2.data(), acc2.data(), 3, cols, depth, cols, pitch);
  queue.add(a1.data(), b1.data(), acc1.data(), 2, cols, depth, cols, pitch);
  queue.add(a3.data(), b2.data(), acc1.data(), 2, cols, depth, cols, pitch);  // acc1 again: a1 b1 first
  queue.flush();
  multiply_add(a2.data(), b2.data(), want2.data(), 3, cols, depth, cols, pitch);
  multiply_add(a1.data(), b1.data(), want1.data(), 2, cols, depth, cols, pitch);
  multiply_add(a3.data(), b2.data(), want1.data(), 2, cols, depth, cols, pitch);
  CHECK(same_bits(acc1, want1));
  CHECK(same_bits(acc2, want2));
}

TEST_CASE("the queue runs before a tile it reads changes or an accumulator it writes is read") {
  std::mt19937 rng(13);
  const std::size_t depth = 8, cols = 16, pitch = b_pitch_for(cols);
  std::vector<float> b = b_tile(depth, cols, rng), other = b_tile(depth, cols, rng);
  std::vector<float> acc(cols, 0.0F), unrelated(cols, 0.0F);
  const std::vector<float> a = random_floats(depth, rng);
  std::vector<float> want(cols, 0.0F);
  multiply_add(a.data(), b.data(), want.data(), 1, cols, depth, cols, pitch);

  ProductQueue queue;
  queue.add(a.data(), b.data(), acc.data(), 1, cols, depth, cols, pitch);
  queue.flush_reading(other.data(), other.data() + other.size());
  queue.flush_touching(unrelated.data(), unrelated.data() + unrelated.size());
  CHECK_FALSE(queue.empty());  // neither concerns the queued product
  CHECK(same_bits(acc, std::vector<float>(cols, 0.0F)));

  queue.flush_reading(b.data() + b.size() - 1, b.data() + b.size());  // the tile's last element
  CHECK(queue.empty());
  CHECK(same_bits(acc, want));

  std::fill(acc.begin(), acc.end(), 0.0F);
  queue.add(a.data(), b.data(), acc.data(), 1, cols, depth, cols, pitch);
  queue.flush_touching(acc.data() + cols - 1, acc.data() + cols);  // the accumulator's last element
  CHECK(queue.empty());
  CHECK(same_bits(acc, want));
}

TEST_CASE("a queued product does not keep its A rows: the caller's buffer may be reused at once") {
  std::mt19937 rng(14);
  const std::size_t depth = 12, cols = 24, pitch = b_pitch_for(cols);
  const std::vector<float> b = b_tile(depth, cols, rng);
  std::vector<float> scratch = random_floats(2 * depth, rng);
  std::vector<float> acc(2 * cols, 0.0F), want(2 * cols, 0.0F);
  multiply_add(scratch.data(), b.data(), want.data(), 2, cols, depth, cols, pitch);
  ProductQueue queue;
  queue.add(scratch.data(), b.data(), acc.data(), 2, cols, depth, cols, pitch);
  std::fill(scratch.begin(), scratch.end(), 99.0F);  // the next core's A lands in the same host scratch
  queue.flush();
  CHECK(same_bits(acc, want));
}

TEST_CASE("products of two tiles queued alternately run as one call per tile and keep the bits") {
  // The tiles' rows are not adjacent in the queue: each tile's A rows are gathered before its call.
  std::mt19937 rng(15);
  const std::size_t depth = 21, cols = 40, pitch = b_pitch_for(cols);
  const std::vector<float> b1 = b_tile(depth, cols, rng), b2 = b_tile(depth, cols, rng);
  const std::vector<std::size_t> rows{2, 1, 3, 2, 2, 1};
  std::vector<std::vector<float>> a, queued, direct;
  for (const std::size_t r : rows) {
    a.push_back(random_floats(r * depth, rng));
    queued.push_back(random_floats(r * cols, rng));
  }
  direct = queued;
  ProductQueue queue;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float* b = i % 2 == 0 ? b1.data() : b2.data();
    queue.add(a[i].data(), b, queued[i].data(), rows[i], cols, depth, cols, pitch);
    multiply_add(a[i].data(), b, direct[i].data(), rows[i], cols, depth, cols, pitch);
  }
  CHECK_FALSE(queue.empty());  // no accumulator came twice: nothing ran yet
  queue.flush();
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(same_bits(queued[i], direct[i]));
}

TEST_CASE("products into accumulators about to be freed are dropped and the others still run") {
  std::mt19937 rng(16);
  const std::size_t depth = 9, cols = 16, pitch = b_pitch_for(cols);
  const std::vector<float> b = b_tile(depth, cols, rng);
  const std::vector<float> a1 = random_floats(2 * depth, rng), a2 = random_floats(depth, rng);
  std::vector<float> freed(2 * cols, 0.0F), kept(cols, 0.0F), want(cols, 0.0F);
  multiply_add(a2.data(), b.data(), want.data(), 1, cols, depth, cols, pitch);
  ProductQueue queue;
  queue.add(a1.data(), b.data(), freed.data(), 2, cols, depth, cols, pitch);
  queue.add(a2.data(), b.data(), kept.data(), 1, cols, depth, cols, pitch);
  queue.discard_touching(freed.data(), freed.data() + freed.size());
  CHECK(same_bits(freed, std::vector<float>(2 * cols, 0.0F)));  // never written
  CHECK_FALSE(queue.empty());
  queue.flush();
  CHECK(same_bits(freed, std::vector<float>(2 * cols, 0.0F)));
  CHECK(same_bits(kept, want));
  queue.discard_touching(kept.data(), kept.data() + kept.size());  // nothing queued: nothing happens
  CHECK(queue.empty());
}

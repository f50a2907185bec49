// PE-mode data movement, byte for byte: contiguous get and put, and strided get and put with athread's meaning
// (blocks of bsize bytes in main memory, `stride` bytes skipped between blocks, packed in ldm). Bytes outside the
// transferred ranges must stay untouched on both sides.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;

namespace {

constexpr std::byte kLdmFill{0xEE};
constexpr std::byte kMainFill{0x11};

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + seed) & 0xFF);
  return v;
}

/// Runs `body` on core 1 with a 512-byte ldm buffer (prefilled with kLdmFill at ldm offset 0) and returns the
/// buffer's final bytes.
template <typename Body>
std::vector<std::byte> run_on_core1(Machine& m, Body body) {
  std::vector<std::byte> snapshot(512);
  m.launch(LaunchSpec{.name = "pe"}, [&snapshot, body](Core& core) {
     if (core.id() != 1) return;
     const LdmAddr at = core.ldm().alloc_bytes(512);
     std::memset(core.ldm().bytes(at), 0xEE, 512);
     body(core, at);
     std::memcpy(snapshot.data(), core.ldm().bytes(at), 512);
   }).join();
  return snapshot;
}

DmaRequest request(DmaOp op, DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint64_t bsize = 0,
                   std::uint64_t stride = 0) {
  return testing::dma_request(op, main, ldm, length, bsize, stride, "dma");
}

}  // namespace

TEST_CASE("a PE get copies exactly its range into the issuing core's ldm", "[modes]") {
  Machine m{Arch::preset("tiny")};
  const auto src = pattern(1024, 3);
  const DeviceAddr x = m.allocate_bytes(1024);
  m.write_bytes(x, src);
  const auto ldm =
      run_on_core1(m, [x](Core& core, LdmAddr at) { core.dma(request(DmaOp::kGet, x + 64, at + 32, 256)).wait(); });
  for (std::size_t i = 0; i < 512; ++i) {
    INFO("ldm byte " << i);
    REQUIRE(ldm[i] == (i >= 32 && i < 288 ? src[64 + i - 32] : kLdmFill));
  }
  std::vector<std::byte> after(1024);
  m.read_bytes(x, after);
  CHECK(after == src);  // a get never writes main memory
}

TEST_CASE("a PE put copies exactly its range into main memory", "[modes]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(1024);
  m.write_bytes(x, std::vector<std::byte>(1024, kMainFill));
  const auto data = pattern(512, 5);
  const auto ldm = run_on_core1(m, [x, &data](Core& core, LdmAddr at) {
    std::memcpy(core.ldm().bytes(at), data.data(), 512);
    core.dma(request(DmaOp::kPut, x + 64, at + 32, 256)).wait();
  });
  CHECK(ldm == data);  // a put never writes ldm
  std::vector<std::byte> out(1024);
  m.read_bytes(x, out);
  for (std::size_t i = 0; i < 1024; ++i) {
    INFO("main byte " << i);
    REQUIRE(out[i] == (i >= 64 && i < 320 ? data[32 + i - 64] : kMainFill));
  }
}

TEST_CASE("the typed get and put move whole elements", "[modes]") {
  Machine m{Arch::preset("tiny")};
  std::vector<std::uint32_t> in(64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i * 1000 + 1);
  auto x = m.alloc<std::uint32_t>(64);
  auto y = m.alloc<std::uint32_t>(64);
  m.upload(x, in);
  m.launch(
       LaunchSpec{},
       [](Core& core, DevicePtr<const std::uint32_t> src, DevicePtr<std::uint32_t> dst) {
         auto buf = core.ldm().alloc<std::uint32_t>(16);
         const std::size_t off = static_cast<std::size_t>(core.id()) * 16;
         core.get(buf, src + off).wait();
         for (auto& v : buf) v += 7;
         core.put(dst + off, LdmSpan<const std::uint32_t>(buf)).wait();
       },
       DevicePtr<const std::uint32_t>(x), y)
      .join();
  std::vector<std::uint32_t> out(64);
  m.download(out, DevicePtr<const std::uint32_t>(y));
  for (std::size_t i = 0; i < 64; ++i) REQUIRE(out[i] == in[i] + 7);
}

TEST_CASE("a strided get gathers bsize-byte blocks, skipping stride bytes, packed in ldm", "[modes]") {
  Machine m{Arch::preset("tiny")};
  const auto src = pattern(4096, 9);
  const DeviceAddr x = m.allocate_bytes(4096);
  m.write_bytes(x, src);
  // 5 blocks of 12 bytes; block i starts at 8 + i * (12 + 20).
  const auto ldm = run_on_core1(
      m, [x](Core& core, LdmAddr at) { core.dma(request(DmaOp::kGet, x + 8, at + 16, 60, 12, 20)).wait(); });
  std::vector<std::byte> expected(512, kLdmFill);
  for (std::size_t b = 0; b < 5; ++b)
    for (std::size_t j = 0; j < 12; ++j) expected[16 + b * 12 + j] = src[8 + b * 32 + j];
  CHECK(ldm == expected);
}

TEST_CASE("a strided put scatters packed ldm bytes to blocks and leaves the skipped bytes alone", "[modes]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(1024);
  m.write_bytes(x, std::vector<std::byte>(1024, kMainFill));
  const auto data = pattern(512, 1);
  run_on_core1(m, [x, &data](Core& core, LdmAddr at) {
    std::memcpy(core.ldm().bytes(at), data.data(), 512);
    core.dma(request(DmaOp::kPut, x + 8, at + 16, 60, 12, 20)).wait();
  });
  std::vector<std::byte> expected(1024, kMainFill);
  for (std::size_t b = 0; b < 5; ++b)
    for (std::size_t j = 0; j < 12; ++j) expected[8 + b * 32 + j] = data[16 + b * 12 + j];
  std::vector<std::byte> out(1024);
  m.read_bytes(x, out);
  CHECK(out == expected);
}

TEST_CASE("the typed strided get and put round-trip a column block of a matrix", "[modes]") {
  // A 16 x 16 uint32 matrix; each core moves 4 columns (16 bytes) of every row: bsize 16, stride 48.
  Machine m{Arch::preset("tiny")};
  std::vector<std::uint32_t> in(256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  auto a = m.alloc<std::uint32_t>(256);
  auto b = m.alloc<std::uint32_t>(256);
  m.upload(a, in);
  m.upload(b, std::vector<std::uint32_t>(256, 0xFFFFFFFFu));
  m.launch(
       LaunchSpec{},
       [](Core& core, DevicePtr<const std::uint32_t> src, DevicePtr<std::uint32_t> dst) {
         auto tile = core.ldm().alloc<std::uint32_t>(64);
         const std::size_t col = static_cast<std::size_t>(core.id()) * 4;
         core.get_strided(tile, src + col, 16, 48).wait();
         for (std::size_t r = 0; r < 16; ++r)
           for (std::size_t c = 0; c < 4; ++c) tile[r * 4 + c] *= 2;
         core.put_strided(dst + col, LdmSpan<const std::uint32_t>(tile), 16, 48).wait();
       },
       DevicePtr<const std::uint32_t>(a), b)
      .join();
  std::vector<std::uint32_t> out(256);
  m.download(out, DevicePtr<const std::uint32_t>(b));
  for (std::size_t i = 0; i < 256; ++i) REQUIRE(out[i] == in[i] * 2);
}

TEST_CASE("a strided request whose last block ends exactly at the region's end is legal", "[modes]") {
  Machine m{Arch::preset("tiny")};
  // 4 blocks of 16 bytes with 16 skipped: the last block ends at 3 * 32 + 16 = 112; the trailing stride is not
  // part of the request.
  const DeviceAddr x = m.allocate_bytes(112);
  const auto src = pattern(112, 4);
  m.write_bytes(x, src);
  const auto ldm =
      run_on_core1(m, [x](Core& core, LdmAddr at) { core.dma(request(DmaOp::kGet, x, at, 64, 16, 16)).wait(); });
  for (std::size_t b = 0; b < 4; ++b)
    for (std::size_t j = 0; j < 16; ++j) REQUIRE(ldm[b * 16 + j] == src[b * 32 + j]);
}

TEST_CASE("a machine without data movement times requests as one with it and moves no byte", "[modes]") {
  // The recurrent mapping search's trial machine: its kernels read no value they move, only cycles count.
  const auto src = pattern(1024, 5);
  const auto run = [&](bool move_data) {
    Machine m{Arch::preset("tiny"), MachineOptions{.threads = 1, .trace = false, .move_data = move_data}};
    const DeviceAddr x = m.allocate_bytes(1024), y = m.allocate_bytes(1024);
    m.write_bytes(x, src);
    m.write_bytes(y, std::vector<std::byte>(1024, kMainFill));
    Cycle done = 0;
    const auto ldm = run_on_core1(m, [&](Core& core, LdmAddr at) {
      core.dma(request(DmaOp::kGet, x, at, 256, 32, 32)).wait();
      core.dma(request(DmaOp::kPut, y + 128, at, 128)).wait();
      done = core.cycle();
    });
    std::vector<std::byte> main(1024);
    m.read_bytes(y, main);
    return std::tuple{done, ldm, main, m.stats().cycles};
  };
  const auto [moved_at, moved_ldm, moved_main, moved_cycles] = run(true);
  const auto [timed_at, timed_ldm, timed_main, timed_cycles] = run(false);
  CHECK(timed_at == moved_at);
  CHECK(timed_cycles == moved_cycles);
  CHECK(moved_ldm[0] == src[0]);  // the moving machine's get landed
  CHECK(moved_main[128] == src[0]);
  CHECK(timed_ldm == std::vector<std::byte>(512, kLdmFill));     // nothing landed in ldm
  CHECK(timed_main == std::vector<std::byte>(1024, kMainFill));  // nor in main memory
}

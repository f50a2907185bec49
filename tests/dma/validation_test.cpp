// Every DMA validation rule at its boundary, calling validate_fields / validate_shape / validate_main_range
// directly: legal exactly at the boundary, illegal one step past it, with the violation's kind, field and value.
#include "ldmsim/dma/validation.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "ldmsim/sim/main_memory.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;

namespace {

constexpr std::uint64_t kLdm = 16384;  // tiny's local store

DmaRequest req(DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint64_t bsize = 0,
               std::uint64_t stride = 0) {
  return testing::dma_request(DmaOp::kGet, main, ldm, length, bsize, stride, "test_get");
}

/// Checks a violation's kind and field (and value when given).
void expect(const std::optional<DmaViolation>& v, FaultKind kind, const std::string& field,
            std::optional<std::uint64_t> value = std::nullopt) {
  REQUIRE(v);
  CHECK(v->kind == kind);
  CHECK(v->field == field);
  if (value) CHECK(v->value == *value);
  CHECK_THAT(v->message, Catch::StartsWith("test_get ("));
  CHECK_THAT(v->message, Catch::Contains("; hint: "));
}

}  // namespace

TEST_CASE("granularity: each field is legal at a multiple of 4 and illegal at 2 mod 4", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  SECTION("main address") {
    CHECK_FALSE(validate_fields(req(0x1000, 0, 64), arch));
    for (std::uint64_t off : {1u, 2u, 3u}) {
      const auto v = validate_fields(req(0x1000 + off, 0, 64), arch);
      expect(v, FaultKind::kDmaMisaligned, "main address", 0x1000 + off);
      CHECK_THAT(v->message, Catch::Contains("is not a multiple of the 4-byte DMA granularity (it is " +
                                             std::to_string(off) + " mod 4)"));
    }
    const auto v = validate_fields(req(0x1002, 0, 64), arch);
    CHECK_THAT(v->message, Catch::Contains("main address = 4098 (0x1002)"));
    CHECK_THAT(v->message, Catch::Contains("pad this tensor at staging"));
    CHECK(v->lintable());
  }
  SECTION("ldm address") {
    CHECK_FALSE(validate_fields(req(0x1000, 4, 64), arch));
    const auto v = validate_fields(req(0x1000, 6, 64), arch);
    expect(v, FaultKind::kDmaMisaligned, "ldm address", 6);
    CHECK_THAT(v->message, Catch::Contains("place the ldm buffer at a multiple of 4"));
  }
  SECTION("length") {
    CHECK_FALSE(validate_fields(req(0x1000, 0, 4), arch));
    CHECK_FALSE(validate_fields(req(0x1000, 0, 8), arch));
    const auto v = validate_fields(req(0x1000, 0, 6), arch);
    expect(v, FaultKind::kDmaMisaligned, "length", 6);
    CHECK_THAT(v->message, Catch::Contains("round the length up to 8"));
    expect(validate_fields(req(0x1000, 0, 2), arch), FaultKind::kDmaMisaligned, "length", 2);
  }
  SECTION("bsize") {
    CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 4, 0), arch));
    const auto v = validate_fields(req(0x1000, 0, 24, 6, 0), arch);
    expect(v, FaultKind::kDmaMisaligned, "bsize", 6);
    CHECK_THAT(v->message, Catch::Contains("round bsize up to 8"));
  }
  SECTION("stride") {
    CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 8, 4), arch));
    CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 8, 0), arch));
    const auto v = validate_fields(req(0x1000, 0, 24, 8, 2), arch);
    expect(v, FaultKind::kDmaMisaligned, "stride", 2);
    CHECK_THAT(v->message, Catch::Contains("round stride up to 4"));
  }
  SECTION("the first misaligned field in descriptor order is reported") {
    expect(validate_fields(req(0x1002, 2, 6, 6, 2), arch), FaultKind::kDmaMisaligned, "main address");
    expect(validate_fields(req(0x1000, 2, 6, 6, 2), arch), FaultKind::kDmaMisaligned, "ldm address");
    expect(validate_fields(req(0x1000, 0, 6, 6, 2), arch), FaultKind::kDmaMisaligned, "length");
    expect(validate_fields(req(0x1000, 0, 12, 6, 2), arch), FaultKind::kDmaMisaligned, "bsize");
  }
  SECTION("granularity is the arch's") {
    Arch g8 = arch;
    g8.dma.granularity_bytes = 8;
    CHECK_FALSE(validate_fields(req(0x1000, 8, 16), g8));
    const auto v = validate_fields(req(0x1004, 8, 16), g8);
    expect(v, FaultKind::kDmaMisaligned, "main address", 0x1004);
    CHECK_THAT(v->message, Catch::Contains("8-byte DMA granularity (it is 4 mod 8)"));
  }
  SECTION("validate_shape skips granularity") {
    CHECK_FALSE(validate_shape(req(0x1002, 2, 6), arch));
  }
}

TEST_CASE("mode rules: BCAST and ROW are get-only, a BCAST mask must select a row", "[validation]") {
  const Arch arch = Arch::preset("tiny");  // 2 rows
  DmaRequest r = req(0x1000, 0, 64);
  for (DmaMode mode : {DmaMode::kPe, DmaMode::kBcast, DmaMode::kRow}) {
    r.mode = mode;
    r.op = DmaOp::kGet;
    CHECK_FALSE(validate_fields(r, arch));
    r.op = DmaOp::kPut;
    if (mode == DmaMode::kPe) {
      CHECK_FALSE(validate_fields(r, arch));
    } else {
      const auto v = validate_fields(r, arch);
      expect(v, FaultKind::kInvalidArgument, "mode", static_cast<std::uint64_t>(mode));
      CHECK_FALSE(v->lintable());
    }
  }
  r.op = DmaOp::kGet;
  r.mode = DmaMode::kBcast;
  r.row_mask = 0b10;  // row 1 only: legal
  CHECK_FALSE(validate_fields(r, arch));
  r.row_mask = 0b01;
  CHECK_FALSE(validate_fields(r, arch));
  r.row_mask = 0b100;  // the first row past the group
  expect(validate_fields(r, arch), FaultKind::kInvalidArgument, "row mask", 0b100);
  r.row_mask = 0;
  expect(validate_fields(r, arch), FaultKind::kInvalidArgument, "row mask", 0);
  r.mode = DmaMode::kPe;  // a PE request ignores the mask
  CHECK_FALSE(validate_fields(r, arch));
}

TEST_CASE("length must be > 0 and fit the descriptor's length field", "[validation]") {
  Arch arch = Arch::preset("tiny");
  expect(validate_fields(req(0x1000, 0, 0), arch), FaultKind::kDmaFieldOverflow, "length", 0);
  arch.dma.fields.length_bits = 12;  // lengths up to 4095
  CHECK_FALSE(validate_fields(req(0x1000, 0, 4092), arch));
  const auto v = validate_fields(req(0x1000, 0, 4096), arch);
  expect(v, FaultKind::kDmaFieldOverflow, "length", 4096);
  CHECK_THAT(v->message, Catch::Contains("length = 4096 does not fit the descriptor's 12-bit field (max 4095)"));
  CHECK_FALSE(v->lintable());
  SECTION("the default 20-bit field") {
    Arch big = Arch::preset("tiny");
    big.ldm_bytes = 1u << 21;
    CHECK_FALSE(validate_fields(req(0x1000, 0, (1u << 20) - 4), big));
    expect(validate_fields(req(0x1000, 0, 1u << 20), big), FaultKind::kDmaFieldOverflow, "length", 1u << 20);
  }
}

TEST_CASE("bsize and stride must fit their descriptor fields", "[validation]") {
  Arch arch = Arch::preset("tiny");
  arch.dma.fields.bsize_bits = 12;
  arch.dma.fields.stride_bits = 10;
  CHECK_FALSE(validate_fields(req(0x1000, 0, 4092, 4092, 0), arch));
  expect(validate_fields(req(0x1000, 0, 8192, 4096, 0), arch), FaultKind::kDmaFieldOverflow, "bsize", 4096);
  CHECK_FALSE(validate_fields(req(0x1000, 0, 64, 16, 1020), arch));
  expect(validate_fields(req(0x1000, 0, 64, 16, 1024), arch), FaultKind::kDmaFieldOverflow, "stride", 1024);
}

TEST_CASE("strided layout: length a whole number of blocks, a stride needs a bsize", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 8, 16), arch));   // 3 blocks
  CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 24, 16), arch));  // bsize == length: one block
  const auto v = validate_fields(req(0x1000, 0, 24, 16, 16), arch);
  expect(v, FaultKind::kDmaFieldOverflow, "bsize", 16);
  CHECK_THAT(v->message, Catch::Contains("length 24 is not a whole number of 16-byte blocks"));
  CHECK_THAT(v->message, Catch::Contains("e.g. 16 or 32"));
  expect(validate_fields(req(0x1000, 0, 8, 16, 0), arch), FaultKind::kDmaFieldOverflow, "bsize", 16);  // bsize > length
  CHECK_FALSE(validate_fields(req(0x1000, 0, 24, 0, 0), arch));
  const auto s = validate_fields(req(0x1000, 0, 24, 0, 4), arch);
  expect(s, FaultKind::kDmaFieldOverflow, "bsize", 0);
  CHECK_THAT(s->message, Catch::Contains("a stride needs a block size"));
}

TEST_CASE("ldm range: legal up to ldm_bytes, illegal one byte past", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  CHECK_FALSE(validate_fields(req(0x1000, kLdm - 64, 64), arch));
  CHECK_FALSE(validate_fields(req(0x1000, 0, kLdm), arch));
  const auto v = validate_fields(req(0x1000, kLdm - 64, 68), arch);
  expect(v, FaultKind::kDmaOutOfBounds, "ldm address", kLdm - 64);
  CHECK_THAT(v->message, Catch::Contains("ldm range [0x3fc0, 0x4004) is outside the 16384-byte local store"));
  CHECK_FALSE(v->lintable());
  // Byte-exact (no granularity check): one byte past the end.
  CHECK_FALSE(validate_shape(req(0x1000, kLdm - 63, 63), arch));
  expect(validate_shape(req(0x1000, kLdm - 63, 64), arch), FaultKind::kDmaOutOfBounds, "ldm address");
  expect(validate_fields(req(0x1000, 0, kLdm + 4), arch), FaultKind::kDmaOutOfBounds, "ldm address");
  expect(validate_fields(req(0x1000, kLdm, 4), arch), FaultKind::kDmaOutOfBounds, "ldm address", kLdm);
  SECTION("huge ldm offsets do not wrap around") {
    const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max() - 3;
    expect(validate_fields(req(0x1000, huge, 8), arch), FaultKind::kDmaOutOfBounds, "ldm address", huge);
    expect(validate_fields(req(0x1000, 1ull << 32, 8), arch), FaultKind::kDmaOutOfBounds, "ldm address");
  }
}

TEST_CASE("main range: legal inside one live region, illegal one byte outside", "[validation]") {
  MainMemory mem(1, 64ull << 20);
  const DeviceAddr a = mem.allocate(100, 256, 0, "a");
  const DeviceAddr b = mem.allocate(256, 256, 0, "b");
  REQUIRE(b == a + 256);
  SECTION("contiguous boundaries (byte-exact, validate_main_range checks no granularity)") {
    CHECK_FALSE(validate_main_range(req(a, 0, 100), mem));
    CHECK_FALSE(validate_main_range(req(a + 96, 0, 4), mem));
    CHECK_FALSE(validate_main_range(req(a + 99, 0, 1), mem));
    const auto past = validate_main_range(req(a, 0, 101), mem);
    expect(past, FaultKind::kDmaOutOfBounds, "main address", a);
    CHECK_THAT(past->message, Catch::Contains("the nearest region is 'a'"));
    CHECK_THAT(past->message, Catch::Contains("of 100 bytes"));
    expect(validate_main_range(req(a + 100, 0, 4), mem), FaultKind::kDmaOutOfBounds, "main address");
    expect(validate_main_range(req(b - 1, 0, 4), mem), FaultKind::kDmaOutOfBounds, "main address", b - 1);
    CHECK_FALSE(validate_main_range(req(b, 0, 256), mem));
    expect(validate_main_range(req(b, 0, 257), mem), FaultKind::kDmaOutOfBounds, "main address");
    expect(validate_main_range(req(a - 1, 0, 4), mem), FaultKind::kDmaOutOfBounds, "main address");
  }
  SECTION("a range spanning two adjacent regions is illegal") {
    const DeviceAddr c = mem.allocate(256, 256, 0, "c");
    REQUIRE(c == b + 256);
    expect(validate_main_range(req(b + 252, 0, 8), mem), FaultKind::kDmaOutOfBounds, "main address");
  }
  SECTION("strided: the last block may end exactly at the region's end; the trailing stride is not touched") {
    // 4 blocks of 16 with 16 skipped: main_end = main + 3 * 32 + 16 = main + 112.
    const DeviceAddr r = mem.allocate(112, 256, 0, "r");
    CHECK(req(r, 0, 64, 16, 16).main_end() == r + 112);
    CHECK_FALSE(validate_main_range(req(r, 0, 64, 16, 16), mem));
    expect(validate_main_range(req(r, 0, 64, 16, 17), mem), FaultKind::kDmaOutOfBounds, "main address");
    expect(validate_main_range(req(r + 1, 0, 64, 16, 16), mem), FaultKind::kDmaOutOfBounds, "main address");
  }
  SECTION("freed and never-allocated addresses") {
    mem.free(a);
    expect(validate_main_range(req(a, 0, 4), mem), FaultKind::kDmaOutOfBounds, "main address", a);
    expect(validate_main_range(req(0, 0, 4), mem), FaultKind::kDmaOutOfBounds, "main address", 0);
    mem.free(b);
    const auto none = validate_main_range(req(b, 0, 4), mem);
    expect(none, FaultKind::kDmaOutOfBounds, "main address");
    CHECK_THAT(none->message, Catch::Contains("no region is allocated"));
  }
  SECTION("ranges that wrap around the address space are illegal") {
    const DeviceAddr top = std::numeric_limits<std::uint64_t>::max() - 3;
    expect(validate_main_range(req(top, 0, 8), mem), FaultKind::kDmaOutOfBounds, "main address");
  }
}

TEST_CASE("validation order: fields first, then shape, ldm, and the main range last", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  // Misaligned and zero length: granularity wins in validate_fields, shape decides in validate_shape.
  expect(validate_fields(req(0x1002, 0, 0), arch), FaultKind::kDmaMisaligned, "main address");
  expect(validate_shape(req(0x1002, 0, 0), arch), FaultKind::kDmaFieldOverflow, "length");
  // A put in BCAST mode with a zero length reports the mode first.
  DmaRequest r = req(0x1000, 0, 0);
  r.op = DmaOp::kPut;
  r.mode = DmaMode::kBcast;
  expect(validate_shape(r, arch), FaultKind::kInvalidArgument, "mode");
  // Field width before the ldm range.
  expect(validate_fields(req(0x1000, kLdm, 1u << 20), arch), FaultKind::kDmaFieldOverflow, "length");
}

TEST_CASE("granularity: a request lists every misaligned field, each with its fix", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  const auto v = validate_fields(req(0x1002, 0, 6, 6, 2), arch);
  expect(v, FaultKind::kDmaMisaligned, "main address", 0x1002);  // the fault's field: the first in descriptor order
  CHECK_THAT(v->message, Catch::Contains("main address = 4098 (0x1002) is not a multiple"));
  CHECK_THAT(v->message, Catch::Contains("; also length = 6 (0x6) is not a multiple"));
  CHECK_THAT(v->message, Catch::Contains("; also bsize = 6 (0x6)"));
  CHECK_THAT(v->message, Catch::Contains("; also stride = 2 (0x2)"));
  CHECK_THAT(v->message, Catch::Contains("for length: an odd number of fp16 elements"));
  CHECK_THAT(v->message, Catch::Contains("for stride: round stride up to 4"));
  CHECK_THAT(v->message, !Catch::Contains("also ldm address"));
}

TEST_CASE("granularity: athread requests get hints in the program's terms", "[validation]") {
  const Arch arch = Arch::preset("tiny");
  for (const char* api : {"athread_get", "CRTS_dma_iget", "dma(DMA_GET)"}) {
    CAPTURE(api);
    const auto v = validate_fields(testing::dma_request(DmaOp::kGet, 0x1002, 0, 6, 0, 0, api), arch);
    REQUIRE(v);
    CHECK(v->field == "main address");
    CHECK_THAT(v->message, Catch::Contains("hint: the host data starts 2 bytes past a 4-byte boundary"));
    CHECK_THAT(v->message, Catch::Contains("for length: transfer a byte count that is a multiple of 4"));
    CHECK_THAT(v->message, !Catch::Contains("staging"));
  }
}

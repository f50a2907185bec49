// The local store an ONNX run's machine commits while the model is read: every core's whole store for a model of
// at least 4 MiB where the host grants huge pages, the first 64 KiB (or a smaller store whole) otherwise.
#include "ldm_prefault.hpp"

#include <catch2/catch.hpp>

using namespace ldmsim;

TEST_CASE("a large model commits every core's whole store only with huge pages", "[session][prefault]") {
  constexpr std::uint64_t kStore = 256 << 10;
  CHECK(ldm_prefault_bytes(kWholeStoreModelBytes, kStore, true) == kStore);
  CHECK(ldm_prefault_bytes(std::uintmax_t{45} << 20, kStore, true) == kStore);
  CHECK(ldm_prefault_bytes(std::uintmax_t{45} << 20, kStore, false) == kLdmPrefaultBytes);
}

TEST_CASE("a small model commits the first 64 KiB of each store", "[session][prefault]") {
  CHECK(ldm_prefault_bytes(kWholeStoreModelBytes - 1, 256 << 10, true) == kLdmPrefaultBytes);
  CHECK(ldm_prefault_bytes(300 << 10, 256 << 10, true) == kLdmPrefaultBytes);
  CHECK(ldm_prefault_bytes(0, 256 << 10, true) == kLdmPrefaultBytes);
  CHECK(ldm_prefault_bytes(300 << 10, 16 << 10, false) == 16 << 10);  // a store smaller than that: whole
}

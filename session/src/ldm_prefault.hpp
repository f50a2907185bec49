// How much of each core's local store an ONNX run's machine commits while the model is read. A first touch of a
// small page costs this VM 5-15 us even when the page was populated ahead (the hypervisor's own tables fault once
// more), while a populated huge page costs nothing more to touch: a model large enough to stream data through
// every core's store gets the whole store committed in huge pages (cold CNNs and the BERT-base layer 12-26% faster,
// docs/benchmarks.md); a small one (an LSTM of a few hundred KB touches a few KB of each store) gets the first
// 64 KiB in small pages, as committing every store whole would cost it more than it saves.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ldmsim {

/// Model files from this size on commit every core's whole store (in huge pages).
inline constexpr std::uintmax_t kWholeStoreModelBytes = std::uintmax_t{4} << 20;
/// What a smaller model's run commits of each core's store: ResNet-18's cores touch 74 KiB on average.
inline constexpr std::size_t kLdmPrefaultBytes = std::size_t{64} << 10;

/// Bytes of each core's store (`ldm_bytes`) to commit for a model file of `model_bytes`, where the host grants
/// huge pages on request (`huge_pages`) or not (then never the whole store: small pages committed whole cost more
/// than they saved).
std::size_t ldm_prefault_bytes(std::uintmax_t model_bytes, std::uint64_t ldm_bytes, bool huge_pages);

/// Whether this host grants transparent huge pages on request (its policy "always" or "madvise"; false when it
/// cannot tell).
bool huge_pages_on_request();

}  // namespace ldmsim

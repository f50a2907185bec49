// Launch basics: kernels run on every core, move data through DMA, and time advances as modelled.
#include <atomic>
#include <catch2/catch.hpp>
#include <numeric>
#include <tuple>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {
void scale_kernel(Core& core, DevicePtr<const float> x, DevicePtr<float> y, std::size_t n, float s) {
  constexpr std::size_t kTile = 256;
  auto buf = core.ldm().alloc<float>(kTile);
  for (std::size_t i = static_cast<std::size_t>(core.rank()) * kTile; i < n;
       i += static_cast<std::size_t>(core.group_size()) * kTile) {
    const std::size_t len = std::min(kTile, n - i);
    core.get(buf.first(len), x + i).wait();
    for (auto& v : buf.first(len)) v *= s;
    core.compute({.flops = len});
    core.put(y + i, buf.first(len)).wait();
  }
}
}  // namespace

TEST_CASE("a kernel scales a vector on every core of every group", "[launch]") {
  Machine m{Arch::preset("tiny")};
  const std::size_t n = 5000;
  std::vector<float> in(n);
  std::iota(in.begin(), in.end(), 0.0f);
  auto x = m.alloc<float>(n);
  auto y = m.alloc<float>(n);
  m.upload(x, in);
  m.launch(LaunchSpec{.name = "scale"}, scale_kernel, DevicePtr<const float>(x), y, n, 0.5f).join();
  std::vector<float> out(n);
  m.download(out, DevicePtr<const float>(y));
  for (std::size_t i = 0; i < n; ++i) REQUIRE(out[i] == in[i] * 0.5f);
  const RunStats stats = m.stats();
  CHECK(stats.cycles > 0);
  CHECK(stats.dma_bytes() == 2 * n * sizeof(float));
  CHECK(stats.dma_requests() == 2 * ((n + 255) / 256));
}

TEST_CASE("a misaligned get traps with a diagnostic naming kernel, core, field and value", "[launch][fault]") {
  Machine m{Arch::preset("tiny")};
  auto x = m.alloc<std::uint16_t>(64);
  try {
    m.launch(
         LaunchSpec{.name = "odd"},
         [](Core& core, DevicePtr<const std::uint16_t> p) {
           auto buf = core.ldm().alloc<std::uint16_t>(8);
           if (core.id() == 1) core.get(buf.first(3), p).wait();
         },
         DevicePtr<const std::uint16_t>(x))
        .join();
    FAIL("expected a trap");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kDmaMisaligned);
    CHECK(f.cg() == 0);
    CHECK(f.core() == 1);
    const std::string what = f.what();
    CHECK_THAT(what, Catch::Contains("odd"));
    CHECK_THAT(what, Catch::Contains("length = 6"));
    CHECK_THAT(what, Catch::Contains("4-byte"));
    CHECK_THAT(what, Catch::Contains("pad this tensor at staging"));
  }
}

TEST_CASE("a core reports its engine's channels: the timing model's, or 1 without any", "[launch]") {
  const auto channels_seen = [](const Arch& arch) {
    Machine m{arch};
    std::atomic<std::size_t> seen{0};
    m.launch(LaunchSpec{.name = "channels"}, [&](Core& core) { seen = core.dma_channels(); }).join();
    return seen.load();
  };
  CHECK(channels_seen(Arch::preset("sw26010pro")) == 8);
  CHECK(channels_seen(Arch::preset("sw26010")) == 1);
  CHECK(channels_seen(Arch::preset("tiny")) == 1);  // the ideal model has no channels
}

TEST_CASE("prefaulting host memory changes no result: same outputs, stats and untouched ldm", "[launch]") {
  const std::size_t n = 5000;
  std::vector<float> in(n);
  std::iota(in.begin(), in.end(), 1.0f);
  const auto run = [&](bool prefault) {
    Machine m{Arch::preset("tiny")};
    auto x = m.alloc<float>(n);
    auto y = m.alloc<float>(n);
    m.upload(x, in);
    if (prefault) {
      const std::atomic<bool> stop{false};
      m.prefault_host_memory(m.arch().ldm_bytes, 8 << 20, stop);
      CHECK(m.memory().committed_bytes() >= (8u << 20));
    }
    std::atomic<int> nonzero{0};
    m.launch(LaunchSpec{.name = "read-untouched"}, [&nonzero](Core& core) {
       const auto buf = core.ldm().alloc<float>(512);  // never written: reads as zero either way
       for (const float v : buf) nonzero += v != 0.0f ? 1 : 0;
     }).join();
    m.launch(LaunchSpec{.name = "scale"}, scale_kernel, DevicePtr<const float>(x), y, n, 0.5f).join();
    std::vector<float> out(n);
    m.download(out, DevicePtr<const float>(y));
    CHECK(nonzero == 0);
    return std::make_pair(out, m.stats().to_json().dump());
  };
  CHECK(run(true) == run(false));
  Machine m{Arch::preset("tiny")};
  const std::atomic<bool> stop{true};
  m.prefault_host_memory(m.arch().ldm_bytes, 8 << 20, stop);
  CHECK(m.memory().committed_bytes() == 0);  // told to stop before it began
}

TEST_CASE("a lent region reads and takes puts like an uploaded one, from every group's thread", "[launch]") {
  // Each core gets its own slice of the weights and puts it to the output; core 0 of the last group also puts into
  // the lent region itself (a slice no core reads), so one launch both reads lent bytes and copies them.
  Arch arch = Arch::preset("tiny");
  arch.core_groups = 3;
  const std::size_t slice = 64, slices = 3 * arch.cores_per_group() + 1;
  std::vector<f16> values(slice * slices);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = f16(static_cast<float>(i % 1000));
  const SharedHalves shared(values);
  const auto run = [&](bool lend) {
    Machine m{arch, MachineOptions{.threads = 2}};
    auto weights = m.alloc<f16>(values.size());
    auto out = m.alloc<f16>(values.size() - slice);
    if (lend) {
      m.upload_shared(weights, shared);
      CHECK(m.memory().lent_regions() == 1);
    } else {
      m.upload(weights, values);
    }
    m.launch(
         LaunchSpec{.name = "lent"},
         [slice](Core& core, DevicePtr<const f16> w, DevicePtr<f16> w_rw, DevicePtr<f16> o) {
           auto buf = core.ldm().alloc<f16>(slice);
           const std::size_t k = static_cast<std::size_t>(core.cg() * core.group_size() + core.rank()) * slice;
           core.get(buf, w + k).wait();
           core.put(o + k, buf).wait();
           if (core.cg() == 2 && core.rank() == 0) {
             for (auto& v : buf) v = f16(-1.0f);
             core.put(w_rw + static_cast<std::size_t>(3 * core.group_size()) * slice, buf).wait();
           }
         },
         DevicePtr<const f16>(weights), weights, out)
        .join();
    CHECK(m.memory().lent_regions() == 0);  // the put copied the loan first
    std::vector<f16> got_out(values.size() - slice), got_weights(values.size());
    m.download(got_out, DevicePtr<const f16>(out));
    m.download(got_weights, DevicePtr<const f16>(weights));
    return std::make_tuple(got_out, got_weights, m.stats().cycles);
  };
  const auto [lent_out, lent_weights, lent_cycles] = run(true);
  const auto [copied_out, copied_weights, copied_cycles] = run(false);
  CHECK(lent_out == std::vector<f16>(values.begin(), values.end() - static_cast<std::ptrdiff_t>(slice)));
  std::vector<f16> want = values;
  std::fill(want.end() - static_cast<std::ptrdiff_t>(slice), want.end(), f16(-1.0f));
  CHECK(lent_weights == want);
  CHECK(lent_out == copied_out);
  CHECK(lent_weights == copied_weights);
  CHECK(lent_cycles == copied_cycles);
  CHECK(shared.span().back() == values.back());  // the lent values themselves never change
}

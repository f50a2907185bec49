// Smoke test of an installed ldmsim: scale an fp16 vector on the tiny preset and check it on the host.
// Exits non-zero on any mismatch or fault.
#include <cstdio>
#include <ldmsim/ldmsim.hpp>
#include <vector>

namespace {
void scale(ldmsim::Core& core, ldmsim::DevicePtr<const ldmsim::f16> x, ldmsim::DevicePtr<ldmsim::f16> y, std::size_t n,
           float s) {
  constexpr std::size_t kTile = 256;
  auto buf = core.ldm().alloc<ldmsim::f16>(kTile);
  for (std::size_t i = static_cast<std::size_t>(core.rank()) * kTile; i < n;
       i += static_cast<std::size_t>(core.group_size()) * kTile) {
    const std::size_t len = n - i < kTile ? n - i : kTile;
    core.get(buf.first(len), x + i).wait();
    for (auto& v : buf.first(len)) v = ldmsim::f16(static_cast<float>(v) * s);
    core.compute({.flops = len});
    core.put(y + i, buf.first(len)).wait();
  }
}
}  // namespace

int main() {
  try {
    ldmsim::Machine m{ldmsim::Arch::preset("tiny")};
    const std::size_t n = 3000;
    std::vector<ldmsim::f16> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = ldmsim::f16(static_cast<float>(i % 100) - 50.0f);
    auto x = m.alloc<ldmsim::f16>(n);
    auto y = m.alloc<ldmsim::f16>(n);
    m.upload(x, in);
    m.launch(ldmsim::AllGroups, scale, ldmsim::DevicePtr<const ldmsim::f16>(x), y, n, 0.5f).join();
    std::vector<ldmsim::f16> out(n);
    m.download(out, ldmsim::DevicePtr<const ldmsim::f16>(y));
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i] != ldmsim::f16(static_cast<float>(in[i]) * 0.5f)) {
        std::fprintf(stderr, "consumer: element %zu is wrong\n", i);
        return 1;
      }
    }
    std::printf("consumer: ok, %llu cycles, %llu DMA bytes\n", static_cast<unsigned long long>(m.stats().cycles),
                static_cast<unsigned long long>(m.stats().dma_bytes()));
    return 0;
  } catch (const ldmsim::Fault& f) {
    std::fprintf(stderr, "consumer: %s\n", f.what());
    return 3;
  }
}

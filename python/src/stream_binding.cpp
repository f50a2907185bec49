// STREAM over DMA on one simulated core group from Python (what `ldmsim bench stream` runs): ldmsim.stream() for
// one configuration, ldmsim.stream_sweep() for simulated against measured bandwidth over a measurement's block
// sizes. The calibration scripts fit the DMA timing model through them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/stream/stream_bench.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

bench::StreamConfig stream_config(const std::string& kernel, const std::string& mode, std::uint64_t block_bytes,
                                  std::uint64_t gap_bytes, std::uint64_t request_bytes, int cores,
                                  std::uint64_t offset_bytes, std::uint64_t rounds, bool verify, bool get_only) {
  bench::StreamConfig config;
  const auto parsed_kernel = bench::parse_stream_kernel(kernel);
  if (!parsed_kernel) throw ConfigError("kernel must be copy, scale, add or triad, not '" + kernel + "'");
  const auto parsed_mode = bench::parse_stream_mode(mode);
  if (!parsed_mode) throw ConfigError("mode must be pe, bcast or row, not '" + mode + "'");
  if (cores < 0) throw ConfigError("cores must be 0 (the whole group) or more, not " + std::to_string(cores));
  config.kernel = *parsed_kernel;
  config.mode = *parsed_mode;
  config.block_bytes = block_bytes;
  config.gap_bytes = gap_bytes;
  config.request_bytes = request_bytes;
  config.cores = cores;
  config.offset_bytes = offset_bytes;
  config.rounds = rounds;
  config.verify = verify;
  config.get_only = get_only;
  return config;
}

py::dict result_dict(const bench::StreamResult& r) {
  py::dict d;
  d["request_bytes"] = r.request_bytes;
  d["rounds"] = r.rounds;
  d["cores"] = r.cores;
  d["cycles"] = r.cycles;
  d["seconds"] = r.seconds;
  d["stream_bytes"] = r.stream_bytes;
  d["dma_bytes"] = r.dma_bytes;
  d["MBps"] = r.mbps;
  d["dma_MBps"] = r.dma_mbps;
  return d;
}

}  // namespace

void bind_stream(py::module_& m) {
  m.def(
      "stream",
      [](const py::object& arch, const std::string& kernel, const std::string& mode, std::uint64_t block_bytes,
         std::uint64_t gap_bytes, std::uint64_t request_bytes, int cores, std::uint64_t offset_bytes,
         std::uint64_t rounds, bool verify, bool get_only) {
        const Arch resolved = arch_argument(arch);
        const bench::StreamConfig config = stream_config(kernel, mode, block_bytes, gap_bytes, request_bytes, cores,
                                                         offset_bytes, rounds, verify, get_only);
        bench::StreamResult result;
        try {
          py::gil_scoped_release unlocked;
          result = bench::run_stream(resolved, config);
        } catch (const bench::StreamVerifyError& e) {
          throw std::runtime_error(e.what());  // a simulator bug, not bad input: RuntimeError
        }
        return result_dict(result);
      },
      py::arg("arch") = "sw26010", py::kw_only(), py::arg("kernel") = "copy", py::arg("mode") = "pe",
      py::arg("block_bytes") = 8u, py::arg("gap_bytes") = 0u, py::arg("request_bytes") = 0u, py::arg("cores") = 0,
      py::arg("offset_bytes") = 80u, py::arg("rounds") = 0u, py::arg("verify") = false, py::arg("get_only") = false,
      "One STREAM run over DMA on core group 0 of a new machine of `arch` (a preset name, an arch JSON file or a "
      "dict), as `ldmsim bench stream` runs it: kernel copy | scale | add | triad, mode pe | bcast | row, sizes in "
      "bytes (docs/dma-timing.md). Returns a dict: request_bytes, rounds, cores, cycles, seconds, stream_bytes, "
      "dma_bytes, MBps (STREAM's count), dma_MBps. ConfigError for a configuration that cannot run.");
  m.def(
      "stream_sweep",
      [](const py::object& arch, const std::optional<std::filesystem::path>& data, const std::string& kernel,
         const std::string& mode, std::uint64_t gap_bytes, std::uint64_t request_bytes, int cores,
         std::uint64_t offset_bytes, std::uint64_t rounds, bool get_only) {
        const Arch resolved = arch_argument(arch);
        const auto points = data ? bench::read_measurements(*data) : bench::sw26010_copy_measurements();
        const bench::StreamConfig config =
            stream_config(kernel, mode, 8, gap_bytes, request_bytes, cores, offset_bytes, rounds, false, get_only);
        std::vector<bench::SweepRow> rows;
        {
          py::gil_scoped_release unlocked;
          rows = bench::sweep(resolved, config, points);
        }
        py::list out;
        for (const bench::SweepRow& row : rows) {
          py::dict d = result_dict(row.simulated);
          d["block_bytes"] = row.measured.block_bytes;
          d["measured_MBps"] = row.measured.mbps;
          d["relative_error"] = row.relative_error;
          out.append(std::move(d));
        }
        return out;
      },
      py::arg("arch") = "sw26010", py::kw_only(), py::arg("data") = py::none(), py::arg("kernel") = "copy",
      py::arg("mode") = "pe", py::arg("gap_bytes") = 0u, py::arg("request_bytes") = 0u, py::arg("cores") = 0,
      py::arg("offset_bytes") = 80u, py::arg("rounds") = 0u, py::arg("get_only") = false,
      "Simulated against measured bandwidth at every block size of a measurement CSV (`data`; None: the built-in "
      "SW26010 copy curve), as `ldmsim bench stream --sweep` does: one dict per block size with stream()'s keys "
      "plus block_bytes, measured_MBps and relative_error (simulated / measured - 1).");
}

}  // namespace ldmsim::python

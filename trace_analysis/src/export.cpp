// Chrome Trace Event JSON and CSV exports, streamed block by block. DMA requests of one core that overlap in
// time go to extra "dma K" lanes of that core (first lane free at the request's issue), so Perfetto shows all.
#include "ldmsim/trace_analysis/export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "json_or.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

namespace ldmsim {
namespace {

constexpr std::size_t kMaxLanes = 256;  // per core; more overlapping requests share the last lane
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
constexpr std::uint32_t kMaxCoreId = 0xFFFF;
constexpr std::uint32_t kLayersPid = kMaxCoreGroups;  // core groups are pids 0 .. kMaxCoreGroups - 1

std::string json_text(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string_view status_name(DmaStatus s) {
  switch (s) {
    case DmaStatus::kOk:
      return "ok";
    case DmaStatus::kTrapped:
      return "trapped";
    case DmaStatus::kLintWarning:
      return "lint";
  }
  return "?";
}

std::string_view barrier_scope(std::uint32_t v) {
  return v == 0 ? "group" : v == 1 ? "row" : v == 2 ? "col" : v == 3 ? "node" : "?";
}

/// Buffered output with a flush threshold, so the stream sees few large writes.
class Sink {
 public:
  explicit Sink(std::ostream& out) : out_(out) { buf_.reserve(kFlushBytes + 4096); }
  ~Sink() = default;
  template <typename... Args>
  void print(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    if (!out_) throw std::runtime_error("export: write failed");
  }

 private:
  std::ostream& out_;
  std::string buf_;
};

class ChromeWriter {
 public:
  ChromeWriter(const nlohmann::json& header, std::ostream& out, std::size_t bins) : sink_(out), bins_(bins) {
    const nlohmann::json arch = header.value("arch", nlohmann::json::object());
    const trace_detail::HeaderArch given = trace_detail::header_arch(header);
    clock_hz_ = given.clock_hz;
    cols_ = given.cols;
    if (header.contains("cycles") && header["cycles"].is_number_unsigned()) cycles_ = header["cycles"].get<Cycle>();
    nlohmann::json other;
    other["arch"] = trace_detail::json_or<std::string>(arch, "name", "?");  // any type: the header is open
    other["clock_hz"] = clock_hz_;
    other["run"] = header.value("run", nlohmann::json());
    other["fault"] = header.value("fault", nlohmann::json());
    other["cycles"] = cycles_;
    other["time_unit"] = "microseconds of simulated time";
    // No displayTimeUnit: the format's timestamps are microseconds, and viewers disagree on what "ns" there means
    // (Perfetto has read it as nanosecond timestamps), so the default display unit stays.
    sink_.print("{{\"otherData\":{},\"traceEvents\":[\n",
                other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  void add(const TraceBlock& block) {
    if (!group_open_ || block.cg != cg_) start_group(block.cg);
    if (block.kind == TraceBlockKind::kDma) {
      for (std::size_t i = 0; i < block.chunk.size(); ++i) add_event(block.chunk.at(i));
    } else {
      for (const auto& m : block.markers) add_marker(m);
    }
  }

  /// A "layers" process (sorted first) with one slice per layer on the machine's clock.
  void add_layers(const std::vector<LayerSpan>& layers) {
    if (layers.empty()) return;
    end_group();
    sink_.print("{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"layers\"}}}},\n",
                kLayersPid);
    sink_.print(
        "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":-1}}}},\n",
        kLayersPid);
    for (const LayerSpan& l : layers) {
      sink_.print(
          "{{\"ph\":\"X\",\"pid\":{},\"tid\":0,\"ts\":{:.6f},\"dur\":{:.6f},\"name\":{},\"cat\":\"layer\","
          "\"args\":{{\"type\":{},\"bound\":{},\"cycles\":{},\"dma_bytes\":{},\"peak_fraction\":{:.6g}}}}},\n",
          kLayersPid, us(l.start), us(l.end) - us(l.start), json_text(l.name), json_text(l.type), json_text(l.bound),
          l.end - l.start, l.dma_bytes, l.peak_fraction);
    }
  }

  ExportCounts finish() {
    end_group();
    sink_.print("{{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"trace_end\",\"args\":{{}}}}\n]}}\n");
    sink_.flush();
    return counts_;
  }

 private:
  double us(Cycle c) const { return static_cast<double>(c) * 1e6 / clock_hz_; }
  std::string core_name(std::uint32_t core) const {
    return fmt::format("core {},{}", core / static_cast<std::uint32_t>(cols_),
                       core % static_cast<std::uint32_t>(cols_));
  }
  static long tid(std::uint32_t core, std::size_t lane) {
    return 1 + static_cast<long>(core) * static_cast<long>(kMaxLanes) + static_cast<long>(lane);
  }

  void meta_thread(long t, const std::string& name) {
    sink_.print("{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}},\n", cg_, t,
                json_text(name));
    sink_.print(
        "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}},\n", cg_,
        t, t);
  }

  void start_group(int cg) {
    end_group();
    cg_ = cg;
    group_open_ = true;
    lanes_.clear();
    launches_.clear();
    last_cycle_ = 0;
    const std::size_t bins = std::max<std::size_t>(bins_, 1);
    bandwidth_ = BandwidthBins(bins, cycles_ == 0 ? 1 : (cycles_ + bins - 1) / bins);
    sink_.print("{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"cg {}\"}}}},\n",
                cg, cg);
    sink_.print(
        "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{}}}}},\n", cg,
        cg);
    meta_thread(0, "launches");
  }

  /// The lane list of a core, naming the core's thread the first time it is seen.
  std::vector<Cycle>& lanes(std::uint32_t core) {
    if (core >= lanes_.size()) lanes_.resize(core + 1);
    auto& l = lanes_[core];
    if (l.empty()) {
      l.push_back(0);
      meta_thread(tid(core, 0), core_name(core));
    }
    return l;
  }

  void add_event(const DmaEvent& e) {
    auto& l = lanes(e.core);
    std::size_t lane = 0;
    while (lane < l.size() && l[lane] > e.issue) ++lane;
    if (lane == l.size()) {
      if (l.size() < kMaxLanes) {
        l.push_back(0);
        meta_thread(tid(e.core, lane), fmt::format("{} dma {}", core_name(e.core), lane));
      } else {
        lane = kMaxLanes - 1;
      }
    }
    l[lane] = std::max(l[lane], e.end);
    std::string extra;
    if (e.bsize != 0 || e.stride != 0) extra = fmt::format(",\"bsize\":{},\"stride\":{}", e.bsize, e.stride);
    sink_.print(
        "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.6f},\"dur\":{:.6f},\"name\":\"{} {} B\",\"cat\":\"dma\","
        "\"args\":{{\"op\":\"{}\",\"bytes\":{},\"main\":\"0x{:x}\",\"ldm\":\"0x{:x}\",\"mode\":\"{}\",\"status\":\"{}"
        "\","
        "\"issue\":{},\"start\":{},\"end\":{}{}}}}},\n",
        cg_, tid(e.core, lane), us(e.issue), us(e.end) - us(e.issue), to_string(e.op), e.length, to_string(e.op),
        e.length, e.main, e.ldm, to_string(e.mode), status_name(e.status), e.issue, e.start, e.end, extra);
    bandwidth_.add(e.start, e.end, static_cast<double>(e.length));
    last_cycle_ = std::max(last_cycle_, e.end);
    ++counts_.requests;
  }

  void instant(const Marker& m, const std::string& name, const std::string& args, char scope) {
    const bool on_core = m.core >= 0 && static_cast<std::uint32_t>(m.core) <= kMaxCoreId;
    const long t = on_core ? tid(static_cast<std::uint32_t>(m.core), 0) : 0;
    if (on_core) lanes(static_cast<std::uint32_t>(m.core));
    sink_.print("{{\"ph\":\"i\",\"s\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.6f},\"name\":{},\"args\":{{{}}}}},\n",
                scope, cg_, t, us(m.cycle), json_text(name), args);
  }

  void add_marker(const Marker& m) {
    last_cycle_ = std::max(last_cycle_, m.cycle);
    ++counts_.markers;
    switch (m.kind) {
      case MarkerKind::kLaunchBegin:
        launches_.emplace_back(m.cycle, m.text);
        break;
      case MarkerKind::kLaunchEnd: {
        auto it = std::find_if(launches_.rbegin(), launches_.rend(), [&](const auto& l) { return l.second == m.text; });
        if (it == launches_.rend()) {
          instant(m, "launch end " + m.text, "", 't');
          break;
        }
        complete_launch(it->first, m.cycle, it->second, "ok");
        launches_.erase(std::next(it).base());
        break;
      }
      case MarkerKind::kBarrier:
        instant(m, fmt::format("barrier ({})", barrier_scope(m.value)), "", 't');
        break;
      case MarkerKind::kCoreExit:
        instant(m, "exit", "", 't');
        break;
      case MarkerKind::kFault: {
        const std::string kind = m.value <= static_cast<std::uint32_t>(kLastFaultKind)
                                     ? std::string(to_string(static_cast<FaultKind>(m.value)))
                                     : std::to_string(m.value);
        instant(m, "fault: " + kind, "\"message\":" + json_text(m.text), 'p');
        break;
      }
      case MarkerKind::kLintWarning:
        instant(m, "lint warning", "\"message\":" + json_text(m.text), 't');
        break;
    }
  }

  void complete_launch(Cycle begin, Cycle end, const std::string& name, const char* how) {
    sink_.print(
        "{{\"ph\":\"X\",\"pid\":{},\"tid\":0,\"ts\":{:.6f},\"dur\":{:.6f},\"name\":{},\"cat\":\"launch\","
        "\"args\":{{\"begin\":{},\"end\":{},\"ended\":\"{}\"}}}},\n",
        cg_, us(begin), us(std::max(begin, end)) - us(begin), json_text(name), begin, end, how);
  }

  void end_group() {
    if (!group_open_) return;
    for (const auto& [begin, name] : launches_) complete_launch(begin, last_cycle_, name, "no launch end (trapped?)");
    launches_.clear();
    const Cycle width = bandwidth_.width();
    const auto& bins = bandwidth_.bytes();
    std::size_t used = bins.size();
    while (used > 0 && bins[used - 1] == 0.0) --used;
    for (std::size_t i = 0; i < used; ++i) {
      sink_.print(
          "{{\"ph\":\"C\",\"pid\":{},\"tid\":0,\"ts\":{:.6f},\"name\":\"DMA "
          "bandwidth\",\"args\":{{\"GB/s\":{:.6g}}}}},\n",
          cg_, us(static_cast<Cycle>(i) * width), bins[i] * clock_hz_ / static_cast<double>(width) / 1e9);
    }
    sink_.print(
        "{{\"ph\":\"C\",\"pid\":{},\"tid\":0,\"ts\":{:.6f},\"name\":\"DMA bandwidth\",\"args\":{{\"GB/s\":0}}}},\n",
        cg_, us(static_cast<Cycle>(used) * width));
    group_open_ = false;
  }

  Sink sink_;
  std::size_t bins_;
  double clock_hz_ = 1e9;
  int cols_ = 1;
  Cycle cycles_ = 0;
  int cg_ = 0;
  bool group_open_ = false;
  std::vector<std::vector<Cycle>> lanes_;  ///< per core: end cycle of each lane's last request
  std::vector<std::pair<Cycle, std::string>> launches_;
  BandwidthBins bandwidth_;
  Cycle last_cycle_ = 0;
  ExportCounts counts_;
};

}  // namespace

ExportCounts export_chrome_json(const std::filesystem::path& trace, std::ostream& out, std::size_t time_bins,
                                const std::vector<LayerSpan>& layers) {
  TraceReader reader(trace);
  ChromeWriter writer(reader.header(), out, time_bins);
  TraceBlock block;
  while (reader.next(block)) writer.add(block);
  writer.add_layers(layers);
  return writer.finish();
}

ExportCounts export_csv(const std::filesystem::path& trace, std::ostream& out) {
  TraceReader reader(trace);
  const auto [clock_hz, cols] = trace_detail::header_arch(reader.header());
  // A copy, not the binding: clang 14 (the fuzz build) cannot capture a structured binding.
  const auto us = [hz = clock_hz](Cycle c) { return static_cast<double>(c) * 1e6 / hz; };

  Sink sink(out);
  sink.print(
      "cg,core,row,col,op,mode,status,bytes,main,ldm,bsize,stride,issue_cycle,start_cycle,end_cycle,latency_cycles,"
      "issue_us,end_us\n");
  ExportCounts counts;
  TraceBlock block;
  while (reader.next(block)) {
    if (block.kind != TraceBlockKind::kDma) continue;
    for (std::size_t i = 0; i < block.chunk.size(); ++i) {
      const DmaEvent e = block.chunk.at(i);
      sink.print("{},{},{},{},{},{},{},{},0x{:x},0x{:x},{},{},{},{},{},{},{:.6f},{:.6f}\n", block.cg, e.core,
                 e.core / cols, e.core % cols, to_string(e.op), to_string(e.mode), status_name(e.status), e.length,
                 e.main, e.ldm, e.bsize, e.stride, e.issue, e.start, e.end, e.end - e.issue, us(e.issue), us(e.end));
      ++counts.requests;
    }
  }
  sink.flush();
  return counts;
}

}  // namespace ldmsim

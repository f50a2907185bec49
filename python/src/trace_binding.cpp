// ldmsim.Trace: a trace file's header as a dict and its DMA events as one numpy structured array, filled in C++
// (trace_analysis/event_table.hpp) with the GIL released and handed to numpy without a copy or a per-event object.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl/filesystem.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "json_python.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace_analysis/event_table.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

// What a read keeps besides the events, so kernels() and markers() after events() read nothing again.
struct TraceContents {
  TraceTotals totals;
  std::vector<KernelLaunch> kernels;
  std::vector<LocatedMarker> markers;
};

class TraceFile {
 public:
  explicit TraceFile(std::filesystem::path path) : path_(std::move(path)) {
    (void)check_input_file(path_, "trace file", ~std::uint64_t{0});  // a FIFO would block the open below
    TraceReader reader(path_);
    header_ = reader.header();
    version_ = reader.version();
  }

  const std::filesystem::path& path() const { return path_; }
  py::object header() const { return to_python(header_); }
  std::uint32_t version() const { return version_; }

  py::array events() {
    EventTable table = read(true);
    const std::size_t n = table.events.size();
    if (n == 0) return py::array_t<EventRecord>(0);
    EventRecord* records = table.events.release();
    py::capsule owner(records, [](void* p) { std::free(p); });
    return py::array_t<EventRecord>(static_cast<py::ssize_t>(n), records, owner);
  }

  py::list kernels() {
    py::list out;
    for (const KernelLaunch& k : contents().kernels) {
      py::dict d;
      d["name"] = utf8_text(k.name);
      d["begin"] = k.begin;
      d["end"] = k.end;
      d["groups"] = k.groups;
      out.append(std::move(d));
    }
    return out;
  }

  py::list markers() {
    py::list out;
    for (const LocatedMarker& m : contents().markers) {
      py::dict d;
      d["cg"] = m.cg;
      d["kind"] = std::string(to_string(m.marker.kind));
      d["cycle"] = m.marker.cycle;
      d["core"] = m.marker.core;
      d["value"] = m.marker.value;
      d["text"] = utf8_text(m.marker.text);
      out.append(std::move(d));
    }
    return out;
  }

  py::dict totals() {
    const TraceTotals& t = contents().totals;
    py::dict d;
    d["dma_events"] = t.dma_events;
    d["markers"] = t.markers;
    d["blocks"] = t.blocks;
    d["groups"] = t.groups;
    return d;
  }

 private:
  EventTable read(bool with_events) {
    EventTable table;
    {
      py::gil_scoped_release unlocked;
      table = read_event_table(path_, with_events, [this](std::uint64_t bytes) {
        check_host_memory(bytes, "the events of trace " + path_.string());  // ConfigError, not an OOM kill
      });
    }
    contents_ = TraceContents{table.totals, std::move(table.kernels), std::move(table.markers)};
    return table;
  }
  const TraceContents& contents() {
    if (!contents_) (void)read(false);
    return *contents_;
  }

  std::filesystem::path path_;
  nlohmann::json header_;
  std::uint32_t version_ = 0;
  std::optional<TraceContents> contents_;
};

}  // namespace

void bind_trace(py::module_& m) {
  PYBIND11_NUMPY_DTYPE(EventRecord, issue, start, end, main, bytes, ldm, bsize, stride, kernel, core, cg, op, mode,
                       status);
  m.attr("EVENT_DTYPE") = py::dtype::of<EventRecord>();
  py::class_<TraceFile>(m, "Trace",
                        "A trace file (.ldmtrace, docs/trace-format.md). Opening it reads and checks its header; "
                        "events(), kernels() and markers() read the rest.")
      .def(py::init<std::filesystem::path>(), py::arg("path"))
      .def_property_readonly("path", &TraceFile::path)
      .def_property_readonly("header", &TraceFile::header, "The JSON header (arch, cycles, seconds, fault, run).")
      .def_property_readonly("version", &TraceFile::version, "The file's format version.")
      .def("events", &TraceFile::events,
           "Every DMA event as a numpy structured array of EVENT_DTYPE, core groups in order, each group's events in "
           "issue order: issue, start, end (cycles), main, ldm (addresses), bytes, bsize, stride, kernel (index into "
           "kernels(), -1 before the group's first launch), core, cg, op (0 get, 1 put), mode (0 PE, 1 BCAST, "
           "2 ROW), status (0 ok, 1 trapped, 2 lint warning).")
      .def("kernels", &TraceFile::kernels,
           "The kernel launches, ordered by (begin, name): dicts of name, begin, end (cycles) and groups (core "
           "groups it ran on).")
      .def("markers", &TraceFile::markers,
           "Every marker as a dict: cg, kind ('launch begin', 'launch end', 'core exit', 'barrier', 'fault', "
           "'lint warning'), cycle, core (-1: not on a core), value, text.")
      .def_property_readonly("totals", &TraceFile::totals,
                             "Counts from the end block: dma_events, markers, blocks, groups.")
      .def("__repr__", [](const TraceFile& t) { return "ldmsim.Trace('" + t.path().string() + "')"; });
}

}  // namespace ldmsim::python

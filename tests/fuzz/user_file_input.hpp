// One input of the user-file fuzz harness, shared by the libFuzzer target (tests/fuzz/workload_fuzz.cpp) and the
// replay of its regression corpus (tests/graph/user_file_corpus_test.cpp): the first byte picks the reader ('M': any
// model file through Session::load, its reader chosen by content; 'N':
// .npy, 'A': arch JSON, 'O': ONNX model, 'P': a constant pack, parsed in memory, 'S': a run's stats.json as
// `ldmsim compare` and the trace tools read it, else workload JSON), the rest is written to a file in `scratch`
// and read.
// Models are imported with and without streamed weights (the same outcome either way), and the bound of what their
// parse takes (onnx_parse_bound.hpp) must cover what protobuf's parse holds; models and workloads are planned and
// tagged (`ldmsim plan`); workloads fused too. Malformed input must end in a ConfigError (caught here); anything
// else escapes to the caller.
#pragma once

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../frontends/src/onnx/onnx_parse_bound.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/kernels/constant_pack.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/trace_analysis/compare.hpp"
#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim::fuzz {

/// The parse bound of a model file beside what protobuf's parse of it holds.
struct BoundBeside {
  onnx_import::ParseBound bound;
  bool parsed = false;     ///< protobuf parsed the file
  std::uint64_t used = 0;  ///< the parsed ModelProto's SpaceUsedLong (heap it holds, allocator overhead apart)
  /// What a bound must hold: a file protobuf parses is not malformed to the walk, and its bound covers the parse.
  bool covers() const { return !parsed || (!bound.malformed && bound.bytes >= used); }
};

/// Computes the bound of `model`, then parses it as the import does.
inline BoundBeside bound_beside_parse(const std::filesystem::path& model) {
  const InputFileDescriptor file(model, "ONNX model", kMaxOnnxFileBytes);
  BoundBeside b;
  b.bound = onnx_import::parsed_model_bound(file.fd(), file.size());
  onnx::ModelProto parsed;
  google::protobuf::io::FileInputStream stream(file.fd());
  google::protobuf::io::LimitingInputStream bounded(&stream, static_cast<std::int64_t>(file.size()));
  b.parsed = parsed.ParseFromZeroCopyStream(&bounded);
  if (b.parsed) b.used = parsed.SpaceUsedLong();
  return b;
}

/// The import of `model` with `options`: its result dumped (workload JSON, arrays' shapes and bits, notes), or
/// "error: " and the ConfigError's message.
inline std::string import_outcome(const std::filesystem::path& model, const OnnxImportOptions& options) {
  try {
    const ImportedModel m = import_onnx(model, options);
    std::string out = m.workload.dump();
    for (const auto& [name, a] : m.arrays) {
      out += "\n" + name + " " + a.dtype + " " + std::to_string(a.shape.size()) + ":";
      for (const std::size_t d : a.shape) out += " " + std::to_string(d);
      out += "\n";
      out.append(reinterpret_cast<const char*>(a.halves.data()), a.halves.size() * sizeof(f16));
      out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size() * sizeof(float));
      out.append(reinterpret_cast<const char*>(a.integers.data()), a.integers.size() * sizeof(std::int32_t));
    }
    for (const ImportNote& note : m.notes) out += "\n" + note.text;
    return out;
  } catch (const ConfigError& e) {
    return std::string("error: ") + e.what();
  }
}

/// Imports `model` with its fp32 weights streamed (all of them, and the default's large ones) and parsed by
/// protobuf alone: the outcomes must be the same, results or error; aborts otherwise (a fuzzer's find).
inline void check_streamed_import(const std::filesystem::path& model) {
  OnnxImportOptions parsed, all_streamed, default_streamed;
  parsed.streamed_weight_min_bytes = kNoStreamedWeights;
  all_streamed.streamed_weight_min_bytes = 0;
  const std::string want = import_outcome(model, parsed);
  if (import_outcome(model, all_streamed) != want || import_outcome(model, default_streamed) != want) std::abort();
}

inline void read_user_file(const std::uint8_t* data, std::size_t size, const std::filesystem::path& scratch) {
  if (size == 0) return;
  if (data[0] == 'P') {  // a constant pack's marker area and values, as a core reads them from its ldm
    std::vector<std::uint32_t> words((size - 1 + 3) / 4);  // word-aligned, as in ldm
    if (size > 1) std::memcpy(words.data(), data + 1, size - 1);
    try {
      const packing::PackView view = packing::PackView::parse(std::as_bytes(std::span(words)).first(size - 1));
      float sum = 0;
      for (std::size_t i = 0; i < view.entries().size(); ++i) {
        for (const f16 v : view.values(i)) sum += static_cast<float>(v);
        (void)view.find(view.entries()[i].input);
      }
      (void)sum;
    } catch (const packing::PackError&) {
      // the expected outcome for a malformed pack
    }
    return;
  }
  if (data[0] == 'S') {  // a run's stats.json: compared with a well-formed run both ways, its layers read
    const std::filesystem::path stats = scratch / "stats.json";
    {
      std::ofstream f(stats, std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
    }
    static const nlohmann::json good = {
        {"cycles", 10}, {"ops", {{{"name", "a"}, {"cycles", 10}, {"dma_bytes", 4}, {"source_layers", {"a", "b"}}}}}};
    try {
      const nlohmann::json parsed = read_json_file(stats, "stats file");
      (void)layers_from_stats(parsed);
      for (const Comparison& c :
           {compare_runs({good, parsed}, {"good", "fuzz"}), compare_runs({parsed, good}, {"fuzz", "good"})}) {
        (void)format_comparison(c, 2);
        (void)to_json(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
    } catch (const ConfigError&) {
      // the expected outcome for a malformed stats file
    }
    return;
  }
  if (data[0] == 'M') {  // any model file through the run API: its reader chosen by content, loaded, planned
    const std::filesystem::path model = scratch / "in.model";
    {
      std::ofstream f(model, std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
    }
    try {
      RunConfig config;
      config.arch = "tiny";
      Session session(config);
      (void)session.load(model);
    } catch (const ConfigError&) {
      // the expected outcome for a malformed model
    }
    return;
  }
  const bool npy = data[0] == 'N', arch = data[0] == 'A', onnx = data[0] == 'O';
  const std::filesystem::path in = scratch / (npy ? "in.npy" : onnx ? "in.onnx" : "in.json");
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  static const OperatorRegistry registry = OperatorRegistry::builtin();
  try {
    if (npy) {
      (void)read_npy(in);
    } else if (onnx) {
      if (!bound_beside_parse(in).covers()) std::abort();  // the parse took more than the import allowed for
      check_streamed_import(in);
      ImportedModel m = import_onnx(in);
      WorkloadLoadOptions options;
      options.arrays = &m.arrays;
      const Graph g = workload_from_json(m.workload, in.string(), scratch, registry, "fuzz", options);
      const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
      (void)describe(g, plan);
      const SplitPlan split = plan_split(g, Arch::preset("sw26010pro"), {true, SplitRounding::kPad});
      for (const TensorTags& t : tensor_tags(g, g, plan, &split)) (void)(t.static_text() + t.dynamic_text());
    } else if (arch) {
      const Arch a = Arch::resolve(in.string());
      (void)make_timing_model(a);
      (void)Arch::from_json(a.to_json(), "round trip");
    } else {
      const Graph g = load_workload(in, registry);
      (void)fuse(g, Arch::preset("sw26010"), StagingPolicy::kMethod).describe(g);  // folds into stores rebind ops
      for (auto policy : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const ExecutionPlan plan = plan_execution(g, policy);
        (void)describe(g, plan);
        const SplitPlan split = plan_split(g, Arch::preset("sw26010"), {true, SplitRounding::kExact});
        for (const TensorTags& t : tensor_tags(g, g, plan, &split)) (void)t.to_json().dump();
        (void)split.to_json().dump();
      }
    }
  } catch (const ConfigError&) {
    // the expected outcome for malformed input
  }
}

}  // namespace ldmsim::fuzz

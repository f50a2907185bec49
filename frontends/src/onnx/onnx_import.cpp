// The ONNX front end (see onnx_import.hpp): reads the model, checks its opset, inputs and every node, and writes
// the equivalent workload JSON with constants and given inputs as in-memory .npy files.
#include "ldmsim/frontends/onnx_import.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "ldmsim/sim/host_memory_limit.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "onnx_if.hpp"
#include "onnx_nodes.hpp"
#include "onnx_parse_bound.hpp"

namespace ldmsim {
namespace {

using nlohmann::json;
using onnx_import::Constant;
using onnx_import::Context;

constexpr int kReadBlockBytes = 256 << 10;

/// ONNX tensor names made usable as workload names and file names: letters, digits, '_', '-' and '.', not
/// starting with '.', at most 100 characters, unique (a suffix _2, _3, ... when two names map alike).
class SafeNames {
 public:
  const std::string& operator()(const std::string& onnx_name) {
    if (const auto it = names_.find(onnx_name); it != names_.end()) return it->second;
    std::string safe;
    for (const char c : onnx_name.substr(0, 100)) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || c == '.';
      safe += ok ? c : '_';
    }
    if (safe.empty() || safe.front() == '.') safe = "t" + safe;
    std::string unique = safe;
    // The next suffix to try per base name: many names alike in their first 100 characters stay linear.
    for (int& n = next_suffix_.try_emplace(safe, 2).first->second; used_.contains(unique); ++n) {
      unique = fmt::format("{}_{}", safe, n);
    }
    used_.insert(unique);
    return names_.emplace(onnx_name, unique).first->second;
  }

 private:
  std::map<std::string, std::string> names_;
  std::set<std::string> used_;
  std::map<std::string, int> next_suffix_;
};

std::int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return -1;
}

/// A graph input's declared dims: static sizes, or a problem for a symbolic or unknown one.
std::vector<std::uint64_t> declared_dims(const onnx::ValueInfoProto& input, std::string& problem) {
  std::vector<std::uint64_t> dims;
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
    problem = "has no tensor shape";
    return dims;
  }
  const auto& shape = input.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    if (d.has_dim_value() && d.dim_value() <= 0) {
      problem = fmt::format("dimension {} is {} (dimensions must be positive)", i, d.dim_value());
      return dims;
    }
    if (!d.has_dim_value()) {
      problem =
          fmt::format("dimension {} is {} ", i, d.has_dim_param() ? "symbolic ('" + d.dim_param() + "')" : "unknown");
      return dims;
    }
    dims.push_back(static_cast<std::uint64_t>(d.dim_value()));
  }
  return dims;
}

/// Adds graph input `input` to the workload: from its --input file, or seeded random values.
void add_graph_input(const onnx::ValueInfoProto& input, std::size_t index, const OnnxImportOptions& options,
                     const std::string& safe, ImportedModel& out, Context& ctx, std::vector<std::string>& problems) {
  using DT = onnx::TensorProto;
  const int elem = input.type().tensor_type().elem_type();
  const bool is_float = elem == DT::FLOAT || elem == DT::FLOAT16;
  const bool is_integer = elem == DT::INT64 || elem == DT::INT32;
  if (!is_float && !is_integer && elem != DT::BOOL) {
    const std::string name = DT::DataType_IsValid(elem) ? DT::DataType_Name(static_cast<DT::DataType>(elem))
                                                        : fmt::format("{} (not an ONNX element type)", elem);
    problems.push_back(fmt::format(
        "input '{}': element type {} is not supported (float, float16, int64, int32 or bool)", input.name(), name));
    return;
  }
  // How the workload declares it: floats as fp16 values, integers as int32 (int64 values are checked to fit), bools.
  const std::string declared = is_float ? "f16" : is_integer ? "int32" : "bool";
  ctx.input_types[input.name()] = is_float ? DType::kF16 : is_integer ? DType::kI32 : DType::kBool;
  std::string problem;
  const std::vector<std::uint64_t> dims = declared_dims(input, problem);
  const auto given = options.inputs.find(input.name());
  if (given == options.inputs.end()) {
    if (!problem.empty()) {
      problems.push_back(
          fmt::format("input '{}': {}: give its values with --input {}=FILE.npy", input.name(), problem, input.name()));
      return;
    }
    ctx.shapes[input.name()] = dims;
    if (!is_float) {  // ids, indices and masks: zeros are valid for any table (and mask nothing out)
      out.workload["tensors"][safe] = {
          {"shape", dims}, {"dtype", declared}, {"init", {{"value", 0}}}, {"constant", false}};
      out.notes.push_back(
          {fmt::format("input '{}' {} {} was not given: zeros", input.name(), declared, json(dims).dump()), safe});
      return;
    }
    const std::uint64_t seed = options.seed + index;
    out.workload["tensors"][safe] = {
        {"shape", dims}, {"init", {{"normal", {0, 1}}, {"seed", seed}}}, {"constant", false}};
    out.notes.push_back({fmt::format("input '{}' {} was not given: seeded random values, normal(0, 1), seed {}",
                                     input.name(), json(dims).dump(), seed),
                         safe});
    return;
  }
  NpyArray values = read_npy(given->second);
  const bool fits = is_float     ? !values.is_integral()
                    : is_integer ? values.dtype == "i4" || values.dtype == "i8"
                                 : values.dtype == "b1";
  if (!fits) {
    problems.push_back(fmt::format("input '{}': {} holds {} values but the model's input is {}", input.name(),
                                   given->second.string(), values.dtype,
                                   DT::DataType_Name(static_cast<DT::DataType>(elem))));
    return;
  }
  const std::vector<std::uint64_t> file_dims(values.shape.begin(), values.shape.end());
  if (problem.empty() && file_dims != dims) {
    problems.push_back(fmt::format("input '{}': {} holds shape {} but the model declares {}", input.name(),
                                   given->second.string(), json(file_dims).dump(), json(dims).dump()));
    return;
  }
  const std::string file = safe + ".npy";
  // Integers were read as int32 (an int64 value that does not fit was refused by read_npy).
  if (values.dtype == "i8") values.dtype = "i4";
  out.workload["tensors"][safe] = {{"shape", file_dims},
                                   {"dtype", is_float ? (values.dtype == "f4" ? "f32" : "f16") : declared},
                                   {"init", {{"file", file}}},
                                   {"constant", false}};
  if (values.dtype == "f4") out.notes.push_back({rounded_input_note(input.name()), safe});
  ctx.shapes[input.name()] = file_dims;
  out.arrays[file] = std::move(values);
}

/// The outputs of a node's op: the translation's own list when it named them (an LSTM's unnamed optional
/// outputs), else the node's, trailing optional outputs left unnamed not produced.
std::vector<std::string> produced_outputs(const json& op, const onnx::NodeProto& node) {
  if (op.contains("outputs")) return op["outputs"].get<std::vector<std::string>>();
  std::vector<std::string> outputs(node.output().begin(), node.output().end());
  while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
  return outputs;
}

/// Adds a translated op to ctx.shadow under its ONNX names, so its outputs' shapes are known to later nodes
/// (Shape, Squeeze, Softmax's axis); returns why the op cannot bind (empty when it binds).
std::string track_shapes(const json& op, const onnx::NodeProto& node, Context& ctx) {
  std::vector<std::string> inputs;
  const std::vector<std::string> outputs = produced_outputs(op, node);
  try {
    for (const auto& in : op["inputs"]) {
      const std::string name = in.get<std::string>();
      if (!ctx.shadow.find(name)) {
        const auto shape = ctx.shapes.find(name);
        if (shape == ctx.shapes.end()) {  // a name an earlier node declared but no op produces (Dropout's mask)
          return fmt::format("input '{}' has no value at this point of the graph", name);
        }
        if (std::find(shape->second.begin(), shape->second.end(), 0) != shape->second.end()) {
          return fmt::format("input '{}' is empty (shape [{}]); only Concat takes empty inputs (and drops them)", name,
                             fmt::join(shape->second, ", "));
        }
        ctx.shadow.add_input(name, Shape(shape->second), TensorInit{.kind = TensorInit::Kind::kValue},
                             onnx_import::tensor_dtype(ctx, name));
      }
      inputs.push_back(name);
    }
    ctx.shadow.add_op(*ctx.registry, op["type"].get<std::string>(), inputs, outputs, JsonField(op["attrs"], ""));
  } catch (const ConfigError& e) {
    return e.what();
  }
  for (const std::string& o : outputs) {
    const auto dims = ctx.shadow.tensor(*ctx.shadow.find(o)).shape.dims_vector();
    ctx.shapes[o] = std::vector<std::uint64_t>(dims.begin(), dims.end());
  }
  return {};
}

/// What is wrong with how `node` is wired: inputs nothing defined so far, outputs that redefine a name.
/// `after_failure` is set when an input comes from a node that failed (the node is then skipped silently).
std::vector<std::string> wiring_problems(const onnx::NodeProto& node, const std::set<std::string>& defined,
                                         const std::set<std::string>& failed, bool& after_failure) {
  std::vector<std::string> wiring;
  after_failure = false;
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;
    if (failed.contains(in)) {  // first: a failed node's outputs were defined before it was translated
      after_failure = true;
    } else if (defined.contains(in)) {
      continue;
    } else {
      wiring.push_back(
          fmt::format("input '{}' is not defined by an earlier node, an initializer or a graph input", in));
    }
  }
  for (const std::string& o : node.output()) {
    if (!o.empty() && defined.contains(o)) {
      wiring.push_back(
          fmt::format("output '{}' is already defined (by an earlier node, an initializer or a graph input)", o));
    }
  }
  return wiring;
}

/// What identifies a version of a file's contents: its size and last modification time.
struct FileVersion {
  std::int64_t size = 0, seconds = 0, nanoseconds = 0;
  friend bool operator==(const FileVersion&, const FileVersion&) = default;
};

std::optional<FileVersion> file_version(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::nullopt;
  return FileVersion{st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

/// Whether every streamed weight is an initializer of `model`'s graph as the walk saw it: FLOAT, its raw data
/// left out (protobuf read the skeleton as the walk did).
bool streamed_weights_match(const onnx::ModelProto& model, const onnx_import::ModelSkeleton& skeleton) {
  if (skeleton.weights.empty()) return true;
  if (!model.has_graph()) return false;
  const onnx::GraphProto& graph = model.graph();
  return std::all_of(skeleton.weights.begin(), skeleton.weights.end(), [&](const onnx_import::StreamedWeight& w) {
    if (w.initializer >= static_cast<std::size_t>(graph.initializer_size())) return false;
    const onnx::TensorProto& t = graph.initializer(static_cast<int>(w.initializer));
    return t.data_type() == onnx::TensorProto::FLOAT && !t.has_raw_data();
  });
}

/// A bool or integer constant as the .npy array of its device type ("b1" or "i4"), or a problem for a value that does
/// not fit in int32.
std::optional<NpyArray> integral_array(const Constant& c, const std::string& name, std::vector<std::string>& problems) {
  NpyArray a;
  a.shape.assign(c.dims.begin(), c.dims.end());
  a.dtype = c.boolean ? "b1" : "i4";
  a.integers.reserve(c.values.size());
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const double v = c.values[i];
    if (v < -2147483648.0 || v > 2147483647.0) {
      problems.push_back(
          fmt::format("constant '{}': value {} at index {} does not fit in int32 (the device holds "
                      "integers as int32)",
                      name, v, i));
      return std::nullopt;
    }
    a.integers.push_back(c.boolean ? (v != 0 ? 1 : 0) : static_cast<std::int32_t>(v));
  }
  return a;
}

/// A constant as an fp16 .npy array (round to nearest even); consumes the constant's data. Each undecoded source
/// backs one constant: a fold reads its input decoded (NodeTranslator::known), so copies never share a source.
NpyArray fp16_array(Constant& c, std::uint64_t& saturated) {
  NpyArray a;
  a.shape.assign(c.dims.begin(), c.dims.end());
  a.dtype = "f2";
  a.halves = onnx_import::take_fp16(c, saturated);
  return a;
}

}  // namespace

std::string rounded_input_note(std::string_view input) {
  return fmt::format("input '{}': f32 values rounded to fp16", input);
}

ImportedModel import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options) {
  return import_onnx(file, options, OperatorRegistry::builtin());
}

ImportedModel import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options,
                          const OperatorRegistry& registry) {
  const std::string origin = file.string();
  // Read straight from the file (no copy of it in memory), never past the size checked at open, in reads of
  // 256 KiB through one reused buffer (mapping the file instead saves little, and a file truncated meanwhile would
  // crash the reading with SIGBUS).
  const InputFileDescriptor model_file(file, "ONNX model", kMaxOnnxFileBytes);
  const std::optional<FileVersion> version_read = file_version(model_file.fd());
  // What protobuf's parse will take is counted first, from the wire format: a model whose parsed form would not fit
  // is refused before anything is allocated for it (onnx_parse_bound.hpp).
  onnx_import::check_parse_bound(onnx_import::parsed_model_bound(model_file.fd(), model_file.size()), model_file.size(),
                                 host_memory_limit(), origin);
  onnx::ModelProto model;
  // Large fp32 weights are rounded to fp16 as the file is read and protobuf parses the rest (onnx_skeleton.hpp).
  // Where that walk does not follow the file, or protobuf rejects what it leaves, protobuf parses the whole file.
  // The walk also refuses initializers no import can use (a rank above 8, more integers than a fold reads) before
  // protobuf parses them, so it runs even when nothing is streamed; its skeleton is then dropped.
  std::optional<onnx_import::ModelSkeleton> skeleton = onnx_import::read_model_skeleton(
      model_file.fd(), model_file.size(), options.streamed_weight_min_bytes, origin, options.threads);
  if (options.streamed_weight_min_bytes == kNoStreamedWeights) skeleton.reset();
  if (skeleton && !(model.ParseFromArray(skeleton->bytes.data(), static_cast<int>(skeleton->bytes.size())) &&
                    streamed_weights_match(model, *skeleton))) {
    skeleton.reset();
    model.Clear();
  }
  if (skeleton) {
    std::string().swap(skeleton->bytes);  // parsed: only the weights are needed now
  } else {
    google::protobuf::io::FileInputStream stream(model_file.fd(), kReadBlockBytes);
    google::protobuf::io::LimitingInputStream bounded(&stream, static_cast<std::int64_t>(model_file.size()));
    if (!model.ParseFromZeroCopyStream(&bounded)) {
      throw ConfigError(
          fmt::format("{}: not a valid ONNX model: the protobuf does not parse (truncated or corrupt)", origin));
    }
  }
  if (!model.has_graph()) throw ConfigError(fmt::format("{}: the model has no graph", origin));
  Context ctx;
  ctx.registry = &registry;
  ctx.opset = default_opset(model);
  if (ctx.opset < 11 || ctx.opset > 17) {
    throw ConfigError(fmt::format(
        "{}: opset {} is not supported: ldmsim reads opsets 11 to 17, the newest that its ONNX library (1.12) "
        "knows; export with torch.onnx.export(..., opset_version=17) or convert the model with "
        "onnx.version_converter",
        origin, ctx.opset));
  }
  const onnx::GraphProto& graph = model.graph();
  std::vector<std::string> problems;
  // Names with a value so far (graph inputs, initializers, earlier nodes' outputs), and the names whose
  // definition failed, whose consumers are skipped without repeating the cause.
  std::set<std::string> defined, failed;
  for (const onnx::NodeProto& node : graph.node()) {
    ctx.reserved.insert(node.output().begin(), node.output().end());
    onnx_import::reserve_subgraph_names(node, ctx.reserved);
  }
  for (const onnx::ValueInfoProto& input : graph.input()) ctx.reserved.insert(input.name());
  for (const onnx::TensorProto& init : graph.initializer()) ctx.reserved.insert(init.name());
  std::size_t next_streamed = 0;  // skeleton->weights are in initializer order
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const onnx::TensorProto& init = graph.initializer(i);
    onnx_import::StreamedWeight* streamed = nullptr;
    if (skeleton && next_streamed < skeleton->weights.size() &&
        skeleton->weights[next_streamed].initializer == static_cast<std::size_t>(i)) {
      streamed = &skeleton->weights[next_streamed++];
    }
    std::string problem;
    auto c = onnx_import::read_tensor(init, problem, streamed);
    if (!c) {
      problems.push_back(fmt::format("initializer '{}' {}", init.name(), problem));
      failed.insert(init.name());
      continue;
    }
    ctx.shapes[init.name()] = c->dims;
    ctx.constants[init.name()] = std::move(*c);
  }
  ImportedModel out;
  SafeNames safe;
  // Names from the model (and the file's own) go into JSON: bytes that are not UTF-8 are replaced.
  out.workload = {
      {"name", valid_utf8(file.stem().string())},
      {"description",
       valid_utf8(fmt::format("imported from {} (opset {}{})", file.filename().string(), ctx.opset,
                              model.producer_name().empty()
                                  ? ""
                                  : fmt::format(", producer {} {}", model.producer_name(), model.producer_version())))},
      {"tensors", json::object()},
      {"ops", json::array()}};
  std::size_t index = 0;
  std::set<std::string> input_names;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!input_names.insert(input.name()).second) {
      problems.push_back(fmt::format("graph input '{}' is declared twice", safe(input.name())));
      continue;
    }
    if (ctx.constants.contains(input.name())) continue;  // an initializer listed as an input (IR < 4)
    const std::size_t before = problems.size();
    add_graph_input(input, index++, options, safe(input.name()), out, ctx, problems);
    if (problems.size() > before) failed.insert(input.name());  // its readers are counted, not listed again
  }
  for (const auto& given : options.inputs) {
    const std::string& name = given.first;  // not a structured binding: clang 14 cannot capture those
    const bool known = std::any_of(graph.input().begin(), graph.input().end(),
                                   [&](const onnx::ValueInfoProto& i) { return i.name() == name; });
    if (!known) problems.push_back(fmt::format("--input {}: the model has no input of that name", name));
  }

  std::set<std::string> used_constants;
  std::map<std::string, int> without_op;  // nodes folded to constants or removed, by op type
  std::size_t dependents = 0;             // nodes skipped because an input's node failed
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!failed.contains(input.name())) defined.insert(input.name());
  }
  for (const auto& [name, value] : ctx.constants) defined.insert(name);
  // The nodes in order, each with the index of the graph's node it stands for: an If whose condition is known
  // here is replaced by its branch's nodes (and Identity nodes for its outputs, kept in `inlined`).
  std::vector<std::pair<const onnx::NodeProto*, int>> nodes;
  for (int i = 0; i < graph.node_size(); ++i) nodes.emplace_back(&graph.node(i), i);
  std::deque<onnx::NodeProto> inlined;
  for (std::size_t at = 0; at < nodes.size(); ++at) {
    const onnx::NodeProto& node = *nodes[at].first;
    const int i = nodes[at].second;
    bool reads_failed = false;
    if (node.op_type() == "If" && wiring_problems(node, defined, failed, reads_failed).empty() && !reads_failed) {
      std::vector<std::string> why;
      if (auto branch = onnx_import::taken_branch(node, ctx, why)) {
        std::vector<std::pair<const onnx::NodeProto*, int>> spliced;
        for (const onnx::NodeProto* inner : branch->nodes) spliced.emplace_back(inner, i);
        for (onnx::NodeProto& identity : branch->outputs)
          spliced.emplace_back(&inlined.emplace_back(std::move(identity)), i);
        nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(at) + 1, spliced.begin(), spliced.end());
        ++without_op["If"];
        continue;
      }
      if (!why.empty()) {
        problems.push_back(fmt::format("node {} '{}' (If): {}", i, node.name(), fmt::join(why, "; ")));
        for (const std::string& o : node.output()) failed.insert(o);
        continue;
      }
    }
    // The names this node would define: a redefined name keeps its earlier, valid definition.
    std::vector<std::string> new_outputs;
    for (const std::string& o : node.output()) {
      if (!o.empty() && !defined.contains(o)) new_outputs.push_back(o);
    }
    const auto fail = [&](const std::vector<std::string>& why) {
      if (!why.empty()) {
        problems.push_back(fmt::format("node {} '{}' ({}): {}", i, node.name(), node.op_type(), fmt::join(why, "; ")));
      }
      failed.insert(new_outputs.begin(), new_outputs.end());
    };
    bool after_failure = false;
    const std::vector<std::string> wiring = wiring_problems(node, defined, failed, after_failure);
    if (!wiring.empty() || after_failure) {
      if (wiring.empty()) ++dependents;  // only reads what failed: counted, not listed
      fail(wiring);
      continue;
    }
    for (const std::string& o : node.output()) {
      if (!o.empty()) defined.insert(o);
    }
    onnx_import::Translation t = onnx_import::translate_node(node, ctx);
    if (!t.problems.empty()) {
      fail(t.problems);
      continue;
    }
    if (t.op.is_null()) {
      ++without_op[node.op_type()];
      continue;
    }
    json ops = t.op.is_array() ? std::move(t.op) : json::array({std::move(t.op)});
    std::string why;
    for (const json& op : ops) {
      if (why = track_shapes(op, node, ctx); !why.empty()) break;
    }
    if (!why.empty()) {
      fail({why});
      continue;
    }
    for (std::size_t k = 0; k < ops.size(); ++k) {
      json& op = ops[k];
      json inputs = json::array(), outputs = json::array();
      for (const auto& in : op["inputs"]) {
        const std::string name = in.get<std::string>();
        if (ctx.constants.contains(name)) used_constants.insert(name);
        inputs.push_back(safe(name));
      }
      for (const std::string& o : produced_outputs(op, node)) outputs.push_back(safe(o));
      op["inputs"] = std::move(inputs);
      op["outputs"] = std::move(outputs);
      // The ops of a node that becomes several are its layer's parts: name/1, name/2, ... after the first.
      if (!node.name().empty()) op["name"] = valid_utf8(k == 0 ? node.name() : fmt::format("{}/{}", node.name(), k));
      out.workload["ops"].push_back(std::move(op));
    }
  }
  if (graph.output_size() == 0) problems.push_back("the graph has no outputs: nothing would be computed");
  for (const onnx::ValueInfoProto& o : graph.output()) {
    const std::string source = onnx_import::resolve(ctx, o.name());
    if (failed.contains(o.name()) || failed.contains(source)) continue;
    if (ctx.constants.contains(source)) {
      const auto& dims = ctx.constants.at(source).dims;
      if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
        problems.push_back(
            fmt::format("graph output '{}' is empty (shape [{}]): device tensors hold at least one "
                        "element",
                        o.name(), fmt::join(dims, ", ")));
      } else {
        problems.push_back(fmt::format("graph output '{}' is a constant: no op computes it", o.name()));
      }
    } else if (!defined.contains(source)) {
      problems.push_back(fmt::format("graph output '{}' is not produced by any node", o.name()));
    }
  }
  if (!problems.empty()) {
    // Root causes only, each once; what merely depends on them is counted.
    const std::string rest = dependents == 0 ? "" : fmt::format("\n  and {} node(s) that depend on them", dependents);
    throw ConfigError(fmt::format("{}: {} problem(s) before anything runs:\n  {}{}", origin, problems.size(),
                                  fmt::join(problems, "\n  "), rest));
  }
  std::size_t typed_constants = 0;
  std::uint64_t saturated = 0;  // of the constants used, each counted where its values were rounded
  for (const std::string& name : used_constants) {
    Constant& c = ctx.constants.at(name);
    const std::string file_name = safe(name) + ".npy";
    const DType type = onnx_import::constant_dtype(c);
    json& tensor = out.workload["tensors"][safe(name)];
    tensor = {{"shape", c.dims}, {"init", {{"file", file_name}}}, {"constant", true}};
    if (type == DType::kF16) {
      out.arrays[file_name] = fp16_array(c, saturated);
      continue;
    }
    std::vector<std::string> range_problems;
    if (!onnx_import::decode(c)) {
      throw ConfigError(fmt::format("{}: integer constant '{}' is too large to read at import", origin, name));
    }
    auto array = integral_array(c, name, range_problems);
    if (!array) throw ConfigError(fmt::format("{}: {}", origin, range_problems.front()));
    tensor["dtype"] = type == DType::kBool ? "bool" : "int32";
    out.arrays[file_name] = std::move(*array);
    ++typed_constants;
  }
  if (!without_op.empty()) {
    std::vector<std::string> counts;
    int total = 0;
    for (const auto& [type, n] : without_op) counts.push_back(fmt::format("{} x{}", type, n)), total += n;
    out.notes.push_back({fmt::format("{} node(s) folded to constants or removed at import, no device op: {}", total,
                                     fmt::join(counts, ", ")),
                         {}});
  }
  if (used_constants.size() > typed_constants) {
    out.notes.push_back({fmt::format("{} constant tensor(s) rounded to fp16 (round to nearest even)",
                                     used_constants.size() - typed_constants),
                         {}});
  }
  if (saturated > 0) {
    out.notes.push_back({fmt::format("{} constant value(s) beyond fp16's range saturated to +-65504, its largest "
                                     "finite value (an attention mask's -1e9 stays finite; infinities stay infinite)",
                                     saturated),
                         {}});
  }
  out.workload["outputs"] = json::array();
  for (const onnx::ValueInfoProto& o : graph.output()) {
    const std::string source = onnx_import::resolve(ctx, o.name());
    if (source != o.name()) {
      // An output that names another tensor (after Identity, Dropout, a noop ReduceSum, or a graph input itself)
      // gets a tensor of its own name, so it is written as <output name>.npy: a reshape to the same shape, which
      // hands the buffer over when nothing else reads it and copies otherwise.
      const auto& dims = ctx.shapes.at(source);
      out.workload["ops"].push_back({{"type", "reshape"},
                                     {"inputs", json::array({safe(source)})},
                                     {"outputs", json::array({safe(o.name())})},
                                     {"attrs", {{"shape", std::vector<std::int64_t>(dims.begin(), dims.end())}}},
                                     {"name", valid_utf8(o.name() + " (output alias)")}});
    }
    out.workload["outputs"].push_back(safe(o.name()));
  }
  for (ImportNote& note : out.notes) note.text = valid_utf8(note.text);  // they name inputs
  // Read in more than one pass (a fold re-reads a streamed weight's fp32 values): all from the same file version.
  if (!version_read || file_version(model_file.fd()) != version_read) {
    throw ConfigError(fmt::format("{}: the model file changed while it was read (read it again)", origin));
  }
  out.streamed_weights = skeleton ? skeleton->weights.size() : 0;
  return out;
}

}  // namespace ldmsim

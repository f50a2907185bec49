// The JSON workload front end (see workload_json.hpp).
#include "ldmsim/frontends/workload_json.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/json_checked.hpp"

namespace ldmsim {

namespace {

Shape parse_shape(const JsonField& j, const std::string& tensor) {
  if (!j.json().is_array()) j.fail("must be an array of 0 to 6 positive integers");
  std::vector<std::uint64_t> dims;
  for (const JsonField& d : j.elements()) dims.push_back(d.unsigned_integer(1));
  return Shape(dims, fmt::format("tensor '{}': shape", tensor));
}

/// The .npy dtype a declared dtype reads, and back.
std::string npy_dtype_of(const std::string& declared) {
  return declared == "f32"     ? "f4"
         : declared == "int32" ? "i4"
         : declared == "int64" ? "i8"
         : declared == "bool"  ? "b1"
                               : "f2";
}
std::string declared_dtype_of(const std::string& npy) {
  return npy == "f4" ? "f32" : npy == "i4" ? "int32" : npy == "i8" ? "int64" : npy == "b1" ? "bool" : "f16";
}

/// The element type a tensor of declared dtype is held in on the device (f32 rounded to fp16, int64 as int32).
DType device_dtype(const std::string& declared) {
  return declared == "int32" || declared == "int64" ? DType::kI32 : declared == "bool" ? DType::kBool : DType::kF16;
}

/// Reads a {"file": ...} init; checks dtype and (when declared) shape.
void read_file_init(TensorInit& init, std::optional<Shape>& shape, const std::string& name, const std::string& dtype,
                    const JsonField& file_field, const std::filesystem::path& base,
                    std::map<std::string, NpyArray>* arrays, std::vector<std::filesystem::path>* files_read) {
  const std::string written = file_field.non_empty_string();
  std::filesystem::path file = written;
  if (file.is_relative()) file = base / file;
  NpyArray a;
  const auto in_memory = arrays != nullptr ? arrays->find(written) : std::map<std::string, NpyArray>::iterator{};
  if (arrays != nullptr && in_memory != arrays->end()) {
    if (in_memory->second.dtype.empty()) {
      throw ConfigError(
          fmt::format("tensor '{}': the in-memory array '{}' already backs another tensor", name, written));
    }
    a = std::move(in_memory->second);
    in_memory->second.dtype.clear();  // moved from: a second use is an error, not a read from disk
  } else {
    if (files_read != nullptr) files_read->push_back(file);
    try {
      a = read_npy(file);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("tensor '{}': unreadable .npy: {}", name, e.what()));
    }
  }
  const std::string want = npy_dtype_of(dtype);
  if (a.dtype != want) {
    throw ConfigError(fmt::format("tensor '{}': dtype mismatch: declared {} but {} holds {}", name, dtype,
                                  file.string(), declared_dtype_of(a.dtype)));
  }
  const std::vector<std::uint64_t> dims(a.shape.begin(), a.shape.end());
  const Shape s(dims, fmt::format("tensor '{}': {}", name, file.string()));
  if (shape && !(*shape == s)) {
    throw ConfigError(fmt::format("tensor '{}': shape mismatch: declared {} but {} is {}", name, shape->str(),
                                  file.string(), s.str()));
  }
  shape = s;
  init.kind = TensorInit::Kind::kData;
  if (a.is_integral()) {
    init.data = SharedHalves(words_to_units(a.integers));
  } else if (a.dtype == "f2") {
    init.data = std::exchange(a.halves, {});
  } else {  // f32 data is rounded to fp16 once, here
    std::vector<f16> halves(a.data.size());
    floats_to_halves(a.data, halves);
    init.data = SharedHalves(std::move(halves));
  }
}

TensorInit parse_init(const JsonField& i, std::optional<Shape>& shape, const std::string& name,
                      const std::string& dtype, const std::filesystem::path& base,
                      std::map<std::string, NpyArray>* arrays, std::vector<std::filesystem::path>* files_read) {
  if (!i.json().is_object()) {
    i.fail("must be one of {\"uniform\": [lo, hi]}, {\"normal\": [mean, std]}, {\"value\": v}, {\"file\": \"x.npy\"}");
  }
  TensorInit init;
  auto pair = [&](std::string_view key) {
    const auto items = i.at(key).elements();
    if (items.size() != 2) i.at(key).fail("must be [a, b]");
    init.a = items[0].number();
    init.b = items[1].number();
  };
  if (i.has("uniform")) {
    i.expect_object({"uniform", "seed"});
    init.kind = TensorInit::Kind::kUniform;
    pair("uniform");
    if (init.b < init.a) i.at("uniform").fail("must be [lo, hi] with lo <= hi");
  } else if (i.has("normal")) {
    i.expect_object({"normal", "seed"});
    init.kind = TensorInit::Kind::kNormal;
    pair("normal");
    if (init.b < 0) i.at("normal").fail("must be [mean, std] with std >= 0: the normal std must be >= 0");
  } else if (i.has("value")) {
    i.expect_object({"value"});
    init.kind = TensorInit::Kind::kValue;
    init.a = i.at("value").number();
  } else if (i.has("file")) {
    i.expect_object({"file"});
    read_file_init(init, shape, name, dtype, i.at("file"), base, arrays, files_read);
  } else {
    i.expect_object({"uniform", "normal", "value", "file", "seed"});
    i.fail("must be one of {\"uniform\": [lo, hi]}, {\"normal\": [mean, std]}, {\"value\": v}, {\"file\": \"x.npy\"}");
  }
  if (const auto seed = i.find("seed")) init.seed = seed->unsigned_integer();
  if (!shape) i.fail_message(fmt::format("tensor '{}': an initialized tensor needs a shape", name));
  return init;
}

std::vector<std::string> tensor_names(const JsonField& list) {
  if (!list.json().is_array()) list.fail("must be an array of tensor names");
  std::vector<std::string> names;
  for (const JsonField& v : list.elements()) names.push_back(v.non_empty_string());
  return names;
}

}  // namespace

Graph workload_from_json(const nlohmann::json& tree, const std::string& origin, const std::filesystem::path& base_dir,
                         const OperatorRegistry& registry, std::string name, const WorkloadLoadOptions& options) {
  const JsonField root(tree, origin);
  if (!tree.is_object()) root.fail("must be a JSON object (a workload)");
  root.expect_object({"name", "tensors", "ops", "outputs", "arch", "staging", "description"});
  Graph g;
  for (const auto& [type, attrs] : options.default_attrs) g.set_default_attrs(type, attrs);
  g.name = root.has("name") ? root.at("name").non_empty_string() : std::move(name);
  if (const auto arch = root.find("arch")) g.arch = arch->non_empty_string();
  if (const auto staging = root.find("staging")) {
    try {
      g.staging = parse_staging_policy(staging->string());
    } catch (const ConfigError& e) {
      staging->fail_message(fmt::format("{}: {}", staging->path(), e.what()));
    }
  }
  const JsonField tensors = root.at("tensors");
  if (!tensors.json().is_object()) tensors.fail("must be an object of tensor declarations");
  // Inputs first (they carry an init); declared shapes of op outputs are checked when their op is added.
  std::set<std::string> declared_outputs;
  std::map<std::string, DType> declared_types;
  for (const auto& [tname, tj] : tensors.members()) {
    if (!tj.json().is_object()) tj.fail("must be an object");
    tj.expect_object({"shape", "dtype", "init", "constant"});
    std::optional<Shape> shape;
    if (const auto s = tj.find("shape")) shape = parse_shape(*s, tname);
    const std::string dtype = tj.has("dtype") ? tj.at("dtype").string() : "f16";
    if (dtype != "f16" && dtype != "f32" && dtype != "int32" && dtype != "int64" && dtype != "bool")
      tj.at("dtype").fail("must be f16, f32, int32, int64 or bool");
    if (const auto init = tj.find("init")) {
      TensorInit ti = parse_init(*init, shape, tname, dtype, base_dir, options.arrays, options.files_read);
      ti.source_f32 = dtype == "f32";
      if (ti.kind == TensorInit::Kind::kNormal && device_dtype(dtype) != DType::kF16)
        init->at("normal").fail(
            fmt::format("is for float tensors; an {} tensor takes a value, uniform or file", dtype));
      if (const auto constant = tj.find("constant")) ti.constant = constant->boolean();
      g.add_input(tname, *shape, std::move(ti), device_dtype(dtype));
      continue;
    }
    if (tj.has("constant")) tj.at("constant").fail("is only for tensors with an init (an op produces this one)");
    if (dtype == "f32" || dtype == "int64") {
      tj.fail_message(fmt::format("tensor '{}': dtype mismatch: '{}' is declared {} but ops produce f16, int32 or bool",
                                  tname, tname, dtype));
    }
    if (shape) g.declare_shape(tname, *shape);
    declared_outputs.insert(tname);
    if (tj.has("dtype")) declared_types[tname] = device_dtype(dtype);
  }
  const JsonField ops = root.at("ops");
  if (!ops.json().is_array()) ops.fail("must be an array of ops");
  const std::vector<JsonField> op_fields = ops.elements();
  // Which op produces each tensor, to tell a cycle (read before produced) from a missing tensor.
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < op_fields.size(); ++i) {
    const auto outs = op_fields[i].json().is_object() ? op_fields[i].find("outputs") : std::nullopt;
    if (!outs || !outs->json().is_array()) continue;
    for (const JsonField& o : outs->elements()) {
      if (o.json().is_string()) producer.try_emplace(o.json().get<std::string>(), i);
    }
  }
  for (std::size_t i = 0; i < op_fields.size(); ++i) {
    const JsonField& oj = op_fields[i];
    if (!oj.json().is_object()) oj.fail("must be an object (an op)");
    oj.expect_object({"type", "inputs", "outputs", "attrs", "name"});
    const std::string type = oj.at("type").non_empty_string();
    const std::vector<std::string> inputs = tensor_names(oj.at("inputs"));
    const std::vector<std::string> outputs = tensor_names(oj.at("outputs"));
    for (const auto& in : inputs) {
      if (g.find(in)) continue;
      if (const auto p = producer.find(in); p != producer.end() && p->second >= i) {
        throw ConfigError(
            fmt::format("op {} ({}): cycle: input '{}' is produced by op {}, which does not run before it", i, type, in,
                        p->second));
      }
    }
    const nlohmann::json null_attrs;
    const auto attrs = oj.find("attrs");
    const auto layer_name = oj.find("name");
    g.add_op(registry, type, inputs, outputs, attrs ? *attrs : JsonField(null_attrs, origin, oj.child_path("attrs")),
             layer_name ? layer_name->non_empty_string() : std::string{});
  }
  for (const auto& t : declared_outputs) {
    const auto found = g.find(t);
    if (!found) throw ConfigError(fmt::format("tensor '{}': missing init and not produced by any op", t));
    const auto declared = declared_types.find(t);
    if (const DType produced = g.tensor(*found).dtype;
        declared != declared_types.end() && produced != declared->second) {
      throw ConfigError(fmt::format("tensor '{}': dtype mismatch: declared {} but its op produces {}", t,
                                    to_string(declared->second), to_string(produced)));
    }
  }
  const JsonField outs = root.at("outputs");
  if (!outs.json().is_array() || outs.json().empty()) outs.fail("must be a non-empty array of tensor names");
  for (const JsonField& o : outs.elements()) {
    if (!o.json().is_string() || !g.find(o.json().get<std::string>())) {
      throw ConfigError(fmt::format("outputs: missing tensor {}", o.json().dump()));
    }
    g.mark_output(o.json().get<std::string>());
  }
  return g;
}

Graph load_workload(const std::filesystem::path& file, const OperatorRegistry& registry,
                    const WorkloadLoadOptions& options) {
  const nlohmann::json tree = read_json_file(file, "workload", kMaxWorkloadFileBytes);
  return workload_from_json(tree, file.string(), file.parent_path(), registry, file.stem().string(), options);
}

}  // namespace ldmsim

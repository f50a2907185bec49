// Workload JSON loading and validation: tensors, inits, ops, outputs. Every error names the op index or the
// tensor and is raised before anything runs.
#include "ldmsim/runtime/workload.hpp"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "ldmsim/runtime/npy.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

using nlohmann::json;

void only_keys(const json& obj, std::initializer_list<const char*> keys, const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (const char* k : keys) ok = ok || key == k;
    if (!ok) throw ConfigError(fmt::format("{}: unknown key '{}'", where, key));
  }
}

Shape4 parse_shape(const json& j, const std::string& where) {
  if (!j.is_array()) throw ConfigError(fmt::format("{}: shape must be an array of 1 to 4 positive integers", where));
  std::vector<std::size_t> dims;
  for (const auto& d : j) {
    if (!d.is_number_integer() || d.get<long long>() <= 0) {
      throw ConfigError(fmt::format("{}: shape must be an array of 1 to 4 positive integers, got {}", where, j.dump()));
    }
    dims.push_back(d.get<std::size_t>());
  }
  try {
    return Shape4::from_dims(dims);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", where, e.what()));
  }
}

void check_init(TensorDecl& t, const std::filesystem::path& base) {
  const std::string where = fmt::format("tensor '{}': init", t.name);
  const json& i = t.init;
  if (!i.is_object()) throw ConfigError(where + " must be an object");
  auto pair_of_numbers = [&](const char* key) {
    const json& v = i.at(key);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
      throw ConfigError(fmt::format("{}: '{}' must be [a, b]", where, key));
    }
  };
  if (i.contains("uniform")) {
    only_keys(i, {"uniform", "seed"}, where);
    pair_of_numbers("uniform");
  } else if (i.contains("normal")) {
    only_keys(i, {"normal", "seed"}, where);
    pair_of_numbers("normal");
    if (i["normal"][1].get<double>() < 0) throw ConfigError(where + ": the normal std must be >= 0");
  } else if (i.contains("value")) {
    only_keys(i, {"value"}, where);
    if (!i["value"].is_number()) throw ConfigError(where + ": 'value' must be a number");
  } else if (i.contains("file")) {
    only_keys(i, {"file"}, where);
    if (!i["file"].is_string()) throw ConfigError(where + ": 'file' must be a path");
    std::filesystem::path file = i["file"].get<std::string>();
    if (file.is_relative()) file = base / file;
    NpyArray a;
    try {
      a = read_npy(file);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("tensor '{}': unreadable .npy: {}", t.name, e.what()));
    }
    const std::string want = t.dtype == "f32" ? "f4" : "f2";
    if (a.dtype != want) {
      throw ConfigError(fmt::format("tensor '{}': dtype mismatch: declared {} but {} holds {}", t.name, t.dtype,
                                    file.string(), a.dtype == "f4" ? "f32" : "f16"));
    }
    const Shape4 s = a.shape.empty() ? Shape4::from_dims({1}) : Shape4::from_dims(a.shape);
    if (t.shape && !(*t.shape == s)) {
      throw ConfigError(fmt::format("tensor '{}': shape mismatch: declared {} but {} is {}", t.name, t.shape->str(),
                                    file.string(), s.str()));
    }
    t.shape = s;
    t.file_data = std::move(a.data);
  } else {
    throw ConfigError(where +
                      " must be one of {\"uniform\": [lo, hi]}, {\"normal\": [mean, std]}, {\"value\": v}, "
                      "{\"file\": \"x.npy\"}");
  }
  if (i.contains("seed") && !i["seed"].is_number_unsigned()) throw ConfigError(where + ": 'seed' must be >= 0");
  if (!t.shape) throw ConfigError(fmt::format("tensor '{}': an initialized tensor needs a shape", t.name));
}

}  // namespace

Workload Workload::from_json(const json& tree, const std::filesystem::path& base_dir, const Registry& registry,
                             std::string name) {
  if (!tree.is_object()) throw ConfigError("a workload must be a JSON object");
  only_keys(tree, {"name", "tensors", "ops", "outputs", "arch", "staging", "description"}, "workload");
  Workload w;
  w.name = tree.value("name", name);
  w.base_dir = base_dir;
  if (tree.contains("arch")) {
    if (!tree["arch"].is_string()) throw ConfigError("workload: 'arch' must be a preset name or a file");
    w.arch = tree["arch"].get<std::string>();
  }
  if (tree.contains("staging")) w.staging = parse_staging_policy(tree["staging"].get<std::string>());
  if (!tree.contains("tensors") || !tree["tensors"].is_object())
    throw ConfigError("workload: 'tensors' must be an object");
  for (const auto& [tname, tj] : tree["tensors"].items()) {
    const std::string where = fmt::format("tensor '{}'", tname);
    if (!tj.is_object()) throw ConfigError(where + " must be an object");
    only_keys(tj, {"shape", "dtype", "init"}, where);
    TensorDecl t;
    t.name = tname;
    if (tj.contains("shape")) t.shape = parse_shape(tj["shape"], where);
    t.dtype = tj.value("dtype", std::string("f16"));
    if (t.dtype != "f16" && t.dtype != "f32") throw ConfigError(where + ": dtype must be f16 or f32");
    if (tj.contains("init")) {
      t.init = tj["init"];
      check_init(t, base_dir);
    }
    w.tensors.emplace(tname, std::move(t));
  }
  if (!tree.contains("ops") || !tree["ops"].is_array()) throw ConfigError("workload: 'ops' must be an array");
  // Which op produces each tensor, to tell a cycle (read before produced) from a missing tensor.
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < tree["ops"].size(); ++i) {
    const json& oj = tree["ops"][i];
    if (!oj.is_object() || !oj.contains("outputs") || !oj["outputs"].is_array()) continue;
    for (const auto& o : oj["outputs"]) {
      if (!o.is_string()) continue;
      const std::string out = o.get<std::string>();
      if (auto it = producer.find(out); it != producer.end()) {
        throw ConfigError(fmt::format("op {}: tensor '{}' is produced twice (also by op {})", i, out, it->second));
      }
      producer[out] = i;
    }
  }
  std::set<std::string> defined;
  for (const auto& [tname, t] : w.tensors) {
    if (!t.init.is_null()) defined.insert(tname);
  }
  for (std::size_t i = 0; i < tree["ops"].size(); ++i) {
    const json& oj = tree["ops"][i];
    if (!oj.is_object()) throw ConfigError(fmt::format("op {}: must be an object", i));
    only_keys(oj, {"type", "inputs", "outputs", "attrs", "name"}, fmt::format("op {}", i));
    OpDecl op;
    op.type = oj.value("type", std::string());
    const Operator* def = registry.find(op.type);
    if (def == nullptr) {
      throw ConfigError(
          fmt::format("op {}: unknown op '{}' (known: {})", i, op.type, fmt::join(registry.names(), ", ")));
    }
    const std::string where = fmt::format("op {} ({})", i, op.type);
    for (const char* key : {"inputs", "outputs"}) {
      if (!oj.contains(key) || !oj[key].is_array())
        throw ConfigError(fmt::format("{}: '{}' must be an array", where, key));
      for (const auto& v : oj[key]) {
        if (!v.is_string()) throw ConfigError(fmt::format("{}: '{}' must name tensors", where, key));
        (std::string(key) == "inputs" ? op.inputs : op.outputs).push_back(v.get<std::string>());
      }
    }
    if (oj.contains("attrs")) op.attrs = oj["attrs"];
    if (op.inputs.size() < def->min_inputs || op.inputs.size() > def->max_inputs) {
      throw ConfigError(
          fmt::format("{}: takes {} to {} inputs, got {}", where, def->min_inputs, def->max_inputs, op.inputs.size()));
    }
    if (op.outputs.size() != def->outputs) {
      throw ConfigError(fmt::format("{}: produces {} outputs, got {}", where, def->outputs, op.outputs.size()));
    }
    std::vector<Shape4> in_shapes;
    for (const auto& in : op.inputs) {
      if (!defined.count(in)) {
        auto p = producer.find(in);
        if (p != producer.end()) {
          throw ConfigError(fmt::format("{}: cycle: input '{}' is produced by op {}, which does not run before it",
                                        where, in, p->second));
        }
        throw ConfigError(
            fmt::format("{}: missing tensor '{}' (not initialized and not produced by any op)", where, in));
      }
      in_shapes.push_back(*w.tensors.at(in).shape);
    }
    std::vector<Shape4> out_shapes;
    try {
      out_shapes = def->infer(in_shapes, op.attrs);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: {}", where, e.what()));
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const std::string& out = op.outputs[k];
      auto [it, fresh] = w.tensors.try_emplace(out, TensorDecl{out, std::nullopt, "f16", nullptr, {}});
      if (!it->second.init.is_null()) {
        throw ConfigError(fmt::format("{}: tensor '{}' is produced twice (it is also initialized)", where, out));
      }
      if (it->second.dtype != "f16") {
        throw ConfigError(
            fmt::format("{}: dtype mismatch: '{}' is declared {} but ops produce f16", where, out, it->second.dtype));
      }
      if (it->second.shape && !(*it->second.shape == out_shapes[k])) {
        throw ConfigError(fmt::format("{}: shape mismatch: '{}' is declared {} but the op produces {}", where, out,
                                      it->second.shape->str(), out_shapes[k].str()));
      }
      it->second.shape = out_shapes[k];
      defined.insert(out);
    }
    w.ops.push_back(std::move(op));
  }
  for (const auto& [tname, t] : w.tensors) {
    if (!defined.count(tname)) {
      throw ConfigError(fmt::format("tensor '{}': missing init and not produced by any op", tname));
    }
  }
  if (!tree.contains("outputs") || !tree["outputs"].is_array() || tree["outputs"].empty()) {
    throw ConfigError("workload: 'outputs' must be a non-empty array of tensor names");
  }
  for (const auto& o : tree["outputs"]) {
    if (!o.is_string() || !w.tensors.count(o.get<std::string>())) {
      throw ConfigError(fmt::format("outputs: missing tensor {}", o.dump()));
    }
    w.outputs.push_back(o.get<std::string>());
  }
  return w;
}

Workload Workload::load(const std::filesystem::path& file, const Registry& registry) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("{}: cannot open workload", file.string()));
  json tree;
  try {
    tree = json::parse(in);
  } catch (const json::exception& e) {
    throw ConfigError(fmt::format("{}: invalid JSON: {}", file.string(), e.what()));
  }
  try {
    return from_json(tree, file.parent_path(), registry, file.stem().string());
  } catch (const json::exception& e) {
    throw ConfigError(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace ldmsim

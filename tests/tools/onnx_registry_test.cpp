// The ONNX importer binds with the registry it is given: an ONNX op type that a user's kind claims (its traits'
// onnx_types) imports as that kind, and the built-in one-to-one mappings come from the built-in kinds' traits.
#include <catch2/catch.hpp>
#include <string>

#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/sim/fault.hpp"
#include "support/onnx_wire.hpp"
#include "support/temp_dir.hpp"
#include "support/wrapping_kind.hpp"

using namespace ldmsim;
using test::Message;

namespace {

/// y = op(x) on x [2, 8]: GraphProto node 1, name 2, input 11, output 12.
std::string one_node_model(const std::string& op) {
  Message g;
  g.message(1, test::node(op, {"x"}, "y"));
  g.bytes_field(2, "g");
  g.message(11, test::value_info("x", {2, 8}));
  g.message(12, test::value_info("y", {2, 8}));
  return test::model(g).bytes;
}

}  // namespace

TEST_CASE("the ONNX importer maps op types onto the kinds of the registry it is given", "[onnx][import][registry]") {
  const test::TempDir dir("onnx-registry");
  const auto hardmax_model = dir.write("hardmax.onnx", one_node_model("Hardmax"));
  // No built-in kind claims Hardmax.
  CHECK_THROWS_WITH(import_onnx(hardmax_model),
                    Catch::Contains("Hardmax") && Catch::Contains("not a supported op type"));

  OperatorRegistry registry = OperatorRegistry::builtin();
  registry.add(std::make_unique<test::WrappingKind>("my_hardmax", "neg", std::vector<std::string>{"Hardmax"}));
  const ImportedModel m = import_onnx(hardmax_model, {}, registry);
  REQUIRE(m.workload["ops"].size() == 1);
  CHECK(m.workload["ops"][0]["type"] == "my_hardmax");
  const Graph g = workload_from_json(m.workload, hardmax_model.string(), dir.path(), registry);
  CHECK(g.ops().at(0).type == "my_hardmax");

  // The built-in one-to-one mappings are the kinds' traits.
  CHECK(registry.find_onnx("Relu") == registry.find("relu"));
  CHECK(registry.find_onnx("Add") == registry.find("add"));
  CHECK(registry.find_onnx("Conv") == nullptr);  // translated with its attributes, not one to one
  const ImportedModel relu = import_onnx(dir.write("relu.onnx", one_node_model("Relu")));
  CHECK(relu.workload["ops"][0]["type"] == "relu");
}

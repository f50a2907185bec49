// The proto subset the Perfetto export writes (trace_analysis/proto/perfetto_trace_subset.proto) against Perfetto's
// own protos: every field and enum value it declares has Perfetto's number, label and type, as recorded from
// github.com/google/perfetto by scripts/perfetto_schema_facts.py in trace_analysis/proto/perfetto_upstream_fields.txt.
// protoc compiles the subset (as the export test's decode does); protobuf's own descriptors are then walked.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

namespace pb = google::protobuf;

void add_facts(const pb::Descriptor& message, std::set<std::string>& facts) {
  for (int i = 0; i < message.field_count(); ++i) {
    const pb::FieldDescriptor& f = *message.field(i);
    std::string fact = message.full_name() + "." + f.name() + " = " + std::to_string(f.number()) + " " +
                       pb::FieldDescriptorProto_Label_Name(static_cast<pb::FieldDescriptorProto_Label>(f.label())) +
                       " " + pb::FieldDescriptorProto_Type_Name(static_cast<pb::FieldDescriptorProto_Type>(f.type()));
    if (f.message_type() != nullptr) fact += " ." + f.message_type()->full_name();
    if (f.enum_type() != nullptr) fact += " ." + f.enum_type()->full_name();
    facts.insert(fact);
  }
  for (int i = 0; i < message.enum_type_count(); ++i) {
    const pb::EnumDescriptor& e = *message.enum_type(i);
    for (int v = 0; v < e.value_count(); ++v) {
      facts.insert(e.full_name() + "." + e.value(v)->name() + " = " + std::to_string(e.value(v)->number()));
    }
  }
  for (int i = 0; i < message.nested_type_count(); ++i) add_facts(*message.nested_type(i), facts);
}

}  // namespace

TEST_CASE("the Perfetto proto subset has Perfetto's own field numbers, labels and types", "[trace-export]") {
  const std::string dir = std::string(LDMSIM_SOURCE_DIR) + "/trace_analysis/proto";
  const auto set_file =
      std::filesystem::temp_directory_path() / ("ldmsim_perfetto_subset_" + std::to_string(getpid()) + ".desc");
  const std::string command =
      "protoc --proto_path='" + dir + "' --descriptor_set_out='" + set_file.string() + "' perfetto_trace_subset.proto";
  REQUIRE(std::system(command.c_str()) == 0);
  pb::FileDescriptorSet set;
  {
    std::ifstream in(set_file, std::ios::binary);
    REQUIRE(set.ParseFromIstream(&in));
  }
  std::filesystem::remove(set_file);
  REQUIRE(set.file_size() == 1);
  pb::DescriptorPool pool;
  const pb::FileDescriptor* file = pool.BuildFile(set.file(0));
  REQUIRE(file != nullptr);
  std::set<std::string> ours;
  for (int i = 0; i < file->message_type_count(); ++i) add_facts(*file->message_type(i), ours);
  REQUIRE(ours.size() >= 30);  // the subset as written: 34 fields and 4 enum values

  std::ifstream in(dir + "/perfetto_upstream_fields.txt");
  REQUIRE(in);
  std::set<std::string> upstream;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') upstream.insert(line);
  }
  // Equal sets: nothing in the subset that Perfetto declares otherwise, and the facts describe just the subset
  // (after a change to the subset, re-run the script against a Perfetto checkout).
  for (const std::string& fact : ours) {
    INFO(fact);
    CHECK(upstream.count(fact) == 1);
  }
  for (const std::string& fact : upstream) {
    INFO(fact);
    CHECK(ours.count(fact) == 1);
  }
}

#!/usr/bin/env python3
"""Checks the repository's Perfetto proto subset against Perfetto's own protos and writes the facts the tests keep.

Given a checkout of github.com/google/perfetto (only its protos/ folder is read), compiles its
protos/perfetto/trace/trace.proto and the subset trace_analysis/proto/perfetto_trace_subset.proto with protoc, and
for every message, field and enum value of the subset looks up the same full name in Perfetto's: field number,
type, label and message or enum type must agree. Writes the upstream facts of those names to
trace_analysis/proto/perfetto_upstream_fields.txt (tests/trace/perfetto_schema_test.cpp compares the subset with
it). With --export FILE, also decodes that export (written with --compression none) with Perfetto's full schema and
fails if protoc finds a field that schema does not know.

Usage: python3 scripts/perfetto_schema_facts.py PERFETTO_CHECKOUT [--commit SHA] [--export FILE.pftrace]
Needs protoc (protobuf-compiler) and the Python protobuf module (python3-protobuf)."""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
SUBSET_DIR = ROOT / "trace_analysis" / "proto"
SUBSET = "perfetto_trace_subset.proto"
FACTS = SUBSET_DIR / "perfetto_upstream_fields.txt"


def descriptors(proto_path, proto):
    with tempfile.NamedTemporaryFile(suffix=".desc") as out:
        subprocess.run(["protoc", f"--proto_path={proto_path}", f"--descriptor_set_out={out.name}",
                        "--include_imports", proto], check=True)
        files = descriptor_pb2.FileDescriptorSet.FromString(Path(out.name).read_bytes())
    messages, enums = {}, {}

    def walk(prefix, message):
        name = f"{prefix}.{message.name}"
        messages[name] = message
        for nested in message.nested_type:
            walk(name, nested)
        for enum in message.enum_type:
            enums[f"{name}.{enum.name}"] = enum

    for f in files.file:
        for message in f.message_type:
            walk(f".{f.package}", message)
        for enum in f.enum_type:
            enums[f".{f.package}.{enum.name}"] = enum
    return messages, enums


def field_fact(message_name, field):
    kind = descriptor_pb2.FieldDescriptorProto.Type.Name(field.type)
    label = descriptor_pb2.FieldDescriptorProto.Label.Name(field.label)
    target = f" {field.type_name}" if field.type_name else ""
    return f"{message_name[1:]}.{field.name} = {field.number} {label} {kind}{target}"


def facts_of(messages, enums, names):
    """The fact lines of the subset's names, looked up in `messages` / `enums` (missing ones reported)."""
    lines, missing = [], []
    for message_name, fields in names["messages"].items():
        if message_name not in messages:
            missing.append(message_name)
            continue
        by_name = {f.name: f for f in messages[message_name].field}
        for field in fields:
            if field not in by_name:
                missing.append(f"{message_name}.{field}")
            else:
                lines.append(field_fact(message_name, by_name[field]))
    for enum_name, values in names["enums"].items():
        if enum_name not in enums:
            missing.append(enum_name)
            continue
        by_name = {v.name: v.number for v in enums[enum_name].value}
        for value in values:
            if value not in by_name:
                missing.append(f"{enum_name}.{value}")
            else:
                lines.append(f"{enum_name[1:]}.{value} = {by_name[value]}")
    return sorted(lines), missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("perfetto", type=Path, help="a checkout of github.com/google/perfetto")
    parser.add_argument("--commit", default="", help="its commit, recorded in the facts file")
    parser.add_argument("--export", type=Path, help="an uncompressed export to decode with Perfetto's schema")
    args = parser.parse_args()

    sub_messages, sub_enums = descriptors(SUBSET_DIR, SUBSET)
    names = {"messages": {m: [f.name for f in d.field] for m, d in sub_messages.items()},
             "enums": {e: [v.name for v in d.value] for e, d in sub_enums.items()}}
    ours, _ = facts_of(sub_messages, sub_enums, names)
    up_messages, up_enums = descriptors(args.perfetto, "protos/perfetto/trace/trace.proto")
    theirs, missing = facts_of(up_messages, up_enums, names)
    problems = [f"not in Perfetto's protos: {m}" for m in missing]
    problems += [f"subset: {line}" for line in sorted(set(ours) - set(theirs))]
    problems += [f"Perfetto: {line}" for line in sorted(set(theirs) - set(ours))]
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"{len(ours)} fields and enum values of the subset agree with Perfetto's protos")
        header = ["# Perfetto's own numbers, labels and types of every field and enum value that",
                  "# trace_analysis/proto/perfetto_trace_subset.proto declares, from github.com/google/perfetto",
                  f"# protos/perfetto/trace/ at commit {args.commit or '?'}, written by scripts/perfetto_schema_facts.py."]
        FACTS.write_text("\n".join(header + theirs) + "\n")
        print(f"wrote {FACTS.relative_to(ROOT)}")
    if args.export:
        decoded = subprocess.run(
            ["protoc", f"--proto_path={args.perfetto}", "--decode=perfetto.protos.Trace",
             "protos/perfetto/trace/trace.proto"],
            stdin=args.export.open("rb"), capture_output=True, text=True, check=True).stdout
        unknown = [line for line in decoded.splitlines() if re.match(r"\s*\d+(:| \{)", line)]
        slices = decoded.count("type: TYPE_SLICE_BEGIN")
        print(f"{args.export}: decoded with Perfetto's schema, {len(decoded.splitlines())} lines, {slices} slices, "
              f"{len(unknown)} unknown fields")
        if unknown or slices == 0:
            problems.append("the export does not decode cleanly with Perfetto's schema")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

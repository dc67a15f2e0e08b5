// Test helpers that write MLIR bytecode independently of the reader under
// test: the primitives (Writer), a string section, and a version-6 VHLO
// artifact assembled from its tables (Artifact). Used by the container, VHLO
// and broken-input tests (docs/formats/mlir-bytecode.md has the encodings).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::frontend::test_util {

// Writes bytecode primitives into `bytes`.
class Writer {
 public:
  Writer& Byte(uint8_t byte) {
    bytes.push_back(byte);
    return *this;
  }
  // The shortest prefix varint of `value` (9 bytes from 2^56 on).
  Writer& VarInt(uint64_t value) {
    if (value >> 56 != 0) {
      Byte(0);
      for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(value >> (8 * i)));
      return *this;
    }
    int count = 1;
    while (count < 8 && value >> (7 * count) != 0) ++count;
    const uint64_t encoded = (value << count) | (uint64_t{1} << (count - 1));
    for (int i = 0; i < count; ++i) Byte(static_cast<uint8_t>(encoded >> (8 * i)));
    return *this;
  }
  Writer& SignedVarInt(int64_t value) {
    return VarInt((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
  }
  Writer& Flagged(uint64_t value, bool flag) { return VarInt((value << 1) | (flag ? 1 : 0)); }
  Writer& Append(const std::vector<uint8_t>& more) {
    bytes.insert(bytes.end(), more.begin(), more.end());
    return *this;
  }
  Writer& Text(std::string_view text) {
    bytes.insert(bytes.end(), text.begin(), text.end());
    return Byte(0);
  }
  // A section: id (| 0x80 when aligned), length, [alignment, 0xCB padding], data.
  // Padding counts from the start of `bytes`, which must be the file's start.
  Writer& Section(uint8_t id, const std::vector<uint8_t>& data, uint64_t alignment = 0) {
    Byte(static_cast<uint8_t>(id | (alignment ? 0x80 : 0)));
    VarInt(data.size());
    if (alignment) {
      VarInt(alignment);
      while (bytes.size() % alignment != 0) Byte(0xCB);
    }
    return Append(data);
  }

  std::vector<uint8_t> bytes;
};

// `bytes` with one to three bytes (not empty) changed to other values, drawn from `random`.
inline std::vector<uint8_t> FlipBytes(std::vector<uint8_t> bytes, std::mt19937& random) {
  const int flips = 1 + static_cast<int>(random() % 3);
  for (int i = 0; i < flips; ++i) {
    bytes[random() % bytes.size()] ^= static_cast<uint8_t>(1 + random() % 255);
  }
  return bytes;
}

// Varints back to back: Bytes({kind, index, ...}) for attribute encodings.
inline std::vector<uint8_t> Bytes(std::initializer_list<uint64_t> varints) {
  Writer writer;
  for (uint64_t value : varints) writer.VarInt(value);
  return writer.bytes;
}

// A string section: count, the sizes (NUL included) in reverse order, the strings.
inline std::vector<uint8_t> StringSection(const std::vector<std::string>& strings) {
  Writer writer;
  writer.VarInt(strings.size());
  for (size_t i = strings.size(); i-- > 0;) writer.VarInt(strings[i].size() + 1);
  for (const std::string& text : strings) writer.Text(text);
  return writer.bytes;
}

// A version-6 artifact built from its tables. Op names, attributes and types
// are grouped by dialect in the order given. Sections are written in the
// order StableHLO writes them (1, 3, 2, 4, [6, 5,] 0, 8). `dialects` names
// the dialect indices; a StableHLO-dialect file (not an artifact) names
// others, e.g. {"builtin", "func", "stablehlo", "chlo"}.
struct Artifact {
  enum Dialect : uint32_t { kBuiltin = 0, kVhlo = 1, kSdy = 2, kOther = 3 };
  struct Entry {
    uint32_t dialect;
    std::vector<uint8_t> bytes;
    bool custom = true;
  };

  std::string producer = "StableHLO_v1.22.0";
  std::vector<std::string> dialects = {"builtin", "vhlo", "sdy", "other"};
  bool empty_resources = false;  // write empty resource sections, as StableHLO does
  std::vector<std::string> strings;
  std::vector<std::pair<uint32_t, std::string>> op_names;
  std::vector<Entry> attributes;
  std::vector<Entry> types;
  std::vector<std::vector<uint8_t>> properties;
  std::vector<uint8_t> ir;

  uint64_t String(const std::string& text) {
    for (size_t i = 0; i < strings.size(); ++i) {
      if (strings[i] == text) return i;
    }
    strings.push_back(text);
    return strings.size() - 1;
  }
  uint64_t Attribute(uint32_t dialect, std::vector<uint8_t> bytes) {
    attributes.push_back({dialect, std::move(bytes)});
    return attributes.size() - 1;
  }
  uint64_t Type(uint32_t dialect, std::vector<uint8_t> bytes) {
    types.push_back({dialect, std::move(bytes)});
    return types.size() - 1;
  }
  uint64_t Op(uint32_t dialect, const std::string& name) {
    op_names.push_back({dialect, name});
    return op_names.size() - 1;
  }
  uint64_t Properties(std::vector<uint8_t> bytes) {
    properties.push_back(std::move(bytes));
    return properties.size() - 1;
  }

  std::vector<uint8_t> Build() {
    std::vector<uint64_t> dialect_names, op_strings;
    for (const std::string& name : dialects) dialect_names.push_back(String(name));
    for (const auto& [dialect, name] : op_names) op_strings.push_back(String(name));

    Writer dialect_section;
    dialect_section.VarInt(dialects.size());
    for (uint64_t name : dialect_names) dialect_section.Flagged(name, false);
    dialect_section.VarInt(op_names.size());
    for (size_t i = 0; i < op_names.size();) {
      size_t end = i;
      while (end < op_names.size() && op_names[end].first == op_names[i].first) ++end;
      dialect_section.VarInt(op_names[i].first).VarInt(end - i);
      for (; i < end; ++i) dialect_section.Flagged(op_strings[i], true);
    }

    Writer offsets, data;
    offsets.VarInt(attributes.size()).VarInt(types.size());
    for (const std::vector<Entry>* table : {&attributes, &types}) {
      for (size_t i = 0; i < table->size();) {
        size_t end = i;
        while (end < table->size() && (*table)[end].dialect == (*table)[i].dialect) ++end;
        offsets.VarInt((*table)[i].dialect).VarInt(end - i);
        for (; i < end; ++i) {
          offsets.Flagged((*table)[i].bytes.size(), (*table)[i].custom);
          data.Append((*table)[i].bytes);
        }
      }
    }

    Writer property_section;
    property_section.VarInt(properties.size());
    for (const auto& blob : properties) property_section.VarInt(blob.size()).Append(blob);

    Writer file;
    file.Byte('M').Byte('L').Byte(0xEF).Byte('R').VarInt(6).Text(producer);
    file.Section(1, dialect_section.bytes).Section(3, offsets.bytes).Section(2, data.bytes);
    file.Section(4, ir);
    if (empty_resources) file.Section(6, {0x01}).Section(5, {});
    file.Section(0, StringSection(strings)).Section(8, property_section.bytes);
    return file.bytes;
  }
};

// Sets `a.ir` to a top-level builtin.module (op name index `module`,
// properties `module_props`) holding one function op (`func`, properties
// `func_props`, attribute dictionary `func_attributes`, 0 for none) whose one
// region is `region` (its block count, value count and blocks), both
// isolated, every op at location `loc`; returns the built file.
inline std::vector<uint8_t> BuildModuleWithFunction(Artifact& a, uint64_t module, uint64_t func,
                                                    uint64_t loc, uint64_t module_props,
                                                    uint64_t func_props, uint64_t func_attributes,
                                                    const std::vector<uint8_t>& region) {
  Writer module_body;  // one block holding the function
  module_body.VarInt(1).VarInt(0).Flagged(1, false);
  module_body.VarInt(func).Byte(0x10 | 0x40 | (func_attributes != 0 ? 0x01 : 0)).VarInt(loc);
  if (func_attributes != 0) module_body.VarInt(func_attributes);
  module_body.VarInt(func_props).Flagged(1, true).Section(4, region);
  Writer ir;
  ir.Flagged(1, false);
  ir.VarInt(module).Byte(0x10 | 0x40).VarInt(loc).VarInt(module_props).Flagged(1, true);
  ir.Section(4, module_body.bytes);
  a.ir = ir.bytes;
  return a.Build();
}

// A file of the StableHLO dialect itself (not an artifact), as MLIR's writer
// makes it (producer "MLIR24.0.0git", bytecode 6):
//   func.func @main(%arg0: tensor<f32>) -> tensor<i1> {
//     %0 = stablehlo.compare GT, %arg0, %arg0 : (...) -> tensor<i1>  loc("broken.py":3:7)
//     return %0 : tensor<i1>
//   }
// Tests may change the tables before Build(): the comparison direction's
// entry (`direction`, a stablehlo attribute: kind 2, value 3), or give the
// function a dictionary of discardable attributes (`func_attributes`).
struct StablehloModule {
  enum Dialect : uint32_t { kBuiltin = 0, kFunc = 1, kStablehlo = 2, kChlo = 3 };
  Artifact a = [] {
    Artifact artifact;
    artifact.producer = "MLIR24.0.0git";
    artifact.dialects = {"builtin", "func", "stablehlo", "chlo"};
    return artifact;
  }();
  uint64_t module = a.Op(kBuiltin, "module");
  uint64_t func = a.Op(kFunc, "func");
  uint64_t ret = a.Op(kFunc, "return");
  uint64_t compare = a.Op(kStablehlo, "compare");
  uint64_t unknown = a.Attribute(kBuiltin, Bytes({15}));
  uint64_t file = a.Attribute(kBuiltin, Bytes({2, a.String("broken.py")}));
  uint64_t loc = a.Attribute(kBuiltin, Bytes({11, file, 3, 7}));
  uint64_t name = a.Attribute(kBuiltin, Bytes({2, a.String("main")}));
  uint64_t f32 = a.Type(kBuiltin, Bytes({5}));
  uint64_t tensor = a.Type(kBuiltin, Bytes({13, 0, f32}));
  uint64_t i1 = a.Type(kBuiltin, Bytes({0, 1 << 2}));
  uint64_t tensor_i1 = a.Type(kBuiltin, Bytes({13, 0, i1}));
  uint64_t signature = a.Type(kBuiltin, Bytes({2, 1, tensor, 1, tensor_i1}));
  uint64_t type = a.Attribute(kBuiltin, Bytes({6, signature}));
  uint64_t direction = a.Attribute(kStablehlo, Bytes({2, 3}));
  uint64_t func_attributes = 0;  // 0: none (attribute 0 is a location)

  std::vector<uint8_t> Build() {
    const uint64_t module_props = a.Properties(Bytes({0, 0}));  // no sym_name, sym_visibility
    // arg_attrs?, function_type, no_inline?, res_attrs?, sym_name, sym_visibility?
    const uint64_t func_props = a.Properties(Bytes({0, type, 0, 0, name, 0}));
    const uint64_t compare_props = a.Properties(Bytes({0, direction}));  // compare_type? absent
    Writer region;                                                       // one block: %arg0 and %0
    region.VarInt(1).VarInt(2).Flagged(2, true).VarInt(1).Flagged(tensor, false).Byte(0);
    region.VarInt(compare).Byte(0x02 | 0x04 | 0x40).VarInt(loc).VarInt(compare_props);
    region.VarInt(1).VarInt(tensor_i1).VarInt(2).VarInt(0).VarInt(0);
    region.VarInt(ret).Byte(0x04).VarInt(unknown).VarInt(1).VarInt(1);
    return BuildModuleWithFunction(a, module, func, unknown, module_props, func_props,
                                   func_attributes, region.bytes);
  }
};

}  // namespace kiln::frontend::test_util

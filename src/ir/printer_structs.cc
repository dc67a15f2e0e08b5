// Struct attributes in MLIR's syntax (`#stablehlo.gather<...>`), with the
// StableHLO dialect's custom spellings of convolution dimension numbers and
// of the mesh structs the VHLO reader builds.
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/op_syntax.h"
#include "ir/printer_internal.h"

namespace kiln::ir::print_internal {

bool AppendConvDimensions(std::string& out, const Attribute& conv) {
  if (!conv.Is(AttrKind::kStruct) || conv->text != "stablehlo.conv") return false;
  auto integer = [&](std::string_view name, int64_t& value) {
    Attribute field = conv.Get(name);
    if (!field.Is(AttrKind::kInteger)) return false;
    value = field->int_value;
    return true;
  };
  auto list = [&](std::string_view name) { return AsI64Array(conv.Get(name)); };
  // One `[...]` group: the non-spatial letters at their positions, spatial
  // dimension numbers elsewhere.
  auto group = [&](std::string_view first, char first_letter, std::string_view second,
                   char second_letter, std::string_view spatial_name) {
    int64_t a = 0;
    int64_t b = 0;
    const std::vector<int64_t>* spatial = list(spatial_name);
    if (!integer(first, a) || !integer(second, b) || spatial == nullptr) return false;
    size_t rank = spatial->size() + 2;
    std::vector<int64_t> slots(rank, -1);
    auto place = [&](int64_t position, int64_t value) {
      if (position < 0 || static_cast<size_t>(position) >= rank || slots[position] != -1)
        return false;
      slots[position] = value;
      return true;
    };
    if (!place(a, -2) || !place(b, -3)) return false;
    for (size_t i = 0; i < spatial->size(); ++i) {
      if (!place((*spatial)[i], static_cast<int64_t>(i))) return false;
    }
    out += '[';
    for (size_t i = 0; i < rank; ++i) {
      if (i > 0) out += ", ";
      if (slots[i] == -2) {
        out += first_letter;
      } else if (slots[i] == -3) {
        out += second_letter;
      } else {
        AppendInt(out, slots[i]);
      }
    }
    out += ']';
    return true;
  };
  std::string text;
  std::swap(text, out);
  bool ok = group("input_batch_dimension", 'b', "input_feature_dimension", 'f',
                  "input_spatial_dimensions");
  if (ok) out += 'x';
  ok = ok && group("kernel_input_feature_dimension", 'i', "kernel_output_feature_dimension", 'o',
                   "kernel_spatial_dimensions");
  if (ok) out += "->";
  ok = ok && group("output_batch_dimension", 'b', "output_feature_dimension", 'f',
                   "output_spatial_dimensions");
  std::swap(text, out);
  if (ok) out += text;
  return ok;
}

void AppendStructBody(std::string& out, const Attribute& structure) {
  const AttributeStorage& s = structure.storage();
  std::span<const StructField> fields = GetStructFields(s.text);
  out += '<';
  bool first = true;
  auto separator = [&] {
    if (!first) out += ", ";
    first = false;
  };
  if (fields.empty()) {
    // A struct Kiln has no table for: every field as a full attribute.
    for (const NamedAttribute& field : s.fields) {
      separator();
      out += field.name;
      out += " = ";
      AppendAttribute(out, field.value);
    }
    out += '>';
    return;
  }
  for (const StructField& spec : fields) {
    Attribute value = structure.Get(spec.name);
    if (!value) continue;
    const std::vector<int64_t>* dims = AsI64Array(value);
    if (IsOmittedDefault(spec, value)) continue;
    separator();
    out += spec.name;
    out += " = ";
    switch (spec.kind) {
      case StructFieldKind::kDims:
        if (dims != nullptr) {
          AppendDims(out, *dims);
        } else {
          AppendAttribute(out, value);
        }
        break;
      case StructFieldKind::kInteger:
        if (value.Is(AttrKind::kInteger)) {
          AppendIntegerValue(out, value);
        } else {
          AppendAttribute(out, value);
        }
        break;
      case StructFieldKind::kFloat:
        if (value.Is(AttrKind::kFloat)) {
          AppendFloatValue(out, value->float_value, Type::Element(ElementType::kF64));
        } else {
          AppendAttribute(out, value);
        }
        break;
      case StructFieldKind::kType:
        if (value.Is(AttrKind::kType)) {
          AppendType(out, value->type);
        } else {
          AppendAttribute(out, value);
        }
        break;
      case StructFieldKind::kBool:
      case StructFieldKind::kAttribute: AppendAttribute(out, value); break;
    }
  }
  out += '>';
}

namespace {

// Whether `attribute` is a Struct(`name`) with exactly `fields`, of these kinds.
bool IsStructOf(const Attribute& attribute, std::string_view name,
                std::initializer_list<std::pair<std::string_view, AttrKind>> fields) {
  if (!attribute.Is(AttrKind::kStruct) || attribute->text != name ||
      attribute->fields.size() != fields.size()) {
    return false;
  }
  for (const auto& [field, kind] : fields) {
    if (!attribute.Get(field).Is(kind)) return false;
  }
  return true;
}

// `<name = "x", size = 4>` of a Struct("stablehlo.mesh_axis"); false when malformed.
bool AppendMeshAxisBody(std::string& out, const Attribute& axis) {
  if (!IsStructOf(axis, "stablehlo.mesh_axis",
                  {{"name", AttrKind::kString}, {"size", AttrKind::kInteger}})) {
    return false;
  }
  out += "<name = ";
  AppendQuoted(out, axis.Get("name")->text);
  out += ", size = ";
  AppendIntegerValue(out, axis.Get("size"));
  out += '>';
  return true;
}

// `(1)2` of a Struct("stablehlo.sub_axis_info"); false when malformed.
bool AppendSubAxisInfoBody(std::string& out, const Attribute& info) {
  if (!IsStructOf(info, "stablehlo.sub_axis_info",
                  {{"pre_size", AttrKind::kInteger}, {"size", AttrKind::kInteger}})) {
    return false;
  }
  out += '(';
  AppendIntegerValue(out, info.Get("pre_size"));
  out += ')';
  AppendIntegerValue(out, info.Get("size"));
  return true;
}

// The mesh structs the VHLO reader builds, in StableHLO's custom syntax:
//   #stablehlo.mesh<axes=[<name = "x", size = 2>], device_ids=dense<[1, 0]> : tensor<2xi64>>
//   #stablehlo.mesh_axis<name = "x", size = 4>
//   #stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>
//   #stablehlo<sub_axis_info(1)2>
// False, with nothing printed, for other structs and malformed ones.
bool AppendMeshStruct(std::string& out, const Attribute& attribute) {
  const std::string& name = attribute->text;
  std::string text;
  bool ok = false;
  if (name == "stablehlo.mesh_axis") {
    text = "#stablehlo.mesh_axis";
    ok = AppendMeshAxisBody(text, attribute);
  } else if (name == "stablehlo.sub_axis_info") {
    text = "#stablehlo<sub_axis_info";
    ok = AppendSubAxisInfoBody(text, attribute);
    text += '>';
  } else if (name == "stablehlo.axis_ref") {
    Attribute info = attribute.Get("sub_axis_info");
    ok = info ? IsStructOf(attribute, name,
                           {{"name", AttrKind::kString}, {"sub_axis_info", AttrKind::kStruct}})
              : IsStructOf(attribute, name, {{"name", AttrKind::kString}});
    text = "#stablehlo.axis_ref<name = ";
    if (ok) AppendQuoted(text, attribute.Get("name")->text);
    if (ok && info) {
      text += ", sub_axis_info = ";
      ok = AppendSubAxisInfoBody(text, info);
    }
    text += '>';
  } else if (name == "stablehlo.mesh") {
    Attribute axes = attribute.Get("axes");
    Attribute device_ids = attribute.Get("device_ids");
    ok = device_ids
             ? IsStructOf(attribute, name,
                          {{"axes", AttrKind::kArray}, {"device_ids", AttrKind::kDenseElements}})
             : IsStructOf(attribute, name, {{"axes", AttrKind::kArray}});
    text = "#stablehlo.mesh<axes=[";
    for (size_t i = 0; ok && i < axes->elements.size(); ++i) {
      if (i > 0) text += ", ";
      ok = AppendMeshAxisBody(text, axes->elements[i]);
    }
    text += ']';
    if (ok && device_ids) {
      text += ", device_ids=";
      AppendAttribute(text, device_ids);
    }
    text += '>';
  }
  if (ok) out += text;
  return ok;
}

}  // namespace

void AppendStructAttribute(std::string& out, const Attribute& attribute) {
  const AttributeStorage& s = attribute.storage();
  if (AppendMeshStruct(out, attribute)) return;
  out += '#';
  out += s.text;
  if (s.text == "stablehlo.conv") {
    std::string dims;
    if (AppendConvDimensions(dims, attribute)) {
      out += '<';
      out += dims;
      out += '>';
      return;
    }
    // Not a valid layout: the raw form upstream also accepts.
    out += "<raw ";
    bool first = true;
    for (std::string_view name : ConvDimensionFields()) {
      Attribute field = attribute.Get(name);
      if (!field) continue;
      if (!first) out += ", ";
      first = false;
      out += name;
      out += " = ";
      if (const std::vector<int64_t>* list = AsI64Array(field)) {
        AppendDims(out, *list);
      } else if (field.Is(AttrKind::kInteger)) {
        AppendIntegerValue(out, field);
      } else {
        AppendAttribute(out, field);
      }
    }
    out += '>';
    return;
  }
  AppendStructBody(out, attribute);
}

}  // namespace kiln::ir::print_internal

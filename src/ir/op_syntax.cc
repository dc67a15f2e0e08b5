#include "ir/op_syntax.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "ir/op_description.h"

namespace kiln::ir {
namespace {

constexpr std::string_view kBatchNormTrainingResults[] = {"output", "batch_mean", "batch_var"};
constexpr std::string_view kBatchNormGradResults[] = {"grad_operand", "grad_scale", "grad_offset"};
constexpr std::string_view kRngBitGeneratorResults[] = {"output_state", "output"};
constexpr std::string_view kTopKResults[] = {"values", "indices"};

constexpr std::string_view kElementSpellings[] = {
    "i1",         "i1",           "i2",
    "i4",         "i8",           "i16",
    "i32",        "i64",          "ui1",
    "ui2",        "ui4",          "ui8",
    "ui16",       "ui32",         "ui64",
    "f16",        "bf16",         "f32",
    "f64",        "complex<f32>", "complex<f64>",
    "f8E5M2",     "f8E4M3FN",     "f8E4M3B11FNUZ",
    "f8E5M2FNUZ", "f8E4M3FNUZ",   "f8E4M3",
    "f8E3M4",     "f8E8M0FNU",    "f4E2M1FN",
    "f6E2M3FN",   "f6E3M2FN",     "!stablehlo.token",
    "tf32",       "index",
};
static_assert(std::size(kElementSpellings) == static_cast<size_t>(ElementType::kIndex) + 1);

using K = StructFieldKind;
constexpr StructField kDotFields[] = {
    {"lhs_batching_dimensions", K::kDims, true},
    {"rhs_batching_dimensions", K::kDims, true},
    {"lhs_contracting_dimensions", K::kDims, true},
    {"rhs_contracting_dimensions", K::kDims, true},
};
constexpr StructField kGatherFields[] = {
    {"offset_dims", K::kDims, true},           {"collapsed_slice_dims", K::kDims, true},
    {"operand_batching_dims", K::kDims, true}, {"start_indices_batching_dims", K::kDims, true},
    {"start_index_map", K::kDims, true},       {"index_vector_dim", K::kInteger, true},
};
constexpr StructField kScatterFields[] = {
    {"update_window_dims", K::kDims, true},
    {"inserted_window_dims", K::kDims, true},
    {"input_batching_dims", K::kDims, true},
    {"scatter_indices_batching_dims", K::kDims, true},
    {"scatter_dims_to_operand_dims", K::kDims, true},
    {"index_vector_dim", K::kInteger, true},
};
constexpr StructField kChannelHandleFields[] = {
    {"handle", K::kInteger, false},
    {"type", K::kInteger, false},
};
constexpr StructField kOutputOperandAliasFields[] = {
    {"output_tuple_indices", K::kDims, false},
    {"operand_index", K::kInteger, false},
    {"operand_tuple_indices", K::kDims, false},
};
constexpr StructField kResultAccuracyFields[] = {
    {"atol", K::kFloat, true},
    {"rtol", K::kFloat, true},
    {"ulps", K::kInteger, true},
    {"mode", K::kAttribute, false},
};
constexpr StructField kDotAlgorithmFields[] = {
    {"lhs_precision_type", K::kType, false},
    {"rhs_precision_type", K::kType, false},
    {"accumulation_type", K::kType, false},
    {"lhs_component_count", K::kInteger, false},
    {"rhs_component_count", K::kInteger, false},
    {"num_primitive_operations", K::kInteger, false},
    {"allow_imprecise_accumulation", K::kBool, false},
};
constexpr StructField kTypeExtensionsFields[] = {
    {"bounds", K::kDims, false},
};
constexpr std::string_view kConvFields[] = {
    "input_batch_dimension",           "input_feature_dimension",
    "input_spatial_dimensions",        "kernel_input_feature_dimension",
    "kernel_output_feature_dimension", "kernel_spatial_dimensions",
    "output_batch_dimension",          "output_feature_dimension",
    "output_spatial_dimensions",
};

}  // namespace

PrettyForm GetPrettyForm(std::string_view op_name) {
  const OpDescription* description = FindOpDescription(op_name);
  return description ? description->form : PrettyForm::kNone;
}

std::optional<std::vector<InherentAttribute>> InherentAttributes(std::string_view op_name) {
  const OpDescription* description = FindOpDescription(op_name);
  if (description == nullptr) return std::nullopt;
  std::vector<InherentAttribute> attributes;
  for (const AttributeDescription& attribute : description->attributes) {
    if (attribute.inherent) attributes.push_back({attribute.name, attribute.optional});
  }
  return attributes;
}

bool IsInherentAttribute(std::string_view op_name, std::string_view attribute) {
  const OpDescription* description = FindOpDescription(op_name);
  if (description == nullptr || attribute.empty()) return false;
  const AttributeDescription* declared = description->FindAttribute(attribute);
  return declared != nullptr && declared->inherent;
}

std::span<const std::string_view> NamedResults(std::string_view op_name) {
  if (op_name == "stablehlo.batch_norm_training") return kBatchNormTrainingResults;
  if (op_name == "stablehlo.batch_norm_grad") return kBatchNormGradResults;
  if (op_name == "stablehlo.rng_bit_generator") return kRngBitGeneratorResults;
  if (op_name == "chlo.top_k") return kTopKResults;
  return {};
}

std::string_view DefaultDialect(std::string_view op_name) {
  return op_name == "func.func" ? "func" : "";
}

std::string_view ElementTypeSpelling(ElementType type) {
  auto index = static_cast<size_t>(type);
  return index < std::size(kElementSpellings) ? kElementSpellings[index] : "?";
}

std::optional<ElementType> ParseElementTypeSpelling(std::string_view spelling) {
  static const auto* table = [] {
    auto* map = new std::unordered_map<std::string_view, ElementType>;
    for (size_t i = 1; i < std::size(kElementSpellings); ++i) {  // i1 first as kPred
      map->emplace(kElementSpellings[i], static_cast<ElementType>(i));
    }
    (*map)["i1"] = ElementType::kPred;
    map->erase("!stablehlo.token");
    for (auto [name, type] : {std::pair{"si2", ElementType::kS2},
                              {"si4", ElementType::kS4},
                              {"si8", ElementType::kS8},
                              {"si16", ElementType::kS16},
                              {"si32", ElementType::kS32},
                              {"si64", ElementType::kS64}}) {
      map->emplace(name, type);
    }
    return map;
  }();
  auto it = table->find(spelling);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

std::span<const StructField> GetStructFields(std::string_view struct_name) {
  if (struct_name == "stablehlo.dot") return kDotFields;
  if (struct_name == "stablehlo.gather") return kGatherFields;
  if (struct_name == "stablehlo.scatter") return kScatterFields;
  if (struct_name == "stablehlo.channel_handle") return kChannelHandleFields;
  if (struct_name == "stablehlo.output_operand_alias") return kOutputOperandAliasFields;
  if (struct_name == "stablehlo.result_accuracy") return kResultAccuracyFields;
  if (struct_name == "stablehlo.dot_algorithm") return kDotAlgorithmFields;
  if (struct_name == "stablehlo.type_extensions") return kTypeExtensionsFields;
  return {};
}

bool IsOmittedDefault(const StructField& field, const Attribute& value) {
  if (!field.omit_default) return false;
  return (value.Is(AttrKind::kDenseArray) && value->int_values.empty() &&
          value->float_values.empty()) ||
         (value.Is(AttrKind::kInteger) && value->int_value == 0) ||
         (value.Is(AttrKind::kFloat) && value->float_value == 0.0);
}

Attribute StructOfFields(std::string_view struct_name, std::vector<Attribute> values) {
  std::span<const StructField> fields = GetStructFields(struct_name);
  std::vector<NamedAttribute> present;
  for (size_t i = 0; i < fields.size() && i < values.size(); ++i) {
    if (!values[i] || IsOmittedDefault(fields[i], values[i])) continue;
    present.push_back({std::string(fields[i].name), std::move(values[i])});
  }
  return Attribute::Struct(std::string(struct_name), std::move(present));
}

std::span<const std::string_view> ConvDimensionFields() { return kConvFields; }

}  // namespace kiln::ir

#include "ir/op_syntax.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace kiln::ir {
namespace {

using F = PrettyForm;

// An op's syntax facts. `inherent` lists the ODS attribute arguments,
// space-separated, in declaration order (from StablehloOps.td, ChloOps.td,
// Shardy's ops.td, CheckOps.td and the func/builtin dialects); a trailing '?'
// marks one an op may lack (OptionalAttr, DefaultValuedAttr, UnitAttr), which
// MLIR bytecode stores as an optional reference.
struct OpEntry {
  std::string_view name;
  PrettyForm form;
  std::string_view inherent;
};

constexpr std::string_view kAccuracy = "result_accuracy?";

constexpr OpEntry kOps[] = {
    // builtin, func
    {"builtin.module", F::kModule, "sym_name? sym_visibility?"},
    {"func.func", F::kFuncFunc,
     "sym_name function_type sym_visibility? arg_attrs? res_attrs? no_inline?"},
    {"func.call", F::kFuncCall, "callee arg_attrs? res_attrs? no_inline?"},
    {"func.return", F::kFuncReturn, ""},
    // stablehlo: elementwise
    {"stablehlo.abs", F::kSameType, ""},
    {"stablehlo.cbrt", F::kSameType, kAccuracy},
    {"stablehlo.ceil", F::kSameType, ""},
    {"stablehlo.convert", F::kSameType, ""},
    {"stablehlo.count_leading_zeros", F::kSameType, ""},
    {"stablehlo.cosine", F::kSameType, kAccuracy},
    {"stablehlo.exponential", F::kSameType, kAccuracy},
    {"stablehlo.exponential_minus_one", F::kSameType, kAccuracy},
    {"stablehlo.floor", F::kSameType, ""},
    {"stablehlo.imag", F::kSameType, ""},
    {"stablehlo.is_finite", F::kFunctional, ""},
    {"stablehlo.log", F::kSameType, kAccuracy},
    {"stablehlo.log_plus_one", F::kSameType, kAccuracy},
    {"stablehlo.logistic", F::kSameType, kAccuracy},
    {"stablehlo.not", F::kSameType, ""},
    {"stablehlo.negate", F::kSameType, ""},
    {"stablehlo.popcnt", F::kSameType, ""},
    {"stablehlo.real", F::kSameType, ""},
    {"stablehlo.round_nearest_afz", F::kSameType, ""},
    {"stablehlo.round_nearest_even", F::kSameType, ""},
    {"stablehlo.rsqrt", F::kSameType, kAccuracy},
    {"stablehlo.sign", F::kSameType, ""},
    {"stablehlo.sine", F::kSameType, kAccuracy},
    {"stablehlo.sqrt", F::kSameType, kAccuracy},
    {"stablehlo.tan", F::kSameType, kAccuracy},
    {"stablehlo.tanh", F::kSameType, kAccuracy},
    {"stablehlo.uniform_quantize", F::kSameType, ""},
    {"stablehlo.uniform_dequantize", F::kSameType, ""},
    {"stablehlo.add", F::kSameType, ""},
    {"stablehlo.atan2", F::kSameType, ""},
    {"stablehlo.divide", F::kSameType, ""},
    {"stablehlo.maximum", F::kSameType, ""},
    {"stablehlo.minimum", F::kSameType, ""},
    {"stablehlo.multiply", F::kSameType, ""},
    {"stablehlo.power", F::kSameType, ""},
    {"stablehlo.remainder", F::kSameType, ""},
    {"stablehlo.shift_left", F::kSameType, ""},
    {"stablehlo.shift_right_arithmetic", F::kSameType, ""},
    {"stablehlo.shift_right_logical", F::kSameType, ""},
    {"stablehlo.subtract", F::kSameType, ""},
    {"stablehlo.and", F::kSameType, ""},
    {"stablehlo.or", F::kSameType, ""},
    {"stablehlo.xor", F::kSameType, ""},
    {"stablehlo.clamp", F::kSameType, ""},
    {"stablehlo.after_all", F::kSameType, ""},
    {"stablehlo.complex", F::kComplex, ""},
    {"stablehlo.select", F::kSelect, ""},
    // stablehlo: functional-type forms
    {"stablehlo.bitcast_convert", F::kFunctional, ""},
    {"stablehlo.dynamic_update_slice", F::kFunctional, ""},
    {"stablehlo.reshape", F::kFunctional, ""},
    {"stablehlo.dynamic_reshape", F::kFunctional, ""},
    {"stablehlo.real_dynamic_slice", F::kFunctional, ""},
    {"stablehlo.dynamic_pad", F::kFunctional, ""},
    // stablehlo: keyword forms
    {"stablehlo.create_token", F::kNullary, ""},
    {"stablehlo.replica_id", F::kNullary, ""},
    {"stablehlo.partition_id", F::kNullary, ""},
    {"stablehlo.iota", F::kIota, "iota_dimension"},
    {"stablehlo.dynamic_iota", F::kDynamicIota, "iota_dimension"},
    {"stablehlo.get_tuple_element", F::kGetTupleElement, "index"},
    {"stablehlo.tuple", F::kTuple, ""},
    {"stablehlo.compare", F::kCompare, "comparison_direction compare_type?"},
    {"stablehlo.slice", F::kSlice, "start_indices limit_indices strides"},
    {"stablehlo.dynamic_slice", F::kDynamicSlice, "slice_sizes"},
    {"stablehlo.broadcast", F::kBroadcast, "broadcast_sizes"},
    {"stablehlo.broadcast_in_dim", F::kBroadcastInDim, "broadcast_dimensions"},
    {"stablehlo.dynamic_broadcast_in_dim", F::kDynamicBroadcastInDim,
     "broadcast_dimensions known_expanding_dimensions? known_nonexpanding_dimensions?"},
    {"stablehlo.cholesky", F::kCholesky, "lower?"},
    {"stablehlo.concatenate", F::kConcatenate, "dimension"},
    {"stablehlo.composite", F::kComposite, "name composite_attributes? decomposition version?"},
    {"stablehlo.convolution", F::kConvolution,
     "window_strides? padding? lhs_dilation? rhs_dilation? window_reversal? dimension_numbers "
     "feature_group_count batch_group_count precision_config?"},
    {"stablehlo.custom_call", F::kCustomCall,
     "call_target_name has_side_effect? backend_config? api_version? called_computations? "
     "operand_layouts? result_layouts? output_operand_aliases? result_tilings?"},
    {"stablehlo.dot", F::kDot, "precision_config?"},
    {"stablehlo.dot_general", F::kDotGeneral, "dot_dimension_numbers precision_config? algorithm?"},
    {"stablehlo.einsum", F::kEinsum, "einsum_config"},
    {"stablehlo.unary_einsum", F::kUnaryEinsum, "einsum_config"},
    {"stablehlo.fft", F::kFft, "fft_type fft_length"},
    {"stablehlo.get_dimension_size", F::kGetDimensionSize, "dimension"},
    {"stablehlo.set_dimension_size", F::kSetDimensionSize, "dimension"},
    {"stablehlo.reverse", F::kReverse, "dimensions"},
    {"stablehlo.pad", F::kPad, "edge_padding_low edge_padding_high interior_padding"},
    {"stablehlo.transpose", F::kTranspose, "permutation"},
    {"stablehlo.return", F::kReturn, ""},
    {"stablehlo.optimization_barrier", F::kOptimizationBarrier, ""},
    {"stablehlo.rng", F::kRng, "rng_distribution"},
    {"stablehlo.rng_bit_generator", F::kRngBitGenerator, "rng_algorithm"},
    {"stablehlo.reduce_precision", F::kReducePrecision, "exponent_bits mantissa_bits"},
    {"stablehlo.while", F::kWhile, ""},
    {"stablehlo.reduce", F::kReduce, "dimensions"},
    {"stablehlo.constant", F::kConstant, "value"},
    // stablehlo: generic form only
    {"stablehlo.all_gather", F::kNone,
     "all_gather_dim replica_groups channel_handle? use_global_device_ids?"},
    {"stablehlo.all_reduce", F::kNone, "replica_groups channel_handle? use_global_device_ids?"},
    {"stablehlo.all_to_all", F::kNone,
     "split_dimension concat_dimension split_count replica_groups channel_handle?"},
    {"stablehlo.batch_norm_grad", F::kNone, "epsilon feature_index"},
    {"stablehlo.batch_norm_inference", F::kNone, "epsilon feature_index"},
    {"stablehlo.batch_norm_training", F::kNone, "epsilon feature_index"},
    {"stablehlo.collective_broadcast", F::kNone, "replica_groups channel_handle? has_dynamic_root?"},
    {"stablehlo.collective_permute", F::kNone, "source_target_pairs channel_handle?"},
    {"stablehlo.collective_reduce", F::kNone,
     "replica_groups channel_handle? use_global_device_ids? has_dynamic_root?"},
    {"stablehlo.cross-replica-sum", F::kNone, "replica_groups"},
    {"stablehlo.dynamic_conv", F::kNone,
     "window_strides? lhs_dilation? rhs_dilation? window_reversal? dimension_numbers "
     "feature_group_count batch_group_count precision_config?"},
    {"stablehlo.dynamic_gather", F::kNone, "dimension_numbers indices_are_sorted?"},
    {"stablehlo.gather", F::kNone, "dimension_numbers slice_sizes indices_are_sorted?"},
    {"stablehlo.infeed", F::kNone, "infeed_config? layout?"},
    {"stablehlo.outfeed", F::kNone, "outfeed_config?"},
    {"stablehlo.map", F::kNone, "dimensions"},
    {"stablehlo.recv", F::kNone, "channel_handle is_host_transfer? source_target_pairs?"},
    {"stablehlo.send", F::kNone, "channel_handle is_host_transfer? source_target_pairs?"},
    {"stablehlo.reduce_scatter", F::kNone,
     "scatter_dimension replica_groups channel_handle? use_global_device_ids?"},
    {"stablehlo.reduce_window", F::kNone,
     "window_dimensions window_strides? base_dilations? window_dilations? padding?"},
    {"stablehlo.scatter", F::kNone, "scatter_dimension_numbers indices_are_sorted? unique_indices?"},
    {"stablehlo.select_and_scatter", F::kNone, "window_dimensions? window_strides? padding?"},
    {"stablehlo.sort", F::kNone, "dimension? is_stable?"},
    {"stablehlo.torch_index_select", F::kNone, "dim batch_dims"},
    {"stablehlo.triangular_solve", F::kNone, "left_side lower unit_diagonal transpose_a"},
    // sdy
    {"sdy.mesh", F::kSdyMesh, "sym_name mesh"},
    {"sdy.sharding_constraint", F::kSdySharding, "sharding"},
    {"sdy.reshard", F::kSdySharding, "sharding"},
    {"sdy.manual_computation", F::kSdyManualComputation, "in_shardings out_shardings manual_axes"},
    {"sdy.named_computation", F::kSdyNamedComputation, "name in_shardings? out_shardings?"},
    {"sdy.return", F::kFuncReturn, ""},
    {"sdy.sharding_group", F::kNone, "group_id"},
    {"sdy.propagation_barrier", F::kNone, "allowed_direction"},
    {"sdy.data_flow_edge", F::kNone, "sharding?"},
    {"sdy.constant", F::kNone, "value"},
    {"sdy.all_gather", F::kNone, "gathering_axes out_sharding"},
    {"sdy.all_slice", F::kNone, "slicing_axes out_sharding"},
    {"sdy.all_to_all", F::kNone, "params out_sharding"},
    {"sdy.collective_permute", F::kNone, "out_sharding"},
    {"sdy.all_reduce", F::kNone, "reduction_op? reduction_axes out_sharding"},
    {"sdy.reduce_scatter", F::kNone, "reduce_scatter_axes out_sharding reduction_op?"},
    {"sdy.sharded_to_unreduced", F::kNone, "axes out_sharding"},
    {"sdy.replicated_to_unreduced", F::kNone, "axes out_sharding"},
    // chlo
    {"chlo._asin_acos_kernel", F::kChloUnary, ""},
    {"chlo.acos", F::kChloUnary, ""},
    {"chlo.acosh", F::kChloUnary, ""},
    {"chlo.asin", F::kChloUnary, ""},
    {"chlo.asinh", F::kChloUnary, ""},
    {"chlo.atan", F::kChloUnary, ""},
    {"chlo.atanh", F::kChloUnary, ""},
    {"chlo.bessel_i1e", F::kChloUnary, ""},
    {"chlo.conj", F::kChloUnary, ""},
    {"chlo.cosh", F::kChloUnary, ""},
    {"chlo.sinh", F::kChloUnary, ""},
    {"chlo.tan", F::kChloUnary, ""},
    {"chlo.digamma", F::kChloUnary, ""},
    {"chlo.erf", F::kChloUnary, ""},
    {"chlo.erf_inv", F::kChloUnary, ""},
    {"chlo.erfc", F::kChloUnary, ""},
    {"chlo.is_inf", F::kChloUnary, ""},
    {"chlo.is_neg_inf", F::kChloUnary, ""},
    {"chlo.is_pos_inf", F::kChloUnary, ""},
    {"chlo.lgamma", F::kChloUnary, ""},
    {"chlo.square", F::kChloUnary, ""},
    {"chlo.broadcast_add", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_atan2", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_divide", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_maximum", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_minimum", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_multiply", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_next_after", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_polygamma", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_power", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_remainder", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_shift_left", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_shift_right_arithmetic", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_shift_right_logical", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_subtract", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_zeta", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_and", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_or", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_xor", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_complex", F::kChloBroadcastBinary, "broadcast_dimensions?"},
    {"chlo.broadcast_compare", F::kChloBroadcastBinary,
     "broadcast_dimensions? comparison_direction compare_type?"},
    {"chlo.next_after", F::kChloPair, ""},
    {"chlo.polygamma", F::kChloPair, ""},
    {"chlo.zeta", F::kChloPair, ""},
    {"chlo.mulhi", F::kChloPair, ""},
    {"chlo.broadcast_select", F::kChloBroadcastSelect, ""},
    {"chlo.top_k", F::kChloTopK, "k is_stable?"},
    {"chlo.constant", F::kChloConstant, "value"},
    {"chlo.constant_like", F::kNone, "value"},
    {"chlo.ragged_dot", F::kNone, "ragged_dot_dimension_numbers precision_config?"},
    {"chlo.scan", F::kChloScan, "dimension scan_dim_size? is_reverse? is_associative?"},
    // check (stablehlo/tests/CheckOps.td)
    {"check.expect_eq", F::kCheck, ""},
    {"check.expect_eq_const", F::kCheck, "value"},
    {"check.expect_almost_eq", F::kCheck, "tolerance?"},
    {"check.expect_almost_eq_const", F::kCheck, "value tolerance?"},
    {"check.expect_close", F::kCheck, "max_ulp_difference? min_ulp_difference?"},
    {"check.expect_serialized_eq", F::kCheck, "probe_id iteration?"},
    {"interpreter.print", F::kCheck, ""},
    {"interpreter.probe", F::kCheck, "probe_id"},
};

const std::unordered_map<std::string_view, const OpEntry*>& OpTable() {
  static const auto* table = [] {
    auto* map = new std::unordered_map<std::string_view, const OpEntry*>;
    for (const OpEntry& entry : kOps) map->emplace(entry.name, &entry);
    return map;
  }();
  return *table;
}

const OpEntry* FindOp(std::string_view name) {
  auto it = OpTable().find(name);
  return it == OpTable().end() ? nullptr : it->second;
}

constexpr std::string_view kBatchNormTrainingResults[] = {"output", "batch_mean", "batch_var"};
constexpr std::string_view kBatchNormGradResults[] = {"grad_operand", "grad_scale", "grad_offset"};
constexpr std::string_view kRngBitGeneratorResults[] = {"output_state", "output"};
constexpr std::string_view kTopKResults[] = {"values", "indices"};

constexpr std::string_view kElementSpellings[] = {
    "i1",
    "i1", "i2", "i4", "i8", "i16", "i32", "i64",
    "ui1", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64",
    "f16", "bf16", "f32", "f64",
    "complex<f32>", "complex<f64>",
    "f8E5M2", "f8E4M3FN", "f8E4M3B11FNUZ", "f8E5M2FNUZ", "f8E4M3FNUZ", "f8E4M3", "f8E3M4",
    "f8E8M0FNU", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN",
    "!stablehlo.token",
    "tf32", "index",
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
    {"offset_dims", K::kDims, true},
    {"collapsed_slice_dims", K::kDims, true},
    {"operand_batching_dims", K::kDims, true},
    {"start_indices_batching_dims", K::kDims, true},
    {"start_index_map", K::kDims, true},
    {"index_vector_dim", K::kInteger, true},
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
    "input_batch_dimension",          "input_feature_dimension",
    "input_spatial_dimensions",       "kernel_input_feature_dimension",
    "kernel_output_feature_dimension", "kernel_spatial_dimensions",
    "output_batch_dimension",         "output_feature_dimension",
    "output_spatial_dimensions",
};

}  // namespace

PrettyForm GetPrettyForm(std::string_view op_name) {
  const OpEntry* entry = FindOp(op_name);
  return entry ? entry->form : PrettyForm::kNone;
}

std::optional<std::vector<InherentAttribute>> InherentAttributes(std::string_view op_name) {
  const OpEntry* entry = FindOp(op_name);
  if (entry == nullptr) return std::nullopt;
  std::vector<InherentAttribute> attributes;
  std::string_view list = entry->inherent;
  while (!list.empty()) {
    const size_t end = list.find(' ');
    std::string_view word = list.substr(0, end);
    const bool optional = word.ends_with('?');
    attributes.push_back({optional ? word.substr(0, word.size() - 1) : word, optional});
    list = end == std::string_view::npos ? std::string_view() : list.substr(end + 1);
  }
  return attributes;
}

bool IsInherentAttribute(std::string_view op_name, std::string_view attribute) {
  std::optional<std::vector<InherentAttribute>> attributes = InherentAttributes(op_name);
  if (!attributes || attribute.empty()) return false;
  return std::any_of(attributes->begin(), attributes->end(),
                     [&](const InherentAttribute& entry) { return entry.name == attribute; });
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
    for (auto [name, type] : {std::pair{"si2", ElementType::kS2}, {"si4", ElementType::kS4},
                              {"si8", ElementType::kS8}, {"si16", ElementType::kS16},
                              {"si32", ElementType::kS32}, {"si64", ElementType::kS64}}) {
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

#include "frontend/vhlo/normalize.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {
namespace {

using ir::Attribute;
using ir::AttrKind;

// The attributes of one op under conversion, with the checks and
// conversions the rules below share. Absent attributes are the newest
// version's defaults.
class OpAttributes {
 public:
  OpAttributes(std::vector<ir::NamedAttribute> inherent, std::string_view where) : where_(where) {
    for (ir::NamedAttribute& attribute : inherent) {
      attributes_[attribute.name] = std::move(attribute.value);
    }
  }

  bool Has(const std::string& name) const { return attributes_.count(name) != 0; }
  Attribute Get(const std::string& name) const {
    auto it = attributes_.find(name);
    return it == attributes_.end() ? Attribute() : it->second;
  }
  Attribute Take(const std::string& name) {
    auto it = attributes_.find(name);
    if (it == attributes_.end()) return Attribute();
    Attribute value = std::move(it->second);
    attributes_.erase(it);
    return value;
  }
  void Erase(const std::string& name) { attributes_.erase(name); }
  void Set(const std::string& name, Attribute value) { attributes_[name] = std::move(value); }

  // Drops `name` if `is_default` holds for its value.
  void EraseIf(const std::string& name, const std::function<bool(const Attribute&)>& is_default) {
    Attribute value = Get(name);
    if (value && is_default(value)) Erase(name);
  }

  // Integer elements of a dense integer tensor attribute.
  StatusOr<std::vector<int64_t>> Ints(const std::string& name) const {
    Attribute value = Get(name);
    if (!value) return std::vector<int64_t>{};
    return DenseInts(value, name);
  }
  StatusOr<int64_t> Int(const std::string& name) const {
    Attribute value = Get(name);
    if (!value.Is(AttrKind::kInteger)) {
      return InvalidArgument(where_, ": expected an integer attribute '", name, "', found ",
                             value ? AttrText(value) : "none");
    }
    return value->int_value;
  }

  StatusOr<std::vector<int64_t>> DenseInts(const Attribute& value, std::string_view name) const {
    if (!value.Is(AttrKind::kDenseElements)) {
      return InvalidArgument(where_, ": expected a dense integer tensor for '", name, "', found ",
                             AttrText(value));
    }
    const ir::Type& element = value->type.element();
    const size_t bytes = element.Is(ir::TypeKind::kElement)
                             ? GetElementTypeInfo(element.element_type()).storage_bytes
                             : 0;
    const bool is_integer = element.Is(ir::TypeKind::kElement) &&
                            (element.element_type() <= ElementType::kU64 ||
                             element.element_type() == ElementType::kIndex);
    if (!is_integer || bytes == 0) {
      return InvalidArgument(where_, ": expected integer elements in '", name, "', found ",
                             TypeText(value->type));
    }
    const bool is_unsigned = element.element_type() >= ElementType::kU1 &&
                             element.element_type() <= ElementType::kU64;
    const int64_t count = value->type.NumElements();
    std::vector<int64_t> ints;
    ints.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const uint8_t* data = &value->data[value->splat ? 0 : static_cast<size_t>(i) * bytes];
      uint64_t bits = 0;
      std::memcpy(&bits, data, bytes);
      const int width = static_cast<int>(bytes * 8);
      if (width < 64 && !is_unsigned && ((bits >> (width - 1)) & 1)) bits |= ~uint64_t{0} << width;
      ints.push_back(static_cast<int64_t>(bits));
    }
    return ints;
  }

  // Replaces a dense integer tensor attribute by a dense i64 array (or bool
  // array), as upstream's convertDenseArray does.
  Status ToDenseArray(const std::string& name, bool as_bool = false) {
    Attribute value = Get(name);
    if (!value) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ints, DenseInts(value, name));
    if (as_bool) {
      Set(name, Attribute::DenseBoolArray(std::vector<bool>(ints.begin(), ints.end())));
    } else {
      Set(name, Attribute::DenseI64Array(std::move(ints)));
    }
    return Status::Ok();
  }

  // channel_id (+ channel_type) -> #stablehlo.channel_handle, dropped when 0
  // unless `keep_zero` (send/recv always carry a handle).
  Status ToChannelHandle(bool with_type, bool keep_zero) {
    Attribute id = Take("channel_id");
    Attribute type = with_type ? Take("channel_type") : Attribute();
    if (!id) return Status::Ok();
    if (!id.Is(AttrKind::kInteger) || (type && !type.Is(AttrKind::kInteger))) {
      return InvalidArgument(where_, ": expected integer channel id and type, found ",
                             AttrText(id));
    }
    if (id->int_value == 0 && !keep_zero) return Status::Ok();
    Set("channel_handle",
        Attribute::Struct("stablehlo.channel_handle", {{"handle", I64(id->int_value)},
                                                       {"type", I64(type ? type->int_value : 0)}}));
    return Status::Ok();
  }

  // A boolean that StableHLO models as a unit attribute present when true.
  void BoolToUnit(const std::string& name) {
    Attribute value = Take(name);
    if (value.Is(AttrKind::kBool) && value->bool_value) Set(name, Attribute::Unit());
  }

  // A string naming a symbol -> a symbol reference.
  Status ToSymbol(const std::string& name) {
    Attribute value = Get(name);
    if (!value) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(Attribute symbol, Symbol(value, name));
    Set(name, std::move(symbol));
    return Status::Ok();
  }
  StatusOr<Attribute> Symbol(const Attribute& value, std::string_view name) const {
    if (!value.Is(AttrKind::kString)) {
      return InvalidArgument(where_, ": expected a string naming a symbol in '", name, "', found ",
                             AttrText(value));
    }
    return Attribute::SymbolRef({value->text});
  }

  // Fields of a StableHLO struct from flattened attributes: lists become
  // dense i64 arrays (left out when empty and `omit_empty`), integers stay.
  Status Implode(const std::string& struct_name, const std::string& attribute_name,
                 const std::vector<std::pair<std::string, bool>>& fields, bool omit_empty) {
    std::vector<ir::NamedAttribute> values;
    for (const auto& [field, is_list] : fields) {
      if (is_list) {
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ints, Ints(field));
        if (!ints.empty() || !omit_empty) {
          values.push_back({field, Attribute::DenseI64Array(std::move(ints))});
        }
      } else {
        KILN_ASSIGN_OR_RETURN(int64_t value, Int(field));
        values.push_back({field, I64(value)});
      }
    }
    for (const auto& field : fields) Erase(field.first);
    Set(attribute_name, Attribute::Struct(struct_name, std::move(values)));
    return Status::Ok();
  }

  std::vector<ir::NamedAttribute> Release() {
    std::vector<ir::NamedAttribute> result;
    for (auto& [name, value] : attributes_) result.push_back({name, std::move(value)});
    return result;
  }

  const std::string& where() const { return where_; }

  static Attribute I64(int64_t value) {
    return Attribute::Integer(value, ir::Type::Element(ElementType::kS64));
  }

 private:
  std::map<std::string, Attribute> attributes_;
  std::string where_;
};

// Default-value tests (upstream's removeDefaults).
bool IsFalse(const Attribute& a) { return a.Is(AttrKind::kBool) && !a->bool_value; }
bool IsEmptyArray(const Attribute& a) { return a.Is(AttrKind::kArray) && a->elements.empty(); }
bool IsEmptyDictionary(const Attribute& a) {
  return a.Is(AttrKind::kDictionary) && a->fields.empty();
}
bool IsEmptyString(const Attribute& a) { return a.Is(AttrKind::kString) && a->text.empty(); }
bool IsEmptyTensor(const Attribute& a) {
  return a.Is(AttrKind::kDenseElements) && a->type.NumElements() == 0;
}
bool IsInteger(const Attribute& a, int64_t value) {
  return a.Is(AttrKind::kInteger) && a->int_value == value;
}
bool IsEnum(const Attribute& a, std::string_view value) {
  return a.Is(AttrKind::kEnum) && a->enum_value == value;
}
// Every element is the enum `value` (true for an empty array, as upstream).
bool IsArrayOfEnum(const Attribute& a, std::string_view value) {
  return a.Is(AttrKind::kArray) &&
         std::all_of(a->elements.begin(), a->elements.end(),
                     [&](const Attribute& e) { return IsEnum(e, value); });
}
// A splat dense integer (or i1) tensor of `value`. As in MLIR, a tensor of
// one element is a splat too.
bool IsSplatOf(const Attribute& a, int64_t value) {
  if (!a.Is(AttrKind::kDenseElements) || a->data.empty()) return false;
  if (!a->splat && a->type.NumElements() != 1) return false;
  int64_t first = 0;
  const size_t bytes = std::min<size_t>(a->data.size(), 8);
  std::memcpy(&first, a->data.data(), bytes);
  if (bytes < 8 && ((first >> (bytes * 8 - 1)) & 1)) first |= ~int64_t{0} << (bytes * 8);
  return first == value;
}
bool IsDefaultResultAccuracy(const Attribute& a) {
  return a.Is(AttrKind::kStruct) && a->fields.size() == 1 && IsEnum(a.Get("mode"), "DEFAULT");
}
bool IsNoneType(const Attribute& a) {
  return a.Is(AttrKind::kType) && a->type.Is(ir::TypeKind::kNone);
}

Status ConvertCollective(OpAttributes& attrs) {
  KILN_RETURN_IF_ERROR(attrs.ToChannelHandle(/*with_type=*/false, /*keep_zero=*/false));
  // Absent on the ops that lack them.
  attrs.BoolToUnit("use_global_device_ids");
  attrs.BoolToUnit("has_dynamic_root");
  return Status::Ok();
}

Status ConvertConvolution(OpAttributes& attrs, bool dynamic) {
  attrs.EraseIf("window_strides", [](const Attribute& a) { return IsSplatOf(a, 1); });
  if (dynamic) {
    attrs.Erase("padding");  // dynamic_conv_v1's attribute; v2 takes padding as an operand
  } else {
    attrs.EraseIf("padding", [](const Attribute& a) { return IsSplatOf(a, 0); });
  }
  attrs.EraseIf("lhs_dilation", [](const Attribute& a) { return IsSplatOf(a, 1); });
  attrs.EraseIf("rhs_dilation", [](const Attribute& a) { return IsSplatOf(a, 1); });
  attrs.EraseIf("window_reversal", [](const Attribute& a) { return IsSplatOf(a, 0); });
  attrs.EraseIf("precision_config", [](const Attribute& a) { return IsArrayOfEnum(a, "DEFAULT"); });
  KILN_RETURN_IF_ERROR(attrs.Implode("stablehlo.conv", "dimension_numbers",
                                     {{"input_batch_dimension", false},
                                      {"input_feature_dimension", false},
                                      {"input_spatial_dimensions", true},
                                      {"kernel_input_feature_dimension", false},
                                      {"kernel_output_feature_dimension", false},
                                      {"kernel_spatial_dimensions", true},
                                      {"output_batch_dimension", false},
                                      {"output_feature_dimension", false},
                                      {"output_spatial_dimensions", true}},
                                     /*omit_empty=*/false));
  for (const char* name : {"lhs_dilation", "rhs_dilation", "window_strides"}) {
    KILN_RETURN_IF_ERROR(attrs.ToDenseArray(name));
  }
  return attrs.ToDenseArray("window_reversal", /*as_bool=*/true);
}

Status ConvertDotGeneral(OpAttributes& attrs) {
  attrs.EraseIf("precision_config", [](const Attribute& a) { return IsArrayOfEnum(a, "DEFAULT"); });
  KILN_RETURN_IF_ERROR(attrs.Implode("stablehlo.dot", "dot_dimension_numbers",
                                     {{"lhs_batching_dimensions", true},
                                      {"rhs_batching_dimensions", true},
                                      {"lhs_contracting_dimensions", true},
                                      {"rhs_contracting_dimensions", true}},
                                     /*omit_empty=*/true));
  // The algorithm: all seven fields none (or absent, before VHLO 1.6) means none.
  static const char* const kFields[] = {"lhs_precision_type",          "rhs_precision_type",
                                        "accumulation_type",           "lhs_component_count",
                                        "rhs_component_count",         "num_primitive_operations",
                                        "allow_imprecise_accumulation"};
  std::vector<Attribute> values;
  int none = 0;
  for (const char* field : kFields) {
    values.push_back(attrs.Take(field));
    none += !values.back() || IsNoneType(values.back());
  }
  if (none == 7) return Status::Ok();
  const bool well_formed = none == 0 && values[0].Is(AttrKind::kType) &&
                           values[1].Is(AttrKind::kType) && values[2].Is(AttrKind::kType) &&
                           values[3].Is(AttrKind::kInteger) && values[4].Is(AttrKind::kInteger) &&
                           values[5].Is(AttrKind::kInteger) && values[6].Is(AttrKind::kBool);
  if (!well_formed) {
    return InvalidArgument(attrs.where(),
                           ": expected all dot algorithm fields set or all "
                           "none, found ",
                           7 - none, " of 7 set");
  }
  std::vector<ir::NamedAttribute> fields;
  for (size_t i = 0; i < 7; ++i) {
    const Attribute& value = values[i];
    fields.push_back({kFields[i],
                      value.Is(AttrKind::kInteger) ? OpAttributes::I64(value->int_value) : value});
  }
  attrs.Set("algorithm", Attribute::Struct("stablehlo.dot_algorithm", std::move(fields)));
  return Status::Ok();
}

Status ConvertGather(OpAttributes& attrs, bool dynamic) {
  attrs.EraseIf("indices_are_sorted", IsFalse);
  KILN_RETURN_IF_ERROR(attrs.Implode("stablehlo.gather", "dimension_numbers",
                                     {{"offset_dims", true},
                                      {"collapsed_slice_dims", true},
                                      {"operand_batching_dims", true},
                                      {"start_indices_batching_dims", true},
                                      {"start_index_map", true},
                                      {"index_vector_dim", false}},
                                     /*omit_empty=*/true));
  return dynamic ? Status::Ok() : attrs.ToDenseArray("slice_sizes");
}

Status ConvertScatter(OpAttributes& attrs) {
  attrs.EraseIf("indices_are_sorted", IsFalse);
  attrs.EraseIf("unique_indices", IsFalse);
  return attrs.Implode("stablehlo.scatter", "scatter_dimension_numbers",
                       {{"update_window_dims", true},
                        {"inserted_window_dims", true},
                        {"input_batching_dims", true},
                        {"scatter_indices_batching_dims", true},
                        {"scatter_dims_to_operand_dims", true},
                        {"index_vector_dim", false}},
                       /*omit_empty=*/true);
}

Status ConvertCustomCall(OpAttributes& attrs) {
  attrs.EraseIf("has_side_effect", IsFalse);
  attrs.EraseIf("backend_config",
                [](const Attribute& a) { return IsEmptyString(a) || IsEmptyDictionary(a); });
  attrs.EraseIf("api_version", [](const Attribute& a) { return IsInteger(a, 1); });  // ORIGINAL
  attrs.EraseIf("called_computations", IsEmptyArray);
  if (IsEmptyArray(attrs.Get("operand_layouts")) && IsEmptyArray(attrs.Get("result_layouts"))) {
    attrs.Erase("operand_layouts");
    attrs.Erase("result_layouts");
  }
  attrs.EraseIf("output_operand_aliases", IsEmptyArray);
  attrs.EraseIf("result_tilings", IsEmptyArray);
  Attribute called = attrs.Get("called_computations");
  if (called) {
    if (!called.Is(AttrKind::kArray)) {
      return InvalidArgument(attrs.where(),
                             ": expected an array of function names in "
                             "'called_computations', found ",
                             AttrText(called));
    }
    std::vector<Attribute> symbols;
    for (const Attribute& name : called->elements) {
      KILN_ASSIGN_OR_RETURN(Attribute symbol, attrs.Symbol(name, "called_computations"));
      symbols.push_back(std::move(symbol));
    }
    attrs.Set("called_computations", Attribute::Array(std::move(symbols)));
  }
  return Status::Ok();
}

Status ConvertWindowed(OpAttributes& attrs, bool with_dilations) {
  attrs.EraseIf("window_strides", [](const Attribute& a) { return IsSplatOf(a, 1); });
  attrs.EraseIf("padding", [](const Attribute& a) { return IsSplatOf(a, 0); });
  if (with_dilations) {
    attrs.EraseIf("base_dilations", [](const Attribute& a) { return IsSplatOf(a, 1); });
    attrs.EraseIf("window_dilations", [](const Attribute& a) { return IsSplatOf(a, 1); });
  }
  for (const char* name :
       {"window_dimensions", "window_strides", "base_dilations", "window_dilations"}) {
    KILN_RETURN_IF_ERROR(attrs.ToDenseArray(name));
  }
  return Status::Ok();
}

// Ops whose attributes named here are tensors of dimensions in VHLO and
// dense i64 arrays in StableHLO (upstream's convertDenseI64Array cases).
const std::map<std::string_view, std::vector<const char*>>& DenseArrayAttributes() {
  static const auto* table = new std::map<std::string_view, std::vector<const char*>>{
      {"broadcast", {"broadcast_sizes"}},
      {"broadcast_in_dim", {"broadcast_dimensions"}},
      {"dynamic_broadcast_in_dim",
       {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"}},
      {"dynamic_slice", {"slice_sizes"}},
      {"fft", {"fft_length"}},
      {"map", {"dimensions"}},
      {"pad", {"edge_padding_low", "edge_padding_high", "interior_padding"}},
      {"reduce", {"dimensions"}},
      {"reverse", {"dimensions"}},
      {"slice", {"start_indices", "limit_indices", "strides"}},
      {"transpose", {"permutation"}},
  };
  return *table;
}

bool HasResultAccuracy(std::string_view mnemonic) {
  static constexpr std::string_view kOps[] = {
      "cbrt", "cosine",       "exponential", "exponential_minus_one",
      "log",  "log_plus_one", "logistic",    "rsqrt",
      "sine", "sqrt",         "tan",         "tanh"};
  return std::find(std::begin(kOps), std::end(kOps), mnemonic) != std::end(kOps);
}

// The op-specific rules; `name` may be changed.
Status ConvertAttributes(std::string_view m, OpAttributes& attrs, std::string& name) {
  if (m == "all_gather" || m == "all_reduce" || m == "all_to_all" || m == "collective_permute" ||
      m == "reduce_scatter" || m == "collective_broadcast" || m == "collective_reduce") {
    return ConvertCollective(attrs);
  }
  if (m == "convolution" || m == "dynamic_conv") {
    return ConvertConvolution(attrs, m == "dynamic_conv");
  }
  if (m == "dot_general") return ConvertDotGeneral(attrs);
  if (m == "dot") {
    attrs.EraseIf("precision_config",
                  [](const Attribute& a) { return IsArrayOfEnum(a, "DEFAULT"); });
    return Status::Ok();
  }
  if (m == "gather" || m == "dynamic_gather") return ConvertGather(attrs, m == "dynamic_gather");
  if (m == "scatter") return ConvertScatter(attrs);
  if (m == "custom_call") return ConvertCustomCall(attrs);
  if (m == "reduce_window") return ConvertWindowed(attrs, /*with_dilations=*/true);
  if (m == "select_and_scatter") return ConvertWindowed(attrs, /*with_dilations=*/false);
  if (m == "send" || m == "recv") {
    attrs.EraseIf("is_host_transfer", IsFalse);
    attrs.EraseIf("source_target_pairs", IsEmptyTensor);
    return attrs.ToChannelHandle(/*with_type=*/true, /*keep_zero=*/true);
  }
  if (m == "composite") {
    attrs.EraseIf("version", [](const Attribute& a) { return IsInteger(a, 0); });
    attrs.EraseIf("composite_attributes", IsEmptyDictionary);
    return attrs.ToSymbol("decomposition");
  }
  if (m == "func") {
    name = "func.func";
    attrs.EraseIf("sym_visibility", IsEmptyString);
    attrs.EraseIf("arg_attrs", IsEmptyArray);
    attrs.EraseIf("res_attrs", IsEmptyArray);
    return Status::Ok();
  }
  if (m == "call") {
    name = "func.call";
    return attrs.ToSymbol("callee");
  }
  if (m == "cholesky") attrs.EraseIf("lower", IsFalse);
  if (m == "compare") {
    attrs.EraseIf("compare_type", [](const Attribute& a) { return IsEnum(a, "NOTYPE"); });
  }
  if (m == "dynamic_broadcast_in_dim") {
    attrs.EraseIf("known_expanding_dimensions", IsEmptyTensor);
    attrs.EraseIf("known_nonexpanding_dimensions", IsEmptyTensor);
  }
  // infeed_config and outfeed_config are DefaultValuedStrAttr: upstream drops
  // an empty one, then building the StableHLO op fills the default back in,
  // so jaxlib prints `infeed_config = ""`. Kiln keeps it the same way.
  if (m == "infeed") {
    if (!attrs.Has("infeed_config")) attrs.Set("infeed_config", Attribute::String(""));
    attrs.EraseIf("layout", IsEmptyArray);
  }
  if (m == "outfeed" && !attrs.Has("outfeed_config")) {
    attrs.Set("outfeed_config", Attribute::String(""));
  }
  if (m == "sort") {
    attrs.EraseIf("dimension", [](const Attribute& a) { return IsInteger(a, -1); });
    attrs.EraseIf("is_stable", IsFalse);
  }
  if (HasResultAccuracy(m)) attrs.EraseIf("result_accuracy", IsDefaultResultAccuracy);
  auto dense = DenseArrayAttributes().find(m);
  if (dense != DenseArrayAttributes().end()) {
    for (const char* attribute : dense->second) KILN_RETURN_IF_ERROR(attrs.ToDenseArray(attribute));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<NormalizedOp> NormalizeVhloOp(const VhloOpInfo& info,
                                       std::vector<ir::NamedAttribute> inherent,
                                       bool parent_is_func, std::string_view where) {
  NormalizedOp op;
  op.name = "stablehlo." + std::string(info.mnemonic);
  if (info.mnemonic == "return") {
    if (parent_is_func) op.name = "func.return";
    op.attributes = std::move(inherent);
    return op;
  }
  OpAttributes attrs(std::move(inherent), where);
  KILN_RETURN_IF_ERROR(ConvertAttributes(info.mnemonic, attrs, op.name));
  op.attributes = attrs.Release();
  return op;
}

}  // namespace kiln::frontend::vhlo

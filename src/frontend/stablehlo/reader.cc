#include "frontend/stablehlo/reader.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/text/parser.h"
#include "frontend/vhlo/attr_table.h"
#include "frontend/vhlo/converter.h"

namespace kiln::frontend::stablehlo {
namespace {

// The dialects whose ops Kiln reads from this kind of file (the interpreter's
// check and interpreter ops included: upstream's tests use them).
constexpr std::string_view kDialects[] = {"builtin", "func",  "stablehlo",  "chlo",
                                          "sdy",     "check", "interpreter"};
constexpr std::string_view kDialectList =
    "builtin, func, stablehlo, chlo, sdy, check and interpreter";

// Entries stored as MLIR text are what the text parser makes of that text.
StatusOr<ir::Attribute> TextualAttribute(std::string_view /*dialect*/, std::string_view text) {
  return text::ParseAttribute(text);
}
StatusOr<ir::Type> TextualType(std::string_view /*dialect*/, std::string_view text) {
  return text::ParseType(text);
}

const vhlo::Codecs& StablehloCodecs() {
  static constexpr vhlo::DialectCodec kCodecs[] = {
      {"builtin", vhlo::DecodeBuiltinAttribute, vhlo::DecodeBuiltinType},
      {"stablehlo", vhlo::DecodeStablehloAttribute, vhlo::DecodeStablehloType},
      {"chlo", vhlo::DecodeChloAttribute, nullptr},
      {"sdy", vhlo::DecodeSdyAttribute, nullptr},
  };
  static const vhlo::Codecs codecs{kCodecs, TextualAttribute, TextualType};
  return codecs;
}

// An inherent attribute upstream's pretty printer leaves out when it holds
// its default (ODS DefaultValuedAttr elided by the generated printers), so
// the text Kiln's parser reads lacks it; dropped here too, so both readers
// build the same op. An empty `op` stands for every op.
struct ElidedDefault {
  std::string_view op;
  std::string_view attribute;
  ir::Attribute value;
};

const std::vector<ElidedDefault>& ElidedDefaults() {
  static const auto* defaults = [] {
    using ir::Attribute;
    const ir::Type i32 = ir::Type::Element(ElementType::kS32);
    return new std::vector<ElidedDefault>{
        {"", "result_accuracy",
         Attribute::Struct("stablehlo.result_accuracy",
                           {{"mode",
                             Attribute::Enum("stablehlo.result_accuracy_mode", "DEFAULT")}})},
        {"stablehlo.custom_call", "has_side_effect", Attribute::Bool(false)},
        {"stablehlo.custom_call", "api_version", Attribute::Integer(1, i32)},  // ORIGINAL
        {"stablehlo.custom_call", "called_computations", Attribute::Array({})},
        {"stablehlo.custom_call", "output_operand_aliases", Attribute::Array({})},
        {"stablehlo.cholesky", "lower", Attribute::Bool(false)},
        {"stablehlo.composite", "version", Attribute::Integer(0, i32)},
        {"stablehlo.composite", "composite_attributes", Attribute::Dictionary({})},
        {"chlo.top_k", "is_stable", Attribute::Bool(true)},
    };
  }();
  return *defaults;
}

bool IsElidedDefault(std::string_view op, const ir::NamedAttribute& attribute) {
  for (const ElidedDefault& entry : ElidedDefaults()) {
    if ((entry.op.empty() || entry.op == op) && entry.attribute == attribute.name &&
        entry.value == attribute.value) {
      return true;
    }
  }
  return false;
}

// Per-argument or per-result attribute lists that hold only empty
// dictionaries say nothing; MLIR's printer shows none, so the text lacks them.
bool IsEmptyEntryList(const ir::NamedAttribute& attribute) {
  if ((attribute.name != "arg_attrs" && attribute.name != "res_attrs") ||
      !attribute.value.Is(ir::AttrKind::kArray)) {
    return false;
  }
  const std::vector<ir::Attribute>& entries = attribute.value->elements;
  return std::all_of(entries.begin(), entries.end(), [](const ir::Attribute& entry) {
    return entry.Is(ir::AttrKind::kDictionary) && entry->fields.empty();
  });
}

class StablehloRules : public vhlo::OpRules {
 public:
  const vhlo::Codecs& codecs() const override { return StablehloCodecs(); }

  StatusOr<vhlo::PropertySchema> Properties(std::string_view op_name,
                                            std::string_view where) const override {
    std::optional<vhlo::PropertySchema> schema = vhlo::KnownPropertySchema(op_name);
    if (!schema) {
      return Unimplemented(where, ": Kiln cannot decode the properties of ", op_name,
                           " (it knows those of the ", kDialectList, " ops it models)");
    }
    return *schema;
  }

  Status Convert(vhlo::ConvertedOp& op, bool /*parent_is_func*/,
                 std::string_view /*where*/) const override {
    const bool is_func = op.name == "func.func" || op.name == "func.call";
    std::erase_if(op.attributes, [&](const ir::NamedAttribute& attribute) {
      return IsElidedDefault(op.name, attribute) || (is_func && IsEmptyEntryList(attribute));
    });
    return Status::Ok();
  }

  bool FoldIdentityCasts() const override { return false; }
};

// Every op must belong to a dialect this reader reads.
Status CheckDialects(const bytecode::File& file) {
  for (const bytecode::File::Operation& op : file.operations) {
    const std::string& dialect = file.dialects[file.op_names[op.name].dialect].name;
    if (std::find(std::begin(kDialects), std::end(kDialects), dialect) != std::end(kDialects)) {
      continue;
    }
    const std::string note = dialect == "vhlo"
                                 ? " (a StableHLO portable artifact, which the VHLO reader reads)"
                                 : "";
    return Unimplemented("op ", bytecode::OpFullName(file, op), " at byte ", op.offset,
                         ": Kiln reads MLIR bytecode of the ", kDialectList,
                         " dialects, found an op of dialect '", dialect, "'", note);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ir::Module> ConvertFile(const bytecode::File& file, std::span<const uint8_t> bytes) {
  KILN_RETURN_IF_ERROR(CheckDialects(file));
  static const StablehloRules rules;
  return vhlo::BuildModule(file, bytes, rules);
}

StatusOr<ir::Module> ReadStablehloBytecode(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(bytecode::File file, bytecode::ReadFile(bytes));
  return ConvertFile(file, bytes);
}

}  // namespace kiln::frontend::stablehlo

#include "ir/op_description.h"

#include <cstdlib>
#include <deque>
#include <set>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace kiln::ir {
namespace {

using enum ElementwiseResult;
using enum LoweringStatus;
using F = PrettyForm;

// A row as ops.def writes it, before its attribute text is parsed.
struct Row {
  OpCode code;
  std::string_view name;
  PrettyForm form;
  std::string_view attributes;
  OpCounts counts;
  LoweringStatus lowering;
  uint8_t traits;
  std::optional<ElementwiseDescription> elementwise;
};

// The row of an elementwise op: counts from its arity, always lowered.
constexpr Row Elementwise(OpCode code, std::string_view name, PrettyForm form,
                          std::string_view attributes, int16_t arity, uint16_t classes,
                          ElementwiseResult result, uint8_t traits) {
  return {code,
          name,
          form,
          attributes,
          Counts(arity, arity, 1, 1, 0),
          kLowered,
          traits,
          ElementwiseDescription{static_cast<uint8_t>(arity), classes, result}};
}

constexpr Row kRows[] = {
// clang-format off
#define KILN_OP(e, n, form, attrs, counts, lower, traits) \
  {OpCode::k##e, n, F::form, attrs, counts, lower, static_cast<uint8_t>(traits), std::nullopt},
#define KILN_UNARY(e, n, form, attrs, classes, result, kernel, traits) \
  Elementwise(OpCode::k##e, n, F::form, attrs, 1, classes, result, traits),
#define KILN_BINARY(e, n, form, attrs, classes, result, kernel, traits) \
  Elementwise(OpCode::k##e, n, F::form, attrs, 2, classes, result, traits),
#define KILN_SYNTAX_ONLY(n, form, attrs) \
  {OpCode::kUnknown, n, F::form, attrs, OpCounts{}, kUnimplemented, kNoTraits, std::nullopt},
// clang-format on
#include "ir/ops.def"
#undef KILN_OP
#undef KILN_UNARY
#undef KILN_BINARY
#undef KILN_SYNTAX_ONLY
};

constexpr std::string_view kTypeNames[] = {"any",  "i64",  "f",      "bool", "unit",  "str",  "sym",
                                           "type", "enum", "struct", "ints", "array", "dense"};

// Mistakes in ops.def's attribute text (a kind it does not name); the
// description test asserts there are none.
std::vector<std::string>& Mistakes() {
  static auto* mistakes = new std::vector<std::string>;
  return *mistakes;
}

AttrType ParseAttrType(std::string_view name, std::string_view op) {
  for (size_t i = 0; i < std::size(kTypeNames); ++i) {
    if (kTypeNames[i] == name) return static_cast<AttrType>(i);
  }
  Mistakes().push_back(StrCat(op, " declares an attribute of unknown kind '", name, "'"));
  return AttrType::kAny;
}

// "name?:kind +other:kind" -> declarations.
std::vector<AttributeDescription> ParseAttributes(std::string_view text, std::string_view op) {
  std::vector<AttributeDescription> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view token = text.substr(pos, end - pos);
    pos = end + 1;
    if (token.empty()) continue;
    AttributeDescription attribute;
    if (token.front() == '+') {
      attribute.inherent = false;
      token.remove_prefix(1);
    }
    const size_t colon = token.find(':');
    std::string_view name = token.substr(0, colon);
    if (colon != std::string_view::npos)
      attribute.type = ParseAttrType(token.substr(colon + 1), op);
    if (!name.empty() && name.back() == '?') {
      attribute.optional = true;
      name.remove_suffix(1);
    }
    if (const size_t bracket = name.find('['); bracket != std::string_view::npos) {
      for (char c : name.substr(bracket + 1)) {
        if (c >= '0' && c <= '9') attribute.entries = attribute.entries * 10 + (c - '0');
      }
      name = name.substr(0, bracket);
    }
    attribute.name = name;
    out.push_back(attribute);
  }
  return out;
}

struct Table {
  std::deque<std::vector<AttributeDescription>> attributes;  // stable storage
  std::vector<OpDescription> rows;
  std::vector<const OpDescription*> by_code;
  std::unordered_map<std::string_view, const OpDescription*> by_name;
};

const Table& GetTable() {
  static const Table* table = [] {
    auto* t = new Table;
    t->rows.reserve(std::size(kRows));
    for (const Row& row : kRows) {
      const auto& attributes = t->attributes.emplace_back(ParseAttributes(row.attributes,
                                                                          row.name));
      t->rows.push_back({row.code, row.name, row.form, attributes, row.counts, row.lowering,
                         row.traits, row.elementwise});
    }
    t->by_code.assign(kNumOpCodes, nullptr);
    for (const OpDescription& description : t->rows) {
      t->by_name.emplace(description.name, &description);
      if (description.code != OpCode::kUnknown) {
        t->by_code[static_cast<size_t>(description.code)] = &description;
      }
    }
    return t;
  }();
  return *table;
}

thread_local std::vector<std::string> undeclared_reads;
thread_local bool checking_reads = false;

}  // namespace

const AttributeDescription* OpDescription::FindAttribute(std::string_view attribute) const {
  for (const AttributeDescription& declared : attributes) {
    if (declared.name == attribute) return &declared;
  }
  return nullptr;
}

const OpDescription& DescribeOp(OpCode code) {
  static const OpDescription kUnknownOp{};
  const OpDescription* description = GetTable().by_code.at(static_cast<size_t>(code));
  return description != nullptr ? *description : kUnknownOp;
}

const OpDescription* FindOpDescription(std::string_view name) {
  const auto& by_name = GetTable().by_name;
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

std::span<const OpDescription> AllOpDescriptions() { return GetTable().rows; }

std::vector<std::string> OpDescriptionMistakes() {
  GetTable();
  return Mistakes();
}

std::string_view AttrTypeName(AttrType type) { return kTypeNames[static_cast<size_t>(type)]; }

bool AttributeHasType(const Attribute& value, AttrType type) {
  switch (type) {
    case AttrType::kAny: return true;
    case AttrType::kInt: return value.Is(AttrKind::kInteger);
    case AttrType::kFloat: return value.Is(AttrKind::kFloat);
    case AttrType::kBool:
    case AttrType::kUnit: return value.Is(AttrKind::kBool) || value.Is(AttrKind::kUnit);
    case AttrType::kString: return value.Is(AttrKind::kString);
    case AttrType::kSymbol: return value.Is(AttrKind::kSymbolRef);
    case AttrType::kType: return value.Is(AttrKind::kType);
    case AttrType::kEnum: return value.Is(AttrKind::kEnum);
    case AttrType::kStruct: return value.Is(AttrKind::kStruct);
    case AttrType::kInts:
      return value.Is(AttrKind::kDenseArray) || value.Is(AttrKind::kDenseElements) ||
             value.Is(AttrKind::kArray);
    case AttrType::kArray: return value.Is(AttrKind::kArray);
    case AttrType::kDense: return value.Is(AttrKind::kDenseElements) || value.Is(AttrKind::kOpaque);
  }
  return false;
}

void NoteAttributeRead(OpCode code, std::string_view name) {
  if (code == OpCode::kUnknown || name.find('.') != std::string_view::npos) return;
  const OpDescription& description = DescribeOp(code);
  if (description.FindAttribute(name) != nullptr) return;
  undeclared_reads.push_back(StrCat(description.name, ": ", name));
}

AttributeReadCheck::AttributeReadCheck() : previous_(checking_reads) { checking_reads = true; }
AttributeReadCheck::~AttributeReadCheck() { checking_reads = previous_; }
bool AttributeReadCheck::Active() { return checking_reads; }

std::string TakeUndeclaredAttributeReads() {
  std::string lines;
  std::set<std::string> seen;
  for (const std::string& read : undeclared_reads) {
    if (!seen.insert(read).second) continue;
    if (!lines.empty()) lines += "; ";
    lines += read;
  }
  undeclared_reads.clear();
  return lines;
}

bool CheckOpDescriptions() {
  static const bool enabled = [] {
    const char* value = std::getenv("KILN_CHECK_OP_DESCRIPTIONS");
    return value != nullptr && value[0] != '\0' && value[0] != '0';
  }();
  return enabled;
}

}  // namespace kiln::ir

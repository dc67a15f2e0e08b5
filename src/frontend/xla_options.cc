// XLA's compile options by name (CompileOptionsProto.env_option_overrides):
// which names exist and which values they take, as XLA's CPU backend decides
// (observed with jaxlib 0.11 and 0.12; docs/compile-options.md lists the
// rules and what Kiln does with each option).
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "frontend/compile_options.h"

namespace kiln::frontend {
namespace {

enum class Kind {
  kBool,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kFloat,
  kDouble,
  kString,
  kEnum,
  kMessage
};

struct XlaOption {
  std::string_view name;
  Kind kind;
  bool repeated;
  std::string_view enum_values;  // space-separated names; empty if unknown
};

using enum Kind;
constexpr XlaOption kXlaOptions[] = {
#define KILN_XLA_OPTION(name, kind, repeated, values) {name, kind, repeated, values},
#include "kiln/xla_debug_options.inc"
#undef KILN_XLA_OPTION
};

const XlaOption* FindOption(std::string_view name) {
  for (const XlaOption& option : kXlaOptions) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case kBool: return "bool";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kUint32: return "uint32";
    case kUint64: return "uint64";
    case kFloat: return "float";
    case kDouble: return "double";
    case kString: return "string";
    case kEnum: return "enum";
    case kMessage: return "message";
  }
  return "unknown";
}

Status NotValid(std::string_view name, std::string_view text, Kind kind) {
  return InvalidArgument("While setting option ", name, ", '", text, "' is not a valid ",
                         KindName(kind), " value.");
}

std::string_view TrimSpace(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// absl::SimpleAtoi's rules: surrounding whitespace, an optional sign, decimal
// digits, in range.
bool ParseInteger(std::string_view text, int64_t low, uint64_t high) {
  text = TrimSpace(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return false;
  uint64_t magnitude = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  if (negative) {
    return magnitude == 0 || (low < 0 && magnitude - 1 <= static_cast<uint64_t>(-(low + 1)));
  }
  return magnitude <= high;
}

bool IntegerFits(int64_t value, Kind kind) {
  switch (kind) {
    case kInt32:
      return value >= std::numeric_limits<int32_t>::min() &&
             value <= std::numeric_limits<int32_t>::max();
    case kUint32: return value >= 0 && value <= std::numeric_limits<uint32_t>::max();
    case kUint64: return value >= 0;
    default: return true;
  }
}

// One element's text, by the rules XLA applies to a string value.
bool ParsesAs(std::string_view text, const XlaOption& option) {
  switch (option.kind) {
    case kBool: return text == "True" || text == "False";
    case kInt32:
      return ParseInteger(text, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max());
    case kInt64:
      return ParseInteger(text, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max());
    case kUint32: return ParseInteger(text, 0, std::numeric_limits<uint32_t>::max());
    case kUint64: return ParseInteger(text, 0, std::numeric_limits<uint64_t>::max());
    case kFloat:
    case kDouble: {
      // absl::SimpleAtof: whitespace, then all of the rest a number (inf,
      // nan and out-of-range magnitudes included).
      const std::string trimmed(TrimSpace(text));
      if (trimmed.empty()) return false;
      char* end = nullptr;
      errno = 0;
      (void)std::strtod(trimmed.c_str(), &end);
      return end == trimmed.c_str() + trimmed.size();
    }
    case kString: return true;
    case kEnum: {
      if (option.enum_values.empty()) return true;
      if (ParseInteger(text, std::numeric_limits<int32_t>::min(),
                       std::numeric_limits<int32_t>::max())) {
        return true;
      }
      std::string_view names = option.enum_values;
      while (!names.empty()) {
        const size_t space = names.find(' ');
        if (names.substr(0, space) == text) return true;
        if (space == std::string_view::npos) break;
        names.remove_prefix(space + 1);
      }
      return false;
    }
    case kMessage: return false;
  }
  return false;
}

std::string FormatDouble(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

Status CheckOptionOverride(const OptionOverride& option) {
  const XlaOption* field = FindOption(option.name);
  if (field == nullptr) {
    return InvalidArgument("No such compile option: '", option.name, "'");
  }
  const std::string_view name = option.name;
  if (const auto* text = std::get_if<std::string>(&option.value)) {
    if (!field->repeated) {
      return ParsesAs(*text, *field) ? Status::Ok() : NotValid(name, *text, field->kind);
    }
    // A repeated field takes a comma-separated list; "" is the empty list.
    std::string_view rest = *text;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view element = rest.substr(0, comma);
      if (!ParsesAs(element, *field)) return NotValid(name, element, field->kind);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return Status::Ok();
  }
  if (const bool* flag = std::get_if<bool>(&option.value)) {
    return field->kind == kBool ? Status::Ok() : NotValid(name, *flag ? "1" : "0", field->kind);
  }
  if (const int64_t* integer = std::get_if<int64_t>(&option.value)) {
    const bool fits = (field->kind == kInt32 || field->kind == kInt64 || field->kind == kUint32 ||
                       field->kind == kUint64 || field->kind == kEnum) &&
                      IntegerFits(*integer, field->kind);
    return fits ? Status::Ok() : NotValid(name, std::to_string(*integer), field->kind);
  }
  const double real = std::get<double>(option.value);
  const bool fits = (field->kind == kFloat && std::isfinite(real) && std::fabs(real) <= FLT_MAX) ||
                    (field->kind == kDouble && std::isfinite(real));
  return fits ? Status::Ok() : NotValid(name, FormatDouble(real), field->kind);
}

}  // namespace kiln::frontend

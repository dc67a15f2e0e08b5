#include "frontend/vhlo/op_table.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace kiln::frontend::vhlo {
namespace {

// Marks an op version that is still current in op_table.def.
constexpr const char* kCurrent = nullptr;

struct RawOp {
  const char* mnemonic;
  int version;
  const char* first;
  const char* last;  // kCurrent for ops still current
  const char* attributes;
};

constexpr RawOp kRawOps[] = {
#define VHLO_OP(mnemonic, version, first, last, attributes) \
  {mnemonic, version, first, last, attributes},
#include "frontend/vhlo/op_table.def"
#undef VHLO_OP
};

std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    size_t space = text.find(' ');
    if (space != 0) words.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

struct Table {
  std::vector<VhloOpInfo> ops;
  std::unordered_map<std::string, size_t> by_name;          // "add_v1"
  std::unordered_map<std::string_view, std::string> names;  // "add" -> "add_v1"
};

const Table& GetTable() {
  static const Table* table = [] {
    auto* built = new Table;
    for (const RawOp& raw : kRawOps) {
      VhloOpInfo info;
      info.mnemonic = raw.mnemonic;
      info.version = raw.version;
      // The .def holds well-formed versions; the table is checked by tests.
      info.first = ParseVhloVersion(raw.first).value_or(VhloVersion{});
      info.last = raw.last == kCurrent ? kNewestVhloVersion
                                       : ParseVhloVersion(raw.last).value_or(VhloVersion{});
      info.newest = raw.last == kCurrent;
      info.attributes = SplitWords(raw.attributes);
      std::sort(info.attributes.begin(), info.attributes.end());
      std::string name = StrCat(raw.mnemonic, "_v", raw.version);
      std::string& known = built->names[info.mnemonic];
      known += known.empty() ? name : StrCat(", ", name);
      built->by_name.emplace(std::move(name), built->ops.size());
      built->ops.push_back(std::move(info));
    }
    return built;
  }();
  return *table;
}

}  // namespace

std::pair<std::string_view, int> SplitVersionedName(std::string_view name) {
  size_t mark = name.rfind("_v");
  if (mark == std::string_view::npos || mark == 0) return {name, 0};
  std::string_view digits = name.substr(mark + 2);
  int version = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (error != std::errc() || end != digits.data() + digits.size() || version <= 0) {
    return {name, 0};
  }
  return {name.substr(0, mark), version};
}

const VhloOpInfo* FindVhloOp(std::string_view name) {
  const Table& table = GetTable();
  auto it = table.by_name.find(std::string(name));
  return it == table.by_name.end() ? nullptr : &table.ops[it->second];
}

std::string KnownVersionsOf(std::string_view name) {
  const Table& table = GetTable();
  auto it = table.names.find(SplitVersionedName(name).first);
  return it == table.names.end() ? std::string() : it->second;
}

}  // namespace kiln::frontend::vhlo

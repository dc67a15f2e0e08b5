// DumpFile: a readable listing of a bytecode File. The op tree is walked with
// an explicit stack, like the reader, so any nesting depth the reader accepts
// can be printed.
#include <algorithm>
#include <sstream>
#include <vector>

#include "frontend/bytecode/file.h"

namespace kiln::frontend::bytecode {
namespace {

// Beyond this depth lines stop moving right and say their depth instead, so
// the listing of a deeply nested file stays linear in its size.
constexpr size_t kMaxIndentDepth = 32;

void Indent(std::ostream& out, size_t depth) {
  out << std::string(2 * std::min(depth, kMaxIndentDepth), ' ');
  if (depth > kMaxIndentDepth) out << "[depth " << depth << "] ";
}

template <typename T, typename Print>
void PrintList(std::ostream& out, const std::vector<T>& items, Print print) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out << ", ";
    print(items[i]);
  }
}

// "%3, %4 = vhlo.foo_v1(%1, %2) {#7} <p2> : !4, !4 -> [^1] loc #3 isolated"
void PrintOperation(std::ostream& out, const File& file, const File::Operation& op) {
  if (!op.result_ids.empty()) {
    PrintList(out, op.result_ids, [&](uint64_t id) { out << '%' << id; });
    out << " = ";
  }
  out << OpFullName(file, op) << '(';
  PrintList(out, op.operand_ids, [&](uint64_t id) { out << '%' << id; });
  out << ')';
  if (op.attr_dict) out << " {#" << *op.attr_dict << '}';
  if (op.properties) out << " <p" << *op.properties << '>';
  if (op.properties_attr) out << " <#" << *op.properties_attr << '>';
  if (!op.result_types.empty()) {
    out << " : ";
    PrintList(out, op.result_types, [&](uint64_t type) { out << '!' << type; });
  }
  if (!op.successors.empty()) {
    out << " -> [";
    PrintList(out, op.successors, [&](uint64_t block) { out << '^' << block; });
    out << ']';
  }
  out << " loc #" << op.location;
  if (op.isolated) out << " isolated";
  out << '\n';
}

void PrintBlockHeader(std::ostream& out, const File::Block& block, size_t index, size_t depth) {
  Indent(out, depth);
  out << '^' << index;
  if (!block.arguments.empty()) {
    out << '(';
    PrintList(out, block.arguments, [&](const File::Value& argument) {
      out << '%' << argument.id << ": !" << argument.type;
      if (argument.location) out << " loc #" << *argument.location;
    });
    out << ')';
  }
  out << ":\n";
}

// Where the walk stands inside one operation's regions.
struct Cursor {
  uint32_t op = 0;
  size_t depth = 0;  // the op's own depth
  size_t region = 0;
  size_t block = 0;
  size_t next_op = 0;
  bool started = false;  // the current region's or block's header is printed
};

void PrintTree(std::ostream& out, const File& file, uint32_t root) {
  Indent(out, 0);
  PrintOperation(out, file, file.operations[root]);
  std::vector<Cursor> stack = {Cursor{root}};
  while (!stack.empty()) {
    Cursor& cursor = stack.back();
    const File::Operation& op = file.operations[cursor.op];
    if (cursor.region == op.regions.size()) {
      stack.pop_back();
      continue;
    }
    const File::Region& region = op.regions[cursor.region];
    if (!cursor.started) {
      Indent(out, cursor.depth + 1);
      out << "region " << cursor.region << (region.blocks.empty() ? " (empty)\n" : ":\n");
      cursor.started = true;
    }
    if (cursor.block == region.blocks.size()) {
      ++cursor.region;
      cursor.block = cursor.next_op = 0;
      cursor.started = false;
      continue;
    }
    const File::Block& block = region.blocks[cursor.block];
    if (cursor.next_op == 0) PrintBlockHeader(out, block, cursor.block, cursor.depth + 2);
    if (cursor.next_op == block.ops.size()) {
      ++cursor.block;
      cursor.next_op = 0;
      continue;
    }
    const uint32_t child = block.ops[cursor.next_op++];
    const size_t child_depth = cursor.depth + 3;
    Indent(out, child_depth);
    PrintOperation(out, file, file.operations[child]);
    if (!file.operations[child].regions.empty()) stack.push_back(Cursor{child, child_depth});
  }
}

void PrintTables(std::ostream& out, const File& file) {
  out << "MLIR bytecode version " << file.version << ", producer \"" << file.producer << "\"\n";
  out << "dialects:";
  for (size_t i = 0; i < file.dialects.size(); ++i) {
    out << ' ' << i << '=' << file.dialects[i].name;
    if (!file.dialects[i].version.empty()) {
      out << " (version " << file.dialects[i].version.size() << " bytes)";
    }
  }
  const auto textual = [](const std::vector<File::AttrTypeEntry>& entries) {
    return std::count_if(entries.begin(), entries.end(),
                         [](const File::AttrTypeEntry& entry) { return !entry.custom; });
  };
  out << "\nstrings: " << file.strings.size() << ", op names: " << file.op_names.size()
      << ", attributes: " << file.attributes.size() << " (" << textual(file.attributes)
      << " textual), types: " << file.types.size() << " (" << textual(file.types)
      << " textual), properties: " << file.properties.size()
      << ", resources: " << file.resources.size() << "\noperations: " << file.operations.size()
      << ", value ids: " << file.num_value_ids << '\n';
}

}  // namespace

std::string DumpFile(const File& file) {
  std::ostringstream out;
  PrintTables(out, file);
  for (uint32_t root : file.top_level) PrintTree(out, file, root);
  return out.str();
}

}  // namespace kiln::frontend::bytecode

// The corpus of deliberately broken portable artifacts (tests/data/broken_bytecode):
// each case names a base input (hand-built here, a file of ../shared/corpus/vhlo,
// or literal bytes), the mutations that break it, and the status code and
// message the readers must give. Every case also runs under an address-space
// limit proportional to its size (no allocation from an unchecked count) and
// a time limit (no hang). The manifest format is in the folder's README.md.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/bytecode_test_util.h"
#include "frontend/program.h"
#include "frontend/vhlo/reader.h"
#include "ir/verifier.h"
#include "tests/source_paths.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KILN_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define KILN_SANITIZED_BUILD 1
#endif
#endif

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;
using test_util::Artifact;
using test_util::Bytes;
using test_util::Writer;

const fs::path kRepo = testing::SourceDir();
const fs::path kManifest = kRepo / "tests/data/broken_bytecode/cases.txt";
const fs::path kCorpusDir = testing::CorpusDir() / "vhlo";

// A reader must fail within this (wall clock, a busy machine included). The
// sanitizer build compiles the readers at -O0 under ASan + UBSan, about ten
// times slower than release (this test: 14 s there, 1.3 s in release; its
// deep_nesting case read in 5.4 s), and allows four times as long: still a
// bound no hang or quadratic walk stays under.
#ifdef KILN_SANITIZER_BUILD
constexpr double kMaxSecondsPerRead = 20.0;
#else
constexpr double kMaxSecondsPerRead = 5.0;
#endif

// ---------------------------------------------------------------------------
// The manifest.

struct Expectation {
  StatusCode code = StatusCode::kOk;
  std::string text;  // must occur in the message
};

struct Case {
  std::string name;
  int line = 0;                   // of the `case` line, for messages
  std::vector<std::string> base;  // the `base` line's words
  std::vector<std::vector<std::string>> mutations;
  std::optional<Expectation> expect;   // ReadPortableArtifact (and ReadProgram)
  std::optional<Expectation> program;  // ReadProgram, where it differs (no magic)
  std::optional<Expectation> verify;   // reading succeeds; ir::Verify fails
};

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::optional<StatusCode> CodeNamed(std::string_view name) {
  for (int code = 0; code <= 16; ++code) {
    const auto candidate = static_cast<StatusCode>(code);
    if (StatusCodeName(candidate) == name) return candidate;
  }
  return std::nullopt;
}

// "CODE text..." after the keyword.
StatusOr<Expectation> ParseExpectation(std::string_view rest) {
  const size_t space = rest.find(' ');
  std::optional<StatusCode> code = CodeNamed(rest.substr(0, space));
  if (!code || (space == std::string_view::npos && code != StatusCode::kOk)) {
    return InvalidArgument("expected 'CODE message' or 'OK', found '", rest, "'");
  }
  return Expectation{
      *code, space == std::string_view::npos ? std::string() : std::string(rest.substr(space + 1))};
}

StatusOr<std::vector<Case>> ParseManifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open ", path.string());
  std::vector<Case> cases;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    const std::string keyword = line.substr(0, line.find(' '));
    const std::string rest = line.size() > keyword.size() ? line.substr(keyword.size() + 1) : "";
    if (keyword == "case") {
      cases.push_back({rest, number});
      continue;
    }
    if (cases.empty()) return InvalidArgument("line ", number, ": expected 'case NAME' first");
    Case& current = cases.back();
    if (keyword == "base") {
      current.base = Words(rest);
    } else if (keyword == "mutate") {
      current.mutations.push_back(Words(rest));
    } else if (keyword == "expect" || keyword == "expect-program" || keyword == "expect-verify") {
      StatusOr<Expectation> expectation = ParseExpectation(rest);
      if (!expectation.ok()) {
        Status status = expectation.status();
        return status.AddNote(StrCat("line ", number));
      }
      (keyword == "expect"           ? current.expect
       : keyword == "expect-program" ? current.program
                                     : current.verify) = *expectation;
    } else {
      return InvalidArgument("line ", number, ": unknown keyword '", keyword, "'");
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Hand-built bases, written with the test writer (not the reader's code).

// A module holding `func.func @main(%arg0: tensor<f32>) -> result` (vhlo.func_v1)
// whose body `body` writes: one block with %arg0 and `values` value slots in
// all (so `%arg0` is slot 0). Tables: attributes 0 unknown loc, 1 "broken.py",
// 2 loc("broken.py":3:7), then what `body` adds, then [] (vhlo), the function
// type, "main" and ""; types 0 f32, 1 tensor<f32>, then what `body` adds, then
// the function type; properties 0 module, then the body's, then the function's.
// Empty resource sections, as StableHLO writes them.
struct FuncModule {
  Artifact a;
  uint64_t module = a.Op(Artifact::kBuiltin, "module");
  uint64_t func = a.Op(Artifact::kVhlo, "func_v1");
  uint64_t unknown = a.Attribute(Artifact::kBuiltin, Bytes({15}));
  uint64_t file = a.Attribute(Artifact::kBuiltin, Bytes({2, a.String("broken.py")}));
  uint64_t body_loc = a.Attribute(Artifact::kBuiltin, Bytes({11, file, 3, 7}));
  uint64_t f32 = a.Type(Artifact::kVhlo, Bytes({4}));
  uint64_t tensor = a.Type(Artifact::kVhlo, Bytes({20, 0, f32}));
  uint64_t module_props = a.Properties(Bytes({0, 0}));  // no sym_name, no sym_visibility

  std::vector<uint8_t> Build(uint64_t result, uint64_t values, const Writer& body) {
    a.empty_resources = true;
    const uint64_t signature = a.Type(Artifact::kVhlo, Bytes({8, 1, tensor, 1, result}));
    const uint64_t empty = a.Attribute(Artifact::kVhlo, Bytes({1, 0}));
    const uint64_t type = a.Attribute(Artifact::kVhlo, Bytes({17, signature}));
    const uint64_t name = a.Attribute(Artifact::kVhlo, Bytes({14, a.String("main")}));
    const uint64_t visibility = a.Attribute(Artifact::kVhlo, Bytes({14, a.String("")}));
    const uint64_t func_props = a.Properties(Bytes({empty, type, empty, name, visibility}));
    Writer region;  // one block, `values` slots, %arg0 without location, no use-list orders
    region.VarInt(1).VarInt(values).Flagged(2, true).VarInt(1).Flagged(tensor, false).Byte(0);
    region.Append(body.bytes);
    return test_util::BuildModuleWithFunction(a, module, func, unknown, module_props, func_props, 0,
                                              region.bytes);
  }
};

// `base handmade add [operands=N]`:
//   %0 = vhlo.add_v1 %arg0, %arg0 (N operands) : tensor<f32>  loc("broken.py":3:7)
//   vhlo.return_v1 %0
// Op names 0 module, 1 func_v1, 2 add_v1, 3 return_v1.
std::vector<uint8_t> HandmadeAdd(uint64_t operands) {
  FuncModule m;
  const uint64_t add = m.a.Op(Artifact::kVhlo, "add_v1");
  const uint64_t ret = m.a.Op(Artifact::kVhlo, "return_v1");
  Writer body;
  body.VarInt(add).Byte(0x02 | 0x04).VarInt(m.body_loc).VarInt(1).VarInt(m.tensor);
  body.VarInt(operands);
  for (uint64_t i = 0; i < operands; ++i) body.VarInt(0);
  body.VarInt(ret).Byte(0x04).VarInt(m.unknown).VarInt(1).VarInt(1);
  return m.Build(m.tensor, 2, body);
}

// `base handmade constant [shape=AxB...] [blob_size=N] [blob_bytes=N]`:
//   %0 = vhlo.constant_v1 {value = tensor_v1 of tensor<AxB...xf32>} loc("broken.py":3:7)
//   vhlo.return_v1 %0
// whose data is a blob claiming `blob_size` bytes followed by `blob_bytes`
// zero bytes (default: shape 2, 8 and 8).
std::vector<uint8_t> HandmadeConstant(const std::vector<int64_t>& shape, uint64_t blob_size,
                                      uint64_t blob_bytes) {
  FuncModule m;
  const uint64_t constant = m.a.Op(Artifact::kVhlo, "constant_v1");
  const uint64_t ret = m.a.Op(Artifact::kVhlo, "return_v1");
  Writer type_bytes;
  type_bytes.VarInt(20).VarInt(shape.size());
  for (int64_t dim : shape) type_bytes.SignedVarInt(dim);
  const uint64_t type = m.a.Type(Artifact::kVhlo, type_bytes.VarInt(m.f32).bytes);
  Writer value_bytes;
  value_bytes.VarInt(15).VarInt(type).VarInt(blob_size);
  for (uint64_t i = 0; i < blob_bytes; ++i) value_bytes.Byte(0);
  const uint64_t value = m.a.Attribute(Artifact::kVhlo, value_bytes.bytes);
  const uint64_t props = m.a.Properties(Bytes({value}));
  Writer body;
  body.VarInt(constant).Byte(0x02 | 0x40).VarInt(m.body_loc).VarInt(props);
  body.VarInt(1).VarInt(type);  // one result
  body.VarInt(ret).Byte(0x04).VarInt(m.unknown).VarInt(1).VarInt(1);
  return m.Build(type, 2, body);
}

// `base handmade nested depth=N`: `depth` builtin.modules, each the only op
// of the one block of the one region of the one before, the innermost holding
// `other.leaf` with (empty) properties, which Kiln cannot decode.
std::vector<uint8_t> HandmadeNested(uint64_t depth) {
  Artifact a;
  const uint64_t module = a.Op(Artifact::kBuiltin, "module");
  const uint64_t leaf = a.Op(Artifact::kOther, "leaf");
  const uint64_t unknown = a.Attribute(Artifact::kBuiltin, Bytes({15}));
  const uint64_t props = a.Properties({});
  Writer ir;
  ir.Flagged(1, false);
  for (uint64_t level = 0; level < depth; ++level) {
    ir.VarInt(module).Byte(0x10).VarInt(unknown).Flagged(1, false);  // one region
    ir.VarInt(1).VarInt(0).Flagged(1, false);                        // one block, one op
  }
  ir.VarInt(leaf).Byte(0x40).VarInt(unknown).VarInt(props);
  a.ir = ir.bytes;
  return a.Build();
}

StatusOr<uint64_t> ParseNumber(std::string_view text) {
  uint64_t value = 0;
  const bool hex = text.starts_with("0x");
  if (hex) text.remove_prefix(2);
  if (text.empty()) return InvalidArgument("expected a number, found nothing");
  for (char c : text) {
    const int digit = c >= '0' && c <= '9'          ? c - '0'
                      : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                    : -1;
    if (digit < 0) return InvalidArgument("expected a number, found '", text, "'");
    value = value * (hex ? 16 : 10) + static_cast<uint64_t>(digit);
  }
  return value;
}

StatusOr<std::vector<uint8_t>> ParseHex(std::string_view text) {
  if (text.size() % 2 != 0) return InvalidArgument("odd number of hex digits in '", text, "'");
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < text.size(); i += 2) {
    KILN_ASSIGN_OR_RETURN(uint64_t byte, ParseNumber(StrCat("0x", text.substr(i, 2))));
    bytes.push_back(static_cast<uint8_t>(byte));
  }
  return bytes;
}

// `key=value` options of a handmade base, with defaults.
StatusOr<uint64_t> Option(const std::vector<std::string>& words, std::string_view key,
                          uint64_t fallback) {
  for (size_t i = 2; i < words.size(); ++i) {
    if (words[i].starts_with(StrCat(key, "="))) {
      return ParseNumber(words[i].substr(key.size() + 1));
    }
  }
  return fallback;
}

using testing::ReadBytes;

StatusOr<std::vector<uint8_t>> BaseBytes(const std::vector<std::string>& words) {
  if (words.empty()) return InvalidArgument("no base");
  if (words[0] == "bytes") return ParseHex(words.size() > 1 ? words[1] : "");
  if (words[0] == "corpus" && words.size() == 2) {
    const fs::path path = kCorpusDir / words[1];
    if (!fs::exists(path)) return NotFound("no corpus file ", path.string());
    return ReadBytes(path);
  }
  if (words[0] == "handmade" && words.size() >= 2) {
    if (words[1] == "add") {
      KILN_ASSIGN_OR_RETURN(uint64_t operands, Option(words, "operands", 2));
      return HandmadeAdd(operands);
    }
    if (words[1] == "constant") {
      std::vector<int64_t> shape;
      for (size_t i = 2; i < words.size(); ++i) {
        if (!words[i].starts_with("shape=")) continue;
        std::istringstream dims(words[i].substr(6));
        for (std::string dim; std::getline(dims, dim, 'x');) {
          KILN_ASSIGN_OR_RETURN(uint64_t value, ParseNumber(dim));
          shape.push_back(static_cast<int64_t>(value));
        }
      }
      if (shape.empty()) shape = {2};
      KILN_ASSIGN_OR_RETURN(uint64_t blob_size, Option(words, "blob_size", 8));
      KILN_ASSIGN_OR_RETURN(uint64_t blob_bytes, Option(words, "blob_bytes", 8));
      return HandmadeConstant(shape, blob_size, blob_bytes);
    }
    if (words[1] == "stablehlo") return test_util::StablehloModule().Build();
    if (words[1] == "nested") {
      KILN_ASSIGN_OR_RETURN(uint64_t depth, Option(words, "depth", 1));
      return HandmadeNested(depth);
    }
  }
  return InvalidArgument("unknown base '", words[0], " ", words.size() > 1 ? words[1] : "", "'");
}

// ---------------------------------------------------------------------------
// Where things are in a well-formed file, found without the reader under test,
// so mutations can name places: @string, @ir.length, @attr.3, @end-1, ...

struct Layout {
  struct Section {
    uint64_t header = 0, length = 0, data = 0, end = 0;
  };
  uint64_t version = 4, producer = 0, sections = 0, end = 0;
  std::map<std::string, Section> by_name;
  std::vector<uint64_t> attributes, types, properties;  // offsets of each entry's bytes
};

// Section ids 0 to 8 as positions name them.
const char* const kSectionNames[] = {
    "string",   "dialect",          "attr_type",        "attr_type_offsets", "ir",
    "resource", "resource_offsets", "dialect_versions", "properties"};

class Scanner {
 public:
  Scanner(const std::vector<uint8_t>& bytes, uint64_t position, uint64_t end)
      : bytes_(bytes), position_(position), end_(end) {}
  StatusOr<uint64_t> VarInt() {
    if (position_ >= end_) return InvalidArgument("layout: varint past the end");
    const uint8_t first = bytes_[position_];
    const int extra = first == 0 ? 8 : __builtin_ctz(first);
    if (position_ + 1 + extra > end_) return InvalidArgument("layout: varint past the end");
    uint64_t value = 0;
    for (int i = extra; i >= (first == 0 ? 1 : 0); --i) {
      value = (value << 8) | bytes_[position_ + i];
    }
    position_ += 1 + extra;
    return first == 0 ? value : value >> (extra + 1);
  }
  uint64_t position() const { return position_; }
  void Skip(uint64_t count) { position_ += count; }
  bool done() const { return position_ >= end_; }

 private:
  const std::vector<uint8_t>& bytes_;
  uint64_t position_, end_;
};

StatusOr<Layout> Locate(const std::vector<uint8_t>& bytes) {
  Layout layout;
  layout.end = bytes.size();
  Scanner top(bytes, 4, bytes.size());
  KILN_RETURN_IF_ERROR(top.VarInt().status());
  layout.producer = top.position();
  while (!top.done() && bytes[top.position()] != 0) top.Skip(1);
  top.Skip(1);
  layout.sections = top.position();
  while (!top.done()) {
    Layout::Section section;
    section.header = top.position();
    const uint8_t id = bytes[top.position()];
    top.Skip(1);
    section.length = top.position();
    KILN_ASSIGN_OR_RETURN(uint64_t length, top.VarInt());
    if (id & 0x80) {
      KILN_ASSIGN_OR_RETURN(uint64_t alignment, top.VarInt());
      while (alignment > 1 && top.position() % alignment != 0) top.Skip(1);
    }
    section.data = top.position();
    section.end = section.data + length;
    if ((id & 0x7F) > 8 || section.end > bytes.size()) {
      return InvalidArgument("layout: no section at byte ", section.header);
    }
    layout.by_name[kSectionNames[id & 0x7F]] = section;
    top.Skip(length);
  }
  if (layout.by_name.count("attr_type_offsets") && layout.by_name.count("attr_type")) {
    const Layout::Section& offsets = layout.by_name["attr_type_offsets"];
    Scanner scan(bytes, offsets.data, offsets.end);
    KILN_ASSIGN_OR_RETURN(uint64_t num_attributes, scan.VarInt());
    KILN_ASSIGN_OR_RETURN(uint64_t num_types, scan.VarInt());
    uint64_t position = layout.by_name["attr_type"].data;
    for (std::vector<uint64_t>* table : {&layout.attributes, &layout.types}) {
      const uint64_t count = table == &layout.attributes ? num_attributes : num_types;
      while (table->size() < count) {
        KILN_RETURN_IF_ERROR(scan.VarInt().status());  // dialect
        KILN_ASSIGN_OR_RETURN(uint64_t group, scan.VarInt());
        for (uint64_t i = 0; i < group; ++i) {
          KILN_ASSIGN_OR_RETURN(uint64_t size, scan.VarInt());
          table->push_back(position);
          position += size >> 1;
        }
      }
    }
  }
  if (layout.by_name.count("properties")) {
    const Layout::Section& section = layout.by_name["properties"];
    Scanner scan(bytes, section.data, section.end);
    KILN_ASSIGN_OR_RETURN(uint64_t count, scan.VarInt());
    for (uint64_t i = 0; i < count; ++i) {
      KILN_ASSIGN_OR_RETURN(uint64_t size, scan.VarInt());
      layout.properties.push_back(scan.position());
      scan.Skip(size);
    }
  }
  return layout;
}

// A position: a number, or @place[+K|-K] with place one of version, producer,
// sections, end, SECTION[.header|.length|.end], attr.N, type.N, prop.N.
StatusOr<uint64_t> Position(const std::vector<uint8_t>& bytes, std::string_view text) {
  if (!text.starts_with("@")) return ParseNumber(text);
  KILN_ASSIGN_OR_RETURN(Layout layout, Locate(bytes));
  text.remove_prefix(1);
  const size_t sign = text.find_first_of("+-");
  int64_t delta = 0;
  if (sign != std::string_view::npos) {
    KILN_ASSIGN_OR_RETURN(uint64_t amount, ParseNumber(text.substr(sign + 1)));
    delta = text[sign] == '+' ? static_cast<int64_t>(amount) : -static_cast<int64_t>(amount);
    text = text.substr(0, sign);
  }
  const size_t dot = text.find('.');
  const std::string place(text.substr(0, dot));
  const std::string part(dot == std::string_view::npos ? "" : text.substr(dot + 1));
  std::optional<uint64_t> base;
  if (place == "version") base = layout.version;
  if (place == "producer") base = layout.producer;
  if (place == "sections") base = layout.sections;
  if (place == "end") base = layout.end;
  if (auto found = layout.by_name.find(place); found != layout.by_name.end()) {
    const Layout::Section& section = found->second;
    base = part == "header"   ? section.header
           : part == "length" ? section.length
           : part == "end"    ? section.end
                              : section.data;
  }
  for (auto [name, table] : {std::pair{"attr", &layout.attributes},
                             {"type", &layout.types},
                             {"prop", &layout.properties}}) {
    if (place != name) continue;
    KILN_ASSIGN_OR_RETURN(uint64_t index, ParseNumber(part));
    if (index >= table->size()) return InvalidArgument("no @", place, ".", index);
    base = (*table)[index];
  }
  if (!base) return InvalidArgument("unknown place '@", text, "'");
  return static_cast<uint64_t>(static_cast<int64_t>(*base) + delta);
}

// ---------------------------------------------------------------------------
// Mutations.

// One `mutate` line's words applied to `bytes`; README.md lists them.
Status Mutate(std::vector<uint8_t>& bytes, const std::vector<std::string>& words) {
  if (words.empty()) return InvalidArgument("an empty mutation");
  const std::string& op = words[0];
  auto arg = [&](size_t i) -> const std::string& {
    static const std::string kNone;
    return i < words.size() ? words[i] : kNone;
  };
  auto position = [&]() -> StatusOr<uint64_t> {
    KILN_ASSIGN_OR_RETURN(uint64_t at, Position(bytes, arg(1)));
    if (at > bytes.size()) return InvalidArgument("position ", at, " is past the end");
    return at;
  };
  if (op == "truncate") {
    KILN_ASSIGN_OR_RETURN(uint64_t at, position());
    bytes.resize(at);
  } else if (op == "set" || op == "insert") {
    KILN_ASSIGN_OR_RETURN(uint64_t at, position());
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> data, ParseHex(arg(2)));
    if (op == "insert") {
      bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at), data.begin(), data.end());
    } else {
      if (at + data.size() > bytes.size()) return InvalidArgument("set past the end");
      std::copy(data.begin(), data.end(), bytes.begin() + static_cast<ptrdiff_t>(at));
    }
  } else if (op == "delete") {
    KILN_ASSIGN_OR_RETURN(uint64_t at, position());
    KILN_ASSIGN_OR_RETURN(uint64_t count, ParseNumber(arg(2)));
    if (at + count > bytes.size()) return InvalidArgument("delete past the end");
    bytes.erase(bytes.begin() + static_cast<ptrdiff_t>(at),
                bytes.begin() + static_cast<ptrdiff_t>(at + count));
  } else if (op == "varint") {  // replaces the varint at a position by another value's
    KILN_ASSIGN_OR_RETURN(uint64_t at, position());
    KILN_ASSIGN_OR_RETURN(uint64_t value, ParseNumber(arg(2)));
    Scanner scan(bytes, at, bytes.size());
    KILN_RETURN_IF_ERROR(scan.VarInt().status());
    const std::vector<uint8_t> encoded = Writer().VarInt(value).bytes;
    bytes.erase(bytes.begin() + static_cast<ptrdiff_t>(at),
                bytes.begin() + static_cast<ptrdiff_t>(scan.position()));
    bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at), encoded.begin(), encoded.end());
  } else if (op == "field") {  // the same, keeping the top-level section around it framed
    KILN_ASSIGN_OR_RETURN(uint64_t at, position());
    KILN_ASSIGN_OR_RETURN(Layout layout, Locate(bytes));
    const size_t before = bytes.size();
    KILN_RETURN_IF_ERROR(Mutate(bytes, {"varint", std::to_string(at), arg(2)}));
    for (const auto& [name, section] : layout.by_name) {
      if (at < section.data || at >= section.end) continue;
      const uint64_t length = section.end - section.data + bytes.size() - before;
      return Mutate(bytes, {"varint", std::to_string(section.length), std::to_string(length)});
    }
    return InvalidArgument("field: position ", at, " is in no section's data");
  } else if (op == "replace") {  // the first occurrence of a text, by one as long
    const std::string& from = arg(1);
    const std::string& to = arg(2);
    if (from.size() != to.size() || from.empty()) {
      return InvalidArgument("replace needs two texts of one size");
    }
    auto found = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
    if (found == bytes.end()) return InvalidArgument("no '", from, "' to replace");
    std::copy(to.begin(), to.end(), found);
  } else if (op == "append") {
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> data, ParseHex(arg(1)));
    bytes.insert(bytes.end(), data.begin(), data.end());
  } else if (op == "random") {  // COUNT bytes from mt19937(SEED), low byte of each draw
    KILN_ASSIGN_OR_RETURN(uint64_t seed, ParseNumber(arg(1)));
    KILN_ASSIGN_OR_RETURN(uint64_t count, ParseNumber(arg(2)));
    std::mt19937 random(static_cast<uint32_t>(seed));
    for (uint64_t i = 0; i < count; ++i) bytes.push_back(static_cast<uint8_t>(random() & 0xFF));
  } else {
    return InvalidArgument("unknown mutation '", op, "'");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Running a case.

template <typename Read>
Status Timed(const Read& read, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  Status status = read();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

void ExpectStatus(const Status& status, const Expectation& expected, std::string_view reader) {
  EXPECT_EQ(StatusCodeName(status.code()), StatusCodeName(expected.code))
      << reader << ": " << status.ToString();
  EXPECT_NE(status.message().find(expected.text), std::string::npos)
      << reader << " said:\n  " << status.message() << "\nexpected it to contain:\n  "
      << expected.text;
}

// Reads `bytes` in a child process whose address space may grow by at most
// 64 MiB plus 64 bytes per input byte: a reader that allocates from a count
// it has not checked (a "4 GB" section) dies there instead of paging. Returns
// "" or what went wrong. Not under sanitizers, whose shadow memory needs room.
std::string ReadUnderMemoryLimit(const std::vector<uint8_t>& bytes) {
#ifdef KILN_SANITIZED_BUILD
  (void)bytes;
  return "";
#else
  long pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  if (pages <= 0) return "";  // no /proc: nothing to measure against
  const rlim_t allowance = (rlim_t{64} << 20) + 64 * static_cast<rlim_t>(bytes.size());
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                       allowance;
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return "";
  if (child == 0) {
    rlimit address_space{limit, RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &address_space);
    int code = 0;
    try {
      StatusOr<ir::Module> module = ReadProgram(bytes);
      if (module.ok()) (void)ir::Verify(*module);
    } catch (const std::bad_alloc&) {
      code = 3;
    } catch (...) {
      code = 4;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    return StrCat("needed more than ", allowance >> 20,
                  " MiB of new address space "
                  "(std::bad_alloc)");
  }
  return WIFSIGNALED(status) ? StrCat("died of signal ", WTERMSIG(status))
                             : StrCat("exited with code ", WEXITSTATUS(status));
#endif
}

// Builds and checks one case; false if it was skipped (no corpus).
bool RunCase(const Case& test) {
  SCOPED_TRACE(StrCat("case ", test.name, " (cases.txt line ", test.line, ")"));
  StatusOr<std::vector<uint8_t>> base = BaseBytes(test.base);
  if (!base.ok() && base.status().code() == StatusCode::kNotFound) return false;
  EXPECT_TRUE(base.ok()) << base.status().ToString();
  if (!base.ok()) return true;
  std::vector<uint8_t> bytes = std::move(base).value();
  for (const std::vector<std::string>& mutation : test.mutations) {
    Status status = Mutate(bytes, mutation);
    EXPECT_TRUE(status.ok()) << "mutate " << mutation.at(0) << ": " << status.ToString();
    if (!status.ok()) return true;
  }
  const bool verify = test.verify.has_value();
  EXPECT_NE(test.expect.has_value(), verify) << "give exactly one of 'expect', 'expect-verify'";
  if (test.expect.has_value() == verify) return true;
  if (const char* dir = std::getenv("KILN_BROKEN_DUMP_DIR")) {
    std::ofstream(fs::path(dir) / (test.name + ".bin"), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  if (std::getenv("KILN_BROKEN_PRINT") != nullptr) {  // for writing expectations
    StatusOr<ir::Module> module = ReadProgram(bytes);
    std::printf("%s\t%zu\t%s\t%s\n", test.name.c_str(), bytes.size(),
                module.status().ToString().c_str(),
                module.ok() ? ir::Verify(*module).ToString().c_str() : "");
  }

  double seconds = 0;
  Status artifact = Timed([&] { return vhlo::ReadPortableArtifact(bytes).status(); }, seconds);
  EXPECT_LT(seconds, kMaxSecondsPerRead) << "ReadPortableArtifact";
  Status program = Timed(
      [&]() -> Status {
        StatusOr<ir::Module> module = ReadProgram(bytes);
        if (!verify || !module.ok()) return module.status();
        return ir::Verify(*module);
      },
      seconds);
  EXPECT_LT(seconds, kMaxSecondsPerRead) << "ReadProgram";

  if (verify) {
    EXPECT_TRUE(artifact.ok()) << "ReadPortableArtifact: " << artifact.ToString();
    ExpectStatus(program, *test.verify, "ReadProgram + ir::Verify");
  } else {
    ExpectStatus(artifact, *test.expect, "ReadPortableArtifact");
    ExpectStatus(program, test.program ? *test.program : *test.expect, "ReadProgram");
  }
  const std::string memory = ReadUnderMemoryLimit(bytes);
  EXPECT_EQ(memory, "") << "reading " << bytes.size() << " bytes";
  return true;
}

std::vector<Case> LoadCases() {
  StatusOr<std::vector<Case>> cases = ParseManifest(kManifest);
  EXPECT_TRUE(cases.ok()) << cases.status().ToString();
  return cases.ok() ? std::move(cases).value() : std::vector<Case>{};
}

bool UsesCorpus(const Case& test) { return !test.base.empty() && test.base[0] == "corpus"; }

TEST(BrokenBytecodeTest, ManifestIsWellFormed) {
  std::vector<Case> cases = LoadCases();
  EXPECT_GE(cases.size(), 30u);
  std::map<std::string, int> names;
  for (const Case& test : cases) {
    EXPECT_EQ(names[test.name]++, 0) << "case " << test.name << " appears twice";
    EXPECT_FALSE(test.base.empty()) << "case " << test.name << " has no base";
  }
}

TEST(BrokenBytecodeTest, HandBuiltCasesFailAsExpected) {
  int ran = 0;
  for (const Case& test : LoadCases()) {
    if (!UsesCorpus(test)) ran += RunCase(test);
  }
  EXPECT_GE(ran, 30);
}

TEST(BrokenBytecodeTest, CorpusCasesFailAsExpected) {
  if (kCorpusDir.empty() || !fs::is_directory(kCorpusDir)) {
    GTEST_SKIP() << "no test corpus at '" << kCorpusDir.string()
                 << "' (../shared/corpus/vhlo beside the checkout; a plain clone has none), "
                    "so the cases of cases.txt based on corpus files are skipped";
  }
  int ran = 0, skipped = 0;
  for (const Case& test : LoadCases()) {
    if (!UsesCorpus(test)) continue;
    (RunCase(test) ? ran : skipped) += 1;
  }
  EXPECT_EQ(skipped, 0) << "corpus files named by cases.txt are missing";
  EXPECT_GT(ran, 0);
}

// The hand-built bases themselves must read and verify, so every case breaks one thing.
TEST(BrokenBytecodeTest, HandBuiltBasesAreValid) {
  for (const std::vector<uint8_t>& bytes :
       {HandmadeAdd(2), HandmadeConstant({2}, 8, 8), test_util::StablehloModule().Build()}) {
    StatusOr<ir::Module> module = ReadProgram(bytes);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    Status verified = ir::Verify(*module);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
  }
}

}  // namespace
}  // namespace kiln::frontend

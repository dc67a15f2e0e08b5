// The StableHLO text parser's internals, split over parse_*.cc:
//   parser.cc            tokens, errors, aliases, the public entry points
//   parse_types.cc       types and locations
//   parse_attributes.cc  attributes (dense literals, dialect attributes)
//   parse_ops.cc         regions, blocks, values, results, the generic op form
//   parse_pretty_ops.cc  pretty forms of ops without regions
//   parse_region_ops.cc  pretty forms of ops with regions or symbols
// Functions return false after recording the first error in `error_`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "frontend/text/lexer.h"
#include "frontend/text/parser.h"
#include "ir/module.h"
#include "ir/op_syntax.h"

namespace kiln::frontend::text {

// A use of an SSA value as written: `%name` or `%name#3`.
struct ValueUse {
  std::string name;
  size_t number = 0;
  size_t offset = 0;
};

// `%name` or `%name:2` before an op's `=`.
struct ResultBinding {
  std::string name;
  size_t count = 1;
  size_t offset = 0;
};

// A block argument being declared: `%arg0: tensor<f32> {attrs} loc(...)`.
struct ArgumentDecl {
  std::string name;
  ir::Type type;
  ir::Location location;
  ir::Attribute attributes;  // func signatures only; a dictionary or null
  size_t offset = 0;
};

// A region an op wants parsed next, with the entry arguments it declares.
struct RegionRequest {
  ir::Region* region = nullptr;
  std::vector<ArgumentDecl> arguments;
  bool named_arguments = false;  // the op declared the entry arguments
};

// An op being parsed, kept on the stack while its regions are read.
struct OpFrame {
  ir::Operation* op = nullptr;
  ir::PrettyForm form = ir::PrettyForm::kNone;  // kNone: the generic form
  bool generic = false;
  int stage = 0;
  size_t offset = 0;
  std::vector<ResultBinding> results;
  std::optional<RegionRequest> next_region;
  // Form-specific state.
  std::vector<ValueUse> operands;
  std::vector<ArgumentDecl> arguments;
  std::vector<ir::Type> types;
  std::string inner_op;  // compact reduce: the body's op
};

struct RegionFrame {
  ir::Region* region = nullptr;
  ir::Block* block = nullptr;
  bool named_arguments = false;
  bool top_level = false;  // the implicit module's body: ends at end of input
  std::string default_dialect;
  size_t open_offset = 0;
};

class Parser {
 public:
  Parser(std::string_view text, int64_t first_line);
  ~Parser();
  StatusOr<ir::Module> Parse();
  // One attribute or type making up the whole text.
  StatusOr<ir::Attribute> ParseWholeAttribute();
  StatusOr<ir::Type> ParseWholeType();

  // ---- tokens and errors (parser.cc) ----
  void Advance() { token_ = lexer_.Next(); }
  // The kind of the token after the current one.
  TokenKind PeekKind() {
    size_t saved = lexer_.position();
    TokenKind kind = lexer_.Next().kind;
    lexer_.Reset(saved);
    return kind;
  }
  const Token& token() const { return token_; }
  bool Consume(TokenKind kind);
  bool ConsumeKeyword(std::string_view word);
  bool Expect(TokenKind kind, std::string_view context);
  bool ExpectKeyword(std::string_view word, std::string_view context);
  bool Fail(size_t offset, const std::string& message);
  bool FailExpected(const std::string& what);
  bool failed() const { return !error_.ok(); }
  // "line:column" of an offset.
  std::string Position(size_t offset) const;
  // Raises the nesting depth; false (with an error) past kMaxNesting.
  bool EnterNesting();
  void LeaveNesting() { --depth_; }
  // Counts attribute, type and location nodes as they would be expanded
  // (aliases are shared in the IR but expanded by every walk over it); false
  // past a budget proportional to the input's size.
  bool CountExpansion(uint64_t nodes);

  // ---- aliases (parser.cc) ----
  bool CollectAliases();
  // Skips alias definitions at the current position; false when the current
  // token is an alias name that does not start its definition.
  bool SkipAliasDefinitions();
  bool ResolveAttributeAlias(const Token& name, ir::Attribute& attribute);
  bool ResolveTypeAlias(const Token& name, ir::Type& type);
  bool ResolveLocationAlias(const Token& name, ir::Location& location);

  // ---- types and locations (parse_types.cc) ----
  bool AtType() const;
  bool ParseType(ir::Type& type);
  bool ParseTypeList(std::vector<ir::Type>& types);  // one or more, comma-separated
  bool ParseParenTypeList(std::vector<ir::Type>& types);
  // `(inputs) -> results`.
  bool ParseFunctionType(std::vector<ir::Type>& inputs, std::vector<ir::Type>& results);
  bool ParseElementTypeToken(ElementType& element);
  bool ParseTensorType(size_t start, ir::Type& type);  // after `tensor`
  bool ParseQuantizedType(ir::Type& type);             // at `!quant.uniform`
  bool ParseLocation(ir::Location& location);          // `loc(...)`
  bool ParseOptionalLocation(ir::Location& location);

  // ---- attributes (parse_attributes.cc) ----
  bool ParseAttribute(ir::Attribute& attribute);
  bool ParseDictionary(std::vector<ir::NamedAttribute>& entries);  // `{...}`
  bool ParseOptionalAttrDict(ir::Operation& op);
  bool ParseOptionalAttrDictWithKeyword(ir::Operation& op);
  bool ParseInteger(int64_t& value);  // with an optional leading '-'
  bool ParseI64List(std::vector<int64_t>& values, bool allow_dynamic = false);  // `[1, ?, 3]`
  bool ParseDialectAttributeBody(std::string_view name, size_t start, ir::Attribute& attribute);
  bool ParseDenseElements(ir::Attribute& attribute);  // after `dense`
  // Captures the balanced bracket group starting at the current token,
  // returning the input text from `start` to its end.
  bool CaptureBalanced(size_t start, std::string& text);
  bool ParseConvDimensions(ir::Attribute& attribute);  // `[b, 0, f]x[...]->[...]`
  bool ParseStructBody(std::string_view name, ir::Attribute& attribute);  // `<...>`

  // ---- ops and regions (parse_ops.cc) ----
  bool Run();
  bool StepRegion();
  bool ParseBlockHeader(RegionFrame& frame);
  bool ParseOperation(ir::Block* block, std::string_view default_dialect);
  bool ResumeOp();
  bool FinishOperation(OpFrame& frame);
  bool CloseRegion();
  bool PushRegion(OpFrame& frame);
  bool ParseResultBindings(std::vector<ResultBinding>& results);
  bool ParseValueUse(ValueUse& use);
  bool ParseValueUseList(std::vector<ValueUse>& uses);  // zero or more, comma-separated
  // Resolves uses against `types` and adds them as the op's operands.
  bool ResolveOperands(ir::Operation& op, const std::vector<ValueUse>& uses,
                       const std::vector<ir::Type>& types, size_t offset);
  void AddResults(ir::Operation& op, const std::vector<ir::Type>& types);
  bool ParseArgumentDecl(ArgumentDecl& argument, bool allow_attributes);
  // Requests `{...}` as the next region of the op.
  bool RequestRegion(OpFrame& frame, std::vector<ArgumentDecl> arguments, bool named);
  bool BeginGeneric(OpFrame& frame);
  bool ContinueGeneric(OpFrame& frame);
  bool FinishGeneric(OpFrame& frame);

  // ---- pretty forms (parse_pretty_ops.cc, parse_region_ops.cc) ----
  bool BeginPretty(OpFrame& frame);
  bool ContinuePretty(OpFrame& frame);
  bool BeginRegionOp(OpFrame& frame);
  bool ContinueRegionOp(OpFrame& frame);
  bool FinishCompactReduce(OpFrame& frame);
  // `: T` or `: (T, U) -> R` (custom<SameOperandsAndResultType>).
  bool ParseSameType(OpFrame& frame, size_t operand_count);
  bool ParseFunctionalTail(OpFrame& frame);  // attr-dict `:` functional-type

 private:
  struct ForwardReference {
    std::unordered_map<size_t, std::unique_ptr<ir::Value>> placeholders;  // by result number
    std::vector<std::pair<ir::Operation*, size_t>> uses;
    size_t offset = 0;
  };
  struct Scope {
    std::unordered_map<std::string, std::vector<ir::Value*>> values;
    std::unordered_map<std::string, ForwardReference> forward;
    bool isolated = false;
  };
  struct Alias {
    size_t name_offset = 0;  // where the definition starts
    size_t value_offset = 0;
    size_t end_offset = 0;
    bool is_type = false;
    bool is_location = false;
    int state = 0;          // 0 unparsed, 1 parsing, 2 done
    int height = 0;         // nesting depth of the value
    uint64_t expanded = 0;  // nodes of the value, aliases expanded
    ir::Attribute attribute;
    ir::Type type;
    ir::Location location;
  };
  struct Frame {
    bool is_region = false;
    OpFrame op;
    RegionFrame region;
  };

  bool Define(const std::string& name, std::vector<ir::Value*> values, size_t offset);
  ir::Value* Lookup(const ValueUse& use, const ir::Type& type, bool& forward);
  bool ParseAlias(const std::string& name, Alias& alias);
  // Accounts for a use of a parsed alias: its depth and expanded size.
  bool UseAlias(const Token& name, const Alias& alias);
  bool DefineArguments(ir::Block& block, const std::vector<ArgumentDecl>& arguments);

  friend StatusOr<ir::Module> ParseModule(std::string_view text);

  std::string_view text_;
  int64_t first_line_;
  Lexer lexer_;
  Token token_;
  Status error_;
  int depth_ = 0;
  int max_depth_ = 0;  // deepest nesting reached, aliases included
  uint64_t expanded_ = 0;
  uint64_t expansion_budget_;
  std::unordered_map<std::string, Alias> aliases_;
  std::vector<Scope> scopes_;
  std::vector<Frame> stack_;
  std::unique_ptr<ir::Operation> root_;   // an explicit top-level `module`
  std::unique_ptr<ir::Module> implicit_;  // the module wrapping top-level ops otherwise
};

// The value of a decimal or 0x-hex integer literal's digits; false when it
// does not fit in 64 bits.
bool IntegerMagnitude(std::string_view spelling, uint64_t& value);

}  // namespace kiln::frontend::text

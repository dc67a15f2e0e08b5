// Tokens of MLIR's textual syntax, for the StableHLO text parser. The lexer
// never fails: malformed input becomes a kError token that the parser
// reports with its position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::frontend::text {

enum class TokenKind : uint8_t {
  kEof,
  kError,           // a character or literal the lexer cannot read
  kBareIdentifier,  // stablehlo.add, f32, x, dense
  kPercent,         // %0, %arg0, %cst_1, %0#1
  kCaret,           // ^bb0
  kAt,              // @main, @"quoted name"
  kHash,            // #loc3, #stablehlo.dot, #stablehlo
  kExclamation,     // !stablehlo.token, !quant.uniform
  kInteger,         // 42, 0x7FC00000
  kFloat,           // 1.5, 1.000000e+00
  kString,          // "text", with escapes
  kLParen,
  kRParen,
  kLSquare,
  kRSquare,
  kLBrace,
  kRBrace,
  kLess,
  kGreater,
  kComma,
  kColon,
  kColonColon,
  kEqual,
  kQuestion,
  kStar,
  kPlus,
  kMinus,
  kArrow,
  kFileMetadataBegin,  // {-#
  kFileMetadataEnd,    // #-}
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view spelling;  // the token's text in the input
  size_t offset = 0;          // where it starts

  bool Is(TokenKind k) const { return kind == k; }
  bool IsKeyword(std::string_view word) const {
    return kind == TokenKind::kBareIdentifier && spelling == word;
  }
};

// The name of a token kind for messages ("'('", "an integer").
std::string_view DescribeKind(TokenKind kind);
// "'spelling'" or "end of input", for "found ..." in messages.
std::string DescribeToken(const Token& token);

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token Next();
  // Continue lexing at `offset` (used to re-read a stretch of input).
  void Reset(size_t offset) { position_ = offset; }
  size_t position() const { return position_; }
  std::string_view text() const { return text_; }

  // Skips spaces and comments from the current position.
  void SkipTrivia();
  // The raw character at the current position after trivia, or '\0'.
  char PeekChar();
  // Reads a tensor dimension prefix (`2x?x*x...`) starting at the current
  // position: each call returns one dimension and consumes its `x`, or returns
  // false (consuming nothing) when the element type starts. `*dim` is the
  // size, -1 for `?`, -2 for `*`. Sets *overflow when a size exceeds int64.
  bool LexDimension(int64_t* dim, bool* overflow);

  // Decodes a string literal token's value (escapes: \\ \" \n \t \XX).
  static std::string StringValue(std::string_view spelling);
  // The name a symbol token (`@name` or `@"quoted name"`) spells, unescaped.
  static std::string SymbolValue(std::string_view spelling);

 private:
  Token Make(TokenKind kind, size_t start) {
    return Token{kind, text_.substr(start, position_ - start), start};
  }
  Token LexNumber(size_t start);
  Token LexString(size_t start);
  Token LexPrefixed(TokenKind kind, size_t start);

  std::string_view text_;
  size_t position_ = 0;
};

// Line and column (1-based) of an offset in `text`.
void LineAndColumn(std::string_view text, size_t offset, int64_t* line, int64_t* column);

}  // namespace kiln::frontend::text

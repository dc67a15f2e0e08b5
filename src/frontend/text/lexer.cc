#include "frontend/text/lexer.h"

namespace kiln::frontend::text {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentifierChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.';
}
// Characters of `%name`, `^name`, `#name` suffixes (MLIR's suffix-id).
bool IsSuffixChar(char c) { return IsIdentifierChar(c) || c == '-'; }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

std::string_view DescribeKind(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof: return "end of input";
    case TokenKind::kError: return "an invalid token";
    case TokenKind::kBareIdentifier: return "an identifier";
    case TokenKind::kPercent: return "a value name (%...)";
    case TokenKind::kCaret: return "a block name (^...)";
    case TokenKind::kAt: return "a symbol (@...)";
    case TokenKind::kHash: return "an attribute alias or dialect attribute (#...)";
    case TokenKind::kExclamation: return "a type alias or dialect type (!...)";
    case TokenKind::kInteger: return "an integer";
    case TokenKind::kFloat: return "a float";
    case TokenKind::kString: return "a string";
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLSquare: return "'['";
    case TokenKind::kRSquare: return "']'";
    case TokenKind::kLBrace: return "'{'";
    case TokenKind::kRBrace: return "'}'";
    case TokenKind::kLess: return "'<'";
    case TokenKind::kGreater: return "'>'";
    case TokenKind::kComma: return "','";
    case TokenKind::kColon: return "':'";
    case TokenKind::kColonColon: return "'::'";
    case TokenKind::kEqual: return "'='";
    case TokenKind::kQuestion: return "'?'";
    case TokenKind::kStar: return "'*'";
    case TokenKind::kPlus: return "'+'";
    case TokenKind::kMinus: return "'-'";
    case TokenKind::kArrow: return "'->'";
    case TokenKind::kFileMetadataBegin: return "'{-#'";
    case TokenKind::kFileMetadataEnd: return "'#-}'";
  }
  return "a token";
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEof) return "end of input";
  std::string_view spelling = token.spelling.substr(0, token.spelling.find('\n'));
  std::string text = "'";
  if (spelling.size() > 40) {
    text += spelling.substr(0, 40);
    text += "...";
  } else {
    text += spelling;
  }
  return text + "'";
}

void LineAndColumn(std::string_view text, size_t offset, int64_t* line, int64_t* column) {
  *line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++*line;
      line_start = i + 1;
    }
  }
  *column = static_cast<int64_t>(offset - line_start) + 1;
}

void Lexer::SkipTrivia() {
  while (position_ < text_.size()) {
    char c = text_[position_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++position_;
    } else if (c == '/' && position_ + 1 < text_.size() && text_[position_ + 1] == '/') {
      while (position_ < text_.size() && text_[position_] != '\n') ++position_;
    } else {
      return;
    }
  }
}

char Lexer::PeekChar() {
  SkipTrivia();
  return position_ < text_.size() ? text_[position_] : '\0';
}

bool Lexer::LexDimension(int64_t* dim, bool* overflow) {
  size_t start = position_;
  SkipTrivia();
  size_t cursor = position_;
  int64_t value = 0;
  if (cursor < text_.size() && (text_[cursor] == '?' || text_[cursor] == '*')) {
    value = text_[cursor] == '?' ? -1 : -2;
    ++cursor;
  } else if (cursor < text_.size() && IsDigit(text_[cursor])) {
    while (cursor < text_.size() && IsDigit(text_[cursor])) {
      int digit = text_[cursor] - '0';
      if (value > (INT64_MAX - digit) / 10) {
        *overflow = true;
        value = 0;
      }
      value = value * 10 + digit;
      ++cursor;
    }
  } else {
    position_ = start;
    return false;
  }
  while (cursor < text_.size() && (text_[cursor] == ' ' || text_[cursor] == '\t')) ++cursor;
  if (cursor >= text_.size() || text_[cursor] != 'x') {
    position_ = start;
    return false;
  }
  position_ = cursor + 1;
  *dim = value;
  return true;
}

Token Lexer::Next() {
  SkipTrivia();
  size_t start = position_;
  if (position_ >= text_.size()) return Token{TokenKind::kEof, {}, text_.size()};
  char c = text_[position_++];
  auto peek = [&](char expected) {
    if (position_ < text_.size() && text_[position_] == expected) {
      ++position_;
      return true;
    }
    return false;
  };
  switch (c) {
    case '(': return Make(TokenKind::kLParen, start);
    case ')': return Make(TokenKind::kRParen, start);
    case '[': return Make(TokenKind::kLSquare, start);
    case ']': return Make(TokenKind::kRSquare, start);
    case '{':
      if (position_ + 1 < text_.size() && text_[position_] == '-' && text_[position_ + 1] == '#') {
        position_ += 2;
        return Make(TokenKind::kFileMetadataBegin, start);
      }
      return Make(TokenKind::kLBrace, start);
    case '}': return Make(TokenKind::kRBrace, start);
    case '<': return Make(TokenKind::kLess, start);
    case '>': return Make(TokenKind::kGreater, start);
    case ',': return Make(TokenKind::kComma, start);
    case ':': return Make(peek(':') ? TokenKind::kColonColon : TokenKind::kColon, start);
    case '=': return Make(TokenKind::kEqual, start);
    case '?': return Make(TokenKind::kQuestion, start);
    case '*': return Make(TokenKind::kStar, start);
    case '+': return Make(TokenKind::kPlus, start);
    case '-': return Make(peek('>') ? TokenKind::kArrow : TokenKind::kMinus, start);
    case '"': return LexString(start);
    case '%': return LexPrefixed(TokenKind::kPercent, start);
    case '^': return LexPrefixed(TokenKind::kCaret, start);
    case '!': return LexPrefixed(TokenKind::kExclamation, start);
    case '#':
      if (position_ + 1 < text_.size() && text_[position_] == '-' && text_[position_ + 1] == '}') {
        position_ += 2;
        return Make(TokenKind::kFileMetadataEnd, start);
      }
      return LexPrefixed(TokenKind::kHash, start);
    case '@':
      if (position_ < text_.size() && text_[position_] == '"') {
        Token quoted = LexString(position_++);
        if (quoted.kind == TokenKind::kError) return quoted;
        return Make(TokenKind::kAt, start);
      }
      return LexPrefixed(TokenKind::kAt, start);
    default: break;
  }
  if (IsDigit(c)) return LexNumber(start);
  if (IsLetter(c) || c == '_') {
    while (position_ < text_.size() && IsIdentifierChar(text_[position_])) ++position_;
    return Make(TokenKind::kBareIdentifier, start);
  }
  return Make(TokenKind::kError, start);
}

Token Lexer::LexPrefixed(TokenKind kind, size_t start) {
  size_t name_start = position_;
  while (position_ < text_.size() && IsSuffixChar(text_[position_])) ++position_;
  if (position_ == name_start) return Make(TokenKind::kError, start);
  // `%0#1`: a use of result 1 of `%0`.
  if (kind == TokenKind::kPercent && position_ + 1 < text_.size() && text_[position_] == '#' &&
      IsDigit(text_[position_ + 1])) {
    ++position_;
    while (position_ < text_.size() && IsDigit(text_[position_])) ++position_;
  }
  return Make(kind, start);
}

Token Lexer::LexNumber(size_t start) {
  if (text_[start] == '0' && position_ < text_.size() && text_[position_] == 'x' &&
      position_ + 1 < text_.size() && IsHexDigit(text_[position_ + 1])) {
    ++position_;
    while (position_ < text_.size() && IsHexDigit(text_[position_])) ++position_;
    return Make(TokenKind::kInteger, start);
  }
  while (position_ < text_.size() && IsDigit(text_[position_])) ++position_;
  if (position_ >= text_.size() || text_[position_] != '.') return Make(TokenKind::kInteger, start);
  ++position_;
  while (position_ < text_.size() && IsDigit(text_[position_])) ++position_;
  if (position_ < text_.size() && (text_[position_] == 'e' || text_[position_] == 'E')) {
    size_t exponent = position_ + 1;
    if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
    if (exponent < text_.size() && IsDigit(text_[exponent])) {
      position_ = exponent;
      while (position_ < text_.size() && IsDigit(text_[position_])) ++position_;
    }
  }
  return Make(TokenKind::kFloat, start);
}

Token Lexer::LexString(size_t start) {
  while (position_ < text_.size()) {
    char c = text_[position_++];
    if (c == '"') return Make(TokenKind::kString, start);
    if (c == '\n') break;
    if (c != '\\') continue;
    if (position_ >= text_.size()) break;
    char escaped = text_[position_];
    if (escaped == '"' || escaped == '\\' || escaped == 'n' || escaped == 't') {
      ++position_;
    } else if (position_ + 1 < text_.size() && IsHexDigit(escaped) &&
               IsHexDigit(text_[position_ + 1])) {
      position_ += 2;
    } else {
      break;
    }
  }
  return Make(TokenKind::kError, start);
}

std::string Lexer::StringValue(std::string_view spelling) {
  std::string value;
  if (spelling.size() < 2) return value;
  std::string_view body = spelling.substr(1, spelling.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      value += c;
      continue;
    }
    char escaped = body[++i];
    switch (escaped) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case '"': value += '"'; break;
      case '\\': value += '\\'; break;
      default:
        if (i + 1 < body.size()) {
          value += static_cast<char>(HexValue(escaped) * 16 + HexValue(body[i + 1]));
          ++i;
        }
        break;
    }
  }
  return value;
}

std::string Lexer::SymbolValue(std::string_view spelling) {
  std::string_view name = spelling.substr(spelling.starts_with('@') ? 1 : 0);
  return name.size() >= 2 && name[0] == '"' ? StringValue(name) : std::string(name);
}

}  // namespace kiln::frontend::text

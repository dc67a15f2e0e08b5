// MLIR assembly text of Kiln IR types, attributes and locations, as far as
// the VHLO reader needs it: the text of Opaque entries it builds (Shardy
// attributes, memref and future types) and the types in its messages. The
// project's printer (src/ir/printer.h) is the general one.
#pragma once

#include <string>
#include <string_view>

#include "ir/attribute.h"
#include "ir/type.h"

namespace kiln::frontend::vhlo {

// Texts longer than this end in "..." (values that share parts can spell out
// exponentially long; messages and opaque names never need that much).
inline constexpr size_t kMaxTextLength = size_t{1} << 16;

// "i32", "ui8", "f8E4M3FN", "index", "complex<f32>".
std::string_view ElementTypeText(ElementType type);
// "tensor<2x?xf32>", "!quant.uniform<i8:f32, 2.000000e+00:10>", "tuple<...>".
std::string TypeText(const ir::Type& type);
// `"text"` with MLIR's escapes.
std::string QuotedString(std::string_view text);
// MLIR text of the attribute kinds Shardy attributes embed (strings, symbol
// references, integers, arrays, dense integer data); other kinds approximately.
std::string AttrText(const ir::Attribute& attribute);
// `loc("file":1:2)`, `loc(callsite(... at ...))`, ...
std::string LocationText(const ir::Location& location);

}  // namespace kiln::frontend::vhlo

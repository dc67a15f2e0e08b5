// StableHLO text → Kiln IR. Reads MLIR's textual syntax as upstream StableHLO
// prints it (the pretty form `jax.jit(f).lower(x).as_text()` gives, the
// examples of the StableHLO spec) and MLIR's generic form. The accepted
// syntax is in docs/formats/stablehlo-text.md.
//
// Any input gives a module or an INVALID_ARGUMENT error naming the line and
// column and what was expected and found; nothing crashes. Nesting of regions
// is walked with an explicit stack; attributes, types and locations nest at
// most kMaxNesting deep; memory stays proportional to the input's size.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/module.h"

namespace kiln::frontend::text {

// How deep types, attributes and locations may nest (`[[[...]]]`).
inline constexpr int kMaxNesting = 100;

// Parses one module. Top-level ops outside a `module { ... }` are wrapped in
// one, as MLIR does.
StatusOr<ir::Module> ParseModule(std::string_view text);

// Parses one attribute (`dense<1> : tensor<i32>`, `#stablehlo<precision
// HIGH>`) or one type (`f8E4M3FN`, `!stablehlo.token`) making up the whole
// text, as MLIR bytecode stores the attributes and types a dialect does not
// encode itself. Errors name the column and what was expected.
StatusOr<ir::Attribute> ParseAttribute(std::string_view text);
StatusOr<ir::Type> ParseType(std::string_view text);

// Parses a file of modules separated by `// -----` lines (MLIR's
// --split-input-file convention). Error positions are in the whole file.
StatusOr<std::vector<ir::Module>> ParseChunks(std::string_view text);

}  // namespace kiln::frontend::text

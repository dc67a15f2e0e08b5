// Kiln IR as StableHLO text: MLIR's assembly syntax, in upstream StableHLO's
// pretty form (what `jax.jit(f).lower(x).as_text()` prints) or MLIR's generic
// form. The syntax and the per-op forms are in docs/formats/stablehlo-text.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ir/attribute.h"
#include "ir/module.h"
#include "ir/type.h"

namespace kiln::ir {

struct PrintOptions {
  // Print every op as `"dialect.op"(%operands) <{props}> ({regions}) {attrs} : type`,
  // with values numbered uniquely across the module, as mlir-opt
  // --mlir-print-op-generic does.
  bool generic = false;
  // Print `loc(...)` after every op and block argument, as `#loc` aliases
  // defined after the module.
  bool locations = false;
};

// The text of a module. Nesting is walked with an explicit stack, so any
// depth prints.
std::string PrintModule(const Module& module, const PrintOptions& options = {});

// MLIR's spelling of a type ("tensor<2x?xf32>"), an attribute
// ("dense<1.000000e+00> : tensor<f32>", "array<i64: 1, 2>") and a location
// ("loc(\"f.py\":3:7)"), for messages and tests.
std::string PrintType(const Type& type);
std::string PrintAttribute(const Attribute& attribute);
std::string PrintLocation(const Location& location);
// A tensor value as the StableHLO interpreter prints it (its Tensor::print):
// `tensor<2x2xi8> {` then nested lists a line each, indented two spaces per
// level, complex elements as `[re, im]`, then `}`; a 0-d tensor on one line
// (`tensor<ui8> {1}`). `data` holds the elements row-major, Kiln's storage.
std::string PrintInterpreterTensor(const Type& type, std::span<const uint8_t> data);

}  // namespace kiln::ir

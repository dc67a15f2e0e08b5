// Internal to the VHLO reader: turns a versioned VHLO op into the StableHLO
// (or func) op upstream's deserializer produces: the newest op version with
// its defaults filled (VhloToVersion upgrades), then upstream's
// VhloLegalizeToStablehlo rules: default attributes dropped, flattened
// fields regrouped into StableHLO structs, tensors of dimensions turned into
// dense i64 arrays, strings naming functions into symbol references.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/vhlo/op_table.h"
#include "ir/attribute.h"

namespace kiln::frontend::vhlo {

struct NormalizedOp {
  std::string name;                            // "stablehlo.dot_general", "func.func"
  std::vector<ir::NamedAttribute> attributes;  // StableHLO form, any order
};

// `inherent` holds the op's inherent attributes by name (decoded as
// vhlo_codec.cc does; absent ones are treated as their newest-version
// default); `parent_is_func` says whether the op sits directly in a
// vhlo.func_v1 (a return there becomes func.return). Errors name `where`.
StatusOr<NormalizedOp> NormalizeVhloOp(const VhloOpInfo& info,
                                       std::vector<ir::NamedAttribute> inherent,
                                       bool parent_is_func, std::string_view where);

}  // namespace kiln::frontend::vhlo

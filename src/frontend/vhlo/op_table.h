// The schema of every VHLO op Kiln reads (op_table.def): its inherent
// attributes, in the order bytecode properties store them, and the VHLO
// versions it exists in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/vhlo/reader.h"

namespace kiln::frontend::vhlo {

struct VhloOpInfo {
  std::string_view mnemonic;  // "dot_general"
  int version = 0;            // 2 for dot_general_v2
  VhloVersion first;          // first VHLO version with this op version
  VhloVersion last;           // last one (kNewestVhloVersion if still current)
  // Inherent attribute names sorted by name: the properties order (MLIR's
  // ODS sorts an op's attributes by name before encoding them).
  std::vector<std::string_view> attributes;
  bool newest = false;  // no later version of this mnemonic exists
};

// The op called `name` without its dialect prefix ("dot_general_v2"), or null.
const VhloOpInfo* FindVhloOp(std::string_view name);

// The versioned names Kiln knows for the mnemonic of `name` ("constant_v1"),
// comma-separated, for messages; "" if it knows none.
std::string KnownVersionsOf(std::string_view name);

// Splits "dot_general_v2" into {"dot_general", 2}; version 0 if malformed.
std::pair<std::string_view, int> SplitVersionedName(std::string_view name);

}  // namespace kiln::frontend::vhlo

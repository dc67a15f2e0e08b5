// Internal to the StableHLO bytecode reader: the decoders of the stablehlo
// and chlo dialects' own attribute and type encodings, for the shared
// attribute table (frontend/vhlo/attr_table.h).
#pragma once

#include "frontend/vhlo/attr_table.h"

namespace kiln::frontend::stablehlo {

vhlo::Decoded<vhlo::AttrEntry> DecodeStablehloAttribute(vhlo::EntryDecoder& decoder);
vhlo::Decoded<ir::Type> DecodeStablehloType(vhlo::EntryDecoder& decoder);
vhlo::Decoded<vhlo::AttrEntry> DecodeChloAttribute(vhlo::EntryDecoder& decoder);

}  // namespace kiln::frontend::stablehlo

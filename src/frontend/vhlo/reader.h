// Reads a StableHLO portable artifact (MLIR bytecode of the VHLO dialect)
// into Kiln IR, converting every versioned `vhlo.*_vN` op to the `stablehlo.*`
// op of the newest form as upstream's VHLO->StableHLO legalization does.
// docs/formats/vhlo.md describes the encodings and the normalization rules.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "frontend/bytecode/file.h"
#include "ir/module.h"

namespace kiln::frontend::vhlo {

// A VHLO dialect version, "major.minor.patch".
struct VhloVersion {
  int64_t major = 0;
  int64_t minor = 0;
  int64_t patch = 0;

  friend auto operator<=>(const VhloVersion&, const VhloVersion&) = default;
  std::string ToString() const;
};

// The newest VHLO version Kiln reads; the plugin reports it as
// `stablehlo_current_version`, so frameworks serialize for it.
inline constexpr VhloVersion kNewestVhloVersion{1, 22, 0};
// The oldest version StableHLO ever wrote (its compatibility floor).
inline constexpr VhloVersion kOldestVhloVersion{0, 9, 0};

// "1.2.3" -> {1, 2, 3}; nullopt for anything else.
std::optional<VhloVersion> ParseVhloVersion(std::string_view text);
// The VHLO version in a producer string "StableHLO_v1.2.3"; nullopt if the
// producer is not StableHLO's.
std::optional<VhloVersion> VhloVersionFromProducer(std::string_view producer);

// What `kiln inspect` shows about an artifact (or any MLIR bytecode) without
// converting it.
struct ArtifactInfo {
  std::string producer;                     // e.g. "StableHLO_v1.22.0"
  uint64_t bytecode_version = 0;            // MLIR bytecode version, 0..6
  std::optional<VhloVersion> vhlo_version;  // from the producer
  // The dialects the file names, in its order ("builtin", "vhlo", ...): a
  // portable artifact names vhlo, bytecode of the StableHLO dialect does not.
  std::vector<std::string> dialects;
  // Full op names as stored ("vhlo.add_v1", "sdy.mesh") and their counts,
  // sorted by name.
  std::vector<std::pair<std::string, uint64_t>> op_histogram;
};

// Reads the container and summarizes it. INVALID_ARGUMENT for malformed bytes.
StatusOr<ArtifactInfo> InspectPortableArtifact(std::span<const uint8_t> bytes);

// Reads and converts a whole artifact. Errors:
//  - INVALID_ARGUMENT: malformed input (with the byte offset and what was
//    expected there), or a VHLO version newer than kNewestVhloVersion;
//  - UNIMPLEMENTED: a VHLO op or encoding Kiln does not know (naming it).
// Work and memory are bounded by the size of `bytes`; nesting uses no native
// stack. The module owns all its data; `bytes` may be freed afterwards.
StatusOr<ir::Module> ReadPortableArtifact(std::span<const uint8_t> bytes);

// The same conversion for a File already read from `bytes` (which the File
// borrows; used for byte offsets in messages).
StatusOr<ir::Module> ConvertFile(const bytecode::File& file, std::span<const uint8_t> bytes);

}  // namespace kiln::frontend::vhlo

#include "frontend/program.h"

#include <string_view>

#include "frontend/bytecode/file.h"
#include "frontend/text/parser.h"
#include "frontend/vhlo/reader.h"
#include "ir/verifier.h"

namespace kiln::frontend {

ProgramFormat DetectFormat(std::span<const uint8_t> bytes) {
  if (bytecode::IsBytecode(bytes)) return ProgramFormat::kPortableArtifact;
  // "ML\xEF" starts no text program (0xEF is not a character MLIR's syntax
  // allows there): a damaged or truncated magic gets the bytecode reader's
  // message, not the text parser's.
  if (bytes.size() >= 3 && bytes[0] == 'M' && bytes[1] == 'L' && bytes[2] == 0xEF) {
    return ProgramFormat::kPortableArtifact;
  }
  return ProgramFormat::kText;
}

StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes) {
  if (DetectFormat(bytes) == ProgramFormat::kPortableArtifact) {
    return vhlo::ReadPortableArtifact(bytes);
  }
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return text::ParseModule(text);
}

StatusOr<ir::Module> LoadProgram(std::span<const uint8_t> bytes, std::string_view format) {
  if (format == "hlo" || format == "hlo_with_config") {
    return Unimplemented("program format \"", format,
                         "\" (a serialized HloModuleProto) is not read by Kiln yet; it reads "
                         "format \"mlir\" (StableHLO portable artifacts and StableHLO text)");
  }
  if (format != "mlir") {
    return InvalidArgument("unknown program format \"", format,
                           "\"; expected \"mlir\" (a StableHLO portable artifact or "
                           "StableHLO text)");
  }
  KILN_ASSIGN_OR_RETURN(ir::Module module, ReadProgram(bytes));
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  return module;
}

}  // namespace kiln::frontend

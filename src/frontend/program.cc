#include "frontend/program.h"

#include <algorithm>
#include <string_view>

#include "frontend/bytecode/file.h"
#include "frontend/hlo/hlo_reader.h"
#include "frontend/stablehlo/reader.h"
#include "frontend/text/parser.h"
#include "frontend/vhlo/reader.h"
#include "ir/verifier.h"

namespace kiln::frontend {

ProgramFormat DetectFormat(std::span<const uint8_t> bytes) {
  if (bytecode::IsBytecode(bytes)) return ProgramFormat::kBytecode;
  // "ML\xEF" starts no text program (0xEF is not a character MLIR's syntax
  // allows there): a damaged or truncated magic gets the bytecode reader's
  // message, not the text parser's.
  if (bytes.size() >= 3 && bytes[0] == 'M' && bytes[1] == 'L' && bytes[2] == 0xEF) {
    return ProgramFormat::kBytecode;
  }
  // HloModuleProto's fields 1-3 (name, entry name, computations) are
  // length-delimited: tags 0x0A, 0x12, 0x1A. 0x0A is also a newline, so a
  // control character other than tab, newline or carriage return must
  // follow; StableHLO text holds none.
  if (!bytes.empty() && (bytes[0] == 0x0A || bytes[0] == 0x12 || bytes[0] == 0x1A)) {
    const size_t scan = std::min<size_t>(bytes.size(), 4096);
    for (size_t i = 0; i < scan; ++i) {
      const uint8_t byte = bytes[i];
      if (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') {
        return ProgramFormat::kHloProto;
      }
    }
  }
  return ProgramFormat::kText;
}

StatusOr<ir::Module> ReadBytecode(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(bytecode::File file, bytecode::ReadFile(bytes));
  const bool has_vhlo = std::any_of(file.dialects.begin(), file.dialects.end(),
                                    [](const bytecode::File::Dialect& dialect) {
                                      return dialect.name == "vhlo";
                                    });
  return has_vhlo ? vhlo::ConvertFile(file, bytes) : stablehlo::ConvertFile(file, bytes);
}

StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes) {
  switch (DetectFormat(bytes)) {
    case ProgramFormat::kBytecode: return ReadBytecode(bytes);
    case ProgramFormat::kHloProto: return hlo::ReadHloModule(bytes);
    case ProgramFormat::kText: break;
  }
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return text::ParseModule(text);
}

StatusOr<ir::Module> LoadProgram(std::span<const uint8_t> bytes, std::string_view format) {
  std::span<const uint8_t> hlo_bytes = bytes;
  if (format == "hlo_with_config") {
    KILN_ASSIGN_OR_RETURN(hlo_bytes, hlo::ModuleOfModuleWithConfig(bytes));
  }
  if (format == "hlo" || format == "hlo_with_config") {
    KILN_ASSIGN_OR_RETURN(ir::Module module, hlo::ReadHloModule(hlo_bytes));
    KILN_RETURN_IF_ERROR(ir::Verify(module));
    return module;
  }
  if (format != "mlir") {
    return InvalidArgument("unknown program format \"", format,
                           "\"; expected \"mlir\" (MLIR bytecode or StableHLO text), \"hlo\" "
                           "(a serialized HloModuleProto) or \"hlo_with_config\"");
  }
  KILN_ASSIGN_OR_RETURN(ir::Module module, ReadProgram(bytes));
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  return module;
}

}  // namespace kiln::frontend

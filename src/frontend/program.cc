#include "frontend/program.h"

#include <string_view>

#include "frontend/bytecode/file.h"
#include "frontend/text/parser.h"
#include "frontend/vhlo/reader.h"

namespace kiln::frontend {

ProgramFormat DetectFormat(std::span<const uint8_t> bytes) {
  return bytecode::IsBytecode(bytes) ? ProgramFormat::kPortableArtifact : ProgramFormat::kText;
}

StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes) {
  if (DetectFormat(bytes) == ProgramFormat::kPortableArtifact) {
    return vhlo::ReadPortableArtifact(bytes);
  }
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return text::ParseModule(text);
}

}  // namespace kiln::frontend

#include "tests/source_paths.h"

namespace kiln::testing {

std::filesystem::path SourceDir() { return KILN_SOURCE_DIR; }

std::filesystem::path CorpusDir() { return std::filesystem::path(KILN_SOURCE_DIR) / ".." / "shared" / "corpus"; }

}  // namespace kiln::testing

#include "tests/source_paths.h"

#include <fstream>
#include <iterator>

namespace kiln::testing {

std::filesystem::path SourceDir() { return KILN_SOURCE_DIR; }

std::filesystem::path CorpusDir() {
  return std::filesystem::path(KILN_SOURCE_DIR) / ".." / "shared" / "corpus";
}

std::vector<uint8_t> ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kiln::testing

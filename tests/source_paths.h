// Where the unit tests find their data (the checkout's root and the shared
// corpus beside it) and how they read it. Only source_paths.cc is compiled
// with these absolute paths, so every other test file compiles to the same
// object in any clone and ccache shares it (docs/decisions.md, "Compiler
// cache"); __FILE__ is no help, since ccache makes it relative to the build
// folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

// The folder holding Kiln's top-level CMakeLists.txt.
std::filesystem::path SourceDir();
// ../shared/corpus beside the checkout (absent from a plain clone: tests
// using it skip, saying so).
std::filesystem::path CorpusDir();

// A data file's bytes or text; empty if it cannot be read.
std::vector<uint8_t> ReadBytes(const std::filesystem::path& path);
std::string ReadText(const std::filesystem::path& path);

}  // namespace kiln::testing

// Where the unit tests find their data: the checkout's root and the shared
// corpus beside it. Only source_paths.cc is compiled with these absolute
// paths, so every other test file compiles to the same object in any clone
// and ccache shares it (docs/decisions.md, "Compiler cache"); __FILE__ is no
// help, since ccache makes it relative to the build folder.
#pragma once

#include <filesystem>

namespace kiln::testing {

// The folder holding Kiln's top-level CMakeLists.txt.
std::filesystem::path SourceDir();
// ../shared/corpus beside the checkout (absent from a plain clone: tests
// using it skip, saying so).
std::filesystem::path CorpusDir();

}  // namespace kiln::testing

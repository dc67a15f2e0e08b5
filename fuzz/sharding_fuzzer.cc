// libFuzzer target for the Shardy attribute reader (src/compiler/sharding.h).
// The input's first line is read as a mesh (`#sdy.mesh<...>`) named "mesh",
// the rest as a sharding, a per-value list and manual axes. Any input must
// give a value or an INVALID_ARGUMENT, never a crash, an exception or a hang.
// Built by `make test-fuzz` (fuzz/CMakeLists.txt), seeded from
// fuzz/corpus/sharding by fuzz/run_fuzzers.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compiler/sharding.h"

namespace {

template <typename T>
void CheckFailure(const kiln::StatusOr<T>& result) {
  if (!result.ok() && result.status().code() != kiln::StatusCode::kInvalidArgument) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t newline = text.find('\n');
  std::string_view mesh_text = text.substr(0, newline);
  std::string_view rest = newline == std::string_view::npos ? text : text.substr(newline + 1);
  kiln::compiler::MeshTable meshes;
  kiln::StatusOr<kiln::compiler::Mesh> mesh = kiln::compiler::ParseMesh(mesh_text);
  CheckFailure(mesh);
  if (mesh.ok()) meshes.emplace("mesh", *mesh);
  CheckFailure(kiln::compiler::ParseSharding(rest, meshes));
  CheckFailure(kiln::compiler::ParseShardingPerValue(rest, meshes));
  CheckFailure(kiln::compiler::ParseManualAxes(rest));
  return 0;
}

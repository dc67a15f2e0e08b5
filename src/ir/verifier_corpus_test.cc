// The verifier on real programs: every StableHLO text program JAX wrote
// (tests/data/text), every portable artifact JAX exported
// (tests/data/artifacts) and upstream's VHLO test artifacts
// (../shared/corpus/vhlo) must verify, so the verifier never rejects what
// upstream's accepts. Files the readers cannot read yet are skipped, saying
// so: reading is the readers' tests' business. A few broken programs written
// as text check the messages users will see.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frontend/text/parser.h"
#include "frontend/vhlo/reader.h"
#include "ir/verifier.h"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

std::vector<fs::path> FilesIn(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() && name.ends_with(suffix)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Ops programs use that op_names.def does not list yet: the verifier
// rejects them as unknown, rightly, so such programs are reported, not failed.
bool IsUnlistedOp(const Status& status) {
  const std::string& message = status.message();
  return message.find("unknown op 'chlo.") != std::string::npos ||
         message.find("unknown op 'stablehlo.collective_reduce'") != std::string::npos;
}

// Upstream's VHLO tests compare f32 values with compare_type SIGNED: its
// verifier leaves compare C3 unchecked, Kiln's does not. Dropping the
// attribute lets the rest of those modules be checked.
void DropCompareTypes(Module& module) {
  std::vector<Operation*> pending = {&module.op()};
  while (!pending.empty()) {
    Operation* op = pending.back();
    pending.pop_back();
    if (op->code() == OpCode::kCompare) op->RemoveAttr("compare_type");
    for (size_t r = 0; r < op->num_regions(); ++r) {
      for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
        for (const auto& nested : op->region(r).block(b).operations()) {
          pending.push_back(nested.get());
        }
      }
    }
  }
}

// Verifies every module `read` gives for `files`; unreadable files and
// unlisted ops are counted, not failed.
template <typename Reader>
void ExpectAllVerify(const std::vector<fs::path>& files, Reader read,
                     bool drop_compare_types = false) {
  int verified = 0;
  std::vector<std::string> skipped;
  for (const fs::path& file : files) {
    const std::string bytes = ReadFile(file);
    StatusOr<Module> module = read(bytes);
    if (!module.ok()) {
      skipped.push_back(StrCat(file.filename().string(), " (unreadable): ",
                               module.status().message()));
      continue;
    }
    if (drop_compare_types) DropCompareTypes(*module);
    Status status = Verify(*module);
    if (IsUnlistedOp(status)) {
      skipped.push_back(StrCat(file.filename().string(), ": ", status.message()));
      continue;
    }
    EXPECT_TRUE(status.ok()) << file.filename().string() << ": " << status.ToString();
    ++verified;
  }
  std::printf("[ verifier ] %d of %zu programs verified\n", verified, files.size());
  for (const std::string& reason : skipped) std::printf("  skipped %s\n", reason.c_str());
}

TEST(VerifierCorpusTest, JaxTextProgramsVerify) {
  std::vector<fs::path> files = FilesIn(kRepo / "tests/data/text", ".mlir");
  if (files.empty()) GTEST_SKIP() << "no tests/data/text";
  ExpectAllVerify(files, [](const std::string& text) { return frontend::text::ParseModule(text); });
}

StatusOr<Module> ReadArtifact(const std::string& bytes) {
  return frontend::vhlo::ReadPortableArtifact(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

TEST(VerifierCorpusTest, JaxArtifactsVerify) {
  std::vector<fs::path> files = FilesIn(kRepo / "tests/data/artifacts", ".bc");
  if (files.empty()) GTEST_SKIP() << "no tests/data/artifacts";
  ExpectAllVerify(files, ReadArtifact);
}

TEST(VerifierCorpusTest, UpstreamVhloArtifactsVerify) {
#ifdef KILN_CORPUS_DIR
  std::vector<fs::path> files;
  for (const fs::path& file : FilesIn(fs::path(KILN_CORPUS_DIR) / "vhlo", ".bc")) {
    if (file.filename().string().starts_with("invalid")) continue;  // must not even read
    files.push_back(file);
  }
  if (files.empty()) GTEST_SKIP() << "no ../shared/corpus/vhlo";
  ExpectAllVerify(files, ReadArtifact, /*drop_compare_types=*/true);
#else
  GTEST_SKIP() << "KILN_CORPUS_DIR is not set";
#endif
}

// Programs as StableHLO text, the form users see: each broken one fails
// citing the op's location, the constraint, and what was expected and found.
Status VerifyText(std::string_view text) {
  StatusOr<Module> module = frontend::text::ParseModule(text);
  if (!module.ok()) return module.status();
  return Verify(*module);
}

TEST(VerifierTextTest, ErrorsPointAtTheUsersSource) {
  EXPECT_EQ(VerifyText(R"(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
      %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
          : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32> loc("model.py":12:4)
      return %0 : tensor<2x5xf32>
    })")
                .message(),
            "model.py:12:4: stablehlo.dot_general (C10): lhs contracting dimension 1 has size 3 "
            "but rhs contracting dimension 0 has size 4");
}

TEST(VerifierTextTest, JaxStylePrograms) {
  // jnp.sum(x, axis=1) followed by a broadcast back, as jax.jit lowers it.
  EXPECT_TRUE(VerifyText(R"(
    func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1]
          : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
      %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
      %2 = stablehlo.divide %arg0, %1 : tensor<4x8xf32>
      return %2 : tensor<4x8xf32>
    })")
                  .ok());
  Status bad_broadcast = VerifyText(R"(
    func.func public @main(%arg0: tensor<4xf32>) -> tensor<4x8xf32> {
      %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    })");
  EXPECT_NE(bad_broadcast.message().find(
                "stablehlo.broadcast_in_dim (C5): operand dimension 0 has size 4, expected 1 "
                "or the size 8 of result dimension 1"),
            std::string::npos)
      << bad_broadcast.ToString();
  Status bad_while = VerifyText(R"(
    func.func public @main(%arg0: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.while(%iterArg = %arg0) : tensor<i32>
      cond {
        stablehlo.return %iterArg : tensor<i32>
      } do {
        stablehlo.return %iterArg : tensor<i32>
      }
      return %0 : tensor<i32>
    })");
  EXPECT_NE(bad_while.message().find("stablehlo.while (C1): cond must return one tensor<i1>, "
                                     "found (tensor<i32>)"),
            std::string::npos)
      << bad_while.ToString();
}

}  // namespace
}  // namespace kiln::ir

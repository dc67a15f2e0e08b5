// The container reader on real StableHLO artifacts (../shared/corpus/vhlo),
// on every truncation of them, on random byte flips, and on the fuzzer's
// regression inputs (fuzz/corpus/bytecode).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "frontend/bytecode/encoding_reader.h"
#include "frontend/bytecode/file.h"
#include "tests/source_paths.h"

namespace kiln::frontend::bytecode {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpusDir = testing::CorpusDir() / "vhlo";

#define KILN_REQUIRE_CORPUS()                                                                \
  if (kCorpusDir.empty() || !fs::is_directory(kCorpusDir)) {                                 \
    GTEST_SKIP() << "no test corpus at '" << kCorpusDir.string()                             \
                 << "' (../shared/corpus/vhlo beside the checkout; a plain clone has none)"; \
  }

using testing::ReadBytes;

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(kCorpusDir)) {
    if (entry.path().extension() == ".bc") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What ReadFile promises: every stored index is inside its table, every value
// id below num_value_ids, every op reached exactly once from the top level.
void ExpectConsistent(const File& file) {
  std::vector<int> parents(file.operations.size(), 0);
  for (uint32_t op : file.top_level) {
    ASSERT_LT(op, file.operations.size());
    ++parents[op];
  }
  for (const File::OpName& name : file.op_names) ASSERT_LT(name.dialect, file.dialects.size());
  for (const auto* table : {&file.attributes, &file.types}) {
    for (const File::AttrTypeEntry& entry : *table) ASSERT_LT(entry.dialect, file.dialects.size());
  }
  for (const File::Operation& op : file.operations) {
    ASSERT_LT(op.name, file.op_names.size());
    ASSERT_LT(op.location, file.attributes.size());
    if (op.attr_dict) {
      ASSERT_LT(*op.attr_dict, file.attributes.size());
    }
    if (op.properties) {
      ASSERT_LT(*op.properties, file.properties.size());
    }
    if (op.properties_attr) {
      ASSERT_LT(*op.properties_attr, file.attributes.size());
    }
    ASSERT_EQ(op.result_ids.size(), op.result_types.size());
    for (uint64_t type : op.result_types) ASSERT_LT(type, file.types.size());
    for (uint64_t id : op.result_ids) ASSERT_LT(id, file.num_value_ids);
    for (uint64_t id : op.operand_ids) ASSERT_LT(id, file.num_value_ids);
    for (const File::Region& region : op.regions) {
      for (const File::Block& block : region.blocks) {
        for (const File::Value& argument : block.arguments) {
          ASSERT_LT(argument.id, file.num_value_ids);
          ASSERT_LT(argument.type, file.types.size());
          if (argument.location) {
            ASSERT_LT(*argument.location, file.attributes.size());
          }
        }
        for (uint32_t child : block.ops) {
          ASSERT_LT(child, file.operations.size());
          ++parents[child];
          for (uint64_t successor : file.operations[child].successors) {
            ASSERT_LT(successor, region.blocks.size());
          }
        }
      }
    }
  }
  for (int count : parents) ASSERT_EQ(count, 1);
  ASSERT_LE(file.num_value_ids, uint64_t{1} << 40);
}

// The bytecode version each StableHLO version writes (stablehlo/dialect/Version.cpp).
uint64_t ExpectedBytecodeVersion(const std::string& name) {
  if (name.find(".0_9_0.") != std::string::npos) return 0;
  if (name.find(".0_10_0.") != std::string::npos || name.find(".0_11_0.") != std::string::npos) {
    return 1;
  }
  if (name.find(".0_12_0.") != std::string::npos || name.find(".0_13_0.") != std::string::npos) {
    return 3;
  }
  if (name.find(".0_14_0.") != std::string::npos) return 4;
  return 6;
}

TEST(BytecodeCorpusTest, EveryArtifactReads) {
  KILN_REQUIRE_CORPUS();
  const std::vector<fs::path> files = CorpusFiles();
  ASSERT_FALSE(files.empty());
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const std::vector<uint8_t> bytes = ReadBytes(path);
    ASSERT_TRUE(IsBytecode(bytes));
    StatusOr<File> file = ReadFile(bytes);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ExpectConsistent(*file);
    EXPECT_EQ(file->version, ExpectedBytecodeVersion(path.filename().string()));
    EXPECT_EQ(file->producer.rfind("StableHLO_v", 0), 0u) << file->producer;
    std::vector<std::string> dialects;
    for (const File::Dialect& dialect : file->dialects) dialects.push_back(dialect.name);
    EXPECT_NE(std::find(dialects.begin(), dialects.end(), "vhlo"), dialects.end());
    EXPECT_NE(std::find(dialects.begin(), dialects.end(), "builtin"), dialects.end());
    ASSERT_EQ(file->top_level.size(), 1u);
    EXPECT_EQ(OpFullName(*file, file->operations[file->top_level[0]]), "builtin.module");
    EXPECT_GE(file->operations.size(), 4u);
    EXPECT_GT(file->attributes.size(), 0u);
    EXPECT_GT(file->types.size(), 0u);
    EXPECT_EQ(file->properties.empty(), file->version < 5);
    EXPECT_FALSE(DumpFile(*file).empty());
  }
}

TEST(BytecodeCorpusTest, TheFutureArtifactIsAContainerLevelSuccess) {
  KILN_REQUIRE_CORPUS();
  // Its problem is an op the VHLO layer must reject (constant_v99), not the container.
  StatusOr<File> file = ReadFile(ReadBytes(kCorpusDir / "invalid_vhlo_future.mlir.bc"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->producer, "StableHLO_v2.0.0");
  bool found = false;
  for (const File::Operation& op : file->operations) {
    found |= OpFullName(*file, op) == "vhlo.constant_v99";
  }
  EXPECT_TRUE(found) << DumpFile(*file);
}

TEST(BytecodeCorpusTest, ALargeArtifactInDetail) {
  KILN_REQUIRE_CORPUS();
  StatusOr<File> file = ReadFile(ReadBytes(kCorpusDir /
                                           "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  // Counts checked against jaxlib's own reader (docs/formats/mlir-bytecode.md).
  EXPECT_EQ(file->operations.size(), 828u);
  EXPECT_EQ(file->num_value_ids, 769u);
  const std::string dump = DumpFile(*file);
  // A case_v1 region (not isolated) names the enclosing function's argument.
  EXPECT_NE(dump.find("^0(%271: !4, %272: !0):\n"
                      "            %273 = vhlo.case_v1(%271) : !0 loc #0\n"
                      "              region 0:\n"
                      "                ^0:\n"
                      "                  vhlo.return_v1(%272) loc #0\n"),
            std::string::npos)
      << dump;
}

// Every proper prefix of a file is an INVALID_ARGUMENT naming a byte offset.
void ExpectTruncationsFail(const std::vector<uint8_t>& bytes, size_t stride) {
  for (size_t size = 0; size < bytes.size(); size += stride) {
    StatusOr<File> file = ReadFile(std::span<const uint8_t>(bytes.data(), size));
    ASSERT_FALSE(file.ok()) << "a prefix of " << size << " bytes read without error";
    ASSERT_EQ(file.status().code(), StatusCode::kInvalidArgument);
    ASSERT_NE(file.status().message().find("byte "), std::string::npos) << file.status().message();
  }
}

TEST(BytecodeCorpusTest, EveryTruncationIsAnError) {
  KILN_REQUIRE_CORPUS();
  ExpectTruncationsFail(ReadBytes(kCorpusDir / "vhlo_emit_version_api.1_1_0.mlir.bc"), 1);
  ExpectTruncationsFail(ReadBytes(kCorpusDir / "invalid_vhlo_future.mlir.bc"), 1);
  // Larger files, one per container version, at a stride to keep the test quick.
  for (const char* name :
       {"stablehlo_legalize_to_vhlo.0_9_0.mlir.bc", "stablehlo_legalize_to_vhlo.0_10_0.mlir.bc",
        "stablehlo_legalize_to_vhlo.0_12_0.mlir.bc", "stablehlo_legalize_to_vhlo.0_14_0.mlir.bc",
        "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    SCOPED_TRACE(name);
    ExpectTruncationsFail(ReadBytes(kCorpusDir / name), 7);
  }
}

// Cuts one section short at a time (its length rewritten to match), so each
// section reader meets the end of its data at every point.
void ExpectSectionTruncationsFail(const std::vector<uint8_t>& bytes, size_t stride) {
  EncodingReader header(bytes, 0, "file header");
  ASSERT_TRUE(header.ReadBytes(4, "magic").ok());
  ASSERT_TRUE(header.ReadVarInt("version").ok());
  ASSERT_TRUE(header.ReadNulTerminatedString("producer").ok());
  const size_t sections_start = header.offset();
  EncodingReader list(std::span<const uint8_t>(bytes).subspan(sections_start), sections_start,
                      "section list");
  std::vector<RawSection> sections;
  while (!list.empty()) {
    StatusOr<RawSection> section = list.ReadSection("a section");
    ASSERT_TRUE(section.ok()) << section.status().ToString();
    ASSERT_EQ(bytes[section->header_offset] & 0x80, 0) << "aligned sections are not expected";
    sections.push_back(*section);
  }
  int tried = 0;
  for (size_t cut = 0; cut < sections.size(); ++cut) {
    for (size_t size = 0; size < sections[cut].data.size(); size += stride) {
      std::vector<uint8_t> file(bytes.begin(), bytes.begin() + sections_start);
      for (size_t i = 0; i < sections.size(); ++i) {
        const size_t length = i == cut ? size : sections[i].data.size();
        file.push_back(sections[i].id);
        // The section length as a prefix varint (lengths here stay below 2^56).
        int count = 1;
        while (count < 8 && uint64_t{length} >> (7 * count) != 0) ++count;
        const uint64_t encoded = (uint64_t{length} << count) | (uint64_t{1} << (count - 1));
        for (int b = 0; b < count; ++b) file.push_back(static_cast<uint8_t>(encoded >> (8 * b)));
        file.insert(file.end(), sections[i].data.begin(), sections[i].data.begin() + length);
      }
      StatusOr<File> read = ReadFile(file);
      ++tried;
      ASSERT_FALSE(read.ok()) << SectionName(sections[cut].id) << " section cut to " << size
                              << " bytes read without error";
      ASSERT_EQ(read.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_GT(tried, 0);
}

TEST(BytecodeCorpusTest, EverySectionTruncationIsAnError) {
  KILN_REQUIRE_CORPUS();
  ExpectSectionTruncationsFail(ReadBytes(kCorpusDir / "vhlo_emit_version_api.1_1_0.mlir.bc"), 1);
  for (const char* name :
       {"stablehlo_legalize_to_vhlo.0_9_0.mlir.bc", "stablehlo_legalize_to_vhlo.0_12_0.mlir.bc",
        "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    SCOPED_TRACE(name);
    ExpectSectionTruncationsFail(ReadBytes(kCorpusDir / name), 29);
  }
}

TEST(BytecodeCorpusTest, RandomByteFlipsNeverCrash) {
  KILN_REQUIRE_CORPUS();
  std::mt19937_64 random(20260813);
  const std::vector<fs::path> files = CorpusFiles();
  int accepted = 0;
  constexpr int kMutations = 600;
  for (int mutation = 0; mutation < kMutations; ++mutation) {
    std::vector<uint8_t> bytes = ReadBytes(files[random() % files.size()]);
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int flip = 0; flip < flips; ++flip) {
      // Half of the flips land in the first 64 bytes: the header and the
      // first section headers, where a flip changes the most.
      const size_t limit = (random() & 1) ? std::min<size_t>(bytes.size(), 64) : bytes.size();
      bytes[random() % limit] ^= static_cast<uint8_t>(1 + random() % 255);
    }
    StatusOr<File> file = ReadFile(bytes);
    if (file.ok()) {
      ++accepted;
      ExpectConsistent(*file);
      (void)DumpFile(*file);
    } else {
      ASSERT_EQ(file.status().code(), StatusCode::kInvalidArgument) << file.status().ToString();
    }
  }
  // Flips inside attribute bytes or string contents leave the container valid.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kMutations);
}

TEST(BytecodeCorpusTest, FuzzerRegressionInputs) {
  const fs::path dir = testing::SourceDir() / "fuzz" / "corpus" / "bytecode";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no fuzzer regression inputs at " << dir;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".md") continue;
    SCOPED_TRACE(entry.path().filename().string());
    StatusOr<File> file = ReadFile(ReadBytes(entry.path()));
    if (file.ok()) {
      ExpectConsistent(*file);
      (void)DumpFile(*file);
    } else {
      EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace kiln::frontend::bytecode

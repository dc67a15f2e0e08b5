#include "frontend/bytecode/encoding_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::frontend::bytecode {
namespace {

// Prefix-varint encoding, written independently of the reader.
std::vector<uint8_t> EncodeVarInt(uint64_t value) {
  std::vector<uint8_t> out;
  if (value >> 56 != 0) {
    out.push_back(0);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
    return out;
  }
  int bytes = 1;
  while (bytes < 8 && value >> (7 * bytes) != 0) ++bytes;
  const uint64_t encoded = (value << bytes) | (uint64_t{1} << (bytes - 1));
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(encoded >> (8 * i)));
  return out;
}

TEST(EncodingReaderTest, VarIntsOfEveryLength) {
  const uint64_t values[] = {0,
                             1,
                             127,
                             128,
                             (uint64_t{1} << 14) - 1,
                             uint64_t{1} << 14,
                             (uint64_t{1} << 49) + 5,
                             (uint64_t{1} << 56) - 1,
                             uint64_t{1} << 56,
                             std::numeric_limits<uint64_t>::max()};
  for (uint64_t value : values) {
    std::vector<uint8_t> bytes = EncodeVarInt(value);
    EncodingReader reader(bytes, 0, "test");
    StatusOr<uint64_t> read = reader.ReadVarInt("value");
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*read, value);
    EXPECT_TRUE(reader.empty()) << value;
  }
}

TEST(EncodingReaderTest, KnownEncodings) {
  // 0x0D -> 6 (a bytecode version); 0x02 0x01 -> 64 (two bytes: 0b10 marker).
  const std::vector<uint8_t> bytes = {0x0D, 0x02, 0x01};
  EncodingReader reader(bytes, 0, "test");
  EXPECT_EQ(*reader.ReadVarInt("a"), 6u);
  EXPECT_EQ(*reader.ReadVarInt("b"), 64u);
}

TEST(EncodingReaderTest, SignedAndFlagged) {
  std::vector<uint8_t> bytes;
  for (uint64_t zigzag : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, ~uint64_t{0}}) {
    std::vector<uint8_t> encoded = EncodeVarInt(zigzag);
    bytes.insert(bytes.end(), encoded.begin(), encoded.end());
  }
  std::vector<uint8_t> flagged = EncodeVarInt((41 << 1) | 1);
  bytes.insert(bytes.end(), flagged.begin(), flagged.end());
  EncodingReader reader(bytes, 0, "test");
  EXPECT_EQ(*reader.ReadSignedVarInt("s"), 0);
  EXPECT_EQ(*reader.ReadSignedVarInt("s"), -1);
  EXPECT_EQ(*reader.ReadSignedVarInt("s"), 1);
  EXPECT_EQ(*reader.ReadSignedVarInt("s"), -2);
  EXPECT_EQ(*reader.ReadSignedVarInt("s"), std::numeric_limits<int64_t>::min());
  StatusOr<EncodingReader::FlaggedVarInt> read = reader.ReadVarIntWithFlag("f");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->value, 41u);
  EXPECT_TRUE(read->flag);
}

TEST(EncodingReaderTest, ErrorsNameTheAbsoluteOffsetAndContext) {
  const std::vector<uint8_t> bytes = {0x04, 0x01};  // a 3-byte varint cut after 2 bytes
  EncodingReader reader(bytes, 1000, "section IR");
  StatusOr<uint64_t> read = reader.ReadVarInt("operand count");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read.status().message(),
            "byte 1000: expected a 3-byte varint (operand count), found end of input "
            "(section IR)");
}

TEST(EncodingReaderTest, CountsAreCheckedAgainstWhatRemains) {
  std::vector<uint8_t> bytes = EncodeVarInt(1000);
  bytes.resize(bytes.size() + 10, 0);
  EncodingReader reader(bytes, 0, "test");
  StatusOr<uint64_t> count = reader.ReadCount("the result count");
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("only 10 bytes remain"), std::string::npos)
      << count.status().message();
}

TEST(EncodingReaderTest, IndicesAreCheckedAgainstTheirTable) {
  const std::vector<uint8_t> bytes = EncodeVarInt(12);
  EncodingReader reader(bytes, 7, "test");
  StatusOr<uint64_t> index = reader.ReadIndex("a string index", 12);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().message(), "byte 7: expected a string index below 12, found 12 (test)");
}

TEST(EncodingReaderTest, NulTerminatedStrings) {
  const std::vector<uint8_t> bytes = {'a', 'b', 0, 'c'};
  EncodingReader reader(bytes, 0, "test");
  EXPECT_EQ(*reader.ReadNulTerminatedString("s"), "ab");
  EXPECT_FALSE(reader.ReadNulTerminatedString("s").ok());
}

TEST(EncodingReaderTest, AlignmentIsRelativeToTheFileStart) {
  // The range starts at file offset 5: aligning to 8 skips 3 padding bytes.
  const std::vector<uint8_t> bytes = {0xCB, 0xCB, 0xCB, 0x2A};
  EncodingReader reader(bytes, 5, "test");
  ASSERT_TRUE(reader.AlignTo(8).ok());
  EXPECT_EQ(reader.offset(), 8u);
  EXPECT_EQ(*reader.ReadByte("b"), 0x2A);

  EncodingReader bad_padding(std::span<const uint8_t>(bytes).subspan(2), 6, "test");
  Status status = bad_padding.AlignTo(8);
  EXPECT_NE(status.message().find("expected alignment padding 0xCB, found 0x2A"), std::string::npos)
      << status.message();
  EncodingReader reader3(bytes, 0, "test");
  EXPECT_FALSE(reader3.AlignTo(3).ok());
  EXPECT_FALSE(reader3.AlignTo(0).ok());
}

TEST(EncodingReaderTest, Sections) {
  // An aligned string section (id 0 | 0x80), 1 content byte, alignment 4:
  // a 3-byte header, then one padding byte up to offset 4.
  const std::vector<uint8_t> bytes = {0x80, 0x03, 0x09, 0xCB, 0x55};
  EncodingReader reader(bytes, 0, "section list");
  StatusOr<RawSection> section = reader.ReadSection("a section");
  ASSERT_TRUE(section.ok()) << section.status().ToString();
  EXPECT_EQ(section->id, 0);
  EXPECT_EQ(section->header_offset, 0u);
  EXPECT_EQ(section->data_offset, 4u);
  ASSERT_EQ(section->data.size(), 1u);
  EXPECT_EQ(section->data[0], 0x55);

  const std::vector<uint8_t> unknown = {0x09, 0x01};
  EncodingReader unknown_reader(unknown, 0, "section list");
  EXPECT_FALSE(unknown_reader.ReadSection("a section").ok());
}

}  // namespace
}  // namespace kiln::frontend::bytecode

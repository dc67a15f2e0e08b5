// Every element type round-trips bit-exactly through BufferFromHostBuffer and
// ToHostBuffer. Sub-byte types travel one element per host byte, unpacked, as
// numpy and ml_dtypes hold them.
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

constexpr int64_t kRows = 4;
constexpr int64_t kColumns = 75;
constexpr size_t kCount = kRows * kColumns;

// Host bytes of kCount elements of `type`: for byte-sized types every byte
// value; for sub-byte types every valid value (signed ones sign-extended, as
// ml_dtypes stores them); for wider types pseudo-random bit patterns (NaN
// payloads and subnormals included: the copy must not touch them).
std::vector<uint8_t> SampleBytes(PJRT_Buffer_Type type) {
  size_t size = HostElementSize(type);
  int bits = ElementBits(type);
  std::vector<uint8_t> bytes(kCount * size);
  uint64_t state = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(type);
  for (size_t n = 0; n < kCount; ++n) {
    if (bits < 8) {
      uint8_t value = static_cast<uint8_t>(n % (1u << bits));
      if (IsSignedSubByteInteger(type) && (value & (1u << (bits - 1)))) {
        value = static_cast<uint8_t>(value | (0xFFu << bits));  // sign-extend
      }
      bytes[n] = value;
    } else if (size == 1) {
      bytes[n] = static_cast<uint8_t>(n);
    } else {
      for (size_t b = 0; b < size; ++b) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        bytes[n * size + b] = static_cast<uint8_t>(state >> 56);
      }
    }
  }
  return bytes;
}

class ElementTypeTest : public ::testing::TestWithParam<PJRT_Buffer_Type> {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    device_ = AddressableDevices(client_.get())[0];
  }

  // Transfers SampleBytes(type) with `semantics`; the buffer must be freed
  // before `host` when the semantics are zero-copy.
  BufferPtr Transfer(const std::vector<uint8_t>& host, PJRT_HostBufferSemantics semantics) {
    HostTransfer transfer;
    transfer.data = host.data();
    transfer.type = GetParam();
    transfer.dims = {kRows, kColumns};
    transfer.semantics = semantics;
    transfer.device = device_;
    BufferPtr buffer;
    Status status = BufferFromHost(client_.get(), transfer, &buffer);
    EXPECT_TRUE(IsOk(status)) << "BufferFromHostBuffer of " << TypeName(GetParam());
    return buffer;
  }

  ClientPtr client_;
  PJRT_Device* device_ = nullptr;
};

TEST_P(ElementTypeTest, RoundTripsBitExactly) {
  PJRT_Buffer_Type type = GetParam();
  std::vector<uint8_t> host = SampleBytes(type);
  for (PJRT_HostBufferSemantics semantics : {PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                                             PJRT_HostBufferSemantics_kImmutableZeroCopy}) {
    SCOPED_TRACE("semantics " + std::to_string(semantics));
    BufferPtr buffer = Transfer(host, semantics);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(ElementType(buffer.get()), type);
    EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{kRows, kColumns}));
    std::vector<uint8_t> back;
    ASSERT_TRUE(IsOk(ToHost(buffer.get(), &back)));
    ASSERT_EQ(back.size(), host.size()) << "host bytes of " << TypeName(type);
    size_t size = HostElementSize(type);
    for (size_t n = 0; n < kCount; ++n) {
      if (std::memcmp(&back[n * size], &host[n * size], size) != 0) {
        ADD_FAILURE() << TypeName(type) << " element " << n << " changed: byte 0 "
                      << int{host[n * size]} << " came back as " << int{back[n * size]};
        break;
      }
    }
  }
}

TEST_P(ElementTypeTest, OnDeviceSizeOfByteSizedTypes) {
  PJRT_Buffer_Type type = GetParam();
  if (ElementBits(type) < 8 && type != PJRT_Buffer_Type_PRED) {
    GTEST_SKIP() << "sub-byte storage on the device is the plugin's choice";
  }
  std::vector<uint8_t> host = SampleBytes(type);
  BufferPtr buffer = Transfer(host, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(OnDeviceSize(buffer.get()), host.size());
}

TEST_P(ElementTypeTest, ScalarRoundTrips) {
  PJRT_Buffer_Type type = GetParam();
  std::vector<uint8_t> host = SampleBytes(type);
  host.resize(HostElementSize(type));
  host[0] = static_cast<uint8_t>(ElementBits(type) < 8 ? 1 : 0x3C);
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.type = type;
  transfer.device = device_;
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer)));
  EXPECT_TRUE(Dimensions(buffer.get()).empty());
  std::vector<uint8_t> back;
  ASSERT_TRUE(IsOk(ToHost(buffer.get(), &back)));
  EXPECT_EQ(back, host);
}

// ------------------------------------------------------ Kiln's promises --

class KilnElementTypeTest : public ElementTypeTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    ElementTypeTest::SetUp();
  }
};

TEST_P(KilnElementTypeTest, TakesOneByteOrMorePerElement) {
  std::vector<uint8_t> host = SampleBytes(GetParam());
  BufferPtr buffer = Transfer(host, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(OnDeviceSize(buffer.get()), kCount * HostElementSize(GetParam()));
  auto query = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  query.src = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ToHostBuffer(&query));
  EventPtr event(query.event);
  EXPECT_EQ(query.dst_size, kCount * HostElementSize(GetParam()));
}

std::string TypeParamName(const ::testing::TestParamInfo<PJRT_Buffer_Type>& info) {
  return TypeName(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ElementTypeTest, ::testing::ValuesIn(AllElementTypes()),
                         TypeParamName);
INSTANTIATE_TEST_SUITE_P(AllTypes, KilnElementTypeTest, ::testing::ValuesIn(AllElementTypes()),
                         TypeParamName);

}  // namespace
}  // namespace conformance

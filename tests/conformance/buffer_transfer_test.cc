// Host ↔ device transfers: PJRT_Client_BufferFromHostBuffer's semantics and
// byte strides, and PJRT_Buffer_ToHostBuffer's sizes and host layouts.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

using std::chrono::seconds;

// value(i, j) = 10 i + j, the logical content of every 2-d case below.
float Value2d(int64_t i, int64_t j) { return static_cast<float>(10 * i + j); }

std::vector<float> RowMajor2d(int64_t rows, int64_t columns) {
  std::vector<float> values;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) values.push_back(Value2d(i, j));
  }
  return values;
}

const PJRT_HostBufferSemantics kAllSemantics[] = {
    PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
    PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
    PJRT_HostBufferSemantics_kImmutableZeroCopy,
    PJRT_HostBufferSemantics_kMutableZeroCopy,
};

bool IsZeroCopy(PJRT_HostBufferSemantics semantics) {
  return semantics == PJRT_HostBufferSemantics_kImmutableZeroCopy ||
         semantics == PJRT_HostBufferSemantics_kMutableZeroCopy;
}

class TransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    device_ = AddressableDevices(client_.get())[0];
  }

  // Transfers `data` viewed through `dims` and `byte_strides` with every
  // semantics and expects `expected` (dense row-major) back.
  void ExpectStridedTransfer(const float* data, std::vector<int64_t> dims,
                             std::vector<int64_t> byte_strides,
                             const std::vector<float>& expected) {
    for (PJRT_HostBufferSemantics semantics : kAllSemantics) {
      SCOPED_TRACE("semantics " + std::to_string(semantics));
      HostTransfer transfer;
      transfer.data = data;
      transfer.dims = dims;
      transfer.byte_strides = byte_strides;
      transfer.semantics = semantics;
      transfer.device = device_;
      BufferPtr buffer;
      EventPtr done;
      ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
      EXPECT_EQ(Read<float>(buffer.get()), expected);
      buffer.reset();  // zero-copy semantics release `data` here
      if (done != nullptr) {
        Watchdog watchdog(seconds(30), "done_with_host_buffer");
        EXPECT_TRUE(IsOk(Await(done.get())));
      }
    }
  }

  ClientPtr client_;
  PJRT_Device* device_ = nullptr;
};

// ---------------------------------------------------------------- semantics --

TEST_F(TransferTest, OnlyDuringCallCopiesBeforeReturning) {
  std::vector<float> host = RowMajor2d(3, 4);
  const std::vector<float> expected = host;
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.dims = {3, 4};
  transfer.device = device_;
  BufferPtr buffer;
  EventPtr done;
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
  std::fill(host.begin(), host.end(), -1.0f);  // allowed once the call returns
  EXPECT_EQ(Read<float>(buffer.get()), expected);
  ASSERT_NE(done, nullptr);
  EXPECT_TRUE(IsOk(Await(done.get())));
}

TEST_F(TransferTest, UntilTransferCompletesReleasesDataAtTheEvent) {
  std::vector<float> host = RowMajor2d(64, 64);
  const std::vector<float> expected = host;
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.dims = {64, 64};
  transfer.semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  transfer.device = device_;
  BufferPtr buffer;
  EventPtr done;
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
  ASSERT_NE(done, nullptr);
  {
    Watchdog watchdog(seconds(30), "done_with_host_buffer");
    EXPECT_TRUE(IsOk(Await(done.get())));
  }
  EXPECT_TRUE(IsReady(done.get()));
  std::fill(host.begin(), host.end(), -1.0f);  // allowed after the event
  EXPECT_EQ(Read<float>(buffer.get()), expected);
}

TEST_F(TransferTest, ZeroCopyReleasesDataByTheTimeTheBufferIsGone) {
  for (PJRT_HostBufferSemantics semantics :
       {PJRT_HostBufferSemantics_kImmutableZeroCopy, PJRT_HostBufferSemantics_kMutableZeroCopy}) {
    SCOPED_TRACE("semantics " + std::to_string(semantics));
    alignas(64) float host[16];
    for (int i = 0; i < 16; ++i) host[i] = static_cast<float>(i) * 0.25f;
    HostTransfer transfer;
    transfer.data = host;
    transfer.dims = {16};
    transfer.semantics = semantics;
    transfer.device = device_;
    BufferPtr buffer;
    EventPtr done;
    ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
    ASSERT_NE(done, nullptr);
    EXPECT_EQ(Read<float>(buffer.get()), std::vector<float>(host, host + 16));
    buffer.reset();
    Watchdog watchdog(seconds(30), "done_with_host_buffer after Buffer_Destroy");
    EXPECT_TRUE(IsOk(Await(done.get())));
  }
}

TEST_F(TransferTest, DoneEventCanBeWatchedThenDropped) {
  // JAX's way: Event_OnReady on done_with_host_buffer, then Event_Destroy at
  // once; the callback must still come, exactly once.
  for (PJRT_HostBufferSemantics semantics : kAllSemantics) {
    SCOPED_TRACE("semantics " + std::to_string(semantics));
    std::vector<float> host = RowMajor2d(8, 8);
    HostTransfer transfer;
    transfer.data = host.data();
    transfer.dims = {8, 8};
    transfer.semantics = semantics;
    transfer.device = device_;
    BufferPtr buffer;
    EventPtr done;
    ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
    ASSERT_NE(done, nullptr);
    CallbackRecorder recorder;
    ASSERT_TRUE(IsOk(recorder.Register(done.get())));
    done.reset();
    if (IsZeroCopy(semantics)) buffer.reset();
    ASSERT_TRUE(recorder.WaitFor(1, seconds(30))) << "the callback never came";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(recorder.count(), 1);
    EXPECT_TRUE(IsOk(recorder.statuses()[0]));
    if (buffer != nullptr) {
      EXPECT_EQ(Read<float>(buffer.get()), RowMajor2d(8, 8));
    }
  }
}

// ------------------------------------------------------------- byte strides --

TEST_F(TransferTest, ExplicitDenseStrides) {
  std::vector<float> host = RowMajor2d(3, 4);
  ExpectStridedTransfer(host.data(), {3, 4}, {16, 4}, host);
}

TEST_F(TransferTest, ColumnMajorStrides) {
  std::vector<float> host(12);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) host[j * 3 + i] = Value2d(i, j);
  }
  ExpectStridedTransfer(host.data(), {3, 4}, {4, 12}, RowMajor2d(3, 4));
}

TEST_F(TransferTest, PaddedRowStrides) {
  std::vector<float> host(3 * 6, -99.0f);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) host[i * 6 + j] = Value2d(i, j);
  }
  ExpectStridedTransfer(host.data(), {3, 4}, {24, 4}, RowMajor2d(3, 4));
}

TEST_F(TransferTest, EveryOtherElement) {
  std::vector<float> host(10);
  for (int k = 0; k < 10; ++k) host[k] = (k % 2 == 0) ? k / 2.0f : -1.0f;
  ExpectStridedTransfer(host.data(), {5}, {8}, {0, 1, 2, 3, 4});
}

TEST_F(TransferTest, PermutedThreeDimensionalStrides) {
  // Logical (2, 3, 4) stored as a contiguous (4, 2, 3) array.
  std::vector<float> host(24);
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        float value = static_cast<float>(100 * i + 10 * j + k);
        host[k * 6 + i * 3 + j] = value;
        expected.push_back(value);
      }
    }
  }
  ExpectStridedTransfer(host.data(), {2, 3, 4}, {12, 4, 24}, expected);
}

TEST_F(TransferTest, NegativeRowStride) {
  std::vector<float> host(6);  // rows stored bottom-up
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) host[(1 - i) * 3 + j] = Value2d(i, j);
  }
  ExpectStridedTransfer(host.data() + 3, {2, 3}, {-12, 4}, RowMajor2d(2, 3));
}

TEST_F(TransferTest, NegativeColumnStride) {
  std::vector<float> host(6);  // each row stored right to left
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) host[i * 3 + (2 - j)] = Value2d(i, j);
  }
  ExpectStridedTransfer(host.data() + 2, {2, 3}, {12, -4}, RowMajor2d(2, 3));
}

TEST_F(TransferTest, BothStridesNegative) {
  std::vector<float> host(6);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) host[(1 - i) * 3 + (2 - j)] = Value2d(i, j);
  }
  ExpectStridedTransfer(host.data() + 5, {2, 3}, {-12, -4}, RowMajor2d(2, 3));
}

TEST_F(TransferTest, ZeroStrideBroadcastsARow) {
  std::vector<float> row = {0, 1, 2, 3};
  std::vector<float> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), row.begin(), row.end());
  ExpectStridedTransfer(row.data(), {3, 4}, {0, 4}, expected);
}

TEST_F(TransferTest, ZeroStrideBroadcastsAColumn) {
  std::vector<float> column = {5, 6, 7};
  std::vector<float> expected;
  for (float value : column) expected.insert(expected.end(), 4, value);
  ExpectStridedTransfer(column.data(), {3, 4}, {4, 0}, expected);
}

TEST_F(TransferTest, AllZeroStridesBroadcastAScalar) {
  float scalar = 42.5f;
  ExpectStridedTransfer(&scalar, {2, 3, 2}, {0, 0, 0}, std::vector<float>(12, 42.5f));
}

// -------------------------------------------------------------- to host --

class ToHostTest : public TransferTest {
 protected:
  void SetUp() override {
    TransferTest::SetUp();
    buffer_ = MakeBuffer(client_.get(), device_, RowMajor2d(3, 4), {3, 4});
    ASSERT_NE(buffer_, nullptr);
  }

  // ToHostBuffer into `dst` (size `dst_size`) with `layout`; awaits the event.
  Status CopyOut(PJRT_Buffer_MemoryLayout* layout, void* dst, size_t dst_size) {
    auto args = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.src = buffer_.get();
    args.host_layout = layout;
    args.dst = dst;
    args.dst_size = dst_size;
    Status status = Consume(api()->PJRT_Buffer_ToHostBuffer(&args));
    if (!status.ok()) return status;
    EXPECT_NE(args.event, nullptr) << "ToHostBuffer must return an event";
    EventPtr event(args.event);
    return event == nullptr ? status : Await(event.get());
  }

  BufferPtr buffer_;
};

PJRT_Buffer_MemoryLayout StridesLayout(const std::vector<int64_t>& strides) {
  auto layout = MAKE_ARGS(PJRT_Buffer_MemoryLayout);
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides = MAKE_ARGS(PJRT_Buffer_MemoryLayout_Strides);
  layout.strides.byte_strides = strides.data();
  layout.strides.num_byte_strides = strides.size();
  return layout;
}

PJRT_Buffer_MemoryLayout TiledLayout(const std::vector<int64_t>& minor_to_major) {
  auto layout = MAKE_ARGS(PJRT_Buffer_MemoryLayout);
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled = MAKE_ARGS(PJRT_Buffer_MemoryLayout_Tiled);
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  return layout;
}

TEST_F(ToHostTest, NullDestinationReportsTheSize) {
  auto args = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer_.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ToHostBuffer(&args));
  EventPtr event(args.event);
  EXPECT_EQ(args.dst_size, 12u * sizeof(float));
}

TEST_F(ToHostTest, DefaultLayoutIsDenseRowMajor) {
  std::vector<float> dst(12, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(nullptr, dst.data(), dst.size() * sizeof(float))));
  EXPECT_EQ(dst, RowMajor2d(3, 4));
}

TEST_F(ToHostTest, ColumnMajorByteStrides) {
  std::vector<int64_t> strides = {4, 12};
  PJRT_Buffer_MemoryLayout layout = StridesLayout(strides);
  std::vector<float> dst(12, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(&layout, dst.data(), dst.size() * sizeof(float))));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(dst[j * 3 + i], Value2d(i, j)) << "(" << i << ", " << j << ")";
    }
  }
}

TEST_F(ToHostTest, PaddedRowByteStrides) {
  std::vector<int64_t> strides = {32, 4};  // 8 floats per row, 4 used
  PJRT_Buffer_MemoryLayout layout = StridesLayout(strides);
  std::vector<float> dst(3 * 8, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(&layout, dst.data(), dst.size() * sizeof(float))));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(dst[i * 8 + j], Value2d(i, j)) << "(" << i << ", " << j << ")";
    }
  }
}

TEST_F(ToHostTest, TiledColumnMajor) {
  std::vector<int64_t> minor_to_major = {0, 1};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(minor_to_major);
  std::vector<float> dst(12, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(&layout, dst.data(), dst.size() * sizeof(float))));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(dst[j * 3 + i], Value2d(i, j)) << "(" << i << ", " << j << ")";
    }
  }
}

TEST_F(ToHostTest, TiledRowMajorIsTheDefault) {
  std::vector<int64_t> minor_to_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(minor_to_major);
  std::vector<float> dst(12, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(&layout, dst.data(), dst.size() * sizeof(float))));
  EXPECT_EQ(dst, RowMajor2d(3, 4));
}

TEST_F(ToHostTest, TiledThreeDimensionalPermutation) {
  std::vector<float> values(24);
  for (int n = 0; n < 24; ++n) values[n] = static_cast<float>(n);
  BufferPtr buffer = MakeBuffer(client_.get(), device_, values, {2, 3, 4});
  ASSERT_NE(buffer, nullptr);
  buffer_ = std::move(buffer);
  // minor_to_major {1, 0, 2}: dimension 1 varies fastest, then 0, then 2.
  std::vector<int64_t> minor_to_major = {1, 0, 2};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(minor_to_major);
  std::vector<float> dst(24, -1.0f);
  ASSERT_TRUE(IsOk(CopyOut(&layout, dst.data(), dst.size() * sizeof(float))));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(dst[(k * 2 + i) * 3 + j], values[(i * 3 + j) * 4 + k])
            << "(" << i << ", " << j << ", " << k << ")";
      }
    }
  }
}

TEST_F(ToHostTest, TooSmallADestinationIsInvalid) {
  std::vector<float> dst(12);
  EXPECT_TRUE(HasCode(CopyOut(nullptr, dst.data(), 12 * sizeof(float) - 1),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(ToHostTest, EmptyBufferCopiesNothingButSignals) {
  BufferPtr empty = MakeBuffer(client_.get(), device_, std::vector<float>{}, {0, 3});
  ASSERT_NE(empty, nullptr);
  buffer_ = std::move(empty);
  float placeholder = 7.0f;
  ASSERT_TRUE(IsOk(CopyOut(nullptr, &placeholder, 0)));
  EXPECT_EQ(placeholder, 7.0f);
}

TEST_F(ToHostTest, LargeCopyCompletesAtItsEvent) {
  std::vector<float> values(1 << 20);
  for (size_t n = 0; n < values.size(); ++n) values[n] = static_cast<float>(n % 4099);
  buffer_ = MakeBuffer(client_.get(), device_, values, {static_cast<int64_t>(values.size())});
  ASSERT_NE(buffer_, nullptr);
  std::vector<float> dst(values.size(), -1.0f);
  Watchdog watchdog(seconds(60), "a 4 MiB ToHostBuffer");
  ASSERT_TRUE(IsOk(CopyOut(nullptr, dst.data(), dst.size() * sizeof(float))));
  EXPECT_EQ(dst, values);
}

}  // namespace
}  // namespace conformance

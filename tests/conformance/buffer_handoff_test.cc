// Buffers handing their memory or contents on: PJRT_Buffer_Bitcast,
// PJRT_Buffer_DonateWithControlDependency, alias buffers
// (PJRT_Client_CreateAliasBuffer / FulfillAliasBuffer) and
// PJRT_Buffer_CopyRawToHostFuture.
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

class HandoffTest : public ClientFixture {
 protected:
  BufferPtr Floats(std::vector<float> values, std::vector<int64_t> dims) {
    return MakeBuffer(client_.get(), device_, values, std::move(dims));
  }
};

Status Bitcast(PJRT_Buffer* buffer, PJRT_Buffer_Type type, std::vector<int64_t> dims,
               BufferPtr* out) {
  auto args = MAKE_ARGS(PJRT_Buffer_Bitcast_Args);
  args.buffer = buffer;
  args.element_type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  Status status = Consume(api()->PJRT_Buffer_Bitcast(&args));
  if (status.ok()) out->reset(args.out_buffer);
  return status;
}

// ---------------------------------------------------------------- bitcast --

TEST_F(HandoffTest, BitcastViewsTheBytesAsAnotherShapeAndType) {
  BufferPtr floats = Floats({1.0f, -2.0f, 0.5f, 4.0f}, {4});
  BufferPtr ints;
  Status status = Bitcast(floats.get(), PJRT_Buffer_Type_U32, {2, 2}, &ints);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(ElementType(ints.get()), PJRT_Buffer_Type_U32);
  EXPECT_EQ(Dimensions(ints.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Read<uint32_t>(ints.get()),
            (std::vector<uint32_t>{0x3f800000u, 0xc0000000u, 0x3f000000u, 0x40800000u}));
  // The source is consumed, as after a donation.
  EXPECT_TRUE(IsDeleted(floats.get()));
}

TEST_F(HandoffTest, BitcastToAnotherSizeIsInvalid) {
  BufferPtr floats = Floats({1, 2, 3, 4}, {4});
  BufferPtr out;
  Status status = Bitcast(floats.get(), PJRT_Buffer_Type_F64, {4}, &out);
  SKIP_IF_UNIMPLEMENTED(status);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_FALSE(IsDeleted(floats.get()));
}

// --------------------------------------------- donation with a dependency --

struct Donation {
  BufferPtr buffer;
  void* callback_data = nullptr;
  void (*ready)(PJRT_Buffer_DonateWithControlDependency_Callback_Args*) = nullptr;

  // Reports the dependency done (with `code`); the callback runs once.
  void Fire(PJRT_Error_Code code = PJRT_Error_Code_OK, std::string_view message = "") {
    auto args = MAKE_ARGS(PJRT_Buffer_DonateWithControlDependency_Callback_Args);
    args.callback_data = callback_data;
    args.error_code = code;
    args.error_message = message.data();
    args.error_message_size = message.size();
    ready(&args);
  }
};

Status Donate(PJRT_Buffer* buffer, Donation* donation) {
  auto args = MAKE_ARGS(PJRT_Buffer_DonateWithControlDependency_Args);
  args.buffer = buffer;
  Status status = Consume(api()->PJRT_Buffer_DonateWithControlDependency(&args));
  if (!status.ok()) return status;
  EXPECT_NE(args.dependency_ready_callback, nullptr);
  donation->buffer.reset(args.out_buffer);
  donation->callback_data = args.callback_data;
  donation->ready = args.dependency_ready_callback;
  return status;
}

TEST_F(HandoffTest, DonatedBufferWaitsForItsDependency) {
  BufferPtr source = Floats({7, 8, 9}, {3});
  Donation donation;
  Status status = Donate(source.get(), &donation);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_TRUE(IsDeleted(source.get()));
  EventPtr ready = ReadyEvent(donation.buffer.get());
  EXPECT_FALSE(IsReady(ready.get()));
  donation.Fire();
  EXPECT_TRUE(IsOk(Await(ready.get())));
  EXPECT_EQ(Read<float>(donation.buffer.get()), (std::vector<float>{7, 8, 9}));
}

TEST_F(HandoffTest, AFailedDependencyFailsTheDonatedBuffer) {
  BufferPtr source = Floats({1}, {1});
  Donation donation;
  Status status = Donate(source.get(), &donation);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  donation.Fire(PJRT_Error_Code_ABORTED, "producer gave up");
  EventPtr ready = ReadyEvent(donation.buffer.get());
  Status error = Await(ready.get());
  EXPECT_TRUE(HasCode(error, PJRT_Error_Code_ABORTED));
  EXPECT_TRUE(Contains(error.message, "producer gave up"));
}

TEST_F(HandoffTest, ADonatedBufferCannotBeDonatedAgain) {
  BufferPtr source = Floats({1}, {1});
  Donation first, second;
  Status status = Donate(source.get(), &first);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  first.Fire();
  EXPECT_FALSE(Donate(source.get(), &second).ok());
}

// ------------------------------------------------------------------ alias --

struct Alias {
  BufferPtr buffer;
  PJRT_FulfillAliasBufferCallback* fulfill = nullptr;
};

Status CreateAlias(PJRT_Client* client, PJRT_Memory* memory, std::vector<int64_t> dims,
                   Alias* alias) {
  auto args = MAKE_ARGS(PJRT_Client_CreateAliasBuffer_Args);
  args.client = client;
  args.memory = memory;
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  args.shape_element_type = PJRT_Buffer_Type_F32;
  Status status = Consume(api()->PJRT_Client_CreateAliasBuffer(&args));
  if (!status.ok()) return status;
  alias->buffer.reset(args.alias_buffer);
  alias->fulfill = args.fulfill_alias_buffer_cb;
  return status;
}

Status Fulfill(PJRT_Client* client, const Alias& alias, PJRT_Buffer* buffer,
               PJRT_Error_Code code = PJRT_Error_Code_OK, std::string_view message = "") {
  auto args = MAKE_ARGS(PJRT_Client_FulfillAliasBuffer_Args);
  args.client = client;
  args.buffer = buffer;
  args.status_code = code;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.fulfill_alias_buffer_cb = alias.fulfill;
  return Consume(api()->PJRT_Client_FulfillAliasBuffer(&args));
}

TEST_F(HandoffTest, AnAliasTakesTheMemoryOfTheBufferThatFulfillsIt) {
  Alias alias;
  Status status = CreateAlias(client_.get(), DefaultMemory(device_), {2}, &alias);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EventPtr ready = ReadyEvent(alias.buffer.get());
  EXPECT_FALSE(IsReady(ready.get()));
  BufferPtr real = Floats({3.5f, -1}, {2});
  ASSERT_TRUE(IsOk(Fulfill(client_.get(), alias, real.get())));
  EXPECT_TRUE(IsOk(Await(ready.get())));
  EXPECT_EQ(Read<float>(alias.buffer.get()), (std::vector<float>{3.5f, -1}));
  EXPECT_TRUE(IsDeleted(real.get()));
}

TEST_F(HandoffTest, AnAliasFulfilledWithAnErrorCarriesIt) {
  Alias alias;
  Status status = CreateAlias(client_.get(), DefaultMemory(device_), {2}, &alias);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_TRUE(IsOk(Fulfill(client_.get(), alias, nullptr, PJRT_Error_Code_UNAVAILABLE, "gone")));
  EventPtr ready = ReadyEvent(alias.buffer.get());
  Status error = Await(ready.get());
  EXPECT_TRUE(HasCode(error, PJRT_Error_Code_UNAVAILABLE));
  EXPECT_TRUE(Contains(error.message, "gone"));
}

// ------------------------------------------------------- raw copy, later --

struct FutureCopy {
  EventPtr done;
  void* callback_data = nullptr;
  void (*ready)(PJRT_Buffer_CopyRawToHostFuture_Callback_Args*) = nullptr;

  void Provide(void* dst, PJRT_Error_Code code = PJRT_Error_Code_OK,
               std::string_view message = "") {
    auto args = MAKE_ARGS(PJRT_Buffer_CopyRawToHostFuture_Callback_Args);
    args.callback_data = callback_data;
    args.error_code = code;
    args.error_message = message.data();
    args.error_message_size = message.size();
    args.dst = dst;
    ready(&args);
  }
};

Status CopyRawLater(PJRT_Buffer* buffer, int64_t offset, int64_t size, FutureCopy* copy) {
  auto args = MAKE_ARGS(PJRT_Buffer_CopyRawToHostFuture_Args);
  args.buffer = buffer;
  args.offset = offset;
  args.transfer_size = size;
  Status status = Consume(api()->PJRT_Buffer_CopyRawToHostFuture(&args));
  if (!status.ok()) return status;
  copy->done.reset(args.event);
  copy->callback_data = args.callback_data;
  copy->ready = args.future_ready_callback;
  EXPECT_NE(copy->ready, nullptr);
  return status;
}

TEST_F(HandoffTest, RawCopyWaitsForItsDestination) {
  BufferPtr buffer = Floats({10, 20, 30, 40}, {4});
  FutureCopy copy;
  Status status = CopyRawLater(buffer.get(), 4, 8, &copy);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_FALSE(IsReady(copy.done.get()));
  float dst[2] = {};
  copy.Provide(dst);
  EXPECT_TRUE(IsOk(Await(copy.done.get())));
  EXPECT_EQ(dst[0], 20.0f);
  EXPECT_EQ(dst[1], 30.0f);
}

TEST_F(HandoffTest, RawCopyCancelledByItsCallerReportsWhy) {
  BufferPtr buffer = Floats({1, 2}, {2});
  FutureCopy copy;
  Status status = CopyRawLater(buffer.get(), 0, 8, &copy);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  copy.Provide(nullptr, PJRT_Error_Code_CANCELLED, "no room");
  Status error = Await(copy.done.get());
  EXPECT_TRUE(HasCode(error, PJRT_Error_Code_CANCELLED));
  EXPECT_TRUE(Contains(error.message, "no room"));
}

// ------------------------------------------------------ Kiln's promises --

class KilnHandoffTest : public HandoffTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    HandoffTest::SetUp();
  }
};

TEST_F(KilnHandoffTest, BitcastRejectsWhatItCannotView) {
  BufferPtr floats = Floats({1, 2, 3, 4}, {4});
  BufferPtr out;
  Status size = Bitcast(floats.get(), PJRT_Buffer_Type_F32, {5}, &out);
  EXPECT_TRUE(HasCode(size, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(size.message, "128 bits"));
  BufferPtr bytes = MakeBuffer(client_.get(), device_, std::vector<uint8_t>{1, 2}, {2});
  Status sub_byte = Bitcast(bytes.get(), PJRT_Buffer_Type_S4, {4}, &out);
  EXPECT_TRUE(HasCode(sub_byte, PJRT_Error_Code_UNIMPLEMENTED));
  EXPECT_TRUE(Contains(sub_byte.message, "unpacked"));
  BufferPtr pred;  // pred and u8 are both a byte
  EXPECT_TRUE(IsOk(Bitcast(bytes.get(), PJRT_Buffer_Type_PRED, {2}, &pred)));
  Status deleted = Bitcast(bytes.get(), PJRT_Buffer_Type_S8, {2}, &out);
  EXPECT_TRUE(HasCode(deleted, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(deleted.message, "PJRT_Buffer_Bitcast"));
}

TEST_F(KilnHandoffTest, ADependencyCallbackRunsOnce) {
  BufferPtr source = Floats({1}, {1});
  Donation donation;
  ASSERT_TRUE(IsOk(Donate(source.get(), &donation)));
  donation.Fire(PJRT_Error_Code_INTERNAL, "first");
  donation.Fire();          // ignored: its data was used
  donation.ready(nullptr);  // ignored
  Status error = Await(ReadyEvent(donation.buffer.get()).get());
  EXPECT_TRUE(Contains(error.message, "first"));
}

TEST_F(KilnHandoffTest, AliasMisuseIsReported) {
  Alias alias;
  ASSERT_TRUE(IsOk(CreateAlias(client_.get(), DefaultMemory(device_), {2}, &alias)));
  // A bad argument leaves the callback usable.
  EXPECT_TRUE(HasCode(Fulfill(client_.get(), alias, nullptr), PJRT_Error_Code_INVALID_ARGUMENT));
  BufferPtr wrong = Floats({1, 2, 3}, {3});
  Status shape = Fulfill(client_.get(), alias, wrong.get());
  EXPECT_TRUE(HasCode(shape, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(shape.message, "f32[2]"));
  // That consumed the callback and failed the alias.
  EXPECT_TRUE(HasCode(Await(ReadyEvent(alias.buffer.get()).get()),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  BufferPtr right = Floats({1, 2}, {2});
  Status again = Fulfill(client_.get(), alias, right.get());
  EXPECT_TRUE(HasCode(again, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(again.message, "fulfill_alias_buffer_cb"));
  EXPECT_FALSE(IsDeleted(right.get()));
}

TEST_F(KilnHandoffTest, RawCopyRangeAndDestinationAreChecked) {
  BufferPtr buffer = Floats({1, 2}, {2});
  FutureCopy copy;
  EXPECT_TRUE(HasCode(CopyRawLater(buffer.get(), 4, 8, &copy), PJRT_Error_Code_OUT_OF_RANGE));
  ASSERT_TRUE(IsOk(CopyRawLater(buffer.get(), 0, 8, &copy)));
  copy.Provide(nullptr);  // OK but no destination
  Status status = Await(copy.done.get());
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "null"));
}

}  // namespace
}  // namespace conformance

// Kiln's XLA FFI: attributes as call frames pass them, the registry, and
// calls of handlers written with XLA's own binding (xla/ffi/api/ffi.h):
// errors, state, stages, futures, the invoke context, and the custom-call
// API before FFI.
#include "xla/ffi/api/ffi.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "ffi/api.h"
#include "ffi/attributes.h"
#include "ffi/call.h"
#include "ffi/legacy_status.h"
#include "ffi/registry.h"
#include "frontend/text/parser.h"

namespace kiln::ffi {
namespace {

namespace xffi = xla::ffi;

std::unique_ptr<EncodedAttributes> EncodeText(std::string_view text) {
  StatusOr<ir::Attribute> attribute = frontend::text::ParseAttribute(text);
  EXPECT_TRUE(attribute.ok()) << attribute.status().ToString();
  StatusOr<std::unique_ptr<EncodedAttributes>> encoded = EncodedAttributes::Encode(*attribute);
  EXPECT_TRUE(encoded.ok()) << encoded.status().ToString();
  if (!encoded.ok()) return nullptr;
  EXPECT_TRUE(EncodedAttributes::Validate((*encoded)->attrs()).ok());
  return std::move(*encoded);
}

Status EncodeError(std::string_view text) {
  StatusOr<ir::Attribute> attribute = frontend::text::ParseAttribute(text);
  if (!attribute.ok()) return attribute.status();
  return EncodedAttributes::Encode(*attribute).status();
}

std::string_view Name(const XLA_FFI_Attrs& attrs, int64_t i) {
  return {attrs.names[i]->ptr, attrs.names[i]->len};
}

template <typename T>
T ScalarValue(const XLA_FFI_Attrs& attrs, int64_t i, XLA_FFI_DataType type) {
  EXPECT_EQ(attrs.types[i], XLA_FFI_AttrType_SCALAR);
  const auto* scalar = static_cast<const XLA_FFI_Scalar*>(attrs.attrs[i]);
  EXPECT_EQ(scalar->dtype, type);
  T value;
  std::memcpy(&value, scalar->value, sizeof(T));
  return value;
}

TEST(FfiAttributesTest, ScalarsAreSortedByNameWithTheirTypes) {
  auto encoded = EncodeText(
      "{zeta = -3 : i8, alpha = 2.5 : f32, flag = true, big = 18446744073709551615 : ui64, "
      "half = 7 : i16, wide = 1.25 : f64, word = \"kiln\"}");
  ASSERT_NE(encoded, nullptr);
  const XLA_FFI_Attrs& attrs = encoded->attrs();
  ASSERT_EQ(attrs.size, 7);
  EXPECT_EQ(Name(attrs, 0), "alpha");
  EXPECT_EQ(ScalarValue<float>(attrs, 0, XLA_FFI_DataType_F32), 2.5f);
  EXPECT_EQ(Name(attrs, 1), "big");
  EXPECT_EQ(ScalarValue<uint64_t>(attrs, 1, XLA_FFI_DataType_U64), ~uint64_t{0});
  EXPECT_EQ(Name(attrs, 2), "flag");
  EXPECT_EQ(ScalarValue<uint8_t>(attrs, 2, XLA_FFI_DataType_PRED), 1);
  EXPECT_EQ(ScalarValue<int16_t>(attrs, 3, XLA_FFI_DataType_S16), 7);
  EXPECT_EQ(ScalarValue<double>(attrs, 4, XLA_FFI_DataType_F64), 1.25);
  EXPECT_EQ(Name(attrs, 5), "word");
  ASSERT_EQ(attrs.types[5], XLA_FFI_AttrType_STRING);
  const auto* word = static_cast<const XLA_FFI_ByteSpan*>(attrs.attrs[5]);
  EXPECT_EQ(std::string_view(word->ptr, word->len), "kiln");
  EXPECT_EQ(ScalarValue<int8_t>(attrs, 6, XLA_FFI_DataType_S8), -3);
}

TEST(FfiAttributesTest, ArraysAndNestedDictionaries) {
  auto encoded = EncodeText(
      "{dims = dense<[2, 3, 5]> : tensor<3xi64>, ones = dense<1.5> : tensor<4xf32>, "
      "small = array<i32: -1, 7>, inner = {n = 4 : i64, deeper = {s = \"x\"}}}");
  ASSERT_NE(encoded, nullptr);
  const XLA_FFI_Attrs& attrs = encoded->attrs();
  ASSERT_EQ(attrs.size, 4);
  const auto* dims = static_cast<const XLA_FFI_Array*>(attrs.attrs[0]);
  ASSERT_EQ(dims->dtype, XLA_FFI_DataType_S64);
  ASSERT_EQ(dims->size, 3u);
  EXPECT_EQ(static_cast<const int64_t*>(dims->data)[2], 5);
  ASSERT_EQ(attrs.types[1], XLA_FFI_AttrType_DICTIONARY);
  const auto* inner = static_cast<const XLA_FFI_Attrs*>(attrs.attrs[1]);
  ASSERT_EQ(inner->size, 2);
  EXPECT_EQ(Name(*inner, 0), "deeper");
  EXPECT_EQ(ScalarValue<int64_t>(*inner, 1, XLA_FFI_DataType_S64), 4);
  const auto* ones = static_cast<const XLA_FFI_Array*>(attrs.attrs[2]);  // splat expanded
  ASSERT_EQ(ones->size, 4u);
  EXPECT_EQ(static_cast<const float*>(ones->data)[3], 1.5f);
  const auto* small = static_cast<const XLA_FFI_Array*>(attrs.attrs[3]);
  ASSERT_EQ(small->dtype, XLA_FFI_DataType_S32);
  EXPECT_EQ(static_cast<const int32_t*>(small->data)[0], -1);
}

TEST(FfiAttributesTest, WhatXlaCannotPassIsAnErrorNamingTheAttribute) {
  for (std::string_view text : {"{f = @symbol}", "{h = 1.0 : f16}", "{t = f32}",
                                "{outer = {b = array<i1: true>}}", "{u = unit}"}) {
    Status status = EncodeError(text);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << text << ": " << status.ToString();
  }
  EXPECT_NE(EncodeError("{outer = {b = array<i1: true>}}").message().find("`outer.b`"),
            std::string::npos);
  std::string deep = "{a = 1 : i64}";
  for (int i = 0; i <= EncodedAttributes::kMaxDepth; ++i) deep = "{d = " + deep + "}";
  EXPECT_EQ(EncodeError(deep).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(EncodedAttributes::Encode(ir::Attribute()).ok());  // none
}

XLA_FFI_Error* DoNothing(XLA_FFI_CallFrame*) { return nullptr; }

TEST(FfiRegistryTest, PlatformsTypesAndDuplicates) {
  Registry& registry = Registry::Global();
  XLA_FFI_Handler_Bundle bundle{};
  bundle.execute = &DoNothing;
  EXPECT_EQ(registry.RegisterTyped("registry_test", "Host", bundle, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.RegisterTyped("registry_test", "KILN", bundle, 0).ok());
  EXPECT_TRUE(registry.RegisterTyped("registry_test", "kiln", bundle, 0).ok());  // the same
  XLA_FFI_Handler_Bundle other = bundle;
  other.instantiate = bundle.execute;
  EXPECT_EQ(registry.RegisterTyped("registry_test", "kiln", other, 0).code(),
            StatusCode::kAlreadyExists);
  ASSERT_NE(registry.FindTyped("registry_test"), nullptr);
  EXPECT_EQ(registry.FindTyped("registry_test_absent"), nullptr);

  StatusOr<int64_t> assigned = registry.RegisterType("registry_test.a", 0, nullptr);
  ASSERT_TRUE(assigned.ok());
  EXPECT_GE(*assigned, int64_t{1} << 40);  // far from XLA's own small ids
  EXPECT_EQ(*registry.RegisterType("registry_test.a", 0, nullptr), *assigned);
  EXPECT_EQ(*registry.RegisterType("registry_test.b", 77, nullptr), 77);  // XLA's id kept
  EXPECT_EQ(registry.RegisterType("registry_test.c", 77, nullptr).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.RegisterType("registry_test.a", 78, nullptr).status().code(),
            StatusCode::kAlreadyExists);
}

// ----------------------------------------------------------- handlers --

struct Counter {
  static xffi::TypeId id;
  explicit Counter(int64_t start) : value(start) {}
  int64_t value;
};
xffi::TypeId Counter::id = {};
std::atomic<int> counters_deleted{0};

xffi::ErrorOr<std::unique_ptr<Counter>> MakeCounter(int64_t start) {
  return std::make_unique<Counter>(start);
}
XLA_FFI_DEFINE_HANDLER(kMakeCounter, MakeCounter,
                       xffi::Ffi::BindInstantiate().Attr<int64_t>("start"));

std::atomic<int> prepares{0};
xffi::Error Prepare() {
  ++prepares;
  return xffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kPrepare, Prepare, xffi::Ffi::BindPrepare());

xffi::Error Count(Counter* counter, int32_t ordinal, xffi::RunId run_id, int64_t start,
                  xffi::ResultBuffer<xffi::S64> out) {
  out->typed_data()[0] = ++counter->value;
  out->typed_data()[1] = ordinal;
  out->typed_data()[2] = run_id.run_id;
  (void)start;
  return xffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kCount, Count,
                       xffi::Ffi::Bind()
                           .Ctx<xffi::State<Counter>>()
                           .Ctx<xffi::DeviceOrdinal>()
                           .Ctx<xffi::RunId>()
                           .Attr<int64_t>("start")
                           .Ret<xffi::Buffer<xffi::S64>>());

xffi::Error Fail(std::string_view message) {
  return xffi::Error(xffi::ErrorCode::kFailedPrecondition, std::string(message));
}
XLA_FFI_DEFINE_HANDLER(kFail, Fail, xffi::Ffi::Bind().Attr<std::string_view>("message"));

xffi::Future AddLater(bool fail, xffi::Buffer<xffi::F32> x, xffi::ResultBuffer<xffi::F32> y) {
  xffi::Promise promise;
  xffi::Future future(promise);
  std::thread([promise, x, y, fail]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (fail) {
      promise.SetError(xffi::Error(xffi::ErrorCode::kDataLoss, "later, it failed"));
      return;
    }
    for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i] + 1;
    promise.SetAvailable();
  }).detach();
  return future;
}
XLA_FFI_DEFINE_HANDLER(kAddLater, AddLater,
                       xffi::Ffi::Bind()
                           .Attr<bool>("fail")
                           .Arg<xffi::Buffer<xffi::F32>>()
                           .Ret<xffi::Buffer<xffi::F32>>());

xffi::Error PassToken(xffi::Token, xffi::Buffer<xffi::S32> x, xffi::Result<xffi::Token>,
                      xffi::ResultBuffer<xffi::S32> y) {
  y->typed_data()[0] = x.typed_data()[0] + 1;
  return xffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kPassToken, PassToken,
                       xffi::Ffi::Bind()
                           .Arg<xffi::Token>()
                           .Arg<xffi::Buffer<xffi::S32>>()
                           .Ret<xffi::Token>()
                           .Ret<xffi::Buffer<xffi::S32>>());

struct Scale {
  static xffi::TypeId id;
  float value;
};
xffi::TypeId Scale::id = {};

xffi::Error ScaleBy(Scale* scale, xffi::Buffer<xffi::F32> x, xffi::ResultBuffer<xffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * scale->value;
  }
  return xffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kScaleBy, ScaleBy,
                       xffi::Ffi::Bind()
                           .Ctx<xffi::UserData<Scale>>()
                           .Arg<xffi::Buffer<xffi::F32>>()
                           .Ret<xffi::Buffer<xffi::F32>>());

class ScaleData final : public UserData {
 public:
  void* LookupUserData(int64_t type_id) const override {
    return type_id == Scale::id.type_id ? const_cast<Scale*>(&scale_) : nullptr;
  }

 private:
  Scale scale_{2.5f};
};

void RegisterOnce() {
  static bool done = [] {
    Registry& registry = Registry::Global();
    auto deleter = [](void* object) {
      delete static_cast<Counter*>(object);
      ++counters_deleted;
    };
    Counter::id.type_id = *registry.RegisterType("ffi_test.Counter", 0, deleter);
    Scale::id.type_id = *registry.RegisterType("ffi_test.Scale", 0, nullptr);
    XLA_FFI_Handler_Bundle counter{};
    counter.instantiate = kMakeCounter;
    counter.prepare = kPrepare;
    counter.execute = kCount;
    EXPECT_TRUE(registry.RegisterTyped("ffi_test_count", "kiln", counter, 0).ok());
    for (auto [name, handler] :
         {std::pair{"ffi_test_fail", kFail}, std::pair{"ffi_test_add_later", kAddLater},
          std::pair{"ffi_test_scale", kScaleBy}, std::pair{"ffi_test_token", kPassToken}}) {
      XLA_FFI_Handler_Bundle bundle{};
      bundle.execute = handler;
      EXPECT_TRUE(registry.RegisterTyped(name, "kiln", bundle, 0).ok());
    }
    return true;
  }();
  (void)done;
}

CallSpec Spec(std::string target, std::string_view attributes, std::vector<Shape> args,
              std::vector<Shape> rets) {
  CallSpec spec;
  spec.target = std::move(target);
  if (!attributes.empty()) spec.attributes = *frontend::text::ParseAttribute(attributes);
  spec.args = std::move(args);
  spec.rets = std::move(rets);
  return spec;
}

TEST(FfiCallTest, StateLivesWithTheCallAndPrepareRunsEveryTime) {
  RegisterOnce();
  const int deleted = counters_deleted;
  const int prepared = prepares;
  {
    auto call = Call::Create(Spec("ffi_test_count", "{start = 10 : i64}", {},
                                  {Shape{ElementType::kS64, {3}}}));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    int64_t out[3] = {};
    void* rets[] = {out};
    for (int64_t expected = 11; expected <= 13; ++expected) {
      ASSERT_TRUE((*call)->Execute({}, rets, InvokeInfo{3, 42, nullptr}).ok());
      EXPECT_EQ(out[0], expected);
    }
    EXPECT_EQ(out[1], 3);   // device ordinal
    EXPECT_EQ(out[2], 42);  // run id
    EXPECT_EQ(prepares - prepared, 3);
    EXPECT_EQ(counters_deleted, deleted);
  }
  EXPECT_EQ(counters_deleted, deleted + 1);  // the type's deleter, once
}

TEST(FfiCallTest, AHandlersErrorKeepsItsCodeAndMessage) {
  RegisterOnce();
  auto call = Call::Create(Spec("ffi_test_fail", "{message = \"no luck\"}", {}, {}));
  ASSERT_TRUE(call.ok());
  Status status = (*call)->Execute({}, {}, InvokeInfo{});
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("no luck"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("ffi_test_fail"), std::string::npos);
  // A missing attribute is the binding's error, which names it.
  auto missing = Call::Create(Spec("ffi_test_fail", "", {}, {}));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE((*missing)->Execute({}, {}, InvokeInfo{}).ok());
}

TEST(FfiCallTest, AsynchronousHandlersAreWaitedFor) {
  RegisterOnce();
  for (bool fail : {false, true}) {
    auto call = Call::Create(Spec("ffi_test_add_later", fail ? "{fail = true}" : "{fail = false}",
                                  {Shape{ElementType::kF32, {3}}},
                                  {Shape{ElementType::kF32, {3}}}));
    ASSERT_TRUE(call.ok());
    float x[3] = {1, 2, 3}, y[3] = {};
    void* args[] = {x};
    void* rets[] = {y};
    Status status = (*call)->Execute(args, rets, InvokeInfo{});
    if (fail) {
      EXPECT_EQ(status.code(), StatusCode::kDataLoss);
      EXPECT_NE(status.message().find("later, it failed"), std::string::npos);
    } else {
      ASSERT_TRUE(status.ok()) << status.ToString();
      EXPECT_EQ(y[2], 4.0f);
    }
  }
}

TEST(FfiCallTest, UserDataComesFromTheRun) {
  RegisterOnce();
  auto call = Call::Create(Spec("ffi_test_scale", "", {Shape{ElementType::kF32, {2}}},
                                {Shape{ElementType::kF32, {2}}}));
  ASSERT_TRUE(call.ok());
  float x[2] = {2, -4}, y[2] = {};
  void* args[] = {x};
  void* rets[] = {y};
  ScaleData data;
  ASSERT_TRUE((*call)->Execute(args, rets, InvokeInfo{0, 0, &data}).ok());
  EXPECT_EQ(y[1], -10.0f);
  Status none = (*call)->Execute(args, rets, InvokeInfo{});
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.message().find("ffi_test.Scale"), std::string::npos) << none.ToString();
}

TEST(FfiCallTest, TokensPassAsTokenBuffers) {
  RegisterOnce();
  const Shape token{ElementType::kToken, {}};
  auto call = Call::Create(Spec("ffi_test_token", "", {token, Shape{ElementType::kS32, {}}},
                                {token, Shape{ElementType::kS32, {}}}));
  ASSERT_TRUE(call.ok());
  int32_t x = 41, y = 0;
  void* args[] = {nullptr, &x};
  void* rets[] = {nullptr, &y};
  Status status = (*call)->Execute(args, rets, InvokeInfo{});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(y, 42);
}

TEST(FfiCallTest, UnregisteredTargetsAndBadSpecs) {
  RegisterOnce();
  EXPECT_EQ(Call::Create(Spec("ffi_test_absent", "", {}, {})).status().code(),
            StatusCode::kNotFound);
  CallSpec f6 = Spec("ffi_test_scale", "", {Shape{ElementType::kF6E2M3FN, {2}}}, {});
  EXPECT_EQ(Call::Create(f6).status().code(), StatusCode::kInvalidArgument);
}

// The custom-call API before FFI: a status a handler sets fails the call.
void LegacyNegate(void* out, const void** in, XlaCustomCallStatus* status) {
  const float* x = static_cast<const float*>(in[0]);
  if (x[0] < 0) {
    status->message = "negative input";
    return;
  }
  static_cast<float*>(out)[0] = -x[0];
}

void LegacyTwoResults(void* out, const void** in) {
  void** results = static_cast<void**>(out);
  static_cast<float*>(results[0])[0] = *static_cast<const float*>(in[0]) * 2;
  static_cast<float*>(results[1])[0] = *static_cast<const float*>(in[0]) * 3;
}

TEST(FfiCallTest, TheCustomCallApiBeforeFfi) {
  ASSERT_TRUE(Registry::Global()
                  .RegisterLegacy("ffi_test_legacy_negate", "kiln",
                                  reinterpret_cast<void*>(&LegacyNegate))
                  .ok());
  ASSERT_TRUE(Registry::Global()
                  .RegisterLegacy("ffi_test_legacy_two", "kiln",
                                  reinterpret_cast<void*>(&LegacyTwoResults))
                  .ok());
  CallSpec spec = Spec("ffi_test_legacy_negate", "", {Shape{ElementType::kF32, {}}},
                       {Shape{ElementType::kF32, {}}});
  spec.api_version = ApiVersion::kStatusReturning;
  auto call = Call::Create(spec);
  ASSERT_TRUE(call.ok());
  float x = 2, y = 0;
  void* args[] = {&x};
  void* rets[] = {&y};
  ASSERT_TRUE((*call)->Execute(args, rets, InvokeInfo{}).ok());
  EXPECT_EQ(y, -2.0f);
  x = -1;
  Status failed = (*call)->Execute(args, rets, InvokeInfo{});
  EXPECT_NE(failed.message().find("negative input"), std::string::npos) << failed.ToString();

  CallSpec two = Spec("ffi_test_legacy_two", "", {Shape{ElementType::kF32, {}}},
                      {Shape{ElementType::kF32, {}}, Shape{ElementType::kF32, {}}});
  two.api_version = ApiVersion::kOriginal;
  auto tuple = Call::Create(two);
  ASSERT_TRUE(tuple.ok());
  x = 5;
  float a = 0, b = 0;
  void* outs[] = {&a, &b};
  ASSERT_TRUE((*tuple)->Execute(args, outs, InvokeInfo{}).ok());
  EXPECT_EQ(a, 10.0f);
  EXPECT_EQ(b, 15.0f);
}

TEST(FfiApiTest, FunctionsRejectShortStructsAndNullContexts) {
  const XLA_FFI_Api* api = Api();
  EXPECT_EQ(api->struct_size, XLA_FFI_Api_STRUCT_SIZE);
  auto destroy = [api](XLA_FFI_Error* error) {
    XLA_FFI_Error_Destroy_Args args{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
    api->XLA_FFI_Error_Destroy(&args);
  };
  XLA_FFI_DeviceOrdinal_Get_Args ordinal{};
  ordinal.struct_size = 4;  // too short
  XLA_FFI_Error* error = api->XLA_FFI_DeviceOrdinal_Get(&ordinal);
  ASSERT_NE(error, nullptr);
  destroy(error);
  ordinal.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
  error = api->XLA_FFI_DeviceOrdinal_Get(&ordinal);  // null ctx
  ASSERT_NE(error, nullptr);
  XLA_FFI_Error_GetDetails_Args details{XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE, nullptr, error,
                                        nullptr, XLA_FFI_Error_Code_OK};
  api->XLA_FFI_Error_GetDetails(&details);
  EXPECT_EQ(details.errc, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(std::string_view(details.message).find("null execution context"),
            std::string_view::npos);
  destroy(error);
  XLA_FFI_Error* null_args = api->XLA_FFI_Error_Create(nullptr);
  ASSERT_NE(null_args, nullptr);
  destroy(null_args);
}

}  // namespace
}  // namespace kiln::ffi

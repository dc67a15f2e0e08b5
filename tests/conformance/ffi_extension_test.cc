// The PJRT FFI extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h), optional:
// a typed FFI handler registered through it runs from a program's
// custom_call, and reads user data the caller attached to the run's
// PJRT_ExecuteContext. The handler is written against XLA's FFI C API
// alone, as a user's would be.
#include <cstring>

#include "plugin.h"
#include "programs.h"
#include "xla/ffi/api/c_api.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"

namespace conformance {
namespace {

// The user data type the handler reads; its id is the plugin's.
XLA_FFI_TypeId scale_type{0};

// y = x * (the float the run's execute context holds under scale_type).
XLA_FFI_Error* ScaleByUserData(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return nullptr;  // a metadata query
  const XLA_FFI_Api* ffi = frame->api;
  XLA_FFI_InvokeContext_Get_Args get{};
  get.struct_size = XLA_FFI_InvokeContext_Get_Args_STRUCT_SIZE;
  get.ctx = frame->ctx;
  get.type_id = &scale_type;
  if (XLA_FFI_Error* error = ffi->XLA_FFI_InvokeContext_Get(&get)) return error;
  const float scale = *static_cast<const float*>(get.data);
  if (frame->args.size != 1 || frame->rets.size != 1) {
    XLA_FFI_Error_Create_Args create{};
    create.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    create.message = "expected one argument and one result";
    create.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return ffi->XLA_FFI_Error_Create(&create);
  }
  const auto* in = static_cast<const XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  for (int64_t i = 0; i < in->dims[0]; ++i) {
    static_cast<float*>(out->data)[i] = static_cast<const float*>(in->data)[i] * scale;
  }
  return nullptr;
}

const std::string_view kScaleProgram = R"mlir(
module @kiln_conformance_ffi {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @conformance_scale_by_user_data(%arg0) {api_version = 4 : i32, backend_config = {}} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)mlir";

class FfiExtensionTest : public ClientFixture {
 protected:
  void SetUp() override {
    ClientFixture::SetUp();
    for (const PJRT_Extension_Base* next = api()->extension_start; next != nullptr;
         next = next->next) {
      if (next->type == PJRT_Extension_Type_FFI) {
        extension_ = reinterpret_cast<const PJRT_FFI_Extension*>(next);
      }
    }
    if (extension_ == nullptr) GTEST_SKIP() << "the plugin has no PJRT FFI extension";
  }

  Status RegisterHandler(std::string_view platform) {
    auto args = MAKE_ARGS(PJRT_FFI_Register_Handler_Args);
    args.target_name = "conformance_scale_by_user_data";
    args.target_name_size = std::strlen(args.target_name);
    args.handler = reinterpret_cast<void*>(&ScaleByUserData);
    args.platform_name = platform.data();
    args.platform_name_size = platform.size();
    return Consume(extension_->register_handler(&args));
  }

  const PJRT_FFI_Extension* extension_ = nullptr;
};

TEST_F(FfiExtensionTest, AHandlerReadsTheUserDataOfItsRun) {
  auto type = MAKE_ARGS(PJRT_FFI_Type_Register_Args);
  type.type_name = "conformance.scale";
  type.type_name_size = std::strlen(type.type_name);
  type.type_id = scale_type.type_id;
  ASSERT_PJRT_OK(extension_->type_register(&type));
  EXPECT_NE(type.type_id, 0);
  scale_type.type_id = type.type_id;
  ASSERT_TRUE(IsOk(RegisterHandler(PlatformName(client_.get()))));

  LoadedExecutablePtr loaded;
  ASSERT_TRUE(IsOk(Compile(client_.get(), "mlir", kScaleProgram, &loaded)));
  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1.5f, -2}, {2});

  auto create = MAKE_ARGS(PJRT_ExecuteContext_Create_Args);
  ASSERT_PJRT_OK(api()->PJRT_ExecuteContext_Create(&create));
  float scale = 3;
  auto add = MAKE_ARGS(PJRT_FFI_UserData_Add_Args);
  add.context = create.context;
  add.user_data = {scale_type.type_id, &scale};
  ASSERT_PJRT_OK(extension_->user_data_add(&add));
  BufferPtr result;
  EventPtr done;
  ASSERT_TRUE(IsOk(ExecuteOnce(loaded.get(), {input.get()}, 1, &result, &done,
                               {.context = create.context})));
  ASSERT_TRUE(IsOk(Await(done.get())));
  EXPECT_EQ(Read<float>(result.get()), (std::vector<float>{4.5f, -6}));

  // Without the context the handler's lookup fails, and the run with it.
  BufferPtr failed;
  EventPtr failed_done;
  Status status = ExecuteOnce(loaded.get(), {input.get()}, 1, &failed, &failed_done);
  if (status.ok()) status = Await(failed_done.get());
  EXPECT_FALSE(status.ok());

  auto destroy = MAKE_ARGS(PJRT_ExecuteContext_Destroy_Args);
  destroy.context = create.context;
  EXPECT_PJRT_OK(api()->PJRT_ExecuteContext_Destroy(&destroy));
}

TEST_F(FfiExtensionTest, BadRegistrationsAreErrors) {
  auto args = MAKE_ARGS(PJRT_FFI_Register_Handler_Args);
  args.target_name = "conformance_null_handler";
  args.target_name_size = std::strlen(args.target_name);
  args.handler = nullptr;
  const std::string platform = PlatformName(client_.get());
  args.platform_name = platform.data();
  args.platform_name_size = platform.size();
  EXPECT_FALSE(IsOk(Consume(extension_->register_handler(&args))));
  auto short_args = MAKE_ARGS(PJRT_FFI_Type_Register_Args);
  short_args.struct_size = 8;
  EXPECT_FALSE(IsOk(Consume(extension_->type_register(&short_args))));
}

class KilnFfiExtensionTest : public FfiExtensionTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    FfiExtensionTest::SetUp();
  }
};

TEST_F(KilnFfiExtensionTest, AHandlerForAnotherPlatformIsRefusedByName) {
  Status status = RegisterHandler("Host");
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "platform \"Host\""));
}

TEST_F(KilnFfiExtensionTest, AnUnregisteredTargetNamesHowToRegisterIt) {
  const std::string program = R"mlir(
func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @conformance_never_registered(%arg0) {api_version = 4 : i32, backend_config = {}} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)mlir";
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "mlir", program, &loaded);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "jax.ffi.register_ffi_target"));
}

}  // namespace
}  // namespace conformance

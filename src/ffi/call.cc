#include "ffi/call.h"

#include <array>
#include <atomic>

#include "ffi/attributes.h"
#include "ffi/execution_state.h"
#include "ffi/internal.h"
#include "ffi/legacy_status.h"
#include "ffi/registry.h"

namespace kiln::ffi {
namespace {

StatusOr<XLA_FFI_DataType> DataType(ElementType type) {
  switch (type) {
    case ElementType::kPred: return XLA_FFI_DataType_PRED;
    case ElementType::kS1: return XLA_FFI_DataType_S1;
    case ElementType::kS2: return XLA_FFI_DataType_S2;
    case ElementType::kS4: return XLA_FFI_DataType_S4;
    case ElementType::kS8: return XLA_FFI_DataType_S8;
    case ElementType::kS16: return XLA_FFI_DataType_S16;
    case ElementType::kS32: return XLA_FFI_DataType_S32;
    case ElementType::kS64: return XLA_FFI_DataType_S64;
    case ElementType::kU1: return XLA_FFI_DataType_U1;
    case ElementType::kU2: return XLA_FFI_DataType_U2;
    case ElementType::kU4: return XLA_FFI_DataType_U4;
    case ElementType::kU8: return XLA_FFI_DataType_U8;
    case ElementType::kU16: return XLA_FFI_DataType_U16;
    case ElementType::kU32: return XLA_FFI_DataType_U32;
    case ElementType::kU64: return XLA_FFI_DataType_U64;
    case ElementType::kF16: return XLA_FFI_DataType_F16;
    case ElementType::kBF16: return XLA_FFI_DataType_BF16;
    case ElementType::kF32: return XLA_FFI_DataType_F32;
    case ElementType::kF64: return XLA_FFI_DataType_F64;
    case ElementType::kC64: return XLA_FFI_DataType_C64;
    case ElementType::kC128: return XLA_FFI_DataType_C128;
    case ElementType::kF8E5M2: return XLA_FFI_DataType_F8E5M2;
    case ElementType::kF8E4M3FN: return XLA_FFI_DataType_F8E4M3FN;
    case ElementType::kF8E4M3B11FNUZ: return XLA_FFI_DataType_F8E4M3B11FNUZ;
    case ElementType::kF8E5M2FNUZ: return XLA_FFI_DataType_F8E5M2FNUZ;
    case ElementType::kF8E4M3FNUZ: return XLA_FFI_DataType_F8E4M3FNUZ;
    case ElementType::kF8E4M3: return XLA_FFI_DataType_F8E4M3;
    case ElementType::kF8E3M4: return XLA_FFI_DataType_F8E3M4;
    case ElementType::kF8E8M0FNU: return XLA_FFI_DataType_F8E8M0FNU;
    case ElementType::kF4E2M1FN: return XLA_FFI_DataType_F4E2M1FN;
    case ElementType::kToken: return XLA_FFI_DataType_TOKEN;
    default:
      return InvalidArgument("XLA's FFI has no data type for ", GetElementTypeInfo(type).name,
                             " buffers");
  }
}

Status FromHandler(std::string_view target, const char* stage, XLA_FFI_Error* error) {
  Status status = TakeError(error);
  if (status.ok()) return status;
  return Status(status.code(),
                StrCat("FFI handler \"", target, "\" (", stage, ") failed: ", status.message()));
}

// A typed handler's call: the call frame's template (types, dimensions,
// attributes), the handler's state, and frames to reuse so that a steady
// run allocates nothing.
class TypedCall final : public Call {
 public:
  TypedCall(const TypedTarget& target, CallSpec spec) : target_(target), spec_(std::move(spec)) {}
  ~TypedCall() override {
    for (std::atomic<Frame*>& slot : idle_) delete slot.load();
  }
  TypedCall(const TypedCall&) = delete;
  TypedCall& operator=(const TypedCall&) = delete;

  Status Build() {
    KILN_ASSIGN_OR_RETURN(attributes_, EncodedAttributes::Encode(spec_.attributes));
    for (const Shape& shape : spec_.args) {
      KILN_ASSIGN_OR_RETURN(XLA_FFI_DataType type, DataType(shape.element_type));
      arg_types_.push_back(type);
    }
    for (const Shape& shape : spec_.rets) {
      KILN_ASSIGN_OR_RETURN(XLA_FFI_DataType type, DataType(shape.element_type));
      ret_types_.push_back(type);
    }
    if (target_.bundle.instantiate != nullptr) {
      std::unique_ptr<Frame> frame = NewFrame(/*with_buffers=*/false);
      XLA_FFI_InvokeContext context;
      context.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
      context.state = &state_;
      KILN_RETURN_IF_ERROR(Invoke(*frame, context, target_.bundle.instantiate, "instantiate"));
    }
    return Status::Ok();
  }

  Status Execute(std::span<void* const> args, std::span<void* const> rets,
                 const InvokeInfo& info) const override {
    if (args.size() != spec_.args.size() || rets.size() != spec_.rets.size()) {
      return Internal("FFI call \"", spec_.target, "\" given ", args.size(), " arguments and ",
                      rets.size(), " results, expected ", spec_.args.size(), " and ",
                      spec_.rets.size());
    }
    std::unique_ptr<Frame> frame = TakeFrame();
    for (size_t i = 0; i < args.size(); ++i) frame->args[i].data = args[i];
    for (size_t i = 0; i < rets.size(); ++i) frame->rets[i].data = rets[i];
    XLA_FFI_InvokeContext context;
    context.device_ordinal = info.device_ordinal;
    context.run_id = info.run_id;
    context.user_data = info.user_data;
    context.state = &state_;
    context.run_state = &frame->run_state;
    // Prepare and initialize run before every execute, as XLA's GPU runtime
    // runs them (its CPU backend never does); their states last the run.
    Status status;
    if (target_.bundle.prepare != nullptr) {
      context.stage = XLA_FFI_ExecutionStage_PREPARE;
      status = Invoke(*frame, context, target_.bundle.prepare, "prepare");
    }
    if (status.ok() && target_.bundle.initialize != nullptr) {
      context.stage = XLA_FFI_ExecutionStage_INITIALIZE;
      status = Invoke(*frame, context, target_.bundle.initialize, "initialize");
    }
    if (status.ok()) {
      context.stage = XLA_FFI_ExecutionStage_EXECUTE;
      status = Invoke(*frame, context, target_.bundle.execute, "execute");
    }
    frame->run_state.Clear();
    GiveBack(std::move(frame));
    return status;
  }

 private:
  struct Frame {
    std::vector<XLA_FFI_Buffer> args, rets;
    std::vector<XLA_FFI_ArgType> arg_kinds;
    std::vector<XLA_FFI_RetType> ret_kinds;
    std::vector<void*> arg_pointers, ret_pointers;
    XLA_FFI_CallFrame call{};
    ExecutionState run_state;
  };

  static XLA_FFI_Buffer MakeBuffer(XLA_FFI_DataType type, const Shape& shape) {
    XLA_FFI_Buffer buffer{};
    buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    buffer.dtype = type;
    buffer.rank = type == XLA_FFI_DataType_TOKEN ? 0 : static_cast<int64_t>(shape.dims.size());
    // The handler's view of the dimensions; XLA's type is not const.
    buffer.dims = const_cast<int64_t*>(shape.dims.data());
    return buffer;
  }

  std::unique_ptr<Frame> NewFrame(bool with_buffers) const {
    auto frame = std::make_unique<Frame>();
    if (with_buffers) {
      for (size_t i = 0; i < spec_.args.size(); ++i) {
        frame->args.push_back(MakeBuffer(arg_types_[i], spec_.args[i]));
      }
      for (size_t i = 0; i < spec_.rets.size(); ++i) {
        frame->rets.push_back(MakeBuffer(ret_types_[i], spec_.rets[i]));
      }
    }
    frame->arg_kinds.assign(frame->args.size(), XLA_FFI_ArgType_BUFFER);
    frame->ret_kinds.assign(frame->rets.size(), XLA_FFI_RetType_BUFFER);
    for (XLA_FFI_Buffer& buffer : frame->args) frame->arg_pointers.push_back(&buffer);
    for (XLA_FFI_Buffer& buffer : frame->rets) frame->ret_pointers.push_back(&buffer);
    XLA_FFI_CallFrame& call = frame->call;
    call.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    call.api = Api();
    call.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(frame->args.size()),
                 frame->arg_kinds.data(), frame->arg_pointers.data()};
    call.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(frame->rets.size()),
                 frame->ret_kinds.data(), frame->ret_pointers.data()};
    call.attrs = attributes_->attrs();
    return frame;
  }

  // A frame from the idle slots, or a new one when every slot is empty (a
  // first call, or more calls at once than there are slots).
  std::unique_ptr<Frame> TakeFrame() const {
    for (std::atomic<Frame*>& slot : idle_) {
      if (Frame* frame = slot.exchange(nullptr, std::memory_order_acquire)) {
        return std::unique_ptr<Frame>(frame);
      }
    }
    return NewFrame(/*with_buffers=*/true);
  }

  void GiveBack(std::unique_ptr<Frame> frame) const {
    for (std::atomic<Frame*>& slot : idle_) {
      Frame* empty = nullptr;
      if (slot.compare_exchange_strong(empty, frame.get(), std::memory_order_release)) {
        frame.release();
        return;
      }
    }
  }

  // Calls `handler` at `context.stage`, then waits for the future it
  // returned, if any.
  Status Invoke(Frame& frame, XLA_FFI_InvokeContext& context, XLA_FFI_Handler* handler,
                const char* stage) const {
    frame.call.ctx = &context;
    frame.call.stage = context.stage;
    frame.call.future = nullptr;
    frame.call.extension_start = nullptr;
    XLA_FFI_Error* error = handler(&frame.call);
    XLA_FFI_Future* future = frame.call.future;
    frame.call.ctx = nullptr;
    if (error != nullptr) {
      // A handler that made a future and still failed: its completer's
      // reference stays with it; the runtime's is dropped.
      if (future != nullptr) Release(future);
      return FromHandler(spec_.target, stage, error);
    }
    if (future == nullptr) return Status::Ok();
    Status status = WaitAndRelease(future);
    if (status.ok()) return status;
    return Status(status.code(), StrCat("FFI handler \"", spec_.target, "\" (", stage,
                                        ") completed with an error: ", status.message()));
  }

  const TypedTarget& target_;
  CallSpec spec_;
  std::unique_ptr<EncodedAttributes> attributes_;
  std::vector<XLA_FFI_DataType> arg_types_, ret_types_;
  mutable ExecutionState state_;
  // Frames of finished calls, kept so that a steady run allocates none; as
  // many as calls that may run at once (a run per device) without a lock.
  mutable std::array<std::atomic<Frame*>, 8> idle_{};
};

// A function of the custom-call API before FFI. Its pointer arrays are
// built per call on the stack for up to kInline operands.
class LegacyCall final : public Call {
 public:
  LegacyCall(const LegacyTarget& target, CallSpec spec) : target_(target), spec_(std::move(spec)) {}

  Status Execute(std::span<void* const> args, std::span<void* const> rets,
                 const InvokeInfo&) const override {
    constexpr size_t kInline = 16;
    const void* inline_in[kInline];
    void* inline_out[kInline];
    std::vector<const void*> heap_in;
    std::vector<void*> heap_out;
    const void** in = inline_in;
    void** out = inline_out;
    if (args.size() > kInline) {
      heap_in.resize(args.size());
      in = heap_in.data();
    }
    if (rets.size() > kInline) {
      heap_out.resize(rets.size());
      out = heap_out.data();
    }
    for (size_t i = 0; i < args.size(); ++i) in[i] = args[i];
    for (size_t i = 0; i < rets.size(); ++i) out[i] = rets[i];
    // One result is passed as itself; several (a tuple) as an array.
    void* result = rets.size() == 1 ? rets[0] : static_cast<void*>(out);
    XlaCustomCallStatus status;
    switch (spec_.api_version) {
      case ApiVersion::kOriginal:
        reinterpret_cast<void (*)(void*, const void**)>(target_.function)(result, in);
        break;
      case ApiVersion::kStatusReturning:
        reinterpret_cast<void (*)(void*, const void**, XlaCustomCallStatus*)>(target_.function)(
            result, in, &status);
        break;
      default:
        reinterpret_cast<void (*)(void*, const void**, const char*, size_t, XlaCustomCallStatus*)>(
            target_.function)(result, in, spec_.opaque.data(), spec_.opaque.size(), &status);
        break;
    }
    if (status.message) {
      return Status(StatusCode::kInternal,
                    StrCat("custom call \"", spec_.target, "\" failed: ", *status.message));
    }
    return Status::Ok();
  }

 private:
  const LegacyTarget& target_;
  CallSpec spec_;
};

}  // namespace

bool IsRegistered(std::string_view target, ApiVersion version) {
  return version == ApiVersion::kTypedFfi ? Registry::Global().FindTyped(target) != nullptr
                                          : Registry::Global().FindLegacy(target) != nullptr;
}

StatusOr<std::shared_ptr<const Call>> Call::Create(CallSpec spec) {
  const int version = static_cast<int>(spec.api_version);
  if (version < 1 || version > 4) {
    return InvalidArgument("custom_call @", spec.target, ": api_version ", version,
                           " is not one of 1-4");
  }
  if (spec.api_version == ApiVersion::kTypedFfi) {
    const TypedTarget* target = Registry::Global().FindTyped(spec.target);
    if (target == nullptr) {
      return NotFound("no FFI handler is registered for custom_call target \"", spec.target,
                      "\" on platform \"", kPlatform,
                      "\": register it with jax.ffi.register_ffi_target(\"", spec.target,
                      "\", handler, platform=\"", kPlatform, "\")");
    }
    auto call = std::make_shared<TypedCall>(*target, std::move(spec));
    KILN_RETURN_IF_ERROR(call->Build());
    return std::shared_ptr<const Call>(std::move(call));
  }
  const LegacyTarget* target = Registry::Global().FindLegacy(spec.target);
  if (target == nullptr) {
    return NotFound("no custom call function is registered for target \"", spec.target,
                    "\" (api_version ", version, ") on platform \"", kPlatform,
                    "\": register it with jax.ffi.register_ffi_target(\"", spec.target,
                    "\", capsule, platform=\"", kPlatform, "\", api_version=0)");
  }
  for (const Shape& shape : spec.args) {
    if (shape.element_type == ElementType::kToken) {
      return InvalidArgument("custom_call @", spec.target, " (api_version ", version,
                             ") takes a token, which only typed FFI handlers accept");
    }
  }
  return std::shared_ptr<const Call>(std::make_shared<LegacyCall>(*target, std::move(spec)));
}

}  // namespace kiln::ffi

// XLA FFI handlers that tests/ffi/test_ffi.py registers with `jax.ffi` for both
// JAX's CPU backend and Kiln, then runs on each and compares. Written only
// against the public header xla/ffi/api/ffi.h that jaxlib ships, as a user's
// extension would be; no Kiln code is linked.
//
// Every handler is exported as an `extern "C"` symbol that the test wraps with
// `jax.ffi.pycapsule`. Counters the tests observe (side effects, stage calls,
// state deletions) are process-wide atomics read through `extern "C"` getters.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ---------------------------------------------------------------------------
// RMS normalization over the last axis: y = x / sqrt(mean(x^2) + eps).
// ---------------------------------------------------------------------------

// Splits a buffer's dimensions into (rows, row length) around the last axis.
// A rank-0 buffer is an error: there is no axis to normalize over.
ffi::Error SplitLastAxis(ffi::Span<const int64_t> dimensions, int64_t& rows, int64_t& length) {
  if (dimensions.size() == 0) {
    return ffi::Error::InvalidArgument("kiln_test_rms_norm: expected an input of rank >= 1");
  }
  length = dimensions.back();
  rows = 1;
  for (size_t axis = 0; axis + 1 < dimensions.size(); ++axis) rows *= dimensions[axis];
  return ffi::Error::Success();
}

// 1 / sqrt(mean(row^2) + eps) for one row.
float RowRsqrt(const float* row, int64_t length, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < length; ++i) sum += static_cast<double>(row[i]) * row[i];
  double mean = length > 0 ? sum / static_cast<double>(length) : 0.0;
  return static_cast<float>(1.0 / std::sqrt(mean + eps));
}

// The shared body of rms_norm and rms_norm_fwd; `residual` may be null.
ffi::Error RmsNormRows(float eps, ffi::Buffer<ffi::F32> x, float* y, float* residual) {
  int64_t rows = 0;
  int64_t length = 0;
  if (ffi::Error error = SplitLastAxis(x.dimensions(), rows, length); error.failure()) {
    return error;
  }
  const float* input = x.typed_data();
  for (int64_t row = 0; row < rows; ++row) {
    const float* in_row = input + row * length;
    float scale = RowRsqrt(in_row, length, eps);
    for (int64_t i = 0; i < length; ++i) y[row * length + i] = in_row[i] * scale;
    if (residual != nullptr) residual[row] = scale;
  }
  return ffi::Error::Success();
}

ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  return RmsNormRows(eps, x, y->typed_data(), nullptr);
}

ffi::Error RmsNormFwdImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                          ffi::ResultBuffer<ffi::F32> residual) {
  return RmsNormRows(eps, x, y->typed_data(), residual->typed_data());
}

// dx = r * ct - r^3 * x * sum(ct * x) / n, with r the forward pass's residual.
ffi::Error RmsNormBwdImpl(ffi::Buffer<ffi::F32> residual, ffi::Buffer<ffi::F32> x,
                          ffi::Buffer<ffi::F32> cotangent, ffi::ResultBuffer<ffi::F32> dx) {
  int64_t rows = 0;
  int64_t length = 0;
  if (ffi::Error error = SplitLastAxis(x.dimensions(), rows, length); error.failure()) {
    return error;
  }
  if (static_cast<int64_t>(residual.element_count()) != rows) {
    return ffi::Error::InvalidArgument("kiln_test_rms_norm_bwd: residual has " +
                                       std::to_string(residual.element_count()) +
                                       " elements, expected one per row (" + std::to_string(rows) +
                                       ")");
  }
  for (int64_t row = 0; row < rows; ++row) {
    const float* x_row = x.typed_data() + row * length;
    const float* ct_row = cotangent.typed_data() + row * length;
    float* dx_row = dx->typed_data() + row * length;
    double r = residual.typed_data()[row];
    double dot = 0.0;
    for (int64_t i = 0; i < length; ++i) dot += static_cast<double>(ct_row[i]) * x_row[i];
    double coefficient = r * r * r * dot / static_cast<double>(length);
    for (int64_t i = 0; i < length; ++i) {
      dx_row[i] = static_cast<float>(r * ct_row[i] - coefficient * x_row[i]);
    }
  }
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// Attributes.
// ---------------------------------------------------------------------------

// Reads every attribute through one ffi::Dictionary (`Ffi::Bind().Attrs()`) and
// writes a value that depends on each into out (f64[8]):
//   [0] count (i64)          [1] scale (f32)         [2] flag (bool) ? 1 : 0
//   [3] size of name (str)   [4] first char of name  [5] sum of dims (i64 array)
//   [6] nested.offset (i64) * nested.factor (f64)    [7] size of nested.label (str)
ffi::Error AttrDictImpl(ffi::Dictionary attrs, ffi::ResultBuffer<ffi::F64> out) {
  if (out->element_count() != 8) {
    return ffi::Error::InvalidArgument("kiln_test_attr_dict: expected an f64[8] result");
  }
  ffi::ErrorOr<int64_t> count = attrs.get<int64_t>("count");
  ffi::ErrorOr<float> scale = attrs.get<float>("scale");
  ffi::ErrorOr<bool> flag = attrs.get<bool>("flag");
  ffi::ErrorOr<std::string_view> name = attrs.get<std::string_view>("name");
  ffi::ErrorOr<ffi::Span<const int64_t>> dims = attrs.get<ffi::Span<const int64_t>>("dims");
  ffi::ErrorOr<ffi::Dictionary> nested = attrs.get<ffi::Dictionary>("nested");
  if (!count.has_value()) return count.error();
  if (!scale.has_value()) return scale.error();
  if (!flag.has_value()) return flag.error();
  if (!name.has_value()) return name.error();
  if (!dims.has_value()) return dims.error();
  if (!nested.has_value()) return nested.error();
  ffi::ErrorOr<int64_t> offset = nested->get<int64_t>("offset");
  ffi::ErrorOr<double> factor = nested->get<double>("factor");
  ffi::ErrorOr<std::string_view> label = nested->get<std::string_view>("label");
  if (!offset.has_value()) return offset.error();
  if (!factor.has_value()) return factor.error();
  if (!label.has_value()) return label.error();

  double dims_sum = 0.0;
  for (int64_t dim : *dims) dims_sum += static_cast<double>(dim);
  double* values = out->typed_data();
  values[0] = static_cast<double>(*count);
  values[1] = static_cast<double>(*scale);
  values[2] = *flag ? 1.0 : 0.0;
  values[3] = static_cast<double>(name->size());
  values[4] = name->empty() ? -1.0 : static_cast<double>(static_cast<unsigned char>((*name)[0]));
  values[5] = dims_sum;
  values[6] = static_cast<double>(*offset) * *factor;
  values[7] = static_cast<double>(label->size());
  return ffi::Error::Success();
}

// Writes each scalar attribute, converted to f64, into out (f64[11]) in the
// order of the binding below.
ffi::Error ScalarAttrsImpl(int8_t a_i8, int16_t a_i16, int32_t a_i32, int64_t a_i64, uint8_t a_u8,
                           uint16_t a_u16, uint32_t a_u32, uint64_t a_u64, float a_f32,
                           double a_f64, bool a_bool, ffi::ResultBuffer<ffi::F64> out) {
  if (out->element_count() != 11) {
    return ffi::Error::InvalidArgument("kiln_test_scalar_attrs: expected an f64[11] result");
  }
  double* values = out->typed_data();
  values[0] = a_i8;
  values[1] = a_i16;
  values[2] = a_i32;
  values[3] = static_cast<double>(a_i64);
  values[4] = a_u8;
  values[5] = a_u16;
  values[6] = a_u32;
  values[7] = static_cast<double>(a_u64);
  values[8] = a_f32;
  values[9] = a_f64;
  values[10] = a_bool ? 1.0 : 0.0;
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------

// The message the tests look for in the Python exception.
constexpr char kFailureMessage[] = "kiln-ffi-test: deliberate failure requested by attribute";

// Copies x to y, or fails with kFailureMessage when `fail` is set.
ffi::Error FailIfImpl(bool fail, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  if (fail) return ffi::Error(ffi::ErrorCode::kInvalidArgument, kFailureMessage);
  std::memcpy(y->untyped_data(), x.untyped_data(), x.size_bytes());
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// State: created at the instantiate stage, read and updated at execute.
// ---------------------------------------------------------------------------

// Process-wide counts the tests read: calls per stage of kiln_test_counter
// (indexed by XLA_FFI_ExecutionStage) and CounterState objects deleted.
std::atomic<int64_t> stage_calls[4];
std::atomic<int64_t> states_deleted{0};

// Per-executable state of kiln_test_counter: how many times it has executed,
// plus the `start` attribute it was instantiated with.
struct CounterState {
  static ffi::TypeId id;  // assigned when the type is registered
  explicit CounterState(int64_t start) : count(start) {}
  ~CounterState() { states_deleted.fetch_add(1); }
  std::atomic<int64_t> count;
};
ffi::TypeId CounterState::id = {};

const ffi::TypeInfo kCounterStateTypeInfo = ffi::MakeTypeInfo<CounterState>();

ffi::ErrorOr<std::unique_ptr<CounterState>> CounterInstantiate(int64_t start) {
  stage_calls[XLA_FFI_ExecutionStage_INSTANTIATE].fetch_add(1);
  return std::make_unique<CounterState>(start);
}

// The prepare and initialize stages only count their calls: the tests report
// whether a runtime calls them, and a handler bundle may carry them.
ffi::Error CounterPrepare() {
  stage_calls[XLA_FFI_ExecutionStage_PREPARE].fetch_add(1);
  return ffi::Error::Success();
}

ffi::Error CounterInitialize() {
  stage_calls[XLA_FFI_ExecutionStage_INITIALIZE].fetch_add(1);
  return ffi::Error::Success();
}

// Increments the state's counter and writes the new value to out (s64[]).
ffi::Error CounterExecute(CounterState* state, ffi::ResultBuffer<ffi::S64> out) {
  stage_calls[XLA_FFI_ExecutionStage_EXECUTE].fetch_add(1);
  if (state == nullptr) {
    return ffi::Error::Internal("kiln_test_counter: no state from the instantiate stage");
  }
  *out->typed_data() = state->count.fetch_add(1) + 1;
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// Asynchronous execution: the result is completed on another thread.
// ---------------------------------------------------------------------------

// y = x + 1, computed on a new thread after a short sleep so that the runtime
// really has to wait for the future; with `fail` the future completes with an
// error instead. The thread is detached: it owns only the promise and raw
// buffer pointers that stay valid until the future completes.
ffi::Future AsyncAddOneImpl(bool fail, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  ffi::Promise promise;
  ffi::Future future(promise);
  const float* input = x.typed_data();
  float* output = y->typed_data();
  size_t count = x.element_count();
  std::thread([promise, input, output, count, fail]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fail) {
      promise.SetError(ffi::Error(ffi::ErrorCode::kInternal,
                                  "kiln-ffi-test: asynchronous failure requested by attribute"));
      return;
    }
    for (size_t i = 0; i < count; ++i) output[i] = input[i] + 1.0f;
    promise.SetAvailable();
  }).detach();
  return future;
}

// ---------------------------------------------------------------------------
// Execution context: the intra-op thread pool and the device ordinal.
// ---------------------------------------------------------------------------

constexpr int64_t kThreadPoolTasks = 4;

// Fills out (s32[n]) with out[i] = i * 3 + 1, split into kThreadPoolTasks
// tasks on the runtime's thread pool, and writes the device ordinal to
// ordinal (s32[]). Waits for the tasks with a future rather than blocking, so
// it cannot deadlock when it itself runs on a thread of that pool.
ffi::Future ThreadPoolImpl(ffi::ThreadPool pool, int32_t device_ordinal,
                           ffi::ResultBuffer<ffi::S32> out, ffi::ResultBuffer<ffi::S32> ordinal) {
  *ordinal->typed_data() = device_ordinal;
  int32_t* values = out->typed_data();
  int64_t count = static_cast<int64_t>(out->element_count());
  ffi::CountDownPromise done(kThreadPoolTasks);
  ffi::Future future(done);
  int64_t chunk = (count + kThreadPoolTasks - 1) / kThreadPoolTasks;
  for (int64_t task = 0; task < kThreadPoolTasks; ++task) {
    int64_t begin = std::min(count, task * chunk);
    int64_t end = std::min(count, begin + chunk);
    pool.Schedule([values, begin, end, done]() mutable {
      for (int64_t i = begin; i < end; ++i) values[i] = static_cast<int32_t>(i * 3 + 1);
      done.CountDown();
    });
  }
  return future;
}

// ---------------------------------------------------------------------------
// Small handlers: no-op, side effects, variadic arguments, aliasing.
// ---------------------------------------------------------------------------

// Copies a tiny buffer through: the cheapest call with one operand and one
// result, for measuring call overhead.
ffi::Error NoopImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  if (x.untyped_data() != y->untyped_data()) {
    std::memcpy(y->untyped_data(), x.untyped_data(), std::min(x.size_bytes(), y->size_bytes()));
  }
  return ffi::Error::Success();
}

// No operands, no results, no work: the call itself and nothing else.
ffi::Error NoopEmptyImpl() { return ffi::Error::Success(); }

std::atomic<int64_t> side_effect_calls{0};

// Counts its calls and copies x to y; the tests mark it has_side_effect and
// drop its result, then check that the count still went up.
ffi::Error SideEffectImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  side_effect_calls.fetch_add(1);
  std::memcpy(y->untyped_data(), x.untyped_data(), std::min(x.size_bytes(), y->size_bytes()));
  return ffi::Error::Success();
}

// y = sum of any number (>= 1) of f32 operands of one shape.
ffi::Error VariadicSumImpl(ffi::RemainingArgs args, ffi::ResultBuffer<ffi::F32> y) {
  if (args.size() == 0) return ffi::Error::InvalidArgument("kiln_test_variadic_sum: no operands");
  size_t count = y->element_count();
  float* output = y->typed_data();
  std::fill(output, output + count, 0.0f);
  for (size_t index = 0; index < args.size(); ++index) {
    ffi::ErrorOr<ffi::Buffer<ffi::F32>> arg = args.get<ffi::Buffer<ffi::F32>>(index);
    if (!arg.has_value()) return arg.error();
    if (arg->element_count() != count) {
      return ffi::Error::InvalidArgument("kiln_test_variadic_sum: operand " +
                                         std::to_string(index) + " has " +
                                         std::to_string(arg->element_count()) +
                                         " elements, the result " + std::to_string(count));
    }
    for (size_t i = 0; i < count; ++i) output[i] += arg->typed_data()[i];
  }
  return ffi::Error::Success();
}

// Writes only y[0] = value and leaves the rest of y alone, so it is correct
// only when y aliases x (input_output_aliases={0: 0}); same (s32[]) is 1 when
// the runtime passed the same address for x and y.
ffi::Error InplaceSetFirstImpl(float value, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                               ffi::ResultBuffer<ffi::S32> same) {
  *same->typed_data() = x.untyped_data() == y->untyped_data() ? 1 : 0;
  if (y->element_count() > 0) y->typed_data()[0] = value;
  return ffi::Error::Success();
}

}  // namespace

// ---------------------------------------------------------------------------
// Exported handlers (typed FFI: register_ffi_target(..., api_version=1)).
// ---------------------------------------------------------------------------

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    kiln_test_rms_norm, RmsNormImpl,
    ffi::Ffi::Bind().Attr<float>("eps").Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_rms_norm_fwd, RmsNormFwdImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_rms_norm_bwd, RmsNormBwdImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_attr_dict, AttrDictImpl,
                              ffi::Ffi::Bind().Attrs().Ret<ffi::Buffer<ffi::F64>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_scalar_attrs, ScalarAttrsImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int8_t>("a_i8")
                                  .Attr<int16_t>("a_i16")
                                  .Attr<int32_t>("a_i32")
                                  .Attr<int64_t>("a_i64")
                                  .Attr<uint8_t>("a_u8")
                                  .Attr<uint16_t>("a_u16")
                                  .Attr<uint32_t>("a_u32")
                                  .Attr<uint64_t>("a_u64")
                                  .Attr<float>("a_f32")
                                  .Attr<double>("a_f64")
                                  .Attr<bool>("a_bool")
                                  .Ret<ffi::Buffer<ffi::F64>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    kiln_test_fail_if, FailIfImpl,
    ffi::Ffi::Bind().Attr<bool>("fail").Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// kiln_test_counter: one target, a handler per stage (register_ffi_target with
// {"instantiate": ..., "prepare": ..., "initialize": ..., "execute": ...}).
XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_counter_instantiate, CounterInstantiate,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("start"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_counter_prepare, CounterPrepare, ffi::Ffi::BindPrepare());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_counter_initialize, CounterInitialize,
                              ffi::Ffi::BindInitialize());

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    kiln_test_counter_execute, CounterExecute,
    ffi::Ffi::Bind().Ctx<ffi::State<CounterState>>().Ret<ffi::Buffer<ffi::S64>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    kiln_test_async_add_one, AsyncAddOneImpl,
    ffi::Ffi::Bind().Attr<bool>("fail").Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_thread_pool, ThreadPoolImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_noop, NoopImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_noop_empty, NoopEmptyImpl, ffi::Ffi::Bind());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_side_effect, SideEffectImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_variadic_sum, VariadicSumImpl,
                              ffi::Ffi::Bind().RemainingArgs().Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(kiln_test_inplace_set_first, InplaceSetFirstImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("value")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

// ---------------------------------------------------------------------------
// The state type's registration (jax.ffi.register_ffi_type) and counters.
// ---------------------------------------------------------------------------

// CounterState's type id; the registry writes the id it assigns into it.
extern "C" XLA_FFI_TypeId* kiln_test_counter_state_type_id() { return &CounterState::id; }

// CounterState's type info: how the runtime deletes a state it owns.
extern "C" const XLA_FFI_TypeInfo* kiln_test_counter_state_type_info() {
  return &kCounterStateTypeInfo;
}

// Calls of kiln_test_counter's stage `stage` (an XLA_FFI_ExecutionStage:
// 0 instantiate, 1 prepare, 2 initialize, 3 execute) since the library loaded.
extern "C" int64_t kiln_test_stage_calls(int32_t stage) {
  return stage >= 0 && stage < 4 ? stage_calls[stage].load() : -1;
}

// CounterState objects deleted (by the runtime, through the type info).
extern "C" int64_t kiln_test_states_deleted() { return states_deleted.load(); }

// Calls of kiln_test_side_effect since the library loaded.
extern "C" int64_t kiln_test_side_effect_calls() { return side_effect_calls.load(); }

// ---------------------------------------------------------------------------
// Legacy custom calls (register_ffi_target(..., api_version=0)). They see no
// shapes, so by this file's convention operand 0 is an s32[] element count.
// ---------------------------------------------------------------------------

// API_VERSION_ORIGINAL: in = {n: s32[], x: f32[n]}; out = f32[n] = x + 1.
extern "C" void kiln_test_legacy_add_one(void* out, const void** in) {
  int32_t count = *static_cast<const int32_t*>(in[0]);
  const float* x = static_cast<const float*>(in[1]);
  float* y = static_cast<float*>(out);
  for (int32_t i = 0; i < count; ++i) y[i] = x[i] + 1.0f;
}

// API_VERSION_STATUS_RETURNING: in = {n: s32[], scale: f32[], x: f32[n]};
// out = f32[n] = scale * x. The status is opaque and left untouched (success).
extern "C" void kiln_test_legacy_scale(void* out, const void** in, void* status) {
  (void)status;
  int32_t count = *static_cast<const int32_t*>(in[0]);
  float scale = *static_cast<const float*>(in[1]);
  const float* x = static_cast<const float*>(in[2]);
  float* y = static_cast<float*>(out);
  for (int32_t i = 0; i < count; ++i) y[i] = scale * x[i];
}

// API_VERSION_ORIGINAL with two results. XLA CPU then passes `out` as an
// array of result addresses (void**), one per result, in result order:
// in = {n: s32[], x: f32[n]}; out[0] = f32[n] = 2 * x, out[1] = f32[] = sum(x).
extern "C" void kiln_test_legacy_double_and_sum(void* out, const void** in) {
  int32_t count = *static_cast<const int32_t*>(in[0]);
  const float* x = static_cast<const float*>(in[1]);
  void** results = static_cast<void**>(out);
  float* doubled = static_cast<float*>(results[0]);
  float* sum = static_cast<float*>(results[1]);
  float total = 0.0f;
  for (int32_t i = 0; i < count; ++i) {
    doubled[i] = 2.0f * x[i];
    total += x[i];
  }
  *sum = total;
}

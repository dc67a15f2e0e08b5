// libFuzzer target for the attributes of typed FFI calls (src/ffi/attributes.h):
// the input is read as an attribute (a custom_call's backend_config
// dictionary, as in `{eps = 1.0e-05 : f32, d = {n = 3 : i64}}`). One the
// text reader accepts must encode or be an INVALID_ARGUMENT; an encoding must
// pass EncodedAttributes::Validate, and a handler built with XLA's own FFI
// binding (xla/ffi/api/ffi.h) must decode every attribute of it, as every
// type it could be, without a crash. Built by `make test-fuzz`, seeded from
// fuzz/corpus/ffi_attributes by fuzz/run_fuzzers.sh.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffi/api.h"
#include "ffi/attributes.h"
#include "frontend/text/parser.h"
#include "xla/ffi/api/ffi.h"

namespace {

namespace xffi = xla::ffi;

// Asks for every attribute as every type the binding decodes; only the
// decoder's robustness matters, not the values.
void DecodeAll(const xffi::Dictionary& dictionary, int depth) {
  if (depth > 40) return;
  for (const std::string_view name : dictionary) {
    (void)dictionary.get<bool>(name);
    (void)dictionary.get<int8_t>(name);
    (void)dictionary.get<int32_t>(name);
    (void)dictionary.get<uint64_t>(name);
    (void)dictionary.get<float>(name);
    (void)dictionary.get<double>(name);
    (void)dictionary.get<std::string_view>(name);
    (void)dictionary.get<xffi::Span<const int64_t>>(name);
    (void)dictionary.get<xffi::Span<const float>>(name);
    if (auto nested = dictionary.get<xffi::Dictionary>(name); nested.has_value()) {
      DecodeAll(*nested, depth + 1);
    }
  }
}

xffi::Error Walk(xffi::Dictionary attributes) {
  DecodeAll(attributes, 0);
  return xffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(kWalk, Walk, xffi::Ffi::Bind().Attrs());

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::StatusOr<kiln::ir::Attribute> attribute = kiln::frontend::text::ParseAttribute(text);
  if (!attribute.ok()) return 0;  // the text reader's own fuzzer covers its errors
  auto encoded = kiln::ffi::EncodedAttributes::Encode(*attribute);
  if (!encoded.ok()) {
    if (encoded.status().code() != kiln::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  const XLA_FFI_Attrs& attrs = (*encoded)->attrs();
  if (!kiln::ffi::EncodedAttributes::Validate(attrs).ok()) std::abort();
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = kiln::ffi::Api();
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  frame.attrs = attrs;
  if (XLA_FFI_Error* error = kWalk(&frame)) {
    XLA_FFI_Error_Destroy_Args destroy{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
    kiln::ffi::Api()->XLA_FFI_Error_Destroy(&destroy);
  }
  return 0;
}

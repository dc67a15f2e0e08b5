// A typed FFI call's attributes (the custom_call's backend_config
// dictionary), encoded once at compile time in the form the call frame
// passes them: sorted by name, scalars, arrays, strings and nested
// dictionaries, as XLA converts them (xla/ffi/attribute_map.cc).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/attribute.h"
#include "xla/ffi/api/c_api.h"

namespace kiln::ffi {

class EncodedAttributes {
 public:
  // Dictionaries nest at most this deep; deeper ones are INVALID_ARGUMENT.
  static constexpr int kMaxDepth = 32;

  // Encodes `dictionary` (null: no attributes). An attribute XLA's FFI
  // cannot pass (a type, a symbol, an f16 scalar, a dense bool array) is
  // INVALID_ARGUMENT naming it, as on XLA.
  static StatusOr<std::unique_ptr<EncodedAttributes>> Encode(const ir::Attribute& dictionary);

  // The top-level attributes; every pointer in them lives as long as this.
  const XLA_FFI_Attrs& attrs() const { return dictionaries_.front(); }

  // Checks what the call frame promises a handler: known attribute types,
  // non-null pointers, sizes that match, names strictly sorted. Used by the
  // fuzz target and the tests; Encode's output always passes.
  static Status Validate(const XLA_FFI_Attrs& attrs);

  EncodedAttributes(const EncodedAttributes&) = delete;
  EncodedAttributes& operator=(const EncodedAttributes&) = delete;

 private:
  EncodedAttributes() = default;
  // Appends the dictionary `fields` (already sorted) at `depth`; returns
  // its XLA_FFI_Attrs, whose address is stable.
  StatusOr<XLA_FFI_Attrs*> AddDictionary(const std::vector<ir::NamedAttribute>& fields, int depth,
                                         const std::string& path);
  Status AddValue(const ir::Attribute& value, const std::string& path, int depth,
                  XLA_FFI_AttrType& type, void*& encoded);

  // Deques: growing them never moves what the encoded pointers point at.
  std::deque<XLA_FFI_Attrs> dictionaries_;
  std::deque<std::vector<XLA_FFI_AttrType>> types_;
  std::deque<std::vector<XLA_FFI_ByteSpan*>> name_lists_;
  std::deque<std::vector<void*>> value_lists_;
  std::deque<std::string> texts_;
  std::deque<XLA_FFI_ByteSpan> spans_;
  std::deque<XLA_FFI_Scalar> scalars_;
  std::deque<XLA_FFI_Array> arrays_;
  // Scalar values and array elements, 8-byte aligned.
  std::deque<std::vector<uint64_t>> payloads_;
};

}  // namespace kiln::ffi

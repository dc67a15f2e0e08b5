#include "frontend/vhlo/dense.h"

#include <cstring>
#include <vector>

#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {
namespace {

// Whether all `count` elements of `bytes` equal the first one.
bool AllElementsEqual(const std::vector<uint8_t>& bytes, size_t element_bytes, int64_t count) {
  for (int64_t i = 1; i < count; ++i) {
    if (std::memcmp(&bytes[static_cast<size_t>(i) * element_bytes], bytes.data(), element_bytes) !=
        0) {
      return false;
    }
  }
  return true;
}

// i1 data: `packed` says the blob holds one bit per element, LSB first.
std::vector<uint8_t> UnpackBits(std::span<const uint8_t> blob, int64_t count) {
  std::vector<uint8_t> data(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    data[static_cast<size_t>(i)] = (blob[static_cast<size_t>(i / 8)] >> (i % 8)) & 1;
  }
  return data;
}

}  // namespace

size_t DenseElementBytes(const ir::Type& element) {
  if (element.Is(ir::TypeKind::kElement)) {
    return GetElementTypeInfo(element.element_type()).storage_bytes;
  }
  if (element.Is(ir::TypeKind::kQuantized)) {
    return GetElementTypeInfo(ir::GetQuantizedParams(element).storage_type).storage_bytes;
  }
  return 0;
}

StatusOr<ir::Attribute> DenseElementsFromBlob(const ir::Type& type, std::span<const uint8_t> blob,
                                              DenseFlavor flavor,
                                              const bytecode::EncodingReader& reader,
                                              uint64_t offset) {
  if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape()) {
    return reader.ErrorAt(offset, StrCat("expected dense data of a statically shaped tensor, "
                                         "found data of type ",
                                         TypeText(type)));
  }
  const size_t element_bytes = DenseElementBytes(type.element());
  if (element_bytes == 0) {
    return Unimplemented("byte ", offset, ": Kiln cannot hold dense data of element type ",
                         TypeText(type.element()), " (", reader.context(), ")");
  }
  Status valid = ValidateDims(type.dims(), element_bytes, "dense data");
  if (!valid.ok()) return reader.ErrorAt(offset, valid.message());
  const int64_t count = type.NumElements();
  const size_t full_size = static_cast<size_t>(count) * element_bytes;

  const bool is_i1 = type.element().Is(ir::TypeKind::kElement) &&
                     type.element().element_type() == ElementType::kPred;
  std::vector<uint8_t> data;
  bool splat = false;
  if (is_i1) {
    const size_t packed_size = static_cast<size_t>((count + 7) / 8);
    // A splat is one byte of all ones (VHLO; builtin too) or all zeros
    // (builtin), as MLIR writes it. Builtin data of up to 8 elements is
    // otherwise one packed byte; a single byte for more elements is a splat.
    const bool one_byte = blob.size() == 1 && count > 1;
    const bool splat_byte = one_byte &&
                            (blob[0] == 0xFF || (flavor == DenseFlavor::kBuiltin && blob[0] == 0));
    const bool packed = !splat_byte && blob.size() == packed_size &&
                        blob.size() != static_cast<size_t>(count);
    if (splat_byte) {
      data = {static_cast<uint8_t>(blob[0] != 0)};
      splat = true;
    } else if (packed) {
      data = UnpackBits(blob, count);
    } else {
      data.assign(blob.begin(), blob.end());
      for (uint8_t& byte : data) byte = byte != 0;
    }
  } else {
    data.assign(blob.begin(), blob.end());
  }
  if (!splat) {
    if (data.size() == full_size) {
      splat = count > 1 && AllElementsEqual(data, element_bytes, count);
      if (splat) data.resize(element_bytes);
    } else if (data.size() == element_bytes) {
      splat = true;
    } else {
      return reader.ErrorAt(offset, StrCat("expected ", full_size, " bytes of dense data for ",
                                           TypeText(type), " (or ", element_bytes,
                                           " for a splat), found ", blob.size()));
    }
  }
  return ir::Attribute::DenseElements(type, std::move(data), splat);
}

}  // namespace kiln::frontend::vhlo

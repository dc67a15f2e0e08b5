#include "compiler/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "base/env.h"

namespace kiln::compiler {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

bool IsFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kF32 || type == ElementType::kF64;
}

bool IsSigned(ElementType type) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64: return true;
    default: return false;
  }
}

std::string Descr(ElementType type) {
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  if (type == ElementType::kPred) return "|b1";
  if (type == ElementType::kC64 || type == ElementType::kC128) return StrCat("<c", bytes);
  if (IsFloat(type)) return StrCat("<f", bytes);
  return StrCat(bytes == 1 ? "|" : "<", IsSigned(type) ? "i" : "u", bytes);
}

}  // namespace

Status WriteNpy(const std::string& path, const Shape& shape, const void* data) {
  std::string dims;
  for (int64_t dim : shape.dims) dims += StrCat(dim, ",");
  if (shape.dims.size() > 1) dims.pop_back();  // (3,) for one dimension, (2, 3) for two
  std::string header = StrCat("{'descr': '", Descr(shape.element_type),
                              "', 'fortran_order': False, 'shape': (", dims, "), }");
  // Magic, version and length take 10 bytes; the header ends in a newline
  // at a multiple of 64 bytes.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return NotFound("cannot write the probe file ", path);
  out.write(kMagic, kMagicSize);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const uint16_t length = static_cast<uint16_t>(header.size());
  const char length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(shape.ByteSize()));
  if (!out) return Internal("writing the probe file ", path, " failed");
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> ReadNpy(const std::string& path, const Shape& shape) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open the probe file ", path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return InvalidArgument(path, " is not a NumPy .npy file");
  }
  const size_t length = bytes[8] | (size_t{bytes[9]} << 8);
  if (bytes[6] != 1 || 10 + length > bytes.size()) {
    return InvalidArgument(path, ": expected a .npy file of format 1.0 with its whole header");
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + 10, length);
  // The element size ends the descr ('<f4'), and the shape lists the dims.
  const size_t descr = header.find("'descr'");
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  if (descr == std::string::npos || open == std::string::npos || close == std::string::npos ||
      header.find("False", header.find("'fortran_order'")) == std::string::npos) {
    return InvalidArgument(path, ": expected descr, fortran_order False and shape in the header");
  }
  std::vector<int64_t> dims;
  std::string_view list(header.data() + open + 1, close - open - 1);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      StatusOr<int64_t> dim = ParseInt64(item, "a dimension of the shape");
      if (!dim.ok()) return InvalidArgument(path, ": ", dim.status().message());
      dims.push_back(*dim);
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  const size_t quote = header.find('\'', header.find(':', descr) + 1);
  const size_t end = header.find('\'', quote + 1);
  // 'descr' is e.g. '<f4': byte order, kind, then the element's bytes.
  size_t element_bytes = 0;
  if (quote != std::string::npos && end != std::string::npos && end >= quote + 3) {
    KILN_ASSIGN_OR_RETURN(int64_t size,
                          ParseInt64(std::string_view(header).substr(quote + 3, end - quote - 3),
                                     StrCat(path, ": the element size in 'descr'"), 0, 64));
    element_bytes = static_cast<size_t>(size);
  }
  const size_t expected_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  if (dims != shape.dims || element_bytes != expected_bytes) {
    return InvalidArgument(path, " holds ", Shape{shape.element_type, dims}.ToString(), " of ",
                           element_bytes, "-byte elements; expected ", shape.ToString());
  }
  const size_t data_bytes = shape.ByteSize();
  if (10 + length + data_bytes > bytes.size()) {
    return InvalidArgument(path, " ends before its ", data_bytes, " bytes of data");
  }
  return std::vector<uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(10 + length),
                              bytes.begin() +
                                  static_cast<std::ptrdiff_t>(10 + length + data_bytes));
}

}  // namespace kiln::compiler

#include "frontend/hlo/shape_proto.h"

#include "frontend/proto/wire.h"

namespace kiln::frontend::hlo {
namespace {

struct TypePair {
  ElementType kiln;
  PrimitiveType xla;
};

constexpr TypePair kTypes[] = {
    {ElementType::kPred, PrimitiveType::kPred},
    {ElementType::kS1, PrimitiveType::kS1},
    {ElementType::kS2, PrimitiveType::kS2},
    {ElementType::kS4, PrimitiveType::kS4},
    {ElementType::kS8, PrimitiveType::kS8},
    {ElementType::kS16, PrimitiveType::kS16},
    {ElementType::kS32, PrimitiveType::kS32},
    {ElementType::kS64, PrimitiveType::kS64},
    {ElementType::kU1, PrimitiveType::kU1},
    {ElementType::kU2, PrimitiveType::kU2},
    {ElementType::kU4, PrimitiveType::kU4},
    {ElementType::kU8, PrimitiveType::kU8},
    {ElementType::kU16, PrimitiveType::kU16},
    {ElementType::kU32, PrimitiveType::kU32},
    {ElementType::kU64, PrimitiveType::kU64},
    {ElementType::kF16, PrimitiveType::kF16},
    {ElementType::kBF16, PrimitiveType::kBF16},
    {ElementType::kF32, PrimitiveType::kF32},
    {ElementType::kF64, PrimitiveType::kF64},
    {ElementType::kC64, PrimitiveType::kC64},
    {ElementType::kC128, PrimitiveType::kC128},
    {ElementType::kF8E5M2, PrimitiveType::kF8E5M2},
    {ElementType::kF8E4M3FN, PrimitiveType::kF8E4M3FN},
    {ElementType::kF8E4M3B11FNUZ, PrimitiveType::kF8E4M3B11FNUZ},
    {ElementType::kF8E5M2FNUZ, PrimitiveType::kF8E5M2FNUZ},
    {ElementType::kF8E4M3FNUZ, PrimitiveType::kF8E4M3FNUZ},
    {ElementType::kF8E4M3, PrimitiveType::kF8E4M3},
    {ElementType::kF8E3M4, PrimitiveType::kF8E3M4},
    {ElementType::kF8E8M0FNU, PrimitiveType::kF8E8M0FNU},
    {ElementType::kF4E2M1FN, PrimitiveType::kF4E2M1FN},
    {ElementType::kF6E2M3FN, PrimitiveType::kF6E2M3FN},
    {ElementType::kF6E3M2FN, PrimitiveType::kF6E3M2FN},
    {ElementType::kToken, PrimitiveType::kToken},
};

// Field numbers of xla_data.proto.
constexpr uint32_t kShapeElementType = 2;
constexpr uint32_t kShapeDimensions = 3;
constexpr uint32_t kShapeLayout = 5;
constexpr uint32_t kShapeIsDynamicDimension = 6;
constexpr uint32_t kLayoutMinorToMajor = 1;

}  // namespace

PrimitiveType ToPrimitiveType(ElementType type) {
  for (const TypePair& pair : kTypes) {
    if (pair.kiln == type) return pair.xla;
  }
  return PrimitiveType::kInvalid;
}

std::vector<uint8_t> SerializeArrayShape(const kiln::Shape& shape) {
  const size_t rank = shape.dims.size();
  std::vector<int64_t> minor_to_major;
  for (size_t i = rank; i-- > 0;) minor_to_major.push_back(static_cast<int64_t>(i));
  // As protobuf writes them: empty repeated fields are left out; the
  // layout is present even when empty (a scalar's).
  proto::Writer layout;
  if (rank > 0) layout.PackedVarints(kLayoutMinorToMajor, minor_to_major);
  proto::Writer writer;
  writer.Varint(kShapeElementType, static_cast<uint64_t>(ToPrimitiveType(shape.element_type)));
  if (rank > 0) writer.PackedVarints(kShapeDimensions, shape.dims);
  writer.Bytes(kShapeLayout, layout.bytes());
  if (rank > 0) writer.PackedVarints(kShapeIsDynamicDimension, std::vector<int64_t>(rank, 0));
  return writer.bytes();
}

}  // namespace kiln::frontend::hlo

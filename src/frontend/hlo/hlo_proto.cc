#include "frontend/hlo/hlo_proto.h"

#include <cstring>
#include <string_view>
#include <utility>

#include "frontend/proto/wire.h"

namespace kiln::frontend::hlo {
namespace {

using proto::Field;
using proto::Reader;
using proto::WireType;

// Tuple shapes and tuple literals nest; deeper nesting than this is refused
// rather than followed (the decoder recurses on it).
constexpr int kMaxNesting = 32;

Status Expect(const Field& field, WireType type, std::string_view what) {
  if (field.type == type) return Status::Ok();
  return InvalidArgument("byte ", field.offset, ": ", what, " (field ", field.number,
                         ") has wire type ", static_cast<int>(field.type), ", expected ",
                         static_cast<int>(type));
}

StatusOr<std::string> String(const Field& field, std::string_view what) {
  KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, what));
  return std::string(reinterpret_cast<const char*>(field.bytes.data()), field.bytes.size());
}

StatusOr<int64_t> Int(const Field& field, std::string_view what) {
  KILN_RETURN_IF_ERROR(Expect(field, WireType::kVarint, what));
  return static_cast<int64_t>(field.value);
}

// Appends a repeated integer field, packed or not.
Status Ints(const Field& field, std::string_view what, std::vector<int64_t>& out) {
  if (field.type != WireType::kVarint && field.type != WireType::kLengthDelimited) {
    return Expect(field, WireType::kLengthDelimited, what);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, Reader::PackedVarints(field));
  out.insert(out.end(), values.begin(), values.end());
  return Status::Ok();
}

// Reads every field of a nested message with `visit(field)`.
template <typename Visit>
Status ForEachField(const Field& message, std::string_view what, Visit&& visit) {
  KILN_RETURN_IF_ERROR(Expect(message, WireType::kLengthDelimited, what));
  Reader reader = Reader::Nested(message);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field field, reader.Next());
    KILN_RETURN_IF_ERROR(visit(field));
  }
  return Status::Ok();
}

Status DecodeShape(const Field& message, int depth, Shape& shape) {
  if (depth > kMaxNesting) {
    return InvalidArgument("byte ", message.offset, ": shape nested deeper than ", kMaxNesting,
                           " tuples");
  }
  return ForEachField(message, "a ShapeProto", [&](const Field& field) -> Status {
    switch (field.number) {
      case 2: {
        KILN_ASSIGN_OR_RETURN(int64_t type, Int(field, "ShapeProto.element_type"));
        shape.type = static_cast<PrimitiveType>(type);
        return Status::Ok();
      }
      case 3: return Ints(field, "ShapeProto.dimensions", shape.dims);
      case 4: {
        Shape member;
        KILN_RETURN_IF_ERROR(DecodeShape(field, depth + 1, member));
        shape.tuple.push_back(std::move(member));
        return Status::Ok();
      }
      case 6: {
        std::vector<int64_t> flags;
        KILN_RETURN_IF_ERROR(Ints(field, "ShapeProto.is_dynamic_dimension", flags));
        for (int64_t flag : flags) shape.dynamic = shape.dynamic || flag != 0;
        return Status::Ok();
      }
      default: return Status::Ok();
    }
  });
}

// Appends fixed-width values (packed bytes or one unpacked fixed32/fixed64).
Status FixedValues(const Field& field, size_t width, std::string_view what,
                   std::vector<uint8_t>& out) {
  if (field.type == WireType::kLengthDelimited) {
    if (field.bytes.size() % width != 0) {
      return InvalidArgument("byte ", field.offset, ": ", what, " holds ", field.bytes.size(),
                             " bytes, not a multiple of ", width);
    }
    out.insert(out.end(), field.bytes.begin(), field.bytes.end());
    return Status::Ok();
  }
  const WireType expected = width == 4 ? WireType::kFixed32 : WireType::kFixed64;
  KILN_RETURN_IF_ERROR(Expect(field, expected, what));
  uint8_t bytes[8];
  std::memcpy(bytes, &field.value, 8);
  out.insert(out.end(), bytes, bytes + width);
  return Status::Ok();
}

// Appends varint values (packed or not) as `width`-byte little-endian integers.
Status VarintValues(const Field& field, size_t width, std::string_view what,
                    std::vector<uint8_t>& out) {
  std::vector<int64_t> values;
  KILN_RETURN_IF_ERROR(Ints(field, what, values));
  for (int64_t value : values) {
    uint8_t bytes[8];
    std::memcpy(bytes, &value, 8);
    out.insert(out.end(), bytes, bytes + width);
  }
  return Status::Ok();
}

Status DecodeLiteral(const Field& message, int depth, Literal& literal) {
  if (depth > kMaxNesting) {
    return InvalidArgument("byte ", message.offset, ": literal nested deeper than ", kMaxNesting,
                           " tuples");
  }
  return ForEachField(message, "a LiteralProto", [&](const Field& field) -> Status {
    switch (field.number) {
      case 1: return DecodeShape(field, depth, literal.shape);
      case 2: return VarintValues(field, 1, "LiteralProto.preds", literal.data);
      case 4: return VarintValues(field, 4, "LiteralProto.s32s", literal.data);
      case 5: return VarintValues(field, 8, "LiteralProto.s64s", literal.data);
      case 6: return VarintValues(field, 4, "LiteralProto.u32s", literal.data);
      case 7: return VarintValues(field, 8, "LiteralProto.u64s", literal.data);
      case 8: return FixedValues(field, 4, "LiteralProto.f32s", literal.data);
      case 9: return FixedValues(field, 8, "LiteralProto.f64s", literal.data);
      case 12: return FixedValues(field, 4, "LiteralProto.c64s", literal.data);
      case 18: return FixedValues(field, 8, "LiteralProto.c128s", literal.data);
      case 10: {
        Literal member;
        KILN_RETURN_IF_ERROR(DecodeLiteral(field, depth + 1, member));
        literal.tuple.push_back(std::move(member));
        return Status::Ok();
      }
      // Raw little-endian bytes: u8s, f16s, bf16s, s8s, u16s, s16s and the
      // 8- and 4-bit types (s4s, u4s, f8 variants).
      case 3:
      case 11:
      case 13:
      case 15:
      case 16:
      case 17:
      case 19:
      case 20:
      case 21:
      case 22:
      case 23:
      case 24:
      case 25: {
        KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "LiteralProto elements"));
        literal.data.insert(literal.data.end(), field.bytes.begin(), field.bytes.end());
        return Status::Ok();
      }
      default: return Status::Ok();
    }
  });
}

Status DecodeWindow(const Field& message, std::vector<WindowDimension>& window) {
  return ForEachField(message, "a Window", [&](const Field& dimension) -> Status {
    if (dimension.number != 1) return Status::Ok();
    WindowDimension d;
    KILN_RETURN_IF_ERROR(
        ForEachField(dimension, "a WindowDimension", [&](const Field& f) -> Status {
          if (f.number < 1 || f.number > 7) return Status::Ok();
          KILN_ASSIGN_OR_RETURN(int64_t value, Int(f, "a WindowDimension field"));
          switch (f.number) {
            case 1: d.size = value; break;
            case 2: d.stride = value; break;
            case 3: d.padding_low = value; break;
            case 4: d.padding_high = value; break;
            case 5: d.window_dilation = value; break;
            case 6: d.base_dilation = value; break;
            case 7: d.reversal = value != 0; break;
          }
          return Status::Ok();
        }));
    window.push_back(d);
    return Status::Ok();
  });
}

Status DecodeConvolutionDims(const Field& message, ConvolutionDims& dims) {
  return ForEachField(message, "ConvolutionDimensionNumbers", [&](const Field& f) -> Status {
    switch (f.number) {
      case 11: return Ints(f, "input_spatial_dimensions", dims.input_spatial);
      case 6: return Ints(f, "kernel_spatial_dimensions", dims.kernel_spatial);
      case 12: return Ints(f, "output_spatial_dimensions", dims.output_spatial);
      case 3:
      case 4:
      case 7:
      case 8:
      case 9:
      case 10: {
        KILN_ASSIGN_OR_RETURN(int64_t value, Int(f, "a convolution dimension"));
        if (f.number == 7) dims.input_batch = value;
        if (f.number == 8) dims.input_feature = value;
        if (f.number == 3) dims.kernel_input_feature = value;
        if (f.number == 4) dims.kernel_output_feature = value;
        if (f.number == 9) dims.output_batch = value;
        if (f.number == 10) dims.output_feature = value;
        return Status::Ok();
      }
      default: return Status::Ok();
    }
  });
}

Status DecodeDotDims(const Field& message, DotDims& dims) {
  return ForEachField(message, "DotDimensionNumbers", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: return Ints(f, "lhs_contracting_dimensions", dims.lhs_contracting);
      case 2: return Ints(f, "rhs_contracting_dimensions", dims.rhs_contracting);
      case 3: return Ints(f, "lhs_batch_dimensions", dims.lhs_batch);
      case 4: return Ints(f, "rhs_batch_dimensions", dims.rhs_batch);
      default: return Status::Ok();
    }
  });
}

Status DecodeGatherDims(const Field& message, GatherDims& dims) {
  return ForEachField(message, "GatherDimensionNumbers", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: return Ints(f, "offset_dims", dims.offset_dims);
      case 2: return Ints(f, "collapsed_slice_dims", dims.collapsed_slice_dims);
      case 3: return Ints(f, "start_index_map", dims.start_index_map);
      case 4: {
        KILN_ASSIGN_OR_RETURN(dims.index_vector_dim, Int(f, "index_vector_dim"));
        return Status::Ok();
      }
      case 5: return Ints(f, "operand_batching_dims", dims.operand_batching_dims);
      case 6: return Ints(f, "start_indices_batching_dims", dims.start_indices_batching_dims);
      default: return Status::Ok();
    }
  });
}

Status DecodeScatterDims(const Field& message, ScatterDims& dims) {
  return ForEachField(message, "ScatterDimensionNumbers", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: return Ints(f, "update_window_dims", dims.update_window_dims);
      case 2: return Ints(f, "inserted_window_dims", dims.inserted_window_dims);
      case 3: return Ints(f, "scatter_dims_to_operand_dims", dims.scatter_dims_to_operand_dims);
      case 4: {
        KILN_ASSIGN_OR_RETURN(dims.index_vector_dim, Int(f, "index_vector_dim"));
        return Status::Ok();
      }
      case 5: return Ints(f, "input_batching_dims", dims.input_batching_dims);
      case 6: return Ints(f, "scatter_indices_batching_dims", dims.scatter_indices_batching_dims);
      default: return Status::Ok();
    }
  });
}

Status DecodeMetadata(const Field& message, Instruction& instruction) {
  return ForEachField(message, "OpMetadata", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: {
        KILN_ASSIGN_OR_RETURN(instruction.op_type, String(f, "OpMetadata.op_type"));
        return Status::Ok();
      }
      case 2: {
        KILN_ASSIGN_OR_RETURN(instruction.op_name, String(f, "OpMetadata.op_name"));
        return Status::Ok();
      }
      case 3: {
        KILN_ASSIGN_OR_RETURN(instruction.source_file, String(f, "OpMetadata.source_file"));
        return Status::Ok();
      }
      case 4: {
        KILN_ASSIGN_OR_RETURN(instruction.source_line, Int(f, "OpMetadata.source_line"));
        return Status::Ok();
      }
      default: return Status::Ok();
    }
  });
}

Status SetInt(const Field& f, std::string_view what, int64_t& out) {
  KILN_ASSIGN_OR_RETURN(out, Int(f, what));
  return Status::Ok();
}

Status SetString(const Field& f, std::string_view what, std::string& out) {
  KILN_ASSIGN_OR_RETURN(out, String(f, what));
  return Status::Ok();
}

Status SetBool(const Field& f, std::string_view what, bool& out) {
  KILN_ASSIGN_OR_RETURN(int64_t value, Int(f, what));
  out = value != 0;
  return Status::Ok();
}

// An instruction's id within its computation: XLA keeps the computation's
// id in the upper 32 bits of unique ids and resolves operands by the lower
// 32 (HloInstruction::CreateFromProto's CalculateLocalId).
int64_t LocalId(int64_t id) { return id & 0xFFFFFFFF; }

// SliceDimensions: one more entry of `slices`.
Status DecodeSliceDimensions(const Field& message, std::vector<SliceDimension>& slices) {
  SliceDimension slice;
  KILN_RETURN_IF_ERROR(ForEachField(message, "SliceDimensions", [&](const Field& s) -> Status {
    if (s.number == 1) return SetInt(s, "start", slice.start);
    if (s.number == 2) return SetInt(s, "limit", slice.limit);
    if (s.number == 3) return SetInt(s, "stride", slice.stride);
    return Status::Ok();
  }));
  slices.push_back(slice);
  return Status::Ok();
}

// PaddingConfig: its dimensions, appended to `padding`.
Status DecodePaddingConfig(const Field& message, std::vector<PaddingDimension>& padding) {
  return ForEachField(message, "PaddingConfig", [&](const Field& d) -> Status {
    if (d.number != 1) return Status::Ok();
    PaddingDimension dimension;
    KILN_RETURN_IF_ERROR(ForEachField(d, "PaddingDimension", [&](const Field& p) -> Status {
      if (p.number == 1) return SetInt(p, "edge_padding_low", dimension.low);
      if (p.number == 2) return SetInt(p, "edge_padding_high", dimension.high);
      if (p.number == 3) return SetInt(p, "interior_padding", dimension.interior);
      return Status::Ok();
    }));
    padding.push_back(dimension);
    return Status::Ok();
  });
}

// TriangularSolveOptions, into `in`'s options fields.
Status DecodeTriangularSolveOptions(const Field& message, Instruction& in) {
  return ForEachField(message, "TriangularSolveOptions", [&](const Field& o) -> Status {
    if (o.number == 1) return SetBool(o, "left_side", in.left_side);
    if (o.number == 2) return SetBool(o, "lower", in.lower);
    if (o.number == 3) return SetBool(o, "unit_diagonal", in.unit_diagonal);
    if (o.number == 4) {
      int64_t value = 0;
      KILN_RETURN_IF_ERROR(SetInt(o, "transpose_a", value));
      in.transpose_a = static_cast<int32_t>(value);
    }
    return Status::Ok();
  });
}

// OpSharding (xla_data.proto) as the HloSharding text XLA prints and
// GSPMD's `mhlo.sharding` holds, appended to `leaves`: one text per array
// leaf, a TUPLE's leaves in order. An UNKNOWN sharding (a placeholder any
// other overrides) is `{unknown}`, which the reader leaves out.
Status DecodeOpSharding(const Field& message, int depth, std::vector<std::string>& leaves) {
  if (depth > kMaxNesting) {
    return InvalidArgument("byte ", message.offset, ": OpSharding nests deeper than ", kMaxNesting);
  }
  int64_t type = 0;
  bool replicate_last = false;
  std::vector<int64_t> tiles, devices, iota_dims, iota_perm, last_tile_dims;
  std::vector<std::string> tuple;
  bool named = false;
  KILN_RETURN_IF_ERROR(ForEachField(message, "OpSharding", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: return SetInt(f, "OpSharding.type", type);
      case 3: return Ints(f, "tile_assignment_dimensions", tiles);
      case 4: return Ints(f, "tile_assignment_devices", devices);
      case 5: return DecodeOpSharding(f, depth + 1, tuple);
      case 6: return SetBool(f, "replicate_on_last_tile_dim", replicate_last);
      case 8: return Ints(f, "last_tile_dims", last_tile_dims);
      case 9: return Ints(f, "iota_reshape_dims", iota_dims);
      case 10: return Ints(f, "iota_transpose_perm", iota_perm);
      case 14: named = true; return Status::Ok();
      default: return Status::Ok();  // metadata, shard groups
    }
  }));
  if (named) {
    return Unimplemented("byte ", message.offset,
                         ": an OpSharding given as a named_sharding (Kiln reads tile "
                         "assignments)");
  }
  auto join = [](const std::vector<int64_t>& values) {
    std::string text;
    for (int64_t value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
    return text;
  };
  switch (type) {
    case 0: leaves.emplace_back("{replicated}"); return Status::Ok();
    case 1:
      if (devices.size() != 1) {
        return InvalidArgument("byte ", message.offset, ": a MAXIMAL OpSharding names ",
                               devices.size(), " devices, expected 1");
      }
      leaves.push_back("{maximal device=" + std::to_string(devices[0]) + "}");
      return Status::Ok();
    case 2: leaves.insert(leaves.end(), tuple.begin(), tuple.end()); return Status::Ok();
    case 4: leaves.emplace_back("{manual}"); return Status::Ok();
    case 5: leaves.emplace_back("{unknown}"); return Status::Ok();
    case 3: break;
    default:
      return Unimplemented("byte ", message.offset, ": OpSharding type ", type,
                           " (Kiln reads REPLICATED 0, MAXIMAL 1, TUPLE 2, OTHER 3, MANUAL 4, "
                           "UNKNOWN 5)");
  }
  std::string text = "{devices=[" + join(tiles) + "]";
  if (!iota_dims.empty()) {
    text += "<=[" + join(iota_dims) + "]";
    if (!iota_perm.empty()) text += "T(" + join(iota_perm) + ")";
  } else {
    text += join(devices);
  }
  if (replicate_last) text += " last_tile_dim_replicate";
  if (!last_tile_dims.empty()) {
    static constexpr const char* kTypes[] = {"replicated", "maximal", "tuple",    "other",
                                             "manual",     "unknown", "unreduced"};
    std::string names;
    for (int64_t each : last_tile_dims) {
      if (each < 0 || each > 6) {
        return InvalidArgument("byte ", message.offset, ": last_tile_dims holds type ", each);
      }
      names += (names.empty() ? "" : ", ") + std::string(kTypes[each]);
    }
    text += " last_tile_dims={" + names + "}";
  }
  leaves.push_back(text + "}");
  return Status::Ok();
}

Status DecodeInstructionField(const Field& f, Instruction& in) {
  switch (f.number) {
    case 1: return SetString(f, "HloInstructionProto.name", in.name);
    case 2: return SetString(f, "HloInstructionProto.opcode", in.opcode);
    case 3: return DecodeShape(f, 0, in.shape);
    case 7: return DecodeMetadata(f, in);
    case 8: in.has_literal = true; return DecodeLiteral(f, 0, in.literal);
    case 9: return SetInt(f, "parameter_number", in.parameter_number);
    case 13: return SetInt(f, "tuple_index", in.tuple_index);
    case 14: return Ints(f, "dimensions", in.dimensions);
    case 15: return DecodeWindow(f, in.window);
    case 16: return DecodeConvolutionDims(f, in.convolution);
    case 17: return DecodeSliceDimensions(f, in.slices);
    case 18:
    case 19: {
      int64_t bits = 0;
      KILN_RETURN_IF_ERROR(SetInt(f, "exponent_bits/mantissa_bits", bits));
      (f.number == 18 ? in.exponent_bits : in.mantissa_bits) = static_cast<int32_t>(bits);
      return Status::Ok();
    }
    case 20: return Ints(f, "dynamic_slice_sizes", in.dynamic_slice_sizes);
    case 21: return DecodePaddingConfig(f, in.padding);
    case 23: {
      int64_t distribution = 0;
      KILN_RETURN_IF_ERROR(SetInt(f, "distribution", distribution));
      in.distribution = static_cast<int32_t>(distribution);
      return Status::Ok();
    }
    case 31:
    case 70: {
      int64_t value = 0;
      KILN_RETURN_IF_ERROR(SetInt(f, f.number == 31 ? "fft_type" : "rng_algorithm", value));
      (f.number == 31 ? in.fft_type : in.rng_algorithm) = static_cast<int32_t>(value);
      return Status::Ok();
    }
    case 32: return Ints(f, "fft_length", in.fft_length);
    case 59: return DecodeTriangularSolveOptions(f, in);
    case 62:
      return ForEachField(f, "CholeskyOptions", [&](const Field& o) -> Status {
        return o.number == 1 ? SetBool(o, "lower", in.lower) : Status::Ok();
      });
    case 24: {
      KILN_RETURN_IF_ERROR(Expect(f, WireType::kFixed32, "epsilon"));
      const auto bits = static_cast<uint32_t>(f.value);
      std::memcpy(&in.epsilon, &bits, 4);
      return Status::Ok();
    }
    case 25: return SetInt(f, "feature_index", in.feature_index);
    case 28: return SetString(f, "custom_call_target", in.custom_call_target);
    case 30: return DecodeDotDims(f, in.dot);
    case 33: return DecodeGatherDims(f, in.gather);
    case 34: return Ints(f, "gather_slice_sizes", in.gather_slice_sizes);
    case 35: {
      KILN_RETURN_IF_ERROR(SetInt(f, "id", in.id));
      in.id = LocalId(in.id);
      return Status::Ok();
    }
    case 36: {
      const size_t first = in.operand_ids.size();
      KILN_RETURN_IF_ERROR(Ints(f, "operand_ids", in.operand_ids));
      for (size_t i = first; i < in.operand_ids.size(); ++i) {
        in.operand_ids[i] = LocalId(in.operand_ids[i]);
      }
      return Status::Ok();
    }
    case 38: return Ints(f, "called_computation_ids", in.called_computation_ids);
    case 40: in.sharding.clear(); return DecodeOpSharding(f, 0, in.sharding);
    case 48: return DecodeScatterDims(f, in.scatter);
    case 50: return SetInt(f, "feature_group_count", in.feature_group_count);
    case 58: return SetInt(f, "batch_group_count", in.batch_group_count);
    case 60: return SetBool(f, "is_stable", in.is_stable);
    case 63: return SetString(f, "comparison_direction", in.comparison_direction);
    case 67: return SetBool(f, "indices_are_sorted", in.indices_are_sorted);
    case 69: return SetBool(f, "unique_indices", in.unique_indices);
    case 72: return SetString(f, "comparison_type", in.comparison_type);
    default: return Status::Ok();
  }
}

Status DecodeComputation(const Field& message, Computation& computation) {
  return ForEachField(message, "an HloComputationProto", [&](const Field& f) -> Status {
    switch (f.number) {
      case 1: return SetString(f, "HloComputationProto.name", computation.name);
      case 2: {
        Instruction instruction;
        KILN_RETURN_IF_ERROR(ForEachField(f, "an HloInstructionProto",
                                          [&](const Field& field) -> Status {
                                            return DecodeInstructionField(field, instruction);
                                          }));
        computation.instructions.push_back(std::move(instruction));
        return Status::Ok();
      }
      case 5: return SetInt(f, "HloComputationProto.id", computation.id);
      case 6: {
        KILN_RETURN_IF_ERROR(SetInt(f, "HloComputationProto.root_id", computation.root_id));
        computation.root_id = LocalId(computation.root_id);
        return Status::Ok();
      }
      default: return Status::Ok();
    }
  });
}

// HloInputOutputAliasProto (aliases: true) or HloBufferDonorProto: their
// entries, each one Donation.
Status DecodeDonations(const Field& message, bool aliases, std::vector<Donation>& out) {
  const std::string_view what = aliases ? "HloInputOutputAliasProto" : "HloBufferDonorProto";
  return ForEachField(message, what, [&](const Field& entry) -> Status {
    if (entry.number != 1) return Status::Ok();
    Donation donation;
    if (aliases) donation.output_index.emplace();
    KILN_RETURN_IF_ERROR(ForEachField(entry, what, [&](const Field& f) -> Status {
      if (aliases) {
        switch (f.number) {
          case 1: return Ints(f, "AliasEntryProto.output_shape_index", *donation.output_index);
          case 2: return SetInt(f, "AliasEntryProto.parameter_number", donation.parameter);
          case 3: return Ints(f, "AliasEntryProto.parameter_shape_index", donation.parameter_index);
          default: return Status::Ok();  // kind: Kiln treats MAY and MUST alike
        }
      }
      switch (f.number) {
        case 1: return SetInt(f, "BufferDonorEntryProto.parameter_number", donation.parameter);
        case 2:
          return Ints(f, "BufferDonorEntryProto.parameter_shape_index", donation.parameter_index);
        default: return Status::Ok();
      }
    }));
    out.push_back(std::move(donation));
    return Status::Ok();
  });
}

}  // namespace

StatusOr<Module> DecodeModule(std::span<const uint8_t> bytes) {
  Module module;
  Reader reader(bytes);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field f, reader.Next());
    switch (f.number) {
      case 1: KILN_RETURN_IF_ERROR(SetString(f, "HloModuleProto.name", module.name)); break;
      case 2:
        KILN_RETURN_IF_ERROR(SetString(f, "HloModuleProto.entry_computation_name",
                                       module.entry_computation_name));
        break;
      case 3: {
        Computation computation;
        KILN_RETURN_IF_ERROR(DecodeComputation(f, computation));
        module.computations.push_back(std::move(computation));
        break;
      }
      case 6:
        KILN_RETURN_IF_ERROR(SetInt(f, "HloModuleProto.entry_computation_id",
                                    module.entry_computation_id));
        break;
      case 8: KILN_RETURN_IF_ERROR(DecodeDonations(f, true, module.donations)); break;
      case 18: KILN_RETURN_IF_ERROR(DecodeDonations(f, false, module.donations)); break;
      default: break;
    }
  }
  if (module.computations.empty()) {
    return InvalidArgument("expected an HloModuleProto with at least one computation, found ",
                           bytes.empty() ? "no bytes" : "none");
  }
  return module;
}

StatusOr<ElementType> ToElementType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: return ElementType::kPred;
    case PrimitiveType::kS4: return ElementType::kS4;
    case PrimitiveType::kS8: return ElementType::kS8;
    case PrimitiveType::kS16: return ElementType::kS16;
    case PrimitiveType::kS32: return ElementType::kS32;
    case PrimitiveType::kS64: return ElementType::kS64;
    case PrimitiveType::kU4: return ElementType::kU4;
    case PrimitiveType::kU8: return ElementType::kU8;
    case PrimitiveType::kU16: return ElementType::kU16;
    case PrimitiveType::kU32: return ElementType::kU32;
    case PrimitiveType::kU64: return ElementType::kU64;
    case PrimitiveType::kF16: return ElementType::kF16;
    case PrimitiveType::kBF16: return ElementType::kBF16;
    case PrimitiveType::kF32: return ElementType::kF32;
    case PrimitiveType::kF64: return ElementType::kF64;
    case PrimitiveType::kC64: return ElementType::kC64;
    case PrimitiveType::kC128: return ElementType::kC128;
    case PrimitiveType::kF8E5M2: return ElementType::kF8E5M2;
    case PrimitiveType::kF8E4M3FN: return ElementType::kF8E4M3FN;
    case PrimitiveType::kF8E4M3B11FNUZ: return ElementType::kF8E4M3B11FNUZ;
    case PrimitiveType::kF8E5M2FNUZ: return ElementType::kF8E5M2FNUZ;
    case PrimitiveType::kF8E4M3FNUZ: return ElementType::kF8E4M3FNUZ;
    case PrimitiveType::kToken: return ElementType::kToken;
    default:
      return InvalidArgument("expected an array element type, found XLA PrimitiveType ",
                             static_cast<int>(type));
  }
}

}  // namespace kiln::frontend::hlo

// Emitters of ops that move elements around: broadcasts, transposes,
// concatenation, iota, slices, padding and gather.
#include <string>
#include <vector>

#include "frontend/hlo/hlo_emit.h"

namespace kiln::frontend::hlo {
namespace {

// broadcast: stablehlo.broadcast_in_dim (HLO's dimensions map the operand's).
Status EmitBroadcast(Emission& e) {
  return e.Emit("stablehlo.broadcast_in_dim", e.flat,
                "broadcast_dimensions = " + I64Array(e.in.dimensions));
}

// transpose: stablehlo.transpose.
Status EmitTranspose(Emission& e) {
  return e.Emit("stablehlo.transpose", e.flat, "permutation = " + I64Array(e.in.dimensions));
}

// reverse: stablehlo.reverse.
Status EmitReverse(Emission& e) {
  return e.Emit("stablehlo.reverse", e.flat, "dimensions = " + I64Array(e.in.dimensions));
}

// concatenate and iota: one dimension, as `dimension` or `iota_dimension`.
Status EmitConcatenateOrIota(Emission& e) {
  if (e.in.dimensions.size() != 1) {
    return InvalidArgument("expected one dimension, found ", e.in.dimensions.size());
  }
  const std::string dim = std::to_string(e.in.dimensions[0]) + " : i64";
  return e.in.opcode == "iota" ? e.Emit("stablehlo.iota", {}, "iota_dimension = " + dim)
                               : e.Emit("stablehlo.concatenate", e.flat, "dimension = " + dim);
}

// slice: stablehlo.slice from the slice dimensions.
Status EmitSlice(Emission& e) {
  std::vector<int64_t> start, limit, stride;
  for (const SliceDimension& s : e.in.slices) {
    start.push_back(s.start);
    limit.push_back(s.limit);
    stride.push_back(s.stride);
  }
  return e.Emit("stablehlo.slice", e.flat,
                "limit_indices = " + I64Array(limit) + ", start_indices = " + I64Array(start) +
                    ", strides = " + I64Array(stride));
}

// pad: stablehlo.pad from the padding config.
Status EmitPad(Emission& e) {
  std::vector<int64_t> low, high, interior;
  for (const PaddingDimension& p : e.in.padding) {
    low.push_back(p.low);
    high.push_back(p.high);
    interior.push_back(p.interior);
  }
  return e.Emit("stablehlo.pad", e.flat,
                "edge_padding_high = " + I64Array(high) + ", edge_padding_low = " + I64Array(low) +
                    ", interior_padding = " + I64Array(interior));
}

// dynamic-slice and dynamic-update-slice may take their start indices as
// one rank-1 operand (HLO's older form, which torch_xla still emits, e.g.
// for randperm): it becomes one scalar per dimension (slice + reshape), in
// place of the operand leaf at `first`.
Status ScalarStarts(Emission& e, size_t first, size_t rank) {
  Leaves& flat = e.flat;
  if (flat.size() != first + 1 || rank == 0 || flat[first].shape.dims.size() != 1) {
    return Status::Ok();
  }
  const Leaf starts = flat[first];
  if (starts.shape.dims[0] != static_cast<int64_t>(rank)) {
    return InvalidArgument("expected ", rank, " start indices in the rank-1 operand, found ",
                           starts.shape.dims[0]);
  }
  flat.pop_back();
  Converter& converter = e.converter;
  for (size_t d = 0; d < rank; ++d) {
    const auto i = static_cast<int64_t>(d);
    Leaves piece;
    std::string lhs;
    KILN_ASSIGN_OR_RETURN(piece, converter.Results(Shape{starts.shape.type, {1}, {}, false}, lhs));
    KILN_ASSIGN_OR_RETURN(std::string text,
                          converter.OpText("stablehlo.slice", lhs, {starts},
                                           "limit_indices = " + I64Array({i + 1}) +
                                               ", start_indices = " + I64Array({i}) +
                                               ", strides = " + I64Array({1}),
                                           "", piece, e.in));
    e.out += e.indent + text + "\n";
    Leaves scalar;
    KILN_ASSIGN_OR_RETURN(scalar, converter.Results(Shape{starts.shape.type, {}, {}, false}, lhs));
    KILN_ASSIGN_OR_RETURN(text,
                          converter.OpText("stablehlo.reshape", lhs, piece, "", "", scalar, e.in));
    e.out += e.indent + text + "\n";
    flat.push_back(scalar[0]);
  }
  return Status::Ok();
}

// dynamic-slice: stablehlo.dynamic_slice with one scalar start per dimension.
Status EmitDynamicSlice(Emission& e) {
  if (!e.flat.empty()) KILN_RETURN_IF_ERROR(ScalarStarts(e, 1, e.flat[0].shape.dims.size()));
  return e.Emit("stablehlo.dynamic_slice", e.flat,
                "slice_sizes = " + I64Array(e.in.dynamic_slice_sizes));
}

// dynamic-update-slice: stablehlo.dynamic_update_slice, as dynamic-slice.
Status EmitDynamicUpdateSlice(Emission& e) {
  if (!e.flat.empty()) KILN_RETURN_IF_ERROR(ScalarStarts(e, 2, e.flat[0].shape.dims.size()));
  return e.Emit("stablehlo.dynamic_update_slice", e.flat, "");
}

// gather: stablehlo.gather with its dimension numbers.
Status EmitGather(Emission& e) {
  const GatherDims& g = e.in.gather;
  std::string dims = "offset_dims = " + List(g.offset_dims) +
                     ", collapsed_slice_dims = " + List(g.collapsed_slice_dims);
  if (!g.operand_batching_dims.empty()) {
    dims += ", operand_batching_dims = " + List(g.operand_batching_dims) +
            ", start_indices_batching_dims = " + List(g.start_indices_batching_dims);
  }
  dims += ", start_index_map = " + List(g.start_index_map) +
          ", index_vector_dim = " + std::to_string(g.index_vector_dim);
  return e.Emit("stablehlo.gather", e.flat,
                "dimension_numbers = #stablehlo.gather<" + dims +
                    ">, indices_are_sorted = " + (e.in.indices_are_sorted ? "true" : "false") +
                    ", slice_sizes = " + I64Array(e.in.gather_slice_sizes));
}

// This family's opcodes and their emitters.
constexpr EmitRule kRules[] = {
    {"broadcast", EmitBroadcast},
    {"transpose", EmitTranspose},
    {"reverse", EmitReverse},
    {"concatenate", EmitConcatenateOrIota},
    {"iota", EmitConcatenateOrIota},
    {"slice", EmitSlice},
    {"pad", EmitPad},
    {"dynamic-slice", EmitDynamicSlice},
    {"dynamic-update-slice", EmitDynamicUpdateSlice},
    {"gather", EmitGather},
};

}  // namespace

std::span<const EmitRule> ShapeEmitters() { return kRules; }

}  // namespace kiln::frontend::hlo

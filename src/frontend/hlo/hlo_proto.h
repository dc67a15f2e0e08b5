// The parts of a serialized HloModuleProto (XLA's xla/service/hlo.proto and
// xla/xla_data.proto) that Kiln reads, decoded from the protobuf wire format
// without protobuf's generated code. PyTorch/XLA hands plugins programs in
// this form (PJRT_Program format "hlo"). Unknown fields are skipped, so
// protos from newer XLA versions read as long as the fields below keep
// their numbers (protobuf's compatibility rule). docs/formats/hlo-proto.md
// lists the fields and where their numbers come from.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::frontend::hlo {

// XLA's PrimitiveType numbers (xla_data.proto).
enum class PrimitiveType : int32_t {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kTuple = 13,
  kOpaque = 14,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kF6E3M2FN = 35,
  kF6E2M3FN = 36,
};

// ShapeProto: an array shape, a tuple of shapes, or a token.
struct Shape {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::vector<Shape> tuple;  // for kTuple
  bool dynamic = false;      // some is_dynamic_dimension was set
};

struct WindowDimension {
  int64_t size = 0, stride = 1, padding_low = 0, padding_high = 0;
  int64_t window_dilation = 1, base_dilation = 1;
  bool reversal = false;
};

struct ConvolutionDims {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
};

struct DotDims {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
};

struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
};

struct SliceDimension {
  int64_t start = 0, limit = 0, stride = 1;
};

struct PaddingDimension {
  int64_t low = 0, high = 0, interior = 0;
};

// LiteralProto: a constant's shape and its elements as raw little-endian
// bytes in row-major order (pred: one byte per element), or a tuple.
struct Literal {
  Shape shape;
  std::vector<uint8_t> data;
  std::vector<Literal> tuple;
};

// HloInstructionProto: the fields Kiln's HLO reader uses.
struct Instruction {
  int64_t id = 0;
  std::string name, opcode;
  Shape shape;
  std::vector<int64_t> operand_ids, called_computation_ids;
  Literal literal;
  bool has_literal = false;
  int64_t parameter_number = 0;
  int64_t tuple_index = 0;
  std::vector<int64_t> dimensions;
  std::vector<WindowDimension> window;
  ConvolutionDims convolution;
  int64_t feature_group_count = 1, batch_group_count = 1;
  std::vector<SliceDimension> slices;
  int32_t exponent_bits = 0, mantissa_bits = 0;
  std::vector<int64_t> dynamic_slice_sizes;
  std::vector<PaddingDimension> padding;
  float epsilon = 0;
  int64_t feature_index = 0;
  std::string custom_call_target;
  DotDims dot;
  GatherDims gather;
  std::vector<int64_t> gather_slice_sizes;
  ScatterDims scatter;
  std::string comparison_direction, comparison_type;
  bool is_stable = false, indices_are_sorted = false, unique_indices = false;
  int32_t distribution = 0;   // RandomDistribution: 1 uniform, 2 normal
  int32_t rng_algorithm = 0;  // RandomAlgorithm: 0 default, 1 three-fry, 2 philox
  int32_t fft_type = 0;       // FftType: 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT
  std::vector<int64_t> fft_length;
  // TriangularSolveOptions and CholeskyOptions.
  bool left_side = false, lower = false, unit_diagonal = false;
  int32_t transpose_a = 0;  // 1 NO_TRANSPOSE, 2 TRANSPOSE, 3 ADJOINT
  // OpSharding (GSPMD, as PyTorch/XLA's SPMD mode writes it), as XLA's
  // HloSharding text (`{devices=[4,1]0,1,2,3}`), one per array leaf of the
  // shape (a TUPLE sharding's leaves in order); empty when none is given.
  std::vector<std::string> sharding;
  // OpMetadata, for error messages and locations.
  std::string op_type, op_name, source_file;
  int64_t source_line = 0;
};

// HloComputationProto.
struct Computation {
  int64_t id = 0;
  std::string name;
  std::vector<Instruction> instructions;
  int64_t root_id = -1;
};

// HloModuleProto.
// An entry parameter (a leaf of it when it is a tuple) and, for an
// input_output_alias entry, the output (leaf) it may share its buffer with;
// a buffer_donor entry has no output.
struct Donation {
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
  std::optional<std::vector<int64_t>> output_index;
};

struct Module {
  std::string name, entry_computation_name;
  int64_t entry_computation_id = -1;
  std::vector<Computation> computations;
  // input_output_alias (field 8) and buffer_donor (field 18) entries.
  std::vector<Donation> donations;
};

// Decodes a serialized HloModuleProto. Errors (INVALID_ARGUMENT) name the
// byte offset, the message and field being read, and what was found.
StatusOr<Module> DecodeModule(std::span<const uint8_t> bytes);

// Kiln's element type for an XLA array (or token) type; INVALID_ARGUMENT
// for tuple, opaque and unknown types. A Literal's data holds elements of
// GetElementTypeInfo(...).storage_bytes each.
StatusOr<ElementType> ToElementType(PrimitiveType type);

}  // namespace kiln::frontend::hlo

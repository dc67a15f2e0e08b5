// The verifier on gather/scatter, contractions and linear algebra, region
// ops, collectives and the remaining ops: each family's valid forms (as JAX
// emits them) pass, and each broken constraint fails naming it.
#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "ir/verifier_test_util.h"

namespace kiln::ir {
namespace {

using testing::DenseI64;
using testing::Dims;
using testing::Enum;
using testing::I64;
using testing::IrBuilder;
using testing::T;

Attribute Direction(std::string value) {
  return Enum("stablehlo.comparison_direction", std::move(value));
}

// Closes the open region with the sum of its two arguments of `type`.
void SumBody(IrBuilder& b, Operation* op, std::string_view type = "f32") {
  std::vector<Value*> args = b.Open(op, {type, type});
  b.Close({b.Add1("stablehlo.add", {args[0], args[1]}, type)});
}

// ---------------------------------------------------------------------------
// gather, scatter

// jnp.take(operand, indices, axis=0) with operand 5x3 and indices 4x1.
Status Take(const char* slice_sizes_result, std::vector<int64_t> slice_sizes,
            std::vector<int64_t> offset_dims = {1}) {
  IrBuilder b;
  Value* operand = b.Arg("5x3xf32");
  Value* indices = b.Arg("4x1xi32");
  Value* result = b.Add1("stablehlo.gather", {operand, indices}, slice_sizes_result,
                         {{"dimension_numbers",
                           Attribute::Struct("stablehlo.gather",
                                             {{"offset_dims", Dims(std::move(offset_dims))},
                                              {"collapsed_slice_dims", Dims({0})},
                                              {"start_index_map", Dims({0})},
                                              {"index_vector_dim", I64(1)}})},
                          {"slice_sizes", Dims(std::move(slice_sizes))}});
  return b.Verify({result});
}

TEST(VerifierIndexingTest, Gather) {
  EXPECT_VERIFY_OK(Take("4x3xf32", {1, 3}));
  EXPECT_VERIFY_ERROR(Take("4x3xf32", {2, 3}),
                      "stablehlo.gather (C9): slice_sizes[0] of collapsed dimension 0 must be "
                      "<= 1, found 2");
  EXPECT_VERIFY_ERROR(Take("4x2xf32", {1, 3}),
                      "stablehlo.gather (C22): result must have shape [4, 3], found "
                      "tensor<4x2xf32>");
  EXPECT_VERIFY_ERROR(Take("4x3xf32", {1, 4}), "(C21): slice_sizes[1] = 4 must be in [0, 3]");
  EXPECT_VERIFY_ERROR(Take("4x3xf32", {1, 3}, {1, 2}),
                      "(C1): offset_dims, collapsed_slice_dims and operand_batching_dims have 3 "
                      "entries in all, expected the operand rank 2");
  EXPECT_VERIFY_ERROR(Take("4x3xf32", {1}), "(C20): slice_sizes has 1 entries");
}

TEST(VerifierIndexingTest, GatherWithBatchingDimensions) {
  IrBuilder b;
  Value* operand = b.Arg("2x5x3xf32");
  Value* indices = b.Arg("2x4x1xi32");
  Value* result = b.Add1("stablehlo.gather", {operand, indices}, "2x4x3xf32",
                         {{"dimension_numbers",
                           Attribute::Struct("stablehlo.gather",
                                             {{"offset_dims", Dims({2})},
                                              {"collapsed_slice_dims", Dims({1})},
                                              {"operand_batching_dims", Dims({0})},
                                              {"start_indices_batching_dims", Dims({0})},
                                              {"start_index_map", Dims({1})},
                                              {"index_vector_dim", I64(2)}})},
                          {"slice_sizes", Dims({1, 1, 3})}});
  EXPECT_VERIFY_OK(b.Verify({result}));
}

// operand.at[indices].add(updates) with operand 5x3 and indices 4x1.
Status ScatterAdd(const char* updates_type, const char* body_type = "f32") {
  IrBuilder b;
  Value* input = b.Arg("5x3xf32");
  Value* indices = b.Arg("4x1xi32");
  Value* updates = b.Arg(updates_type);
  Operation* scatter = b.Add("stablehlo.scatter", {input, indices, updates}, {"5x3xf32"},
                             {{"scatter_dimension_numbers",
                               Attribute::Struct("stablehlo.scatter",
                                                 {{"update_window_dims", Dims({1})},
                                                  {"inserted_window_dims", Dims({0})},
                                                  {"scatter_dims_to_operand_dims", Dims({0})},
                                                  {"index_vector_dim", I64(1)}})}});
  SumBody(b, scatter, body_type);
  return b.Verify({scatter->result(0)});
}

TEST(VerifierIndexingTest, Scatter) {
  EXPECT_VERIFY_OK(ScatterAdd("4x3xf32"));
  EXPECT_VERIFY_ERROR(ScatterAdd("4x4xf32"),
                      "stablehlo.scatter (C4): update window dimension 1 has size 4, larger than "
                      "the input's 3");
  EXPECT_VERIFY_ERROR(ScatterAdd("3x3xf32"),
                      "(C4): update scatter dimension 0 has size 3 but the matching "
                      "scatter_indices dimension has size 4");
  EXPECT_VERIFY_ERROR(ScatterAdd("4x3xi32"), "(C6): updates #0 must have element type f32");
  EXPECT_VERIFY_ERROR(ScatterAdd("4x3xf32", "i32"), "stablehlo.scatter (C23): ");
}

// ---------------------------------------------------------------------------
// dot_general, dot, convolution, fft, cholesky, triangular_solve, batch_norm

Status BatchMatmul(const char* lhs, const char* rhs, const char* result,
                   std::vector<int64_t> lhs_batch = {0}) {
  IrBuilder b;
  Value* dot = b.Add1(
      "stablehlo.dot_general", {b.Arg(lhs), b.Arg(rhs)}, result,
      {{"dot_dimension_numbers",
        Attribute::Struct("stablehlo.dot", {{"lhs_batching_dimensions", Dims(std::move(lhs_batch))},
                                            {"rhs_batching_dimensions", Dims({0})},
                                            {"lhs_contracting_dimensions", Dims({2})},
                                            {"rhs_contracting_dimensions", Dims({1})}})},
       {"precision_config", Attribute::Array({Enum("stablehlo.precision", "DEFAULT"),
                                              Enum("stablehlo.precision", "DEFAULT")})}});
  return b.Verify({dot});
}

TEST(VerifierLinalgTest, DotGeneral) {
  EXPECT_VERIFY_OK(BatchMatmul("2x3x4xf32", "2x4x5xf32", "2x3x5xf32"));
  // preferred_element_type: the result element may differ from the operands'.
  EXPECT_VERIFY_OK(BatchMatmul("2x3x4xbf16", "2x4x5xbf16", "2x3x5xf32"));
  EXPECT_VERIFY_ERROR(BatchMatmul("2x3x4xf32", "2x4x5xf32", "2x5x3xf32"),
                      "stablehlo.dot_general (C12): result must have shape [2, 3, 5]");
  EXPECT_VERIFY_ERROR(BatchMatmul("2x3x4xf32", "3x4x5xf32", "2x3x5xf32"),
                      "(C9): lhs batching dimension 0 has size 2 but rhs batching dimension 0 "
                      "has size 3");
  EXPECT_VERIFY_ERROR(BatchMatmul("2x3x4xf32", "2x4x5xf32", "2x3x5xf32", {3}),
                      "(C5): lhs_batching_dimensions contains 3, expected values in [0, 3)");
  EXPECT_VERIFY_ERROR(BatchMatmul("2x3x4xf32", "2x4x5xf32", "2x3x5xf32", {2}),
                      "(C3): dimension 2 appears more than once in lhs_batching_dimensions and "
                      "lhs_contracting_dimensions");
}

TEST(VerifierLinalgTest, Dot) {
  IrBuilder b;
  EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.dot", {b.Arg("2x3xf32"), b.Arg("3xf32")},
                                    "2xf32")}));
  IrBuilder bad;
  EXPECT_VERIFY_ERROR(bad.Verify({bad.Add1("stablehlo.dot", {bad.Arg("2x3xf32"), bad.Arg("4xf32")},
                                           "2xf32")}),
                      "lhs contracting dimension 1 has size 3 but rhs contracting dimension 0");
}

Attribute NhwcDimensions() {
  return Attribute::Struct("stablehlo.conv", {{"input_batch_dimension", I64(0)},
                                              {"input_feature_dimension", I64(3)},
                                              {"input_spatial_dimensions", Dims({1, 2})},
                                              {"kernel_input_feature_dimension", I64(2)},
                                              {"kernel_output_feature_dimension", I64(3)},
                                              {"kernel_spatial_dimensions", Dims({0, 1})},
                                              {"output_batch_dimension", I64(0)},
                                              {"output_feature_dimension", I64(3)},
                                              {"output_spatial_dimensions", Dims({1, 2})}});
}

// lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC",
// "HWIO", "NHWC")) with an 8x8 image, 3 input and 16 output features.
Status Conv(const char* kernel, const char* result, int64_t feature_groups = 1,
            std::vector<int64_t> strides = {1, 1}) {
  IrBuilder b;
  Value* conv = b.Add1("stablehlo.convolution", {b.Arg("1x8x8x3xf32"), b.Arg(kernel)}, result,
                       {{"dimension_numbers", NhwcDimensions()},
                        {"window_strides", Dims(std::move(strides))},
                        {"padding", DenseI64({2, 2}, {1, 1, 1, 1})},
                        {"feature_group_count", I64(feature_groups)},
                        {"batch_group_count", I64(1)}});
  return b.Verify({conv});
}

TEST(VerifierLinalgTest, Convolution) {
  EXPECT_VERIFY_OK(Conv("3x3x3x16xf32", "1x8x8x16xf32"));
  EXPECT_VERIFY_OK(Conv("3x3x3x16xf32", "1x4x4x16xf32", 1, {2, 2}));
  EXPECT_VERIFY_OK(Conv("3x3x1x3xf32", "1x8x8x3xf32", 3));  // depthwise
  EXPECT_VERIFY_ERROR(Conv("3x3x3x16xf32", "1x8x8x8xf32"),
                      "stablehlo.convolution (C25): result must have shape [1, 8, 8, 16], found "
                      "tensor<1x8x8x8xf32>");
  EXPECT_VERIFY_ERROR(Conv("3x3x4x16xf32", "1x8x8x16xf32"),
                      "(C14): kernel input feature size 4 must be the input feature size 3 / "
                      "feature_group_count 1");
  EXPECT_VERIFY_ERROR(Conv("3x3x3x16xf32", "1x8x8x16xf32", 2),
                      "(C11): input feature size 3 must be a multiple of feature_group_count 2");
  EXPECT_VERIFY_ERROR(Conv("3x3x3x16xf32", "1x8x8x16xf32", 1, {1}),
                      "(C2): window_strides has 1 entries, expected 2");
  EXPECT_VERIFY_ERROR(Conv("3x3x3x16xf32", "1x8x8x16xf32", 1, {1, 0}),
                      "(C3): window_strides must be > 0, found 0");
  EXPECT_VERIFY_ERROR(Conv("3x3x3xf32", "1x8x8x16xf32"),
                      "(C1): lhs and rhs must have the same rank N >= 2");
}

TEST(VerifierLinalgTest, Fft) {
  auto verify = [](const char* type, const char* operand, const char* result) {
    IrBuilder b;
    return b.Verify({b.Add1("stablehlo.fft", {b.Arg(operand)}, result,
                            {{"fft_type", Enum("stablehlo.fft_type", type)},
                             {"fft_length", Dims({8})}})});
  };
  EXPECT_VERIFY_OK(verify("RFFT", "4x8xf32", "4x5xc64"));
  EXPECT_VERIFY_OK(verify("IRFFT", "4x5xc64", "4x8xf32"));
  EXPECT_VERIFY_OK(verify("FFT", "4x8xc64", "4x8xc64"));
  EXPECT_VERIFY_ERROR(verify("RFFT", "4x8xf32", "4x8xc64"),
                      "stablehlo.fft (C5): result must have shape [4, 5]");
  EXPECT_VERIFY_ERROR(verify("FFT", "4x8xf32", "4x8xc64"),
                      "stablehlo.fft (C2): FFT needs a complex operand, found tensor<4x8xf32>");
  EXPECT_VERIFY_ERROR(verify("RFFT", "4x6xf32", "4x5xc64"),
                      "(C4): operand dimension 1 has size 6 but fft_length[0] is 8");
}

TEST(VerifierLinalgTest, CholeskyAndTriangularSolve) {
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.cholesky", {b.Arg("2x3x3xf32")}, "2x3x3xf32",
                                      {{"lower", Attribute::Bool(true)}})}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.cholesky", {b.Arg("3x4xf32")}, "3x4xf32")}),
                        "stablehlo.cholesky (C3): a must be square in its last two dimensions");
  }
  auto solve = [](bool left_side) {
    IrBuilder b;
    return b.Verify({b.Add1("stablehlo.triangular_solve", {b.Arg("3x3xf32"), b.Arg("3x2xf32")},
                            "3x2xf32",
                            {{"left_side", Attribute::Bool(left_side)},
                             {"lower", Attribute::Bool(true)},
                             {"unit_diagonal", Attribute::Bool(false)},
                             {"transpose_a", Enum("stablehlo.transpose", "NO_TRANSPOSE")}})});
  };
  EXPECT_VERIFY_OK(solve(true));
  EXPECT_VERIFY_ERROR(solve(false), "stablehlo.triangular_solve (C3): a must be square, share "
                                    "batch dimensions with b and match b's last dimension");
}

TEST(VerifierLinalgTest, BatchNorm) {
  auto inference = [](const char* scale) {
    IrBuilder b;
    Value* x = b.Arg("2x3x4xf32");
    Value* s = b.Arg(scale);
    return b.Verify({b.Add1("stablehlo.batch_norm_inference", {x, s, s, s, s}, "2x3x4xf32",
                            {{"epsilon", Attribute::Float(1e-5, Type::Element(ElementType::kF32))},
                             {"feature_index", I64(2)}})});
  };
  EXPECT_VERIFY_OK(inference("4xf32"));
  EXPECT_VERIFY_ERROR(inference("5xf32"), "stablehlo.batch_norm_inference (C3): scale must be "
                                          "1-dimensional of size 4 (operand dimension 2)");
  IrBuilder b;
  Value* x = b.Arg("2x3x4xf32");
  Value* s = b.Arg("4xf32");
  Operation* training = b.Add("stablehlo.batch_norm_training", {x, s, s},
                              {"2x3x4xf32", "4xf32", "3xf32"}, {{"feature_index", I64(2)}});
  EXPECT_VERIFY_ERROR(b.Verify({training->result(0)}), "batch_var must be 1-dimensional of "
                                                       "size 4");
}

// ---------------------------------------------------------------------------
// reduce, reduce_window, select_and_scatter, sort, map, while, if, case

TEST(VerifierRegionTest, Reduce) {
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* zero = b.Zeros("f32");
    Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"2xf32"},
                              {{"dimensions", Dims({1})}});
    SumBody(b, reduce);
    EXPECT_VERIFY_OK(b.Verify({reduce->result(0)}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* zero = b.Zeros("f32");
    Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"3xf32"},
                              {{"dimensions", Dims({1})}});
    SumBody(b, reduce);
    EXPECT_VERIFY_ERROR(b.Verify({reduce->result(0)}),
                        "stablehlo.reduce (C7): result must have shape [2], found tensor<3xf32>");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* zero = b.Zeros("f32");
    Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"2xf32"},
                              {{"dimensions", Dims({1})}});
    std::vector<Value*> args = b.Open(reduce, {"f32", "f32", "f32"});
    b.Close({b.Add1("stablehlo.add", {args[0], args[1]}, "f32")});
    EXPECT_VERIFY_ERROR(b.Verify({reduce->result(0)}),
                        "stablehlo.reduce (C6): the body must take 2 arguments, found 3");
  }
  {
    // A wider accumulator (upstream's is_promotable) sets the result element.
    IrBuilder b;
    Value* x = b.Arg("2x3xbf16");
    Value* zero = b.Zeros("bf16");
    Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"2xbf16"},
                              {{"dimensions", Dims({1})}});
    SumBody(b, reduce, "f32");
    EXPECT_VERIFY_ERROR(b.Verify({reduce->result(0)}),
                        "stablehlo.reduce (C8): result #0 must have the body's element type f32");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* zero = b.Zeros("f32");
    Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"f32"},
                              {{"dimensions", Dims({1, 1})}});
    SumBody(b, reduce);
    EXPECT_VERIFY_ERROR(b.Verify({reduce->result(0)}),
                        "stablehlo.reduce (C5): dimensions contains dimension 1 more than once");
  }
}

// A 2x2 max pool with stride 2 over NHWC 1x4x4x1.
Status MaxPool(std::vector<int64_t> window, const char* result) {
  IrBuilder b;
  Value* x = b.Arg("1x4x4x1xf32");
  Value* init = b.Zeros("f32");
  Operation* pool = b.Add("stablehlo.reduce_window", {x, init}, {result},
                          {{"window_dimensions", Dims(std::move(window))},
                           {"window_strides", Dims({1, 2, 2, 1})}});
  std::vector<Value*> args = b.Open(pool, {"f32", "f32"});
  b.Close({b.Add1("stablehlo.maximum", {args[0], args[1]}, "f32")});
  return b.Verify({pool->result(0)});
}

TEST(VerifierRegionTest, ReduceWindow) {
  EXPECT_VERIFY_OK(MaxPool({1, 2, 2, 1}, "1x2x2x1xf32"));
  EXPECT_VERIFY_ERROR(MaxPool({1, 2, 2, 1}, "1x3x3x1xf32"),
                      "stablehlo.reduce_window (C15): result must have shape [1, 2, 2, 1]");
  EXPECT_VERIFY_ERROR(MaxPool({1, 2, 2}, "1x2x2x1xf32"),
                      "(C4): window_dimensions has 3 entries, expected the input rank 4");
  EXPECT_VERIFY_ERROR(MaxPool({1, 0, 2, 1}, "1x2x2x1xf32"),
                      "(C5): window_dimensions must be > 0, found 0");
}

// The gradient of the max pool above.
Status MaxPoolGrad(const char* source) {
  IrBuilder b;
  Value* x = b.Arg("1x4x4x1xf32");
  Value* s = b.Arg(source);
  Value* init = b.Zeros("f32");
  Operation* op = b.Add("stablehlo.select_and_scatter", {x, s, init}, {"1x4x4x1xf32"},
                        {{"window_dimensions", Dims({1, 2, 2, 1})},
                         {"window_strides", Dims({1, 2, 2, 1})}});
  std::vector<Value*> args = b.Open(op, {"f32", "f32"});
  b.Close({b.Add1("stablehlo.compare", {args[0], args[1]}, "i1",
                  {{"comparison_direction", Direction("GE")}})});
  SumBody(b, op);
  return b.Verify({op->result(0)});
}

TEST(VerifierRegionTest, SelectAndScatter) {
  EXPECT_VERIFY_OK(MaxPoolGrad("1x2x2x1xf32"));
  EXPECT_VERIFY_ERROR(MaxPoolGrad("1x3x3x1xf32"),
                      "stablehlo.select_and_scatter (C2): source must have shape [1, 2, 2, 1] "
                      "(one entry per window), found tensor<1x3x3x1xf32>");
}

TEST(VerifierRegionTest, Sort) {
  auto sort = [](const char* comparator_type) {
    IrBuilder b;
    Value* keys = b.Arg("5xf32");
    Value* values = b.Arg("5xi32");
    Operation* op = b.Add("stablehlo.sort", {keys, values}, {"5xf32", "5xi32"},
                          {{"dimension", I64(0)}, {"is_stable", Attribute::Bool(true)}});
    std::vector<Value*> args = b.Open(op, {comparator_type, comparator_type, "i32", "i32"});
    b.Close({b.Add1("stablehlo.compare", {args[0], args[1]}, "i1",
                    {{"comparison_direction", Direction("LT")}})});
    return b.Verify({op->result(0), op->result(1)});
  };
  EXPECT_VERIFY_OK(sort("f32"));
  EXPECT_VERIFY_ERROR(sort("f64"), "stablehlo.sort (C5): comparator argument #0 must be "
                                   "tensor<f32>, found tensor<f64>");
}

TEST(VerifierRegionTest, Map) {
  IrBuilder b;
  Value* x = b.Arg("4xf32");
  Operation* map = b.Add("stablehlo.map", {x, x}, {"4xf32"}, {{"dimensions", Dims({1})}});
  SumBody(b, map);
  EXPECT_VERIFY_ERROR(b.Verify({map->result(0)}),
                      "stablehlo.map (C3): dimensions must be [0, ..., 0], found [1]");
}

// fori_loop(0, 10, body) carrying an i32 counter and a 3xf32 value.
Status Loop(const char* cond_result, const char* body_value) {
  IrBuilder b;
  Value* start = b.Arg("i32");
  Value* x = b.Arg("3xf32");
  Operation* loop = b.Add("stablehlo.while", {start, x}, {"i32", "3xf32"});
  std::vector<Value*> cond = b.Open(loop, {"i32", "3xf32"});
  b.Close({b.Add1("stablehlo.compare", {cond[0], cond[0]}, cond_result,
                  {{"comparison_direction", Direction("LT")}})});
  std::vector<Value*> body = b.Open(loop, {"i32", "3xf32"});
  Value* next = b.Add1("stablehlo.add", {body[0], body[0]}, "i32");
  Value* value = b.Add1("stablehlo.convert", {body[1]}, body_value);
  b.Close({next, value});
  return b.Verify({loop->result(1)});
}

TEST(VerifierRegionTest, While) {
  EXPECT_VERIFY_OK(Loop("i1", "3xf32"));
  EXPECT_VERIFY_ERROR(Loop("1xi1", "3xf32"), "stablehlo.while (C1): cond must return one "
                                             "tensor<i1>, found (tensor<1xi1>)");
  EXPECT_VERIFY_ERROR(Loop("i1", "3xf64"), "stablehlo.while (C2): body returns (tensor<i32>, "
                                           "tensor<3xf64>) but the operands are (tensor<i32>, "
                                           "tensor<3xf32>)");
}

TEST(VerifierRegionTest, IfAndCase) {
  auto conditional = [](const char* op, const char* selector, const char* second) {
    IrBuilder b;
    Value* index = b.Arg(selector);
    Value* x = b.Arg("3xf32");
    Operation* branch = b.Add(op, {index}, {"3xf32"});
    b.Open(branch, {});
    b.Close({x});
    b.Open(branch, {});
    b.Close({b.Add1("stablehlo.convert", {x}, second)});
    return b.Verify({branch->result(0)});
  };
  EXPECT_VERIFY_OK(conditional("stablehlo.if", "i1", "3xf32"));
  EXPECT_VERIFY_OK(conditional("stablehlo.case", "i32", "3xf32"));
  EXPECT_VERIFY_ERROR(conditional("stablehlo.if", "i1", "3xi32"),
                      "stablehlo.if (C2): branch #1 returns (tensor<3xi32>) but branch #0 "
                      "returns (tensor<3xf32>)");
  EXPECT_VERIFY_ERROR(conditional("stablehlo.if", "2xi1", "3xf32"),
                      "stablehlo.if (I1): pred must be tensor<i1>, found tensor<2xi1>");
  EXPECT_VERIFY_ERROR(conditional("stablehlo.case", "i64", "3xf32"),
                      "stablehlo.case (I1): index must be tensor<i32>, found tensor<i64>");
}

// ---------------------------------------------------------------------------
// Collectives

TEST(VerifierCollectiveTest, AllReduce) {
  auto all_reduce = [](Attribute groups, const char* result) {
    IrBuilder b;
    Operation* op = b.Add("stablehlo.all_reduce", {b.Arg("4xf32")}, {result},
                          {{"replica_groups", std::move(groups)}});
    SumBody(b, op);
    return b.Verify({op->result(0)});
  };
  EXPECT_VERIFY_OK(all_reduce(DenseI64({2, 2}, {0, 1, 2, 3}), "4xf32"));
  EXPECT_VERIFY_ERROR(all_reduce(DenseI64({1, 3}, {0, 1, 1}), "4xf32"),
                      "stablehlo.all_reduce (C1): replica id 1 appears more than once in "
                      "replica_groups");
  EXPECT_VERIFY_ERROR(all_reduce(DenseI64({1, 2}, {0, 2}), "4xf32"),
                      "replica_groups lists 2 ids but not id 1");
  EXPECT_VERIFY_ERROR(all_reduce(DenseI64({1, 2}, {0, 1}), "4xf64"),
                      "stablehlo.all_reduce (C7): result #0 must have the computation's element "
                      "type f32");
}

TEST(VerifierCollectiveTest, CollectiveReduce) {
  auto collective_reduce = [](std::vector<const char*> operands, const char* result,
                              bool dynamic_root) {
    IrBuilder b;
    std::vector<Value*> args;
    for (const char* type : operands) args.push_back(b.Arg(type));
    std::vector<NamedAttribute> attributes = {{"replica_groups", DenseI64({1, 2}, {0, 1})}};
    if (dynamic_root) attributes.push_back({"has_dynamic_root", Attribute::Unit()});
    Operation* op = b.Add("stablehlo.collective_reduce", args, {result}, attributes);
    SumBody(b, op);
    return b.Verify({op->result(0)});
  };
  EXPECT_VERIFY_OK(collective_reduce({"4xf32"}, "4xf32", false));
  EXPECT_VERIFY_OK(collective_reduce({"4xf32", "1xi32"}, "4xf32", true));
  EXPECT_VERIFY_ERROR(collective_reduce({"4xf32", "2xi32"}, "4xf32", true),
                      "stablehlo.collective_reduce (C6): the root index must be tensor<1xi32>, "
                      "found tensor<2xi32>");
  EXPECT_VERIFY_ERROR(collective_reduce({"4xf32"}, "3xf32", false),
                      "stablehlo.collective_reduce (C6): result #0 must have the shape of "
                      "operand #0 [4]");
}

TEST(VerifierCollectiveTest, AllGatherReduceScatterAllToAll) {
  {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.all_gather", {b.Arg("2x3xf32")}, "4x3xf32",
                      {{"all_gather_dim", I64(0)}, {"replica_groups", DenseI64({1, 2}, {0, 1})}});
    EXPECT_VERIFY_OK(b.Verify({y}));
  }
  {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.all_gather", {b.Arg("2x3xf32")}, "5x3xf32",
                      {{"all_gather_dim", I64(0)}, {"replica_groups", DenseI64({1, 2}, {0, 1})}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.all_gather (C6): result #0 tensor<5x3xf32> "
                                       "must be operand tensor<2x3xf32> with dimension 0 "
                                       "multiplied by the group size");
  }
  {
    IrBuilder b;
    Operation* op = b.Add("stablehlo.reduce_scatter", {b.Arg("4x3xf32")}, {"2x3xf32"},
                          {{"scatter_dimension", I64(0)},
                           {"replica_groups", DenseI64({1, 2}, {0, 1})}});
    SumBody(b, op);
    EXPECT_VERIFY_OK(b.Verify({op->result(0)}));
  }
  auto all_to_all = [](int64_t count, const char* result) {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.all_to_all", {b.Arg("4x2xf32")}, result,
                      {{"split_dimension", I64(0)},
                       {"concat_dimension", I64(1)},
                       {"split_count", I64(count)},
                       {"replica_groups", DenseI64({1, 2}, {0, 1})}});
    return b.Verify({y});
  };
  EXPECT_VERIFY_OK(all_to_all(2, "2x4xf32"));
  EXPECT_VERIFY_ERROR(all_to_all(2, "4x4xf32"), "stablehlo.all_to_all (C9): result must have "
                                                "shape [2, 4]");
  EXPECT_VERIFY_ERROR(all_to_all(4, "1x8xf32"), "(C8): replica groups have size 2, expected "
                                                "split_count 4");
}

TEST(VerifierCollectiveTest, CollectivePermuteAndDeviceIds) {
  auto permute = [](Attribute pairs) {
    IrBuilder b;
    return b.Verify({b.Add1("stablehlo.collective_permute", {b.Arg("4xf32")}, "4xf32",
                            {{"source_target_pairs", std::move(pairs)}})});
  };
  EXPECT_VERIFY_OK(permute(DenseI64({2, 2}, {0, 1, 1, 0})));
  EXPECT_VERIFY_ERROR(permute(DenseI64({2, 2}, {0, 1, 0, 2})),
                      "stablehlo.collective_permute (C2): source 0 appears more than once");
  EXPECT_VERIFY_ERROR(permute(DenseI64({1, 3}, {0, 1, 2})),
                      "(C1): source_target_pairs must have shape [N, 2], found [1, 3]");
  IrBuilder ok;
  EXPECT_VERIFY_OK(ok.Verify({ok.Add1("stablehlo.replica_id", {}, "ui32")}));
  IrBuilder bad;
  EXPECT_VERIFY_ERROR(bad.Verify({bad.Add1("stablehlo.partition_id", {}, "i32")}),
                      "stablehlo.partition_id: result must be tensor<ui32>, found tensor<i32>");
}

// ---------------------------------------------------------------------------
// Tuples, tokens, rng, custom_call, composite, optimization_barrier

TEST(VerifierMiscTest, TuplesAndTokens) {
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* t =
        b.AddTyped("stablehlo.tuple", {x, x}, {Type::Tuple({T("2xf32"), T("2xf32")})})->result(0);
    Value* y = b.Add1("stablehlo.get_tuple_element", {t}, "2xf32", {{"index", testing::I32(1)}});
    Value* token = b.AddTyped("stablehlo.create_token", {}, {Type::Token()})->result(0);
    b.AddTyped("stablehlo.after_all", {token, token}, {Type::Token()});
    EXPECT_VERIFY_OK(b.Verify({y}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* t = b.AddTyped("stablehlo.tuple", {x}, {Type::Tuple({T("2xf32")})})->result(0);
    Value* y = b.Add1("stablehlo.get_tuple_element", {t}, "2xf32", {{"index", testing::I32(1)}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.get_tuple_element (C1): index 1 must be in "
                                       "[0, 1) for tuple<tensor<2xf32>>");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* t = b.AddTyped("stablehlo.tuple", {x}, {Type::Tuple({T("3xf32")})})->result(0);
    EXPECT_VERIFY_ERROR(b.Verify({x}), "stablehlo.tuple (C1): result must have type "
                                       "tuple<tensor<2xf32>>, found tuple<tensor<3xf32>>");
    (void)t;
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Operation* barrier = b.Add("stablehlo.optimization_barrier", {x, x}, {"2xf32", "2xf64"});
    EXPECT_VERIFY_ERROR(b.Verify({barrier->result(0)}),
                        "stablehlo.optimization_barrier (C1): results (tensor<2xf32>, "
                        "tensor<2xf64>) must have the operand types");
  }
}

TEST(VerifierMiscTest, RngBitGeneratorAndRng) {
  auto generator = [](const char* algorithm, const char* state) {
    IrBuilder b;
    Operation* op = b.Add("stablehlo.rng_bit_generator", {b.Arg(state)}, {state, "4x4xui32"},
                          {{"rng_algorithm", Enum("stablehlo.rng_algorithm", algorithm)}});
    return b.Verify({op->result(1)});
  };
  EXPECT_VERIFY_OK(generator("THREE_FRY", "2xui64"));
  EXPECT_VERIFY_OK(generator("DEFAULT", "4xui32"));
  EXPECT_VERIFY_ERROR(generator("PHILOX", "4xui64"),
                      "stablehlo.rng_bit_generator (C2): PHILOX needs an initial_state of 2 or 3 "
                      "ui64 values, found tensor<4xui64>");
  IrBuilder b;
  Value* low = b.Arg("f32");
  Value* high = b.Arg("i32");
  Value* shape = b.Arg("2xi64");
  Value* y = b.Add1("stablehlo.rng", {low, high, shape}, "3x4xf32",
                    {{"rng_distribution", Enum("stablehlo.rng_distribution", "UNIFORM")}});
  EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.rng (C1): a, b and result must have one "
                                     "element type");
}

TEST(VerifierMiscTest, CustomCall) {
  IrBuilder ok;
  Value* y = ok.Add1("stablehlo.custom_call", {ok.Arg("4xf32")}, "4xf32",
                     {{"call_target_name", Attribute::String("lapack_sgesdd_ffi")},
                      {"backend_config", Attribute::Dictionary({})}});
  EXPECT_VERIFY_OK(ok.Verify({y}));
  IrBuilder bad;
  Value* z = bad.Add1("stablehlo.custom_call", {bad.Arg("4xf32")}, "4xf32");
  EXPECT_VERIFY_ERROR(bad.Verify({z}), "stablehlo.custom_call: missing attribute "
                                       "'call_target_name' (a string)");
}

TEST(VerifierMiscTest, Composite) {
  auto composite = [](const char* name, const char* decomposition_type) {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.composite", {b.Arg("4xf32")}, "4xf32",
                      {{"name", Attribute::String(name)},
                       {"decomposition", Attribute::SymbolRef({"gelu_impl"})}});
    auto func = std::make_unique<Operation>("func.func");
    func->SetAttr("sym_name", Attribute::String("gelu_impl"));
    func->SetAttr("function_type", Attribute::TypeAttr(Type::Function({T(decomposition_type)},
                                                                      {T(decomposition_type)})));
    Block& body = func->AddRegion().AddBlock();
    auto ret = std::make_unique<Operation>("func.return");
    ret->AddOperand(body.AddArgument(T(decomposition_type)));
    body.Append(std::move(ret));
    b.module().body().Append(std::move(func));
    return b.Verify({y});
  };
  EXPECT_VERIFY_OK(composite("jax.gelu", "4xf32"));
  EXPECT_VERIFY_ERROR(composite("gelu", "4xf32"),
                      "stablehlo.composite (C1): name \"gelu\" must be a namespaced op name");
  EXPECT_VERIFY_ERROR(composite("jax.gelu", "8xf32"),
                      "stablehlo.composite (C3): operand types (tensor<4xf32>) do not match "
                      "@gelu_impl's inputs (tensor<8xf32>)");
}

// ---------------------------------------------------------------------------
// chlo (text programs from jax.jit(f).lower(x).as_text())

TEST(VerifierChloTest, UnaryAndPredicates) {
  auto unary = [](const char* name, const char* operand, const char* result) {
    IrBuilder b;
    return b.Verify({b.Add1(name, {b.Arg(operand)}, result)});
  };
  EXPECT_VERIFY_OK(unary("chlo.erf", "3xf32", "3xf32"));
  EXPECT_VERIFY_OK(unary("chlo.acosh", "3xf64", "3xf64"));
  EXPECT_VERIFY_OK(unary("chlo.is_inf", "3xbf16", "3xi1"));
  EXPECT_VERIFY_ERROR(
      unary("chlo.erf", "3xi32", "3xi32"),
      "chlo.erf: operand #0 must be a tensor of floating-point elements, found tensor<3xi32>");
  EXPECT_VERIFY_ERROR(unary("chlo.sinh", "3xf32", "4xf32"),
                      "chlo.sinh: result must have the operand type tensor<3xf32>, found "
                      "tensor<4xf32>");
  EXPECT_VERIFY_ERROR(unary("chlo.is_pos_inf", "3xf32", "3xf32"), "chlo.is_pos_inf: result");
}

TEST(VerifierChloTest, BroadcastingBinaryOps) {
  auto binary = [](const char* name, const char* lhs, const char* rhs, const char* result,
                   std::vector<NamedAttribute> attributes = {}) {
    IrBuilder b;
    return b.Verify({b.Add1(name, {b.Arg(lhs), b.Arg(rhs)}, result, std::move(attributes))});
  };
  EXPECT_VERIFY_OK(binary("chlo.broadcast_add", "2x1x3xf32", "4x1xf32", "2x4x3xf32"));
  EXPECT_VERIFY_OK(binary("chlo.broadcast_compare", "3xf32", "f32", "3xi1",
                          {{"comparison_direction", Enum("chlo.comparison_direction", "LT")}}));
  EXPECT_VERIFY_OK(binary("chlo.next_after", "3xf32", "3xf32", "3xf32"));
  EXPECT_VERIFY_ERROR(binary("chlo.broadcast_add", "2x3xf32", "4x3xf32", "2x3xf32"),
                      "chlo.broadcast_add: operand shapes [2, 3] and [4, 3] do not broadcast: "
                      "dimension 0 has sizes 2 and 4");
  EXPECT_VERIFY_ERROR(binary("chlo.broadcast_multiply", "3xf32", "3xf16", "3xf32"),
                      "chlo.broadcast_multiply: lhs and rhs must have one element type");
  EXPECT_VERIFY_ERROR(binary("chlo.broadcast_complex", "3xf32", "3xf32", "3xf32"),
                      "chlo.broadcast_complex: result must have element type complex<f32>");
}

TEST(VerifierChloTest, TopK) {
  auto top_k = [](int64_t k, const char* values, const char* indices) {
    IrBuilder b;
    Operation* op = b.Add("chlo.top_k", {b.Arg("3x6xf32")}, {values, indices}, {{"k", I64(k)}});
    return b.Verify({op->result(0), op->result(1)});
  };
  EXPECT_VERIFY_OK(top_k(2, "3x2xf32", "3x2xi32"));
  EXPECT_VERIFY_ERROR(top_k(7, "3x7xf32", "3x7xi32"), "chlo.top_k: k must be in [0, 6], found 7");
  EXPECT_VERIFY_ERROR(top_k(2, "3x2xf32", "3x2xi64"),
                      "chlo.top_k: indices must have element type i32, found tensor<3x2xi64>");
  EXPECT_VERIFY_ERROR(top_k(2, "3x3xf32", "3x2xi32"), "chlo.top_k: result #0");
}

}  // namespace
}  // namespace kiln::ir

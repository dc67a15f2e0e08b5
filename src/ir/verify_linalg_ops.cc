// Verifier rules for contractions and linear algebra: dot_general, dot,
// convolution (dimension numbers and window attributes), fft, cholesky,
// triangular_solve and the batch_norm ops.
#include <algorithm>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// precision_config: at most two of DEFAULT, HIGH, HIGHEST (the spec says
// exactly two; upstream accepts fewer, and so does Kiln). Returns whether
// every entry is DEFAULT.
StatusOr<bool> VerifyPrecisionConfig(const OpContext& context, std::string_view constraint) {
  Attribute config = context.op().GetAttr("precision_config");
  if (!config) return true;
  if (!config.Is(AttrKind::kArray) || config->elements.size() > 2) {
    return context.Fail(constraint, "precision_config must be an array of at most 2 precisions");
  }
  bool all_default = true;
  for (const Attribute& precision : config->elements) {
    const std::string_view value = precision.Is(AttrKind::kEnum)
                                       ? std::string_view(precision->enum_value)
                                       : std::string_view();
    if (value != "DEFAULT" && value != "HIGH" && value != "HIGHEST") {
      return context.Fail(constraint, "precision_config entries must be DEFAULT, HIGH or "
                                      "HIGHEST");
    }
    all_default = all_default && value == "DEFAULT";
  }
  return all_default;
}

bool Contains(std::span<const int64_t> dims, int64_t dim) {
  return std::find(dims.begin(), dims.end(), dim) != dims.end();
}

// Pairs of dimensions that must have equal sizes (dot_general C9, C10).
Status ExpectMatchingSizes(const OpContext& context, std::string_view constraint,
                           std::string_view kind, const Type& lhs, const IntList& lhs_dims,
                           const Type& rhs, const IntList& rhs_dims) {
  for (size_t i = 0; i < lhs_dims.size(); ++i) {
    const int64_t a = lhs.dims()[static_cast<size_t>(lhs_dims[i])];
    const int64_t b = rhs.dims()[static_cast<size_t>(rhs_dims[i])];
    if (!DimsCompatible(a, b)) {
      return context.Fail(constraint, "lhs ", kind, " dimension ", lhs_dims[i], " has size ", a,
                          " but rhs ", kind, " dimension ", rhs_dims[i], " has size ", b);
    }
  }
  return Status::Ok();
}

Status VerifyDotGeneral(const OpContext& context) {
  const Type& lhs = context.operand(0);
  const Type& rhs = context.operand(1);
  KILN_ASSIGN_OR_RETURN(Attribute numbers,
                        context.Struct("dot_dimension_numbers", "stablehlo.dot"));
  KILN_ASSIGN_OR_RETURN(IntList lhs_batch, context.FieldInts(numbers, "lhs_batching_dimensions"));
  KILN_ASSIGN_OR_RETURN(IntList rhs_batch, context.FieldInts(numbers, "rhs_batching_dimensions"));
  KILN_ASSIGN_OR_RETURN(IntList lhs_contract,
                        context.FieldInts(numbers, "lhs_contracting_dimensions"));
  KILN_ASSIGN_OR_RETURN(IntList rhs_contract,
                        context.FieldInts(numbers, "rhs_contracting_dimensions"));
  if (lhs_batch.size() != rhs_batch.size()) {
    return context.Fail("C1", "lhs has ", lhs_batch.size(), " batching dimensions but rhs has ",
                        rhs_batch.size());
  }
  if (lhs_contract.size() != rhs_contract.size()) {
    return context.Fail("C2", "lhs has ", lhs_contract.size(),
                        " contracting dimensions but rhs has ", rhs_contract.size());
  }
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C3", "lhs_batching_dimensions", lhs_batch.span(),
                                      "lhs_contracting_dimensions", lhs_contract.span()));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C4", "rhs_batching_dimensions", rhs_batch.span(),
                                      "rhs_contracting_dimensions", rhs_contract.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C5", "lhs_batching_dimensions", lhs_batch.span(),
                                     Rank(lhs), "the lhs rank"));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C6", "lhs_contracting_dimensions",
                                     lhs_contract.span(), Rank(lhs), "the lhs rank"));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C7", "rhs_batching_dimensions", rhs_batch.span(),
                                     Rank(rhs), "the rhs rank"));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C8", "rhs_contracting_dimensions",
                                     rhs_contract.span(), Rank(rhs), "the rhs rank"));
  KILN_RETURN_IF_ERROR(ExpectMatchingSizes(context, "C9", "batching", lhs, lhs_batch, rhs,
                                           rhs_batch));
  KILN_RETURN_IF_ERROR(ExpectMatchingSizes(context, "C10", "contracting", lhs, lhs_contract, rhs,
                                           rhs_contract));
  KILN_ASSIGN_OR_RETURN(bool default_precision, VerifyPrecisionConfig(context, "C11"));

  std::vector<int64_t> expected;
  for (size_t i = 0; i < lhs_batch.size(); ++i) {
    const int64_t size = lhs.dims()[static_cast<size_t>(lhs_batch[i])];
    expected.push_back(size != kDynamic ? size : rhs.dims()[static_cast<size_t>(rhs_batch[i])]);
  }
  for (int64_t d = 0; d < Rank(lhs); ++d) {
    if (!Contains(lhs_batch.span(), d) && !Contains(lhs_contract.span(), d)) {
      expected.push_back(lhs.dims()[static_cast<size_t>(d)]);
    }
  }
  for (int64_t d = 0; d < Rank(rhs); ++d) {
    if (!Contains(rhs_batch.span(), d) && !Contains(rhs_contract.span(), d)) {
      expected.push_back(rhs.dims()[static_cast<size_t>(d)]);
    }
  }
  KILN_RETURN_IF_ERROR(context.ExpectResultShape("C12", 0, expected));

  Attribute algorithm = context.op().GetAttr("algorithm");
  if (!algorithm) return Status::Ok();
  if (!algorithm.Is(AttrKind::kStruct) || algorithm->text != "stablehlo.dot_algorithm") {
    return context.Fail("", "attribute 'algorithm' must be #stablehlo.dot_algorithm<...>");
  }
  if (!default_precision) {
    return context.Fail("C21", "precision_config must be DEFAULT when an algorithm is set");
  }
  static constexpr std::pair<std::string_view, std::string_view> kCounts[] = {
      {"lhs_component_count", "C22"},
      {"rhs_component_count", "C23"},
      {"num_primitive_operations", "C24"}};
  for (const auto& [field, constraint] : kCounts) {
    KILN_ASSIGN_OR_RETURN(int64_t count, context.FieldInt(algorithm, field));
    if (count <= 0) return context.Fail(constraint, field, " must be > 0, found ", count);
  }
  return Status::Ok();
}

// The legacy dot: vector or matrix times vector or matrix.
Status VerifyDot(const OpContext& context) {
  const Type& lhs = context.operand(0);
  const Type& rhs = context.operand(1);
  if (Rank(lhs) < 1 || Rank(lhs) > 2 || Rank(rhs) < 1 || Rank(rhs) > 2) {
    return context.Fail("", "lhs and rhs must have rank 1 or 2, found ", TypeText(lhs), " and ",
                        TypeText(rhs));
  }
  const int64_t contracted = lhs.dims().back();
  if (!DimsCompatible(contracted, rhs.dims()[0])) {
    return context.Fail("", "lhs contracting dimension ", Rank(lhs) - 1, " has size ", contracted,
                        " but rhs contracting dimension 0 has size ", rhs.dims()[0]);
  }
  KILN_RETURN_IF_ERROR(VerifyPrecisionConfig(context, "").status());
  std::vector<int64_t> expected;
  if (Rank(lhs) == 2) expected.push_back(lhs.dims()[0]);
  if (Rank(rhs) == 2) expected.push_back(rhs.dims()[1]);
  return context.ExpectResultShape("", 0, expected);
}

struct ConvDims {
  int64_t input_batch, input_feature, kernel_input_feature, kernel_output_feature;
  int64_t output_batch, output_feature;
  IntList input_spatial, kernel_spatial, output_spatial;
};

StatusOr<ConvDims> ReadConvDims(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(Attribute numbers, context.Struct("dimension_numbers", "stablehlo.conv"));
  ConvDims dims;
  KILN_ASSIGN_OR_RETURN(dims.input_batch, context.FieldInt(numbers, "input_batch_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.input_feature, context.FieldInt(numbers, "input_feature_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.kernel_input_feature,
                        context.FieldInt(numbers, "kernel_input_feature_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.kernel_output_feature,
                        context.FieldInt(numbers, "kernel_output_feature_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.output_batch, context.FieldInt(numbers, "output_batch_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.output_feature, context.FieldInt(numbers, "output_feature_dimension"));
  KILN_ASSIGN_OR_RETURN(dims.input_spatial, context.FieldInts(numbers, "input_spatial_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.kernel_spatial,
                        context.FieldInts(numbers, "kernel_spatial_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.output_spatial,
                        context.FieldInts(numbers, "output_spatial_dimensions"));
  return dims;
}

// Dimension numbers: N - 2 spatial dimensions each, and each of input,
// kernel and output numbers a set of distinct dimensions in [0, N).
Status VerifyConvDims(const OpContext& context, const ConvDims& dims, int64_t rank) {
  struct Group {
    std::string_view name, what, size_constraint, constraint;
    const IntList& spatial;
    std::vector<int64_t> all;
  };
  Group groups[] = {
      {"input",
       "input dimension numbers",
       "C12",
       "C13",
       dims.input_spatial,
       {dims.input_batch, dims.input_feature}},
      {"kernel",
       "kernel dimension numbers",
       "C17",
       "C18",
       dims.kernel_spatial,
       {dims.kernel_input_feature, dims.kernel_output_feature}},
      {"output",
       "output dimension numbers",
       "C19",
       "C20",
       dims.output_spatial,
       {dims.output_batch, dims.output_feature}},
  };
  for (Group& group : groups) {
    if (static_cast<int64_t>(group.spatial.size()) != rank - 2) {
      return context.Fail(group.size_constraint, group.name, "_spatial_dimensions has ",
                          group.spatial.size(), " entries, expected rank - 2 = ", rank - 2);
    }
    group.all.insert(group.all.end(), group.spatial.begin(), group.spatial.end());
    KILN_RETURN_IF_ERROR(context.ExpectDimsInRange(group.constraint, group.constraint, group.what,
                                                   group.all, rank));
  }
  return Status::Ok();
}

// Group counts and the feature sizes they divide (C10, C11, C14-C16, C21-C23).
Status VerifyConvGroups(const OpContext& context, const ConvDims& dims, const Type& lhs,
                        const Type& rhs, int64_t feature_groups, int64_t batch_groups) {
  if (feature_groups <= 0) {
    return context.Fail("C21", "feature_group_count must be > 0, found ", feature_groups);
  }
  if (batch_groups <= 0) {
    return context.Fail("C22", "batch_group_count must be > 0, found ", batch_groups);
  }
  if (feature_groups > 1 && batch_groups > 1) {
    return context.Fail("C23", "feature_group_count (", feature_groups, ") and batch_group_count (",
                        batch_groups, ") may not both exceed 1");
  }
  const int64_t batch = lhs.dims()[static_cast<size_t>(dims.input_batch)];
  const int64_t features = lhs.dims()[static_cast<size_t>(dims.input_feature)];
  const int64_t kernel_in = rhs.dims()[static_cast<size_t>(dims.kernel_input_feature)];
  const int64_t kernel_out = rhs.dims()[static_cast<size_t>(dims.kernel_output_feature)];
  if (batch != kDynamic && batch % batch_groups != 0) {
    return context.Fail("C10", "input batch size ", batch,
                        " must be a multiple of batch_group_count ", batch_groups);
  }
  if (features != kDynamic && features % feature_groups != 0) {
    return context.Fail("C11", "input feature size ", features,
                        " must be a multiple of feature_group_count ", feature_groups);
  }
  if (features != kDynamic && kernel_in != kDynamic && features / feature_groups != kernel_in) {
    return context.Fail("C14", "kernel input feature size ", kernel_in,
                        " must be the input feature size ", features, " / feature_group_count ",
                        feature_groups);
  }
  if (kernel_out != kDynamic && kernel_out % batch_groups != 0) {
    return context.Fail("C15", "kernel output feature size ", kernel_out,
                        " must be a multiple of batch_group_count ", batch_groups);
  }
  if (kernel_out != kDynamic && kernel_out % feature_groups != 0) {
    return context.Fail("C16", "kernel output feature size ", kernel_out,
                        " must be a multiple of feature_group_count ", feature_groups);
  }
  return Status::Ok();
}

Status VerifyConvolution(const OpContext& context) {
  const Type& lhs = context.operand(0);
  const Type& rhs = context.operand(1);
  const int64_t rank = Rank(lhs);
  if (rank < 2 || Rank(rhs) != rank) {
    return context.Fail("C1", "lhs and rhs must have the same rank N >= 2, found ", TypeText(lhs),
                        " and ", TypeText(rhs));
  }
  if (Rank(context.result(0)) != rank) {
    return context.Fail("C26", "result ", TypeText(context.result(0)), " must have rank ", rank);
  }
  const bool quantized = (ClassOf(ElementOf(lhs)) | ClassOf(ElementOf(rhs))) & kQuantClasses;
  if (!quantized && ElementOf(lhs) != ElementOf(rhs)) {
    return context.Fail("C27", "lhs has element type ", TypeText(ElementOf(lhs)),
                        " but rhs has element type ", TypeText(ElementOf(rhs)));
  }
  KILN_ASSIGN_OR_RETURN(ConvDims dims, ReadConvDims(context));
  KILN_RETURN_IF_ERROR(VerifyConvDims(context, dims, rank));
  KILN_ASSIGN_OR_RETURN(int64_t feature_groups, context.IntOr("feature_group_count", 1));
  KILN_ASSIGN_OR_RETURN(int64_t batch_groups, context.IntOr("batch_group_count", 1));
  KILN_RETURN_IF_ERROR(VerifyConvGroups(context, dims, lhs, rhs, feature_groups, batch_groups));
  KILN_RETURN_IF_ERROR(VerifyPrecisionConfig(context, "C24").status());

  const int64_t spatial = rank - 2;
  KILN_ASSIGN_OR_RETURN(auto strides, WindowList(context, "window_strides", "C2", "C3", spatial));
  KILN_ASSIGN_OR_RETURN(auto padding, PaddingList(context, "C4", spatial));
  KILN_ASSIGN_OR_RETURN(auto lhs_dilation,
                        WindowList(context, "lhs_dilation", "C5", "C6", spatial));
  KILN_ASSIGN_OR_RETURN(auto rhs_dilation,
                        WindowList(context, "rhs_dilation", "C7", "C8", spatial));
  KILN_ASSIGN_OR_RETURN(IntList reversal, context.IntsOr("window_reversal"));
  if (reversal.present && static_cast<int64_t>(reversal.size()) != spatial) {
    return context.Fail("C9", "window_reversal has ", reversal.size(), " entries, expected ",
                        spatial);
  }

  std::vector<int64_t> expected(static_cast<size_t>(rank), kDynamic);
  const int64_t batch = lhs.dims()[static_cast<size_t>(dims.input_batch)];
  expected[static_cast<size_t>(dims.output_batch)] = batch == kDynamic ? kDynamic
                                                                       : batch / batch_groups;
  expected[static_cast<size_t>(dims.output_feature)] =
      rhs.dims()[static_cast<size_t>(dims.kernel_output_feature)];
  for (size_t i = 0; i < static_cast<size_t>(spatial); ++i) {
    WindowDim window;
    window.size = rhs.dims()[static_cast<size_t>(dims.kernel_spatial[i])];
    window.stride = strides[i];
    window.padding_low = padding[2 * i];
    window.padding_high = padding[2 * i + 1];
    window.base_dilation = lhs_dilation[i];
    window.window_dilation = rhs_dilation[i];
    std::optional<int64_t> windows = NumWindows(
        lhs.dims()[static_cast<size_t>(dims.input_spatial[i])], window);
    if (!windows) {
      return context.Fail("C25", "padding (", window.padding_low, ", ", window.padding_high,
                          ") of spatial dimension ", i, " leaves a negative input size");
    }
    expected[static_cast<size_t>(dims.output_spatial[i])] = *windows;
  }
  return context.ExpectResultShape("C25", 0, expected);
}

Status VerifyFft(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_ASSIGN_OR_RETURN(std::string_view type, context.Enum("fft_type"));
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return context.Fail("I2", "fft_type must be FFT, IFFT, RFFT or IRFFT, found ", type);
  }
  KILN_ASSIGN_OR_RETURN(IntList length, context.Ints("fft_length"));
  if (length.size() < 1 || length.size() > 3) {
    return context.Fail("C3", "fft_length must have 1 to 3 entries, found ", length.size());
  }
  const int64_t count = static_cast<int64_t>(length.size());
  if (count > Rank(operand)) {
    return context.Fail("C1", "fft_length has ", count, " entries but operand ", TypeText(operand),
                        " has rank ", Rank(operand));
  }
  // Element types (C2): FFT/IFFT complex -> same complex; RFFT real -> complex;
  // IRFFT complex -> real.
  const bool real_input = type == "RFFT";
  const Type expected_element = real_input        ? ComplexOf(ElementOf(operand))
                                : type == "IRFFT" ? RealPart(ElementOf(operand))
                                                  : ElementOf(operand);
  const bool input_ok = real_input ? static_cast<bool>(ComplexOf(ElementOf(operand)))
                                   : ClassOf(ElementOf(operand)) == kComplexClass;
  if (!input_ok) {
    return context.Fail("C2", type, " needs ", real_input ? "an f32 or f64" : "a complex",
                        " operand, found ", TypeText(operand));
  }
  if (ElementOf(result) != expected_element) {
    return context.Fail("C2", "result of ", type, " must have element type ",
                        TypeText(expected_element), ", found ", TypeText(result));
  }
  // Shapes (C4, C5): the real side's trailing dimensions are fft_length.
  std::vector<int64_t> expected = operand.dims();
  const bool real_output = type == "IRFFT";
  if (real_input || real_output) {
    const std::vector<int64_t>& real_dims = real_input ? operand.dims() : expected;
    const size_t first = real_dims.size() - length.size();
    for (size_t i = 0; i + (real_output ? 1 : 0) < length.size(); ++i) {
      if (!DimsCompatible(real_dims[first + i], length[i])) {
        return context.Fail("C4", "operand dimension ", first + i, " has size ",
                            real_dims[first + i], " but fft_length[", i, "] is ", length[i]);
      }
    }
    const int64_t last = length.back();
    const int64_t half = last == 0 ? 0 : last / 2 + 1;
    if (real_output && !DimsCompatible(operand.dims().back(), half)) {
      return context.Fail("C5", "IRFFT operand's last dimension must have size ", half,
                          " (fft_length[-1] / 2 + 1), found ", TypeText(operand));
    }
    expected.back() = real_input ? half : last;
  }
  return context.ExpectResultShape("C5", 0, expected);
}

Status VerifyCholesky(const OpContext& context) {
  const Type& a = context.operand(0);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "a", a,
                                             kFloatClass | kComplexClass | kPerTensorQuantClass));
  if (!TypesCompatible(a, context.result(0))) {
    return context.Fail("C1", "result must have the type of a ", TypeText(a), ", found ",
                        TypeText(context.result(0)));
  }
  if (Rank(a) < 2) return context.Fail("C2", "a must have rank >= 2, found ", TypeText(a));
  const int64_t rows = a.dims()[a.dims().size() - 2];
  if (!DimsCompatible(rows, a.dims().back())) {
    return context.Fail("C3", "a must be square in its last two dimensions, found ", TypeText(a));
  }
  return Status::Ok();
}

Status VerifyTriangularSolve(const OpContext& context) {
  const Type& a = context.operand(0);
  const Type& b = context.operand(1);
  const uint16_t classes = kFloatClass | kComplexClass | kPerTensorQuantClass;
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "a", a, classes));
  if (!SameElement(ElementOf(a), ElementOf(b))) {
    return context.Fail("C1", "a has element type ", TypeText(ElementOf(a)),
                        " but b has element type ", TypeText(ElementOf(b)));
  }
  if (Rank(a) < 2 || Rank(a) != Rank(b)) {
    return context.Fail("C2", "a and b must have the same rank >= 2, found ", TypeText(a), " and ",
                        TypeText(b));
  }
  KILN_ASSIGN_OR_RETURN(bool left_side, context.BoolOr("left_side", false));
  const size_t rank = a.dims().size();
  const int64_t shared = b.dims()[left_side ? rank - 2 : rank - 1];
  if (!DimsCompatible(a.dims()[rank - 2], a.dims()[rank - 1]) ||
      !DimsCompatible(a.dims()[rank - 1], shared) ||
      !ShapesCompatible(std::span(a.dims()).first(rank - 2), std::span(b.dims()).first(rank - 2))) {
    return context.Fail("C3", "a must be square, share batch dimensions with b and match b's ",
                        left_side ? "second-to-last" : "last", " dimension, found ", TypeText(a),
                        " and ", TypeText(b));
  }
  if (!TypesCompatible(b, context.result(0))) {
    return context.Fail("C4", "result must have the type of b ", TypeText(b), ", found ",
                        TypeText(context.result(0)));
  }
  KILN_ASSIGN_OR_RETURN(std::string_view transpose, context.EnumOr("transpose_a", "NO_TRANSPOSE"));
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT") {
    return context.Fail("I6", "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, found ",
                        transpose);
  }
  return Status::Ok();
}

// The batch_norm ops: `full` values have the operand's shape, `per_feature`
// ones are 1-D with one entry per feature. Constraint labels differ per op.
struct NamedType {
  std::string_view name;
  Type type;
};

Status VerifyBatchNorm(const OpContext& context, std::span<const NamedType> full,
                       std::span<const NamedType> per_feature, std::string_view shape_constraint,
                       std::string_view size_constraint) {
  const Type& operand = full[0].type;
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "operand", operand,
                                             kFloatClass | kPerTensorQuantClass));
  KILN_ASSIGN_OR_RETURN(int64_t feature_index, context.Int("feature_index"));
  if (feature_index < 0 || feature_index >= Rank(operand)) {
    return context.Fail("C1", "feature_index ", feature_index, " must be in [0, ", Rank(operand),
                        ")");
  }
  const int64_t features = operand.dims()[static_cast<size_t>(feature_index)];
  for (const NamedType& value : full) {
    if (!SameElement(ElementOf(value.type), ElementOf(operand))) {
      return context.Fail("C2", value.name, " must have element type ",
                          TypeText(ElementOf(operand)), ", found ", TypeText(value.type));
    }
    if (!ShapesCompatible(value.type.dims(), operand.dims())) {
      return context.Fail(shape_constraint, value.name, " must have the operand shape ",
                          DimsText(operand.dims()), ", found ", TypeText(value.type));
    }
  }
  for (const NamedType& value : per_feature) {
    if (!SameElement(ElementOf(value.type), ElementOf(operand))) {
      return context.Fail("C2", value.name, " must have element type ",
                          TypeText(ElementOf(operand)), ", found ", TypeText(value.type));
    }
    if (Rank(value.type) != 1 || !DimsCompatible(value.type.dims()[0], features)) {
      return context.Fail(size_constraint, value.name, " must be 1-dimensional of size ",
                          DimText(features), " (operand dimension ", feature_index, "), found ",
                          TypeText(value.type));
    }
  }
  return Status::Ok();
}

Status VerifyBatchNormInference(const OpContext& context) {
  const NamedType full[] = {{"operand", context.operand(0)}, {"result", context.result(0)}};
  const NamedType per_feature[] = {{"scale", context.operand(1)},
                                   {"offset", context.operand(2)},
                                   {"mean", context.operand(3)},
                                   {"variance", context.operand(4)}};
  return VerifyBatchNorm(context, full, per_feature, "C7", "C3");
}

Status VerifyBatchNormTraining(const OpContext& context) {
  const NamedType full[] = {{"operand", context.operand(0)}, {"output", context.result(0)}};
  const NamedType per_feature[] = {{"scale", context.operand(1)},
                                   {"offset", context.operand(2)},
                                   {"batch_mean", context.result(1)},
                                   {"batch_var", context.result(2)}};
  return VerifyBatchNorm(context, full, per_feature, "C7", "C3");
}

Status VerifyBatchNormGrad(const OpContext& context) {
  const NamedType full[] = {{"operand", context.operand(0)},
                            {"grad_output", context.operand(4)},
                            {"grad_operand", context.result(0)}};
  const NamedType per_feature[] = {{"scale", context.operand(1)},
                                   {"mean", context.operand(2)},
                                   {"variance", context.operand(3)},
                                   {"grad_scale", context.result(1)},
                                   {"grad_offset", context.result(2)}};
  return VerifyBatchNorm(context, full, per_feature, "C3", "C5");
}

constexpr FamilyRule kRules[] = {
    {OpCode::kDotGeneral, VerifyDotGeneral, kTensors},
    {OpCode::kDot, VerifyDot, kTensors},
    {OpCode::kConvolution, VerifyConvolution, kTensors},
    {OpCode::kDynamicConv, nullptr, kTensors},
    {OpCode::kFft, VerifyFft, kTensors},
    {OpCode::kCholesky, VerifyCholesky, kTensors},
    {OpCode::kTriangularSolve, VerifyTriangularSolve, kTensors},
    {OpCode::kBatchNormInference, VerifyBatchNormInference, kTensors},
    {OpCode::kBatchNormTraining, VerifyBatchNormTraining, kTensors},
    {OpCode::kBatchNormGrad, VerifyBatchNormGrad, kTensors},
    {OpCode::kEinsum, nullptr, kTensors},
    {OpCode::kUnaryEinsum, nullptr, kTensors},
    {OpCode::kTorchIndexSelect, nullptr, kTensors},
};

}  // namespace

std::span<const FamilyRule> LinalgRules() { return kRules; }

}  // namespace kiln::ir::verify_internal

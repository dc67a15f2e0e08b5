// The StableHLO text parser (src/frontend/text): every pretty form and the
// generic form round-trip through Kiln IR and the printer; JAX's own output
// (tests/data/text, written by tests/data/make_text_corpus.py) prints back
// exactly; broken inputs (tests/data/text_errors) fail with their expected
// message; nesting is bounded or walked without recursion.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "frontend/text/parser.h"
#include "ir/printer.h"
#include "tests/source_paths.h"

namespace kiln::frontend::text {
namespace {

namespace fs = std::filesystem;

const fs::path kRepo = testing::SourceDir();

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Collapses runs of spaces, so texts compare modulo alignment.
std::string Squeeze(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

std::string Print(const ir::Module& module, bool generic = false, bool locations = false) {
  ir::PrintOptions options;
  options.generic = generic;
  options.locations = locations;
  return ir::PrintModule(module, options);
}

ir::Module MustParse(std::string_view text) {
  StatusOr<ir::Module> module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return ir::Module();
  return std::move(module).value();
}

// Structural equality: op names, attributes, types, locations, block
// structure and the value graph. Walks both trees with an explicit stack.
bool SameModule(const ir::Module& a, const ir::Module& b, std::string* why) {
  std::unordered_map<const ir::Value*, const ir::Value*> values;
  std::vector<std::pair<const ir::Operation*, const ir::Operation*>> operand_checks;
  std::vector<std::pair<const ir::Operation*, const ir::Operation*>> pending = {{&a.op(), &b.op()}};
  auto fail = [&](const ir::Operation& op, const std::string& what) {
    *why = StrCat("'", op.name(), "' at ", ir::PrintLocation(op.location()), ": ", what);
    return false;
  };
  while (!pending.empty()) {
    auto [x, y] = pending.back();
    pending.pop_back();
    if (x->name() != y->name()) return fail(*x, "op name differs from '" + y->name() + "'");
    if (x->attributes().size() != y->attributes().size())
      return fail(*x, "attribute count differs");
    for (size_t i = 0; i < x->attributes().size(); ++i) {
      const ir::NamedAttribute& p = x->attributes()[i];
      const ir::NamedAttribute& q = y->attributes()[i];
      if (p.name != q.name || p.value != q.value) {
        return fail(*x, StrCat("attribute ", p.name, " = ", ir::PrintAttribute(p.value), " vs ",
                               q.name, " = ", ir::PrintAttribute(q.value)));
      }
    }
    if (ir::PrintLocation(x->location()) != ir::PrintLocation(y->location())) {
      return fail(*x, "location differs: " + ir::PrintLocation(y->location()));
    }
    if (x->num_results() != y->num_results() || x->operands().size() != y->operands().size() ||
        x->num_regions() != y->num_regions()) {
      return fail(*x, "result, operand or region count differs");
    }
    for (size_t i = 0; i < x->num_results(); ++i) {
      if (x->result(i)->type() != y->result(i)->type()) return fail(*x, "result type differs");
      values[x->result(i)] = y->result(i);
    }
    operand_checks.emplace_back(x, y);
    for (size_t r = 0; r < x->num_regions(); ++r) {
      const ir::Region& p = x->region(r);
      const ir::Region& q = y->region(r);
      if (p.num_blocks() != q.num_blocks()) return fail(*x, "block count differs");
      for (size_t k = 0; k < p.num_blocks(); ++k) {
        const ir::Block& s = p.block(k);
        const ir::Block& t = q.block(k);
        if (s.num_arguments() != t.num_arguments() ||
            s.operations().size() != t.operations().size()) {
          return fail(*x, "block arguments or op count differ");
        }
        for (size_t i = 0; i < s.num_arguments(); ++i) {
          if (s.argument(i)->type() != t.argument(i)->type() ||
              ir::PrintLocation(s.argument(i)->location()) !=
                  ir::PrintLocation(t.argument(i)->location())) {
            return fail(*x, "block argument type or location differs");
          }
          values[s.argument(i)] = t.argument(i);
        }
        for (size_t i = 0; i < s.operations().size(); ++i) {
          pending.emplace_back(s.operations()[i].get(), t.operations()[i].get());
        }
      }
    }
  }
  for (auto [x, y] : operand_checks) {
    for (size_t i = 0; i < x->operands().size(); ++i) {
      auto it = values.find(x->operand(i));
      if (it == values.end() || it->second != y->operand(i))
        return fail(*x, StrCat("operand ", i, " differs"));
    }
  }
  return true;
}

// Parses `text`, prints it (pretty and generic), and checks both prints
// parse back to the same module and print the same again.
void ExpectRoundTrip(std::string_view text, bool locations = false) {
  ir::Module first = MustParse(text);
  for (bool generic : {false, true}) {
    std::string printed = Print(first, generic, locations);
    StatusOr<ir::Module> second = ParseModule(printed);
    ASSERT_TRUE(second.ok()) << second.status().ToString() << "\n" << printed;
    std::string why;
    EXPECT_TRUE(SameModule(first, *second, &why)) << why << "\n" << printed;
    EXPECT_EQ(Print(*second, generic, locations), printed);
  }
}

// A module using most pretty forms, exactly as MLIR prints it (checked with
// jaxlib's MLIR).
constexpr std::string_view kForms =
    R"mlir(module @forms attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<2xui64>, %arg3: tensor<i32>, %arg4: tensor<4xi32>, %arg5: tensor<2x3xi1>, %arg6: tensor<1x4x4x2xf32>, %arg7: tensor<3x3x2x5xf32>, %arg8: tensor<2xcomplex<f32>>, %arg9: tensor<f32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
    %c = stablehlo.constant dense<[true, false]> : tensor<2xi1>
    %0 = stablehlo.abs %arg0 : tensor<2x3xf32>
    %1 = stablehlo.add %0, %cst : tensor<2x3xf32>
    %2 = stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    %3 = stablehlo.is_finite %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %4 = stablehlo.select %arg5, %1, %cst : tensor<2x3xi1>, tensor<2x3xf32>
    %5 = stablehlo.clamp %arg3, %arg4, %arg3 : (tensor<i32>, tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %6 = stablehlo.compare LT, %arg0, %cst, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %7 = stablehlo.compare EQ, %arg4, %arg4 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %8 = stablehlo.iota dim = 0 : tensor<4xi32>
    %9 = stablehlo.slice %arg0 [0:2:2, 1:3] : (tensor<2x3xf32>) -> tensor<1x2xf32>
    %10 = stablehlo.dynamic_slice %arg0, %arg3, %arg3, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %11 = stablehlo.dynamic_update_slice %arg0, %10, %arg3, %arg3 : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %12 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %13 = stablehlo.broadcast %arg1, sizes = [2] : (tensor<3xf32>) -> tensor<2x3xf32>
    %14 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %15 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %16 = stablehlo.reverse %arg0, dims = [0] : tensor<2x3xf32>
    %17 = stablehlo.concatenate %arg0, %cst, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %18 = stablehlo.pad %arg0, %arg9, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
    %19 = stablehlo.dot_general %arg0, %14, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %20 = stablehlo.dot_general %arg0, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
    %21 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
    %22 = stablehlo.convolution(%arg6, %arg7) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x4x2xf32>, tensor<3x3x2x5xf32>) -> tensor<1x4x4x5xf32>
    %23 = stablehlo.reduce(%arg0 init: %arg9) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %output_state, %output = stablehlo.rng_bit_generator %arg2, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
    %24 = stablehlo.fft %arg8, type = FFT, length = [2] : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %25 = stablehlo.real %arg8 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
    %26 = stablehlo.complex %25, %25 : tensor<2xcomplex<f32>>
    %27 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<2x3xf32>
    %28:2 = stablehlo.optimization_barrier %arg0, %arg3 : tensor<2x3xf32>, tensor<i32>
    %29 = stablehlo.create_token : !stablehlo.token
    %30 = stablehlo.after_all %29, %29 : !stablehlo.token
    %31 = stablehlo.tuple %arg3, %29 : tuple<tensor<i32>, !stablehlo.token>
    %32 = stablehlo.get_tuple_element %31[0] : (tuple<tensor<i32>, !stablehlo.token>) -> tensor<i32>
    %33 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
    %34 = stablehlo.custom_call @foo(%arg0, %arg3) {backend_config = "", has_side_effect = true} : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
    %35 = stablehlo.cholesky %19, lower = true : tensor<2x2xf32>
    %36 = stablehlo.sine %arg0 {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<2x3xf32>
    %37 = stablehlo.partition_id : tensor<ui32>
    %38:2 = stablehlo.while(%iterArg = %arg3, %iterArg_0 = %arg0) : tensor<i32>, tensor<2x3xf32> attributes {mhlo.frontend_attributes = {x = "y"}}
    cond {
      %c_1 = stablehlo.constant dense<10> : tensor<i32>
      %41 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %41 : tensor<i1>
    } do {
      %41 = func.call @helper(%iterArg_0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      stablehlo.return %iterArg, %41 : tensor<i32>, tensor<2x3xf32>
    }
    %39:2 = stablehlo.reduce(%arg0 init: %arg9), (%arg0 init: %arg9) across dimensions = [0] : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>)
     reducer(%arg10: tensor<f32>, %arg12: tensor<f32>) (%arg11: tensor<f32>, %arg13: tensor<f32>)  {
      %41 = stablehlo.add %arg10, %arg12 : tensor<f32>
      stablehlo.return %41, %arg11 : tensor<f32>, tensor<f32>
    }
    %40 = "stablehlo.case"(%arg3) ({
      stablehlo.return %arg0 : tensor<2x3xf32>
    }, {
      %41 = chlo.erf %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
      stablehlo.return %41 : tensor<2x3xf32>
    }) : (tensor<i32>) -> tensor<2x3xf32>
    return %40 : tensor<2x3xf32>
  }
  func.func private @helper(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.compare GT, %arg1, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func private @declared(tensor<2xf32> {a.b = 1 : i32}, tensor<f32>) -> (tensor<f32> {x.y})
}
)mlir";

TEST(TextParserTest, PrettyFormsPrintBackExactly) {
  ir::Module module = MustParse(kForms);
  EXPECT_EQ(Print(module), kForms);
  ExpectRoundTrip(kForms);
  const ir::Operation* main = module.LookupFunction("main");
  ASSERT_NE(main, nullptr);
  const ir::Operation& conv = *main->region(0).block(0).operations()[24];
  EXPECT_EQ(conv.name(), "stablehlo.convolution");
  EXPECT_EQ(ir::PrintAttribute(conv.GetAttr("padding")), "dense<1> : tensor<2x2xi64>");
  EXPECT_EQ(ir::PrintAttribute(conv.GetAttr("window_reversal")), "array<i1: false, false>");
  EXPECT_EQ(ir::PrintAttribute(main->GetAttr("arg_attrs")),
            "[{}, {mhlo.sharding = \"{replicated}\"}, {}, {}, {}, {}, {}, {}, {}, {}]");
}

TEST(TextParserTest, GenericFormsOfPrettyOpsPrintPretty) {
  // The generic form of ops that have a pretty one, and other spellings
  // upstream accepts, print in the canonical form.
  constexpr std::string_view kInput = R"mlir(
"func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "f"}> ({
^bb0(%x: tensor<2xf32>):
  %a = "stablehlo.constant"() <{value = dense<[1.0, 1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %b = "stablehlo.add"(%x, %a) {note = 1} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c = stablehlo.compare  LT, %b, %x,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %d = stablehlo.select %c, %b, %x : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %e = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %f = stablehlo.broadcast_in_dim %e, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %g = stablehlo.maximum %d, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "func.return"(%g) : (tensor<2xf32>) -> ()
}) : () -> ()
)mlir";
  ir::Module module = MustParse(kInput);
  EXPECT_EQ(Print(module), R"(module {
  func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
    %0 = stablehlo.add %arg0, %cst {note = 1 : i64} : tensor<2xf32>
    %1 = stablehlo.compare LT, %0, %arg0, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %2 = stablehlo.select %1, %0, %arg0 : tensor<2xi1>, tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %4 = stablehlo.maximum %2, %3 : tensor<2xf32>
    return %4 : tensor<2xf32>
  }
}
)");
  ExpectRoundTrip(kInput);
}

TEST(TextParserTest, ValuesGroupsBlocksAndForwardReferences) {
  constexpr std::string_view kInput = R"mlir(
func.func @g(%arg0: tensor<f32>) -> tensor<f32> {
  %0:2 = "test.pair"(%arg0) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %a, %b:2 = "test.three"() : () -> (tensor<f32>, tensor<i32>, tensor<i32>)
  "test.graph"() ({
    "test.use"(%later#1, %b#1) : (tensor<i1>, tensor<i32>) -> ()
    %later:2 = "test.make"() : () -> (tensor<i1>, tensor<i1>)
    "test.terminator"() : () -> ()
  ^bb1(%z: tensor<f32>):
    "test.terminator"(%z, %0#1) : (tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
  return %0#0 : tensor<f32>
}
)mlir";
  ir::Module module = MustParse(kInput);
  const ir::Block& body = module.LookupFunction("g")->region(0).block(0);
  const ir::Region& graph = body.operations()[2]->region(0);
  ASSERT_EQ(graph.num_blocks(), 2u);
  const ir::Operation& use = *graph.block(0).operations()[0];
  EXPECT_EQ(use.operand(0), graph.block(0).operations()[1]->result(1));
  EXPECT_EQ(use.operand(1), body.operations()[1]->result(2));
  ExpectRoundTrip(kInput);
}

TEST(TextParserTest, LocationsAndAliasesDefinedAfterUse) {
  constexpr std::string_view kInput = R"mlir(
#loc = loc("f.py":1:2)
!t = tensor<2xf32>
module @m {
  func.func @f(%arg0: !t loc("x")) -> !t {
    %0 = stablehlo.negate %arg0 : !t loc(#loc3)
    return %0 : !t loc(#loc)
  } loc(#loc1)
} loc(unknown)
#loc1 = loc("f"(#loc))
#loc2 = loc("g.py":3:4 to 5:6)
#loc3 = loc(callsite(#loc1 at fused<"meta">[#loc2, "n"]))
)mlir";
  ir::Module module = MustParse(kInput);
  const ir::Operation& negate = *module.LookupFunction("f")->region(0).block(0).operations()[0];
  EXPECT_EQ(ir::PrintLocation(negate.location()),
            "loc(callsite(\"f\"(\"f.py\":1:2) at fused<\"meta\">[\"g.py\":3:4 to 5:6, \"n\"]))");
  EXPECT_EQ(negate.location().ToUserString(), "f.py:1:2 (f)");
  ExpectRoundTrip(kInput, /*locations=*/true);
}

// One attribute or type on its own, as bytecode readers parse the entries
// MLIR stores as text.
TEST(TextParserTest, ParsesOneAttributeOrType) {
  const std::string gather = "#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>";
  StatusOr<ir::Attribute> dims = ParseAttribute(gather);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(ir::PrintAttribute(*dims), gather);
  StatusOr<ir::Attribute> opaque = ParseAttribute("#foo<\"bar\" : baz>");
  ASSERT_TRUE(opaque.ok()) << opaque.status().ToString();
  EXPECT_EQ(ir::PrintAttribute(*opaque), "#foo<\"bar\" : baz>");
  StatusOr<ir::Type> type = ParseType("tensor<?x4xf8E4M3FN, #stablehlo.bounds<8, ?>>");
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ(ir::PrintType(*type), "tensor<?x4xf8E4M3FN, #stablehlo.bounds<8, ?>>");
  EXPECT_EQ(ParseAttribute("dense<1> : tensor<i32> extra").status().ToString(),
            "INVALID_ARGUMENT: 1:24: expected end of input after the attribute, found 'extra'");
  EXPECT_EQ(ParseType("").status().code(), StatusCode::kInvalidArgument);
}

TEST(TextParserTest, ChunksReportPositionsInTheWholeFile) {
  StatusOr<std::vector<ir::Module>> modules = ParseChunks(
      "module {\n}\n// -----\nfunc.func @f() {\n  return\n}\n// -----\n\nfunc.func @g() {\n  "
      "return %x : tensor<f32>\n}\n");
  ASSERT_FALSE(modules.ok());
  EXPECT_EQ(modules.status().ToString(), "INVALID_ARGUMENT: 10:10: use of undefined value '%x'");
  modules = ParseChunks("module {\n}\n// -----\nfunc.func @f() {\n  return\n}\n");
  ASSERT_TRUE(modules.ok()) << modules.status().ToString();
  EXPECT_EQ(modules->size(), 2u);
}

// reduce_precision's format is read by the checked integer parser: a
// missing, signed, 20-digit or trailing-garbage count is an error, not a
// std::stoll exception.
TEST(TextParserTest, ReducePrecisionFormatWithBadCountsIsAnError) {
  struct Case {
    const char* format;
    const char* message;
  };
  for (const Case& c :
       {Case{"em10", "exponent bits: expected a decimal integer, found \"\""},
        Case{"e5m", "expected an exponent and mantissa format such as 'e5m10', found 'e5m'"},
        Case{"e-m10", "expected an exponent and mantissa format such as 'e5m10', found 'e'"},
        Case{"e5m-", "such as 'e5m10', found 'e5m'"},
        Case{"e5mx", "mantissa bits: expected a decimal integer, found \"x\""},
        Case{"e5m99999999999999999999", "fits in 64 bits, found \"99999999999999999999\""},
        Case{"e5m10x", "mantissa bits: expected a decimal integer, found \"10x\""},
        Case{"e5m4294967296", "expected an integer in [0, 2147483647], found 4294967296"}}) {
    const std::string text = std::string("func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                                         "  %0 = stablehlo.reduce_precision %arg0, format = ") +
                             c.format + " : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n";
    StatusOr<ir::Module> module = ParseModule(text);
    ASSERT_FALSE(module.ok()) << c.format;
    EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument) << c.format;
    EXPECT_NE(module.status().message().find(c.message), std::string::npos)
        << c.format << ": " << module.status().ToString();
  }
  const std::string good =
      "func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.reduce_precision %arg0, format = e8m23 : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n";
  StatusOr<ir::Module> module = ParseModule(good);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
}

TEST(TextParserTest, DeepRegionNestingUsesNoRecursion) {
  constexpr int kDepth = 20000;
  std::string text;
  for (int i = 0; i < kDepth; ++i) text += "\"t.nest\"() ({\n";
  text += "\"t.leaf\"() : () -> ()\n";
  for (int i = 0; i < kDepth; ++i) text += "}) : () -> ()\n";
  StatusOr<ir::Module> module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  // Truncated input fails cleanly, freeing the partial tree.
  StatusOr<ir::Module> truncated = ParseModule(std::string_view(text).substr(0, text.size() / 2));
  EXPECT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kInvalidArgument);
}

TEST(TextParserTest, DeepAttributeNestingIsAnError) {
  std::string text = "module attributes {a = " + std::string(100000, '[') + "} {}";
  StatusOr<ir::Module> module = ParseModule(text);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("nest deeper than"), std::string::npos);
}

TEST(TextParserTest, AliasesCannotExpandWithoutBound) {
  // Each alias doubles the one before: 2^40 elements when expanded.
  std::string doubling = "#a0 = [1, 2]\n";
  for (int i = 1; i <= 40; ++i) doubling += StrCat("#a", i, " = [#a", i - 1, ", #a", i - 1, "]\n");
  doubling += "module attributes {x = #a40} {\n}\n";
  StatusOr<ir::Module> module = ParseModule(doubling);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("aliases expand to more than"), std::string::npos)
      << module.status().ToString();
  // A chain of aliases defined innermost first nests as deep as it is long.
  std::string chain = "#c0 = [1]\n";
  for (int i = 1; i <= 200; ++i) chain += StrCat("#c", i, " = [#c", i - 1, "]\n");
  chain += "module attributes {x = #c200} {\n}\n";
  module = ParseModule(chain);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("levels through alias"), std::string::npos)
      << module.status().ToString();
}

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(TextCorpusTest, JaxTextPrintsBackAndRoundTrips) {
  std::vector<fs::path> files = FilesIn(kRepo / "tests/data/text");
  ASSERT_GE(files.size(), 60u) << "run tests/data/make_text_corpus.py";
  for (const fs::path& file : files) {
    std::string name = file.filename().string();
    if (EndsWith(name, ".generic.mlir")) continue;
    SCOPED_TRACE(name);
    std::string text = ReadText(file);
    ir::Module module = MustParse(text);
    bool has_locations = text.find(" loc(") != std::string::npos;
    if (!has_locations) {
      EXPECT_EQ(Squeeze(Print(module)), Squeeze(text));
    }
    ExpectRoundTrip(text, has_locations);
    if (EndsWith(name, ".loc.mlir")) {
      // Without its locations, the debug print is the plain print.
      fs::path plain = file;
      plain.replace_filename(name.substr(0, name.size() - 9) + ".mlir");
      EXPECT_EQ(Squeeze(Print(module)), Squeeze(ReadText(plain)));
    }
  }
}

TEST(TextCorpusTest, GenericFormMatchesMlir) {
  int checked = 0;
  for (const fs::path& file : FilesIn(kRepo / "tests/data/text")) {
    std::string name = file.filename().string();
    if (!EndsWith(name, ".generic.mlir")) continue;
    SCOPED_TRACE(name);
    fs::path pretty = file;
    pretty.replace_filename(name.substr(0, name.size() - 13) + ".mlir");
    std::string generic = ReadText(file);
    EXPECT_EQ(Squeeze(Print(MustParse(ReadText(pretty)), /*generic=*/true)), Squeeze(generic));
    EXPECT_EQ(Squeeze(Print(MustParse(generic))), Squeeze(ReadText(pretty)));
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(TextErrorCorpusTest, EachInputFailsWithItsExpectedError) {
  std::vector<fs::path> files = FilesIn(kRepo / "tests/data/text_errors");
  ASSERT_GE(files.size(), 25u);
  constexpr std::string_view kPrefix = "// expected-error: ";
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::string text = ReadText(file);
    ASSERT_EQ(text.rfind(kPrefix, 0), 0u) << "the first line must be '// expected-error: ...'";
    std::string expected = text.substr(kPrefix.size(), text.find('\n') - kPrefix.size());
    StatusOr<ir::Module> module = ParseModule(text);
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(module.status().message(), expected);
  }
}

TEST(TextFuzzRegressionTest, SavedInputsParseOrFailCleanly) {
  for (const fs::path& file : FilesIn(kRepo / "fuzz/corpus/text")) {
    SCOPED_TRACE(file.filename().string());
    StatusOr<ir::Module> module = ParseModule(ReadText(file));
    if (!module.ok()) {
      EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    // What parses also prints and parses back.
    for (bool generic : {false, true}) EXPECT_TRUE(ParseModule(Print(*module, generic)).ok());
  }
}

}  // namespace
}  // namespace kiln::frontend::text

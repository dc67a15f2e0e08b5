// A tiny IR builder for the verifier's tests: one func.func @main whose body
// the test fills op by op, with compact type spellings ("2x3xf32").
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "ir/verifier.h"

namespace kiln::ir::testing {

// "2x?x3xf32", "f32" (rank 0), "token"; elements i1, i8..i64, ui8..ui64,
// f16, bf16, f32, f64, c64, c128.
inline Type T(std::string_view spelling) {
  if (spelling == "token") return Type::Token();
  std::vector<int64_t> dims;
  size_t x;
  while ((x = spelling.find('x')) != std::string_view::npos) {
    std::string_view dim = spelling.substr(0, x);
    dims.push_back(dim == "?" ? kDynamic : std::stoll(std::string(dim)));
    spelling.remove_prefix(x + 1);
  }
  static const std::pair<std::string_view, ElementType> kElements[] = {
      {"i1", ElementType::kPred},  {"i8", ElementType::kS8},     {"i16", ElementType::kS16},
      {"i32", ElementType::kS32},  {"i64", ElementType::kS64},   {"ui8", ElementType::kU8},
      {"ui16", ElementType::kU16}, {"ui32", ElementType::kU32},  {"ui64", ElementType::kU64},
      {"f16", ElementType::kF16},  {"bf16", ElementType::kBF16}, {"f32", ElementType::kF32},
      {"f64", ElementType::kF64},  {"c64", ElementType::kC64},   {"c128", ElementType::kC128},
  };
  for (const auto& [name, element] : kElements) {
    if (spelling == name) return Type::Tensor(Type::Element(element), dims);
  }
  ADD_FAILURE() << "bad test type spelling: " << spelling;
  return Type::None();
}

inline Attribute I64(int64_t value) {
  return Attribute::Integer(value, Type::Element(ElementType::kS64));
}
inline Attribute I32(int64_t value) {
  return Attribute::Integer(value, Type::Element(ElementType::kS32));
}
inline Attribute Dims(std::vector<int64_t> values) {
  return Attribute::DenseI64Array(std::move(values));
}
// dense<values> : tensor<shape x i64>
inline Attribute DenseI64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i) {
    for (int b = 0; b < 8; ++b) bytes[i * 8 + b] = static_cast<uint8_t>(values[i] >> (8 * b));
  }
  return Attribute::DenseElements(Type::Tensor(Type::Element(ElementType::kS64), std::move(shape)),
                                  std::move(bytes), /*splat=*/false);
}
inline Attribute Enum(std::string family, std::string value) {
  return Attribute::Enum(std::move(family), std::move(value));
}

// Builds `func.func @main` op by op; ops land in the innermost open region.
class IrBuilder {
 public:
  IrBuilder() {
    auto func = std::make_unique<Operation>("func.func", Location::FileLineCol("model.py", 1, 1));
    func->SetAttr("sym_name", Attribute::String("main"));
    func_ = module_.body().Append(std::move(func));
    blocks_.push_back(&func_->AddRegion().AddBlock());
  }

  Module& module() { return module_; }
  Operation* func() { return func_; }

  // The type spelled `spelling`, one shared object per spelling, as the
  // bytecode reader's type table gives them.
  const Type& Of(std::string_view spelling) {
    auto it = types_.find(spelling);
    if (it == types_.end()) it = types_.emplace(std::string(spelling), T(spelling)).first;
    return it->second;
  }

  Value* Arg(std::string_view type) {
    inputs_.push_back(Of(type));
    return blocks_.front()->AddArgument(Of(type));
  }

  // Appends `name`, located at model.py:<line>:1 with lines counting from 2.
  Operation* Add(std::string name, std::vector<Value*> operands,
                 std::vector<std::string_view> results, std::vector<NamedAttribute> attrs = {}) {
    auto op = std::make_unique<Operation>(std::move(name),
                                          Location::FileLineCol("model.py", ++line_, 1));
    for (Value* operand : operands) op->AddOperand(operand);
    for (std::string_view result : results) op->AddResult(Of(result));
    for (NamedAttribute& attr : attrs) op->SetAttr(std::move(attr.name), std::move(attr.value));
    return blocks_.back()->Append(std::move(op));
  }
  Operation* AddTyped(std::string name, std::vector<Value*> operands, std::vector<Type> results,
                      std::vector<NamedAttribute> attrs = {}) {
    Operation* op = Add(std::move(name), std::move(operands), {}, std::move(attrs));
    for (Type& result : results) op->AddResult(std::move(result));
    return op;
  }
  Value* Add1(std::string name, std::vector<Value*> operands, std::string_view result,
              std::vector<NamedAttribute> attrs = {}) {
    return Add(std::move(name), std::move(operands), std::vector<std::string_view>{result},
               std::move(attrs))
        ->result(0);
  }

  // stablehlo.constant of zeros (splat) of `type`.
  Value* Zeros(std::string_view type) {
    const Type tensor = Of(type);
    const size_t bytes = GetElementTypeInfo(tensor.element().element_type()).storage_bytes;
    return Add1("stablehlo.constant", {}, type,
                {{"value", Attribute::DenseElements(tensor, std::vector<uint8_t>(bytes, 0),
                                                    /*splat=*/true)}});
  }

  // Adds a region with one block of `arguments` to `op` and makes it the
  // insertion point until Close().
  std::vector<Value*> Open(Operation* op, std::vector<std::string_view> arguments) {
    Block& block = op->AddRegion().AddBlock();
    std::vector<Value*> values;
    for (std::string_view type : arguments) values.push_back(block.AddArgument(Of(type)));
    blocks_.push_back(&block);
    return values;
  }
  void Close(std::vector<Value*> returned, std::string terminator = "stablehlo.return") {
    Add(std::move(terminator), std::move(returned), std::vector<std::string_view>{});
    blocks_.pop_back();
  }

  // Ends @main with func.return of `results` and sets its function_type.
  Module& Finish(std::vector<Value*> results) {
    std::vector<Type> types;
    for (Value* value : results) types.push_back(value->type());
    Add("func.return", std::move(results), std::vector<std::string_view>{});
    func_->SetAttr("function_type", Attribute::TypeAttr(Type::Function(inputs_, types)));
    return module_;
  }
  Status Verify(std::vector<Value*> results) { return ir::Verify(Finish(std::move(results))); }

 private:
  Module module_;
  Operation* func_;
  std::vector<Block*> blocks_;
  std::vector<Type> inputs_;
  std::map<std::string, Type, std::less<>> types_;
  int line_ = 1;
};

// Expects INVALID_ARGUMENT whose message contains `fragment`.
#define EXPECT_VERIFY_ERROR(status_expr, fragment)                                  \
  do {                                                                              \
    ::kiln::Status verify_status_ = (status_expr);                                  \
    EXPECT_EQ(verify_status_.code(), ::kiln::StatusCode::kInvalidArgument)          \
        << verify_status_.ToString();                                               \
    EXPECT_NE(verify_status_.message().find(fragment), std::string::npos)           \
        << "message: " << verify_status_.message() << "\nexpected: " << (fragment); \
  } while (false)

#define EXPECT_VERIFY_OK(status_expr)                              \
  do {                                                             \
    ::kiln::Status verify_status_ = (status_expr);                 \
    EXPECT_TRUE(verify_status_.ok()) << verify_status_.ToString(); \
  } while (false)

}  // namespace kiln::ir::testing

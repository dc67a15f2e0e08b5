// Test helpers for lowering tests: compile a StableHLO text module and run
// it through compiler::Execute on raw arrays.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/executor.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"

namespace kiln::compiler::testing {

// A dense array of some element type, as raw bytes.
struct Array {
  std::vector<uint8_t> bytes;

  template <typename T>
  static Array Of(const std::vector<T>& values) {
    Array array;
    array.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
    return array;
  }
  template <typename T>
  std::vector<T> As() const {
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
};

// Parses, verifies and compiles `text`.
inline StatusOr<std::shared_ptr<const Program>> CompileText(const std::string& text) {
  KILN_ASSIGN_OR_RETURN(ir::Module module, frontend::text::ParseModule(text));
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  return Compile(module, frontend::CompileOptions{});
}

// Runs `program` with its results in `results` (already sized).
inline Status RunInto(const Program& program, const std::vector<const void*>& parameters,
                      const std::vector<void*>& results) {
  ExecutionEnv env;
  return Execute(*program.graph, parameters, results, env);
}

// Parses, verifies, compiles and runs `text` on `args`; the results.
inline StatusOr<std::vector<Array>> Run(const std::string& text, const std::vector<Array>& args) {
  KILN_ASSIGN_OR_RETURN(auto program, CompileText(text));
  std::vector<const void*> parameters;
  for (const Array& arg : args) parameters.push_back(arg.bytes.data());
  std::vector<Array> results(program->result_shapes.size());
  std::vector<void*> pointers;
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].bytes.resize(std::max<size_t>(program->result_shapes[i].ByteSize(), 1));
    pointers.push_back(results[i].bytes.data());
  }
  ExecutionEnv env;
  KILN_RETURN_IF_ERROR(Execute(*program->graph, parameters, pointers, env));
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].bytes.resize(program->result_shapes[i].ByteSize());
  }
  return results;
}

// Runs and expects success; the first result.
inline Array MustRun(const std::string& text, const std::vector<Array>& args) {
  StatusOr<std::vector<Array>> results = Run(text, args);
  EXPECT_TRUE(results.ok()) << results.status().ToString() << "\n" << text;
  return results.ok() && !results->empty() ? results->front() : Array{};
}

// A module whose main takes `signature`, returns `result` and has `body`.
inline std::string Main(const std::string& signature, const std::string& result,
                        const std::string& body) {
  return "func.func @main(" + signature + ") -> " + result + " {\n" + body + "\n}\n";
}

// 0, 1, 2, ... scaled and shifted, as any arithmetic type.
template <typename T>
std::vector<T> Ramp(size_t count, double scale = 1.0, double shift = 0.0) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<T>(static_cast<double>(i) * scale + shift);
  return values;
}

}  // namespace kiln::compiler::testing

#include "frontend/compile_options.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "frontend/proto/wire.h"

namespace kiln::frontend {
namespace {

std::span<const uint8_t> Bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// A CompileOptionsProto whose env_option_overrides hold `name` = `value`.
template <typename T>
std::vector<uint8_t> WithOverride(const std::string& name, T value) {
  proto::Writer override_value;
  if constexpr (std::is_same_v<T, bool>) {
    override_value.Varint(2, value ? 1 : 0);
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    override_value.Fixed64(4, bits);
  } else if constexpr (std::is_integral_v<T>) {
    override_value.Varint(3, static_cast<uint64_t>(static_cast<int64_t>(value)));
  } else {
    override_value.Bytes(1, Bytes(std::string(value)));
  }
  proto::Writer entry;
  entry.Bytes(1, Bytes(name));
  entry.Bytes(2, override_value.bytes());
  proto::Writer options;
  options.Bytes(7, entry.bytes());
  return options.bytes();
}

template <typename T>
Status Parse(const std::string& name, T value) {
  return ParseCompileOptions(WithOverride(name, value)).status();
}

void ExpectRejected(const Status& status, const std::string& message) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(message), std::string::npos) << status.ToString();
}

TEST(CompileOptionsTest, OverridesAreReadWithTheirTypes) {
  StatusOr<CompileOptions> options = ParseCompileOptions(
      WithOverride("xla_backend_optimization_level", 2));
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  ASSERT_EQ(options->option_overrides.size(), 1u);
  EXPECT_EQ(options->option_overrides[0].name, "xla_backend_optimization_level");
  EXPECT_EQ(std::get<int64_t>(options->option_overrides[0].value), 2);
  options = ParseCompileOptions(WithOverride("xla_gpu_auto_spmd_partitioning_memory_budget_ratio",
                                             0.5));
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(std::get<double>(options->option_overrides[0].value), 0.5);
}

// The options JAX's own tests pass, CPU and GPU ones alike, are accepted
// (XLA's CPU backend accepts every field of DebugOptions).
TEST(CompileOptionsTest, EveryDebugOptionOfTheRightTypeIsAccepted) {
  EXPECT_TRUE(Parse("xla_embed_ir_in_executable", true).ok());
  EXPECT_TRUE(Parse("xla_dump_max_hlo_modules", 200).ok());
  EXPECT_TRUE(Parse("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", 0.5).ok());
  EXPECT_TRUE(Parse("xla_cpu_enable_fast_math", "False").ok());
  EXPECT_TRUE(Parse("xla_backend_optimization_level", " +3 ").ok());
  EXPECT_TRUE(Parse("xla_backend_optimization_level", int64_t{-2147483648}).ok());
  EXPECT_TRUE(Parse("xla_gpu_all_reduce_combine_threshold_bytes", int64_t{1} << 40).ok());
  EXPECT_TRUE(Parse("xla_cpu_scheduler_type", "CPU_SCHEDULER_TYPE_DEFAULT").ok());
  EXPECT_TRUE(Parse("xla_cpu_scheduler_type", "1").ok());
  EXPECT_TRUE(Parse("xla_cpu_scheduler_type", 99).ok());
  EXPECT_TRUE(Parse("xla_dump_to", "").ok());
  EXPECT_TRUE(Parse("xla_disable_hlo_passes", "foo,bar").ok());
  EXPECT_TRUE(Parse("xla_gpu_enable_command_buffer", "").ok());
  EXPECT_TRUE(Parse("xla_cpu_experimental_xnn_fusion_type",
                    "LIBRARY_FUSION_TYPE_DOT,LIBRARY_FUSION_TYPE_ELTWISE")
                  .ok());
  EXPECT_TRUE(Parse("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "nan").ok());
}

TEST(CompileOptionsTest, UnknownNamesAreRejectedByName) {
  ExpectRejected(Parse("unknown_option", 1), "No such compile option: 'unknown_option'");
  ExpectRejected(Parse("invalid_key", "invalid_value"), "No such compile option: 'invalid_key'");
  ExpectRejected(Parse("num_replicas", 1), "No such compile option: 'num_replicas'");
  ExpectRejected(Parse("", 1), "No such compile option: ''");
}

// Each case is one XLA's CPU backend rejects (jaxlib 0.11), with its words.
TEST(CompileOptionsTest, ValuesOfTheWrongTypeAreRejectedAsXlaDoes) {
  ExpectRejected(Parse("xla_embed_ir_in_executable", "invalid_value"),
                 "While setting option xla_embed_ir_in_executable, 'invalid_value' is not a "
                 "valid bool value.");
  ExpectRejected(Parse("xla_cpu_enable_fast_math", 1), "'1' is not a valid bool value.");
  ExpectRejected(Parse("xla_cpu_enable_fast_math", "true"), "'true' is not a valid bool value.");
  ExpectRejected(Parse("xla_dump_to", 3), "'3' is not a valid string value.");
  ExpectRejected(Parse("xla_dump_to", true), "'1' is not a valid string value.");
  ExpectRejected(Parse("xla_backend_optimization_level", "x"), "'x' is not a valid int32 value.");
  ExpectRejected(Parse("xla_backend_optimization_level", "3.0"), "not a valid int32 value.");
  ExpectRejected(Parse("xla_backend_optimization_level", ""), "'' is not a valid int32 value.");
  ExpectRejected(Parse("xla_backend_optimization_level", 1.5), "'1.5' is not a valid int32");
  ExpectRejected(Parse("xla_backend_optimization_level", int64_t{1} << 40),
                 "'1099511627776' is not a valid int32 value.");
  ExpectRejected(Parse("xla_backend_optimization_level", true), "'1' is not a valid int32");
  ExpectRejected(Parse("xla_gpu_all_reduce_combine_threshold_bytes", true),
                 "'1' is not a valid int64 value.");
  ExpectRejected(Parse("xla_cpu_scheduler_type", "nonsense"), "'nonsense' is not a valid enum");
  ExpectRejected(Parse("xla_cpu_scheduler_type", 1.0), "'1' is not a valid enum value.");
  ExpectRejected(Parse("xla_cpu_experimental_xnn_fusion_type", "LIBRARY_FUSION_TYPE_DOT,nonsense"),
                 "'nonsense' is not a valid enum value.");
  ExpectRejected(Parse("xla_backend_extra_options", "a=b"), "'a=b' is not a valid message value.");
  ExpectRejected(Parse("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", 1),
                 "'1' is not a valid float value.");
  ExpectRejected(Parse("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", 1e300),
                 "'1e+300' is not a valid float value.");
  ExpectRejected(Parse("xla_disable_hlo_passes", 1), "'1' is not a valid string value.");
}

TEST(CompileOptionsTest, MalformedOverridesAreInvalid) {
  proto::Writer entry;
  entry.Varint(1, 5);  // the key as a varint
  proto::Writer options;
  options.Bytes(7, entry.bytes());
  ExpectRejected(ParseCompileOptions(options.bytes()).status(), "env_option_overrides key");
}

}  // namespace
}  // namespace kiln::frontend

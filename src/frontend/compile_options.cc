#include "frontend/compile_options.h"

#include <cstring>

#include "frontend/proto/wire.h"

namespace kiln::frontend {
namespace {

using proto::Field;
using proto::Reader;
using proto::WireType;

// CompileOptionsProto.
constexpr uint32_t kExecutableBuildOptions = 3;
constexpr uint32_t kEnvOptionOverrides = 7;  // map<string, OptionOverrideProto>
// A map entry.
constexpr uint32_t kMapKey = 1;
constexpr uint32_t kMapValue = 2;
// OptionOverrideProto's oneof.
constexpr uint32_t kStringField = 1;
constexpr uint32_t kBoolField = 2;
constexpr uint32_t kIntField = 3;
constexpr uint32_t kDoubleField = 4;
// ExecutableBuildOptionsProto.
constexpr uint32_t kDeviceOrdinal = 1;
constexpr uint32_t kNumReplicas = 4;
constexpr uint32_t kNumPartitions = 5;
constexpr uint32_t kUseSpmdPartitioning = 6;
constexpr uint32_t kDeviceAssignment = 9;
constexpr uint32_t kAllowPropagationToOutput = 12;  // repeated bool
constexpr uint32_t kUseShardyPartitioner = 19;
// DeviceAssignmentProto.
constexpr uint32_t kReplicaCount = 1;
constexpr uint32_t kComputationCount = 2;
constexpr uint32_t kComputationDevices = 3;
// DeviceAssignmentProto.ComputationDevice.
constexpr uint32_t kReplicaDeviceIds = 1;

Status Expect(const Field& field, WireType type, const char* name) {
  if (field.type == type) return Status::Ok();
  return InvalidArgument("byte ", field.offset, ": field ", field.number, " (", name,
                         ") has wire type ", static_cast<int>(field.type), ", expected ",
                         static_cast<int>(type));
}

// Fills options.device_assignment from a DeviceAssignmentProto.
Status ParseDeviceAssignment(const Field& message, CompileOptions& options) {
  int64_t replicas = 0;
  int64_t computations = 0;
  std::vector<std::vector<int64_t>> per_computation;  // [partition][replica]
  Reader reader = Reader::Nested(message);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field field, reader.Next());
    if (field.number == kReplicaCount && field.type == WireType::kVarint) {
      replicas = static_cast<int64_t>(field.value);
    } else if (field.number == kComputationCount && field.type == WireType::kVarint) {
      computations = static_cast<int64_t>(field.value);
    } else if (field.number == kComputationDevices) {
      KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "computation_devices"));
      std::vector<int64_t> ids;
      Reader devices = Reader::Nested(field);
      while (!devices.done()) {
        KILN_ASSIGN_OR_RETURN(Field id, devices.Next());
        if (id.number != kReplicaDeviceIds) continue;
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, Reader::PackedVarints(id));
        ids.insert(ids.end(), values.begin(), values.end());
      }
      per_computation.push_back(std::move(ids));
    }
  }
  if (static_cast<int64_t>(per_computation.size()) != computations) {
    return InvalidArgument("device_assignment: computation_count is ", computations, " but ",
                           per_computation.size(), " computation_devices are listed");
  }
  options.device_assignment.assign(static_cast<size_t>(replicas),
                                   std::vector<int64_t>(static_cast<size_t>(computations)));
  for (size_t p = 0; p < per_computation.size(); ++p) {
    if (static_cast<int64_t>(per_computation[p].size()) != replicas) {
      return InvalidArgument("device_assignment: computation ", p, " lists ",
                             per_computation[p].size(), " devices, expected replica_count ",
                             replicas);
    }
    for (size_t r = 0; r < per_computation[p].size(); ++r) {
      options.device_assignment[r][p] = per_computation[p][r];
    }
  }
  return Status::Ok();
}

Status ParseBuildOptions(const Field& message, CompileOptions& options) {
  Reader reader = Reader::Nested(message);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field field, reader.Next());
    switch (field.number) {
      case kDeviceOrdinal:
        KILN_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "device_ordinal"));
        options.device_ordinal = static_cast<int64_t>(field.value);
        break;
      case kNumReplicas:
        KILN_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "num_replicas"));
        options.num_replicas = static_cast<int64_t>(field.value);
        break;
      case kNumPartitions:
        KILN_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "num_partitions"));
        options.num_partitions = static_cast<int64_t>(field.value);
        break;
      case kUseSpmdPartitioning: options.use_spmd_partitioning = field.value != 0; break;
      case kUseShardyPartitioner: options.use_shardy_partitioner = field.value != 0; break;
      case kDeviceAssignment:
        KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "device_assignment"));
        KILN_RETURN_IF_ERROR(ParseDeviceAssignment(field, options));
        break;
      case kAllowPropagationToOutput:
        if (field.type == WireType::kLengthDelimited) {
          KILN_ASSIGN_OR_RETURN(std::vector<int64_t> flags, Reader::PackedVarints(field));
          for (int64_t flag : flags) options.propagation_to_output.push_back(flag != 0);
        } else {
          KILN_RETURN_IF_ERROR(Expect(field, WireType::kVarint,
                                      "allow_spmd_sharding_propagation_to_output"));
          options.propagation_to_output.push_back(field.value != 0);
        }
        break;
      default: break;
    }
  }
  return Status::Ok();
}

std::string AsString(std::span<const uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// One env_option_overrides entry: its name and the value's oneof member.
StatusOr<OptionOverride> ParseOptionOverride(const Field& entry) {
  OptionOverride option;
  option.value = std::string();
  Reader reader = Reader::Nested(entry);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field field, reader.Next());
    if (field.number == kMapKey) {
      KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "env_option_overrides key"));
      option.name = AsString(field.bytes);
    } else if (field.number == kMapValue) {
      KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "OptionOverrideProto"));
      Reader value = Reader::Nested(field);
      while (!value.done()) {
        KILN_ASSIGN_OR_RETURN(Field member, value.Next());
        if (member.number == kStringField) {
          KILN_RETURN_IF_ERROR(Expect(member, WireType::kLengthDelimited, "string_field"));
          option.value = AsString(member.bytes);
        } else if (member.number == kBoolField) {
          KILN_RETURN_IF_ERROR(Expect(member, WireType::kVarint, "bool_field"));
          option.value = member.value != 0;
        } else if (member.number == kIntField) {
          KILN_RETURN_IF_ERROR(Expect(member, WireType::kVarint, "int_field"));
          option.value = static_cast<int64_t>(member.value);
        } else if (member.number == kDoubleField) {
          KILN_RETURN_IF_ERROR(Expect(member, WireType::kFixed64, "double_field"));
          double real = 0;
          std::memcpy(&real, &member.value, sizeof(real));
          option.value = real;
        }
      }
    }
  }
  return option;
}

}  // namespace

StatusOr<CompileOptions> ParseCompileOptions(std::span<const uint8_t> bytes) {
  CompileOptions options;
  options.serialized.assign(bytes.begin(), bytes.end());
  Reader reader(bytes);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(Field field, reader.Next());
    if (field.number == kExecutableBuildOptions) {
      KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "executable_build_options"));
      KILN_RETURN_IF_ERROR(ParseBuildOptions(field, options));
    } else if (field.number == kEnvOptionOverrides) {
      KILN_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "env_option_overrides"));
      KILN_ASSIGN_OR_RETURN(OptionOverride option, ParseOptionOverride(field));
      KILN_RETURN_IF_ERROR(CheckOptionOverride(option));
      options.option_overrides.push_back(std::move(option));
    }
  }
  // A count of 0 means "not set" in proto3, i.e. 1.
  if (options.num_replicas <= 0) options.num_replicas = 1;
  if (options.num_partitions <= 0) options.num_partitions = 1;
  if (!options.device_assignment.empty()) {
    if (static_cast<int64_t>(options.device_assignment.size()) != options.num_replicas ||
        static_cast<int64_t>(options.device_assignment[0].size()) != options.num_partitions) {
      return InvalidArgument("device_assignment is ", options.device_assignment.size(), "x",
                             options.device_assignment[0].size(), " but the options ask for ",
                             options.num_replicas, " replicas x ", options.num_partitions,
                             " partitions");
    }
  }
  return options;
}

std::vector<uint8_t> SerializeDeviceAssignment(
    const std::vector<std::vector<int64_t>>& assignment) {
  proto::Writer writer;
  const size_t replicas = assignment.size();
  const size_t partitions = replicas == 0 ? 0 : assignment[0].size();
  writer.Varint(kReplicaCount, replicas);
  writer.Varint(kComputationCount, partitions);
  for (size_t p = 0; p < partitions; ++p) {
    std::vector<int64_t> ids;
    for (size_t r = 0; r < replicas; ++r) ids.push_back(assignment[r][p]);
    proto::Writer computation;
    computation.PackedVarints(kReplicaDeviceIds, ids);
    writer.Bytes(kComputationDevices, computation.bytes());
  }
  return writer.bytes();
}

}  // namespace kiln::frontend

#include "frontend/vhlo/reader.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "frontend/vhlo/converter.h"
#include "frontend/vhlo/normalize.h"
#include "frontend/vhlo/op_table.h"

namespace kiln::frontend::vhlo {
namespace {

constexpr std::string_view kProducerPrefix = "StableHLO_v";

// The first op name (as stored) of a VHLO op Kiln does not know, or "".
std::string FirstUnknownVhloOp(const bytecode::File& file) {
  for (uint32_t index = 0; index < file.op_names.size(); ++index) {
    std::string name = bytecode::OpFullName(file, index);
    if (name.rfind("vhlo.", 0) == 0 && FindVhloOp(std::string_view(name).substr(5)) == nullptr) {
      return name;
    }
  }
  return "";
}

// Checks that Kiln can read what the producer wrote: its ops first (the most
// specific message), then its version.
Status CheckVersion(const bytecode::File& file) {
  const std::optional<VhloVersion> version = VhloVersionFromProducer(file.producer);
  const std::string at = StrCat("byte ", file.producer_offset, ": ");
  if (!version) {
    return InvalidArgument(at, "expected a StableHLO portable artifact (producer \"",
                           kProducerPrefix, "X.Y.Z\"), found producer \"", file.producer, "\"");
  }
  const std::string written_by = StrCat("this artifact was written by ", file.producer, " (VHLO ",
                                        version->ToString(), ")");
  if (std::string unknown = FirstUnknownVhloOp(file); !unknown.empty()) {
    std::string known = KnownVersionsOf(std::string_view(unknown).substr(5));
    return Unimplemented(unknown, ": Kiln reads VHLO up to ", kNewestVhloVersion.ToString(),
                         known.empty() ? std::string(" and has no op of that name")
                                       : StrCat(" and knows ", known),
                         "; ", written_by, ". Serialize for VHLO ", kNewestVhloVersion.ToString(),
                         " or older (the version the plugin "
                         "reports as stablehlo_current_version).");
  }
  if (*version > kNewestVhloVersion || *version < kOldestVhloVersion) {
    return InvalidArgument(
        at, "expected a VHLO version from ", kOldestVhloVersion.ToString(), " to ",
        kNewestVhloVersion.ToString(), " (the versions Kiln reads), found ", version->ToString(),
        " (producer \"", file.producer, "\"). ",
        *version > kNewestVhloVersion
            ? StrCat("Serialize for VHLO ", kNewestVhloVersion.ToString(), " or older.")
            : StrCat("No StableHLO release is older than ", kOldestVhloVersion.ToString(), "."));
  }
  return Status::Ok();
}

// The VHLO reader's rules: versioned vhlo ops become StableHLO ops
// (normalize.h); the builtin and sdy ops of mixed artifacts stay.
class VhloRules : public OpRules {
 public:
  const Codecs& codecs() const override { return VhloCodecs(); }

  StatusOr<PropertySchema> Properties(std::string_view op_name,
                                      std::string_view where) const override {
    KILN_ASSIGN_OR_RETURN(const VhloOpInfo* info, Info(op_name, where));
    if (info != nullptr) {
      PropertySchema schema;  // every VHLO attribute is required
      for (std::string_view name : info->attributes) schema.attributes.push_back({name, false});
      return schema;
    }
    std::optional<PropertySchema> known = KnownPropertySchema(op_name);
    if (!known) {
      return Unimplemented(where, ": Kiln cannot decode the properties of ", op_name,
                           " (it knows the properties of vhlo ops and of the builtin, func, "
                           "stablehlo, chlo and sdy ops it models)");
    }
    return *known;
  }

  Status Convert(ConvertedOp& op, bool parent_is_func, std::string_view where) const override {
    KILN_ASSIGN_OR_RETURN(const VhloOpInfo* info, Info(op.name, where));
    if (info == nullptr) return Status::Ok();
    // Inherent attributes (from properties, or the dictionary before
    // bytecode 5) go through the StableHLO conversion; the rest stay.
    std::vector<ir::NamedAttribute> inherent, discardable;
    for (ir::NamedAttribute& attribute : op.attributes) {
      const bool is_inherent = std::binary_search(info->attributes.begin(), info->attributes.end(),
                                                  attribute.name);
      (is_inherent ? inherent : discardable).push_back(std::move(attribute));
    }
    KILN_ASSIGN_OR_RETURN(NormalizedOp normalized,
                          NormalizeVhloOp(*info, std::move(inherent), parent_is_func, where));
    op.name = std::move(normalized.name);
    op.attributes = std::move(normalized.attributes);
    for (ir::NamedAttribute& attribute : discardable) op.attributes.push_back(std::move(attribute));
    return Status::Ok();
  }

  bool FoldIdentityCasts() const override { return true; }

 private:
  // The VHLO op `op_name` names, null for ops of other dialects.
  static StatusOr<const VhloOpInfo*> Info(std::string_view op_name, std::string_view where) {
    if (op_name.substr(0, 5) != "vhlo.") return static_cast<const VhloOpInfo*>(nullptr);
    const VhloOpInfo* info = FindVhloOp(op_name.substr(5));
    if (info == nullptr) {
      return Unimplemented(op_name, ": Kiln does not know this VHLO op (", where,
                           "); it reads VHLO up to ", kNewestVhloVersion.ToString());
    }
    return info;
  }
};

}  // namespace

std::string VhloVersion::ToString() const { return StrCat(major, ".", minor, ".", patch); }

std::optional<VhloVersion> ParseVhloVersion(std::string_view text) {
  int64_t parts[3];
  for (int i = 0; i < 3; ++i) {
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    auto [next, error] = std::from_chars(begin, end, parts[i]);
    if (error != std::errc() || next == begin || parts[i] < 0) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(next - begin));
    if (i < 2) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  if (!text.empty()) return std::nullopt;
  return VhloVersion{parts[0], parts[1], parts[2]};
}

std::optional<VhloVersion> VhloVersionFromProducer(std::string_view producer) {
  if (producer.substr(0, kProducerPrefix.size()) != kProducerPrefix) return std::nullopt;
  return ParseVhloVersion(producer.substr(kProducerPrefix.size()));
}

StatusOr<ArtifactInfo> InspectPortableArtifact(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(bytecode::File file, bytecode::ReadFile(bytes));
  ArtifactInfo info;
  info.producer = file.producer;
  info.bytecode_version = file.version;
  info.vhlo_version = VhloVersionFromProducer(file.producer);
  for (const bytecode::File::Dialect& dialect : file.dialects) {
    info.dialects.push_back(dialect.name);
  }
  std::vector<uint64_t> counts(file.op_names.size(), 0);
  for (const bytecode::File::Operation& op : file.operations) ++counts[op.name];
  std::map<std::string, uint64_t> histogram;
  for (uint32_t index = 0; index < counts.size(); ++index) {
    if (counts[index] != 0) histogram[bytecode::OpFullName(file, index)] += counts[index];
  }
  info.op_histogram.assign(histogram.begin(), histogram.end());
  return info;
}

StatusOr<ir::Module> ConvertFile(const bytecode::File& file, std::span<const uint8_t> bytes) {
  KILN_RETURN_IF_ERROR(CheckVersion(file));
  static const VhloRules rules;
  return BuildModule(file, bytes, rules);
}

StatusOr<ir::Module> ReadPortableArtifact(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(bytecode::File file, bytecode::ReadFile(bytes));
  return ConvertFile(file, bytes);
}

}  // namespace kiln::frontend::vhlo

// The plugin's entry point, its function table, PJRT_Plugin_Initialize and
// PJRT_Plugin_Attributes.
#include "plugin.h"

#include <set>
#include <string>

#include "api_functions.h"

namespace conformance {
namespace {

// Checks one named value's shape: a name, a known type, a consistent size.
void ExpectWellFormed(const PJRT_NamedValue& value) {
  SCOPED_TRACE("attribute \"" + ValueName(value) + "\"");
  EXPECT_NE(value.name, nullptr);
  EXPECT_GT(value.name_size, 0u);
  switch (value.type) {
    case PJRT_NamedValue_kString:
      if (value.value_size > 0) {
        EXPECT_NE(value.string_value, nullptr);
      }
      break;
    case PJRT_NamedValue_kInt64List:
      if (value.value_size > 0) {
        EXPECT_NE(value.int64_array_value, nullptr);
      }
      break;
    case PJRT_NamedValue_kInt64:
    case PJRT_NamedValue_kFloat:
    case PJRT_NamedValue_kBool:
      EXPECT_EQ(value.value_size, 1u) << "a scalar's value_size is 1";
      break;
    default: ADD_FAILURE() << "unknown PJRT_NamedValue_Type " << static_cast<int>(value.type);
  }
}

// A StableHLO version attribute: an int64 list of (major, minor, patch).
std::vector<int64_t> VersionTriple(const PJRT_NamedValue& value) {
  EXPECT_EQ(value.type, PJRT_NamedValue_kInt64List) << ValueName(value);
  EXPECT_EQ(value.value_size, 3u) << ValueName(value);
  if (value.type != PJRT_NamedValue_kInt64List || value.value_size != 3) {
    return {};
  }
  return {value.int64_array_value, value.int64_array_value + 3};
}

struct Attributes {
  const PJRT_NamedValue* values = nullptr;
  size_t count = 0;
};

Attributes PluginAttributes() {
  auto args = MAKE_ARGS(PJRT_Plugin_Attributes_Args);
  EXPECT_PJRT_OK(api()->PJRT_Plugin_Attributes(&args));
  if (args.num_attributes > 0) {
    EXPECT_NE(args.attributes, nullptr);
  }
  return {args.attributes, args.num_attributes};
}

TEST(PluginTest, GetPjrtApiReturnsTheSameTableEachCall) { EXPECT_EQ(get_pjrt_api()(), api()); }

TEST(PluginTest, MajorVersionMatchesTheHeader) {
  EXPECT_EQ(api()->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_GE(api()->pjrt_api_version.minor_version, 0);
}

TEST(PluginTest, ApiStructSizeIsAWholeNumberOfSlots) {
  size_t first_slot = offsetof(PJRT_Api, PJRT_Error_Destroy);
  ASSERT_GT(api()->struct_size, first_slot);
  EXPECT_EQ((api()->struct_size - first_slot) % sizeof(void*), 0u)
      << "struct_size " << api()->struct_size;
  if (api()->pjrt_api_version.minor_version >= PJRT_API_MINOR) {
    EXPECT_GE(api()->struct_size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE))
        << "a plugin at this header's minor version has its whole table";
  }
}

TEST(PluginTest, EverySlotWithinStructSizeIsFilled) {
  // Frameworks call most slots without checking them for null.
  for (const ApiFunction& function : ApiFunctions()) {
    if (function.offset + sizeof(void*) > api()->struct_size) continue;
    EXPECT_TRUE(HasSlot(function.offset)) << function.name << " is null";
  }
}

TEST(PluginTest, InitializeSucceeded) {
  EXPECT_TRUE(IsOk(initialize_status())) << "PJRT_Plugin_Initialize";
}

TEST(PluginTest, ExtensionChainIsWellFormed) {
  int count = 0;
  for (const PJRT_Extension_Base* extension = api()->extension_start; extension != nullptr;
       extension = extension->next) {
    ASSERT_LT(++count, 64) << "the extension chain is cyclic or absurdly long";
    EXPECT_GE(extension->struct_size, static_cast<size_t>(PJRT_Extension_Base_STRUCT_SIZE));
    EXPECT_GE(static_cast<int>(extension->type), 0);
  }
}

TEST(PluginTest, AttributesAreWellFormed) {
  Attributes attributes = PluginAttributes();
  std::set<std::string> names;
  for (size_t i = 0; i < attributes.count; ++i) {
    const PJRT_NamedValue& value = attributes.values[i];
    ExpectWellFormed(value);
    EXPECT_TRUE(names.insert(ValueName(value)).second)
        << "duplicate attribute " << ValueName(value);
  }
}

TEST(PluginTest, KnownAttributesHaveTheirFrameworkTypes) {
  Attributes attributes = PluginAttributes();
  const PJRT_NamedValue* xla = FindAttribute(attributes.values, attributes.count, "xla_version");
  if (xla != nullptr) {
    EXPECT_EQ(xla->type, PJRT_NamedValue_kInt64);
  }
  const PJRT_NamedValue* current = FindAttribute(attributes.values, attributes.count,
                                                 "stablehlo_current_version");
  const PJRT_NamedValue* minimum = FindAttribute(attributes.values, attributes.count,
                                                 "stablehlo_minimum_version");
  if (current != nullptr && minimum != nullptr) {
    std::vector<int64_t> current_version = VersionTriple(*current);
    std::vector<int64_t> minimum_version = VersionTriple(*minimum);
    EXPECT_LE(minimum_version, current_version)
        << "stablehlo_minimum_version is newer than stablehlo_current_version";
  }
  const PJRT_NamedValue* serialization = FindAttribute(attributes.values, attributes.count,
                                                       "supports_executable_serialization");
  if (serialization != nullptr) {
    EXPECT_EQ(serialization->type, PJRT_NamedValue_kBool);
  }
}

TEST(PluginTest, AttributesLiveForTheProcess) {
  Attributes first = PluginAttributes();
  Attributes second = PluginAttributes();
  ASSERT_EQ(first.count, second.count);
  for (size_t i = 0; i < first.count; ++i) {
    EXPECT_EQ(ValueName(first.values[i]), ValueName(second.values[i]));
  }
}

// ------------------------------------------------------ Kiln's promises --

TEST(KilnPluginTest, VersionIsTheHeaders) {
  SKIP_UNLESS_KILN();
  EXPECT_EQ(api()->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_EQ(api()->pjrt_api_version.minor_version, PJRT_API_MINOR);
  EXPECT_EQ(api()->pjrt_api_version.struct_size, static_cast<size_t>(PJRT_Api_Version_STRUCT_SIZE));
}

TEST(KilnPluginTest, ApiStructSizeIsTheHeaders) {
  SKIP_UNLESS_KILN();
  EXPECT_EQ(api()->struct_size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
}

TEST(KilnPluginTest, EverySlotOfTheHeaderIsFilled) {
  SKIP_UNLESS_KILN();
  for (const ApiFunction& function : ApiFunctions()) {
    EXPECT_TRUE(HasSlot(function.offset)) << function.name << " is null";
  }
}

TEST(KilnPluginTest, AttributesIncludeVersionsAndCapabilities) {
  SKIP_UNLESS_KILN();
  Attributes attributes = PluginAttributes();
  auto find = [&](const char* name) {
    const PJRT_NamedValue* value = FindAttribute(attributes.values, attributes.count, name);
    EXPECT_NE(value, nullptr) << "missing plugin attribute " << name;
    return value;
  };
  if (const PJRT_NamedValue* xla = find("xla_version")) {
    EXPECT_EQ(xla->type, PJRT_NamedValue_kInt64);
  }
  for (const char* name : {"stablehlo_current_version", "stablehlo_minimum_version"}) {
    if (const PJRT_NamedValue* version = find(name)) {
      for (int64_t part : VersionTriple(*version)) EXPECT_GE(part, 0) << name;
    }
  }
  if (const PJRT_NamedValue* value = find("supports_executable_serialization")) {
    EXPECT_EQ(value->type, PJRT_NamedValue_kBool);
  }
  if (const PJRT_NamedValue* kiln_version = find("kiln_version")) {
    EXPECT_EQ(kiln_version->type, PJRT_NamedValue_kString);
    EXPECT_GT(kiln_version->value_size, 0u);
  }
}

}  // namespace
}  // namespace conformance

// Entry point of the PJRT C API conformance suite:
//   kiln_conformance_test --plugin=/path/to/pjrt_plugin.so [gtest flags]
// or with the plugin's path in $PJRT_PLUGIN_PATH.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin.h"

namespace {

// The plugin path from --plugin=PATH or --plugin PATH, else $PJRT_PLUGIN_PATH.
std::string PluginPathFromArguments(int argc, char** argv) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument.rfind("--plugin=", 0) == 0) {
      path = argument.substr(std::strlen("--plugin="));
    } else if (argument == "--plugin" && i + 1 < argc) {
      path = argv[++i];
    } else {
      std::fprintf(stderr, "conformance: ignoring unknown argument %s\n", argument.c_str());
    }
  }
  if (path.empty()) {
    if (const char* from_env = std::getenv("PJRT_PLUGIN_PATH")) path = from_env;
  }
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // removes the gtest flags
  std::string path = PluginPathFromArguments(argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  if (path.empty()) {
    std::fprintf(stderr,
                 "usage: %s --plugin=/path/to/pjrt_plugin.so [gtest flags]\n"
                 "       (or set PJRT_PLUGIN_PATH)\n",
                 argv[0]);
    return 2;
  }
  std::string error = conformance::LoadPlugin(path);
  if (!error.empty()) {
    std::fprintf(stderr, "conformance: %s\n", error.c_str());
    return 2;
  }
  const PJRT_Api* api = conformance::api();
  std::printf("conformance: plugin %s: platform \"%s\", PJRT C API %d.%d "
              "(suite built against %d.%d)\n",
              path.c_str(), conformance::platform_name().c_str(),
              api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version,
              PJRT_API_MAJOR, PJRT_API_MINOR);
  return RUN_ALL_TESTS();
}

#include "capi/trace.h"

#include <mutex>

#include "base/env.h"

namespace kiln::capi {
namespace {

struct TraceSink {
  bool enabled = false;
  std::FILE* file = stderr;
  std::mutex mutex;
};

TraceSink& Sink() {
  static auto* sink = [] {
    auto* result = new TraceSink;  // leaked: tracing may run during static destruction
    auto flag = GetEnv("KILN_TRACE");
    result->enabled = flag.has_value() && *flag != "0";
    if (result->enabled) {
      if (auto path = GetEnv("KILN_TRACE_FILE")) {
        std::FILE* file = std::fopen(path->c_str(), "a");
        if (file != nullptr) {
          result->file = file;
        } else {
          std::fprintf(stderr, "kiln-trace: cannot open KILN_TRACE_FILE=%s; tracing to stderr\n",
                       path->c_str());
        }
      }
    }
    return result;
  }();
  return *sink;
}

}  // namespace

bool TraceEnabled() { return Sink().enabled; }

void WriteTraceLine(std::string_view function, const std::string& details, const PJRT_Error* error,
                    std::chrono::nanoseconds duration) {
  TraceSink& sink = Sink();
  std::string result = "OK";
  if (error != nullptr) result = ErrorStatus(error).ToString();
  double micros = static_cast<double>(duration.count()) / 1000.0;
  std::lock_guard lock(sink.mutex);
  std::fprintf(sink.file, "kiln-trace: %.*s%s -> %s [%.1f us]\n", static_cast<int>(function.size()),
               function.data(), details.c_str(), result.c_str(), micros);
  std::fflush(sink.file);
}

}  // namespace kiln::capi

// KILN_TRACE=1: one line per C API call (function, handles, key arguments,
// result, duration) to stderr or KILN_TRACE_FILE, so anyone can see exactly
// what a framework asked of the plugin.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "capi/error.h"

namespace kiln::capi {

// Read once from the environment.
bool TraceEnabled();
void WriteTraceLine(std::string_view function, const std::string& details, const PJRT_Error* error,
                    std::chrono::nanoseconds duration);

template <typename T>
void TracePointer(std::ostringstream& out, const char* name, const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    out << ' ' << name << '=' << static_cast<const void*>(value);
  }
}

// The handles and key arguments of a call, read after it returns (so outputs show).
template <typename Args>
std::string DescribeArgs(const Args& args) {
  std::ostringstream out;
  if constexpr (requires { args.client; }) TracePointer(out, "client", args.client);
  if constexpr (requires { args.device; }) TracePointer(out, "device", args.device);
  if constexpr (requires { args.memory; }) TracePointer(out, "memory", args.memory);
  if constexpr (requires { args.src; }) TracePointer(out, "src", args.src);
  if constexpr (requires { args.buffer; }) TracePointer(out, "buffer", args.buffer);
  if constexpr (requires { args.dst_device; }) TracePointer(out, "dst_device", args.dst_device);
  if constexpr (requires { args.dst_memory; }) TracePointer(out, "dst_memory", args.dst_memory);
  if constexpr (requires { args.dst_buffer; }) TracePointer(out, "dst_buffer", args.dst_buffer);
  if constexpr (requires { args.event; }) TracePointer(out, "event", args.event);
  if constexpr (requires { args.topology; }) TracePointer(out, "topology", args.topology);
  if constexpr (requires { args.executable; }) TracePointer(out, "executable", args.executable);
  if constexpr (requires { args.transfer_manager; }) {
    TracePointer(out, "transfer_manager", args.transfer_manager);
  }
  if constexpr (requires { args.context; }) TracePointer(out, "context", args.context);
  if constexpr (requires { args.buffer_index; }) out << " buffer_index=" << args.buffer_index;
  if constexpr (requires { args.launch_id; }) out << " launch_id=" << args.launch_id;
  if constexpr (requires { args.options->launch_id; }) {
    constexpr size_t kEnd = offsetof(PJRT_ExecuteOptions, launch_id) + sizeof(int);
    if (args.options != nullptr && args.options->struct_size >= kEnd) {
      out << " launch_id=" << args.options->launch_id;
    }
  }
  if constexpr (requires { args.num_options; }) out << " num_options=" << args.num_options;
  if constexpr (requires { args.host_buffer_semantics; }) {
    out << " type=" << static_cast<int>(args.type) << " dims=[";
    for (size_t i = 0; args.dims != nullptr && i < args.num_dims; ++i) {
      out << (i > 0 ? "," : "") << args.dims[i];
    }
    out << "] strides=" << args.num_byte_strides
        << " semantics=" << static_cast<int>(args.host_buffer_semantics);
  }
  if constexpr (requires { args.dst_size; }) out << " dst_size=" << args.dst_size;
  if constexpr (requires { args.num_devices; }) out << " num_devices=" << args.num_devices;
  if constexpr (requires { args.program; }) {
    if (args.program != nullptr) {
      out << " program_bytes=" << args.program->code_size << " format="
          << std::string_view(args.program->format == nullptr ? "" : args.program->format,
                              args.program->format == nullptr ? 0 : args.program->format_size);
    }
  }
  return out.str();
}

}  // namespace kiln::capi

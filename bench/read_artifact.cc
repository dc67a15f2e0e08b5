// kiln_bench_read: how fast Kiln reads a portable artifact, and how much
// memory that takes relative to the file (bench/README.md has the figures).
//
//   kiln_bench_read [--repeats N] FILE
//
// For a first run of each step, prints the peak resident memory it added
// (VmHWM, reset through /proc/self/clear_refs before the step) and the heap
// its result still holds (mallinfo2), both also relative to the file size;
// then times each step N times (default 20) and prints min and median:
//   container  bytecode::ReadFile: the MLIR bytecode container, File freed
//   read       vhlo::ReadPortableArtifact: container + VHLO -> Kiln IR, module freed
//   print      ir::PrintModule of the module read in the first run, text freed
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frontend/bytecode/file.h"
#include "frontend/vhlo/reader.h"
#include "ir/printer.h"

namespace {

// Kernel's resident-set figures of this process, in bytes; 0 if unknown.
struct Resident {
  uint64_t current = 0;
  uint64_t peak = 0;
};

Resident ReadResident() {
  Resident resident;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kib) == 1) resident.current = kib * 1024;
    if (std::sscanf(line.c_str(), "VmHWM: %llu kB", &kib) == 1) resident.peak = kib * 1024;
  }
  return resident;
}

// Makes the peak (VmHWM) equal the current resident size; false if the
// kernel does not allow it, in which case peaks are the process's so far.
bool ResetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return static_cast<bool>(clear.flush());
}

// Bytes malloc has handed out and not had back.
uint64_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

struct Timing {
  double min_ms = 0;
  double median_ms = 0;
};

template <typename Run>
Timing Time(int repeats, const Run& run) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    times.push_back(took.count());
  }
  std::sort(times.begin(), times.end());
  return {times.front(), times[times.size() / 2]};
}

// Runs `make` once, reports the peak resident growth while it ran and the
// heap its result still holds, and returns the result. Measured before any
// timing loop: glibc keeps freed memory, so later runs would reuse it unseen.
template <typename Make>
auto Measure(const char* name, uint64_t file_size, bool peak_resets, const Make& make) {
  const uint64_t heap_before = HeapInUse();
  ResetPeak();
  const Resident before = ReadResident();
  auto result = make();
  const Resident after = ReadResident();
  const uint64_t heap_after = HeapInUse();
  const uint64_t held = heap_after > heap_before ? heap_after - heap_before : 0;
  const uint64_t peak = after.peak > before.current ? after.peak - before.current : 0;
  std::printf("%-10s peak resident +%6.1f MB (%.2fx the file%s), result holds %6.1f MB (%.2fx)\n",
              name, peak / 1e6, static_cast<double>(peak) / file_size,
              peak_resets ? "" : "; process peak", held / 1e6,
              static_cast<double>(held) / file_size);
  return result;
}

int Usage() {
  std::fprintf(stderr, "usage: kiln_bench_read [--repeats N] FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 20;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (path == nullptr && argv[i][0] != '-') {
      path = argv[i];
    } else {
      return Usage();
    }
  }
  if (path == nullptr) return Usage();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "kiln_bench_read: cannot open %s\n", path);
    return 1;
  }
  const std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
  namespace frontend = kiln::frontend;

  std::printf("%s: %zu bytes; %d runs each\n", path, bytes.size(), repeats);
  const bool peak_resets = ResetPeak();
  const bool container_ok = Measure("container", bytes.size(), peak_resets, [&] {
                              return frontend::bytecode::ReadFile(bytes);
                            }).ok();
  kiln::StatusOr<kiln::ir::Module> module = Measure("read", bytes.size(), peak_resets, [&] {
    return frontend::vhlo::ReadPortableArtifact(bytes);
  });
  if (!container_ok || !module.ok()) {
    std::fprintf(stderr, "kiln_bench_read: %s: %s\n", path, module.status().ToString().c_str());
    return 1;
  }
  const size_t text_size = Measure("print", bytes.size(), peak_resets, [&] {
                             return kiln::ir::PrintModule(*module);
                           }).size();

  const Timing container = Time(repeats, [&] {
    if (!frontend::bytecode::ReadFile(bytes).ok()) std::abort();
  });
  const Timing read = Time(repeats, [&] {
    if (!frontend::vhlo::ReadPortableArtifact(bytes).ok()) std::abort();
  });
  const Timing print = Time(repeats, [&] {
    if (kiln::ir::PrintModule(*module).empty()) std::abort();
  });
  for (const auto& [name, timing] :
       {std::pair{"container", container}, {"read", read}, {"print", print}}) {
    std::printf("%-10s min %8.3f ms  median %8.3f ms  (%.0f MB/s of input at the median)\n", name,
                timing.min_ms, timing.median_ms, bytes.size() / timing.median_ms / 1e3);
  }
  std::printf("printed text: %zu bytes\n", text_size);
  return 0;
}

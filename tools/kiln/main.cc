// kiln-tool: the C++ half of the `kiln` command (python/kiln_pjrt/cli.py
// forwards `kiln print|inspect ...` here).
//
//   kiln-tool print [--generic] [--locations] [--verify] FILE   the module as StableHLO text
//   kiln-tool inspect FILE                           producer, versions, format, op histogram
//   kiln-tool plan [--time N] FILE                   the compiled plan: nodes, fused loops;
//                                                     --time: each node's mean time over N runs;
//                                                     --backend B: the split between backend B
//                                                     and the host kernels, and the copies
//   kiln-tool run [OPTIONS] FILE [INPUT...]          compile, run, print results, outfeed
//                                                     entries and checks (options: kUsage)
//
// Bad input: one line "kiln: FILE: CODE: message" on stderr and exit code 1;
// bad usage: exit code 2.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/program.h"
#include "frontend/vhlo/reader.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "kernels/semantics.h"
#include "tools/kiln/run.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln print [--generic] [--locations] [--verify] FILE\n"
    "       kiln inspect FILE\n"
    "       kiln plan [--time N] [--partitions N] [--backend NAME] FILE\n"
    "       kiln run [--infeed ENTRY]... [--args=[INPUT, ...]] [--interpreter-format]\n"
    "                [--probe-output-dir=DIR] [--spec-semantics] FILE [INPUT...]\n"
    "           (INPUT: 'dense<[1, 2]> : tensor<2xi32>'; ENTRY: such literals joined by ';')\n";

int Fail(const std::string& path, const kiln::Status& status) {
  std::string message = status.ToString();
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), message.c_str());
  return 1;
}

kiln::StatusOr<std::vector<uint8_t>> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return kiln::NotFound("cannot open the file");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

int Print(const std::string& path, const kiln::ir::PrintOptions& options, bool verify) {
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return Fail(path, bytes.status());
  auto module = kiln::frontend::ReadProgram(*bytes);
  if (!module.ok()) return Fail(path, module.status());
  if (verify) {
    if (kiln::Status verified = kiln::ir::Verify(*module); !verified.ok()) {
      return Fail(path, verified);
    }
  }
  std::string text = kiln::ir::PrintModule(*module, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

int Inspect(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return Fail(path, bytes.status());
  if (kiln::frontend::DetectFormat(*bytes) != kiln::frontend::ProgramFormat::kBytecode) {
    return Fail(path, kiln::InvalidArgument("not MLIR bytecode (no MLIR bytecode magic); "
                                            "`kiln print` reads text"));
  }
  auto info = kiln::frontend::vhlo::InspectPortableArtifact(*bytes);
  if (!info.ok()) return Fail(path, info.status());
  std::printf("file: %s (%zu bytes)\n", path.c_str(), bytes->size());
  std::printf("producer: %s\n", info->producer.c_str());
  std::printf("bytecode version: %llu\n", static_cast<unsigned long long>(info->bytecode_version));
  std::printf("vhlo version: %s\n",
              info->vhlo_version ? info->vhlo_version->ToString().c_str() : "unknown");
  // The readers' rule (frontend::ReadBytecode): the vhlo dialect makes a portable artifact.
  std::string dialects;
  bool vhlo = false;
  for (const std::string& dialect : info->dialects) {
    dialects += (dialects.empty() ? "" : ", ") + dialect;
    vhlo = vhlo || dialect == "vhlo";
  }
  std::printf("format: %s\n", vhlo ? "StableHLO portable artifact (bytecode of VHLO)"
                                   : "MLIR bytecode of the StableHLO dialect (not VHLO)");
  std::printf("dialects: %s\n", dialects.c_str());
  uint64_t total = 0;
  for (const auto& entry : info->op_histogram) total += entry.second;
  std::printf("ops: %llu\n", static_cast<unsigned long long>(total));
  for (const auto& [name, count] : info->op_histogram) {
    std::printf("  %8llu  %s\n", static_cast<unsigned long long>(count), name.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string_view command = args.front();
  if (command == "run") {
    // Options before FILE: --infeed ENTRY (repeatable; several arrays of one
    // entry separated by ';'), --args=[LITERAL, ...] (the StableHLO
    // interpreter's form of the inputs), --interpreter-format,
    // --probe-output-dir=DIR, --spec-semantics.
    kiln::tool::RunOptions options;
    bool spec = false;
    size_t at = 1;
    while (at < args.size() && args[at].starts_with("--")) {
      const std::string_view arg = args[at];
      if (arg == "--infeed" && at + 1 < args.size()) {
        options.infeed.emplace_back(args[at + 1]);
        at += 2;
        continue;
      }
      if (arg.starts_with("--args=")) {
        auto literals = kiln::tool::SplitArgsList(arg.substr(7));
        if (!literals.ok()) {
          std::fprintf(stderr, "kiln run: %s\n", literals.status().message().c_str());
          return 2;
        }
        options.inputs = std::move(*literals);
      } else if (arg == "--interpreter-format") {
        options.interpreter_format = true;
      } else if (arg.starts_with("--probe-output-dir=")) {
        options.probe_dir = std::string(arg.substr(19));
      } else if (arg == "--spec-semantics") {
        spec = true;
      } else {
        std::fprintf(stderr, "kiln run: unknown option '%.*s'\n%s", static_cast<int>(arg.size()),
                     arg.data(), kUsage);
        return 2;
      }
      ++at;
    }
    if (at >= args.size()) {
      std::fputs(kUsage, stderr);
      return 2;
    }
    kiln::kernels::SetSpecSemantics(spec);
    const std::string path(args[at]);
    auto bytes = ReadWholeFile(path);
    if (!bytes.ok()) return Fail(path, bytes.status());
    options.inputs.insert(options.inputs.end(), args.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                          args.end());
    return kiln::tool::Run(path, *bytes, options);
  }
  if (command == "plan") {
    // --time N: time each node over N runs; --partitions N: plan for N
    // devices (a GSPMD program from HLO, which names no partition count).
    // --backend NAME: how a backend that compiles nodes splits the plan.
    int runs = 0;
    int64_t partitions = 0;
    std::string backend;
    size_t at = 1;
    while (at + 1 < args.size() &&
           (args[at] == "--time" || args[at] == "--partitions" || args[at] == "--backend")) {
      const std::string flag(args[at]);
      const std::string count(args[at + 1]);
      if (flag == "--backend") {
        backend = count;
        at += 2;
        continue;
      }
      char* end = nullptr;
      const long value = std::strtol(count.c_str(), &end, 10);
      const bool time = flag == "--time";
      const long most = time ? 1000000 : 65536;
      if (end == count.c_str() || *end != '\0' || value < 1 || value > most) {
        std::fprintf(stderr, "kiln plan: %s takes a number of %s (1 to %ld), not '%s'\n",
                     flag.c_str(), time ? "runs" : "devices", most, count.c_str());
        return 2;
      }
      if (time) {
        runs = static_cast<int>(value);
      } else {
        partitions = value;
      }
      at += 2;
    }
    if (args.size() != at + 1 || args[at].starts_with("--")) {
      std::fputs(kUsage, stderr);
      return 2;
    }
    const std::string path(args[at]);
    auto bytes = ReadWholeFile(path);
    if (!bytes.ok()) return Fail(path, bytes.status());
    if (!backend.empty()) return kiln::tool::PlanForBackend(path, *bytes, backend, partitions);
    return kiln::tool::Plan(path, *bytes, runs, partitions);
  }
  kiln::ir::PrintOptions options;
  bool verify = false;
  std::string path;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--generic" && command == "print") {
      options.generic = true;
    } else if (args[i] == "--verify" && command == "print") {
      verify = true;
    } else if (args[i] == "--locations" && command == "print") {
      options.locations = true;
    } else if (path.empty() && !args[i].starts_with("--")) {
      path = std::string(args[i]);
    } else {
      std::fprintf(stderr, "kiln %.*s: unexpected argument '%.*s'\n%s",
                   static_cast<int>(command.size()), command.data(),
                   static_cast<int>(args[i].size()), args[i].data(), kUsage);
      return 2;
    }
  }
  if (path.empty() || (command != "print" && command != "inspect")) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  return command == "print" ? Print(path, options, verify) : Inspect(path);
}

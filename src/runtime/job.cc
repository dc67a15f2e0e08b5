#include "runtime/job.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <vector>

#include "base/env.h"
#include "version.h"

namespace kiln::runtime {
namespace {

// What each process publishes: "build=<b>;devices=<n>".
std::string Describe(int devices, std::string_view build) {
  return StrCat("build=", build, ";devices=", devices);
}

// The value of field `name` in a Describe() string ("" when absent).
std::string Field(std::string_view text, std::string_view name) {
  const std::string prefix = StrCat(name, "=");
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(';', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(at, end - at);
    if (item.substr(0, prefix.size()) == prefix) return std::string(item.substr(prefix.size()));
    at = end + 1;
  }
  return "";
}

// The NT_GNU_BUILD_ID note of the loaded object at `base`, in hex ("" when
// it has none).
std::string BuildIdOf(uintptr_t base) {
  struct Search {
    uintptr_t base;
    std::string hex;
  } search{base, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* found = static_cast<Search*>(data);
        if (info->dlpi_addr != found->base) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type != PT_NOTE) continue;
          const auto* at = reinterpret_cast<const uint8_t*>(info->dlpi_addr + header.p_vaddr);
          const uint8_t* end = at + header.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) note;
            std::memcpy(&note, at, sizeof(note));
            const uint8_t* name = at + sizeof(note);
            const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
            if (desc + note.n_descsz > end) break;
            if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              static const char kDigits[] = "0123456789abcdef";
              for (uint32_t k = 0; k < note.n_descsz; ++k) {
                found->hex += kDigits[desc[k] >> 4];
                found->hex += kDigits[desc[k] & 15];
              }
              return 1;
            }
            at = desc + ((note.n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.hex;
}

}  // namespace

std::string KilnBuildId() {
  Dl_info info;
  std::string id;
  if (dladdr(reinterpret_cast<void*>(&KilnBuildId), &info) != 0) {
    id = BuildIdOf(reinterpret_cast<uintptr_t>(info.dli_fbase));
  }
  // A test stands in for another build.
  if (auto forced = GetEnv("KILN_TESTING_BUILD_ID"); forced && GetEnv("KILN_TESTING_FAULTS")) {
    id = *forced;
  }
  return StrCat("kiln ", kKilnVersion, id.empty() ? "" : " ", id);
}

std::chrono::milliseconds InitTimeout() {
  if (auto value = GetEnv("KILN_INIT_TIMEOUT_SECONDS")) {
    auto parsed = ParseInt64(*value, "KILN_INIT_TIMEOUT_SECONDS", 1, 24 * 3600);
    if (parsed.ok()) return std::chrono::seconds(*parsed);
  }
  return std::chrono::seconds(300);
}

Status AgreeOnTopology(JobOptions& job, int devices_per_process, std::string_view build) {
  if (job.num_nodes <= 1) return Status::Ok();
  if (job.store == nullptr) {
    return InvalidArgument("a job of ", job.num_nodes,
                           " processes needs the framework's key-value store, and "
                           "PJRT_Client_Create was given none");
  }
  const std::string mine = Describe(devices_per_process, build);
  constexpr int kMaxClients = 1000;
  for (job.incarnation = 0;; ++job.incarnation) {
    Status put = job.store->Put(StrCat("kiln/", job.incarnation, "/topology/", job.node_id), mine);
    if (put.ok()) break;
    if (put.code() != StatusCode::kAlreadyExists || job.incarnation + 1 == kMaxClients) {
      return Status(put.code(),
                    StrCat("publishing process ", job.node_id,
                           "'s topology to the job's key-value store: ", put.message()));
    }
  }
  const std::chrono::milliseconds timeout = InitTimeout();
  for (int node = 0; node < job.num_nodes; ++node) {
    if (node == job.node_id) continue;
    StatusOr<std::string> theirs = job.store->Get(
        StrCat("kiln/", job.incarnation, "/topology/", node), timeout);
    if (!theirs.ok()) {
      return Status(theirs.status().code(),
                    StrCat("process ", job.node_id, " waited ", timeout.count() / 1000,
                           " s (KILN_INIT_TIMEOUT_SECONDS) for process ", node,
                           "'s Kiln topology: ", theirs.status().message(),
                           ". Is Kiln the platform of every process of the job?"));
    }
    if (Field(*theirs, "build") != build) {
      return FailedPrecondition("process ", node, " runs Kiln build '", Field(*theirs, "build"),
                                "' but process ", job.node_id, " runs '", build,
                                "': every process of a job must load the same Kiln library");
    }
    if (Field(*theirs, "devices") != std::to_string(devices_per_process)) {
      return FailedPrecondition("process ", node, " has ", Field(*theirs, "devices"),
                                " Kiln devices but process ", job.node_id, " has ",
                                devices_per_process,
                                ": every process of a job must be given the same device count "
                                "(KILN_NUM_DEVICES or the num_devices option)");
    }
  }
  return Status::Ok();
}

}  // namespace kiln::runtime

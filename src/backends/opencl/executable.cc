#include "backends/opencl/executable.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/env.h"

namespace kiln::backends::opencl {

namespace {

using compiler::ValueId;

constexpr size_t kAlignment = 128;

size_t Aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

class Executable final : public runtime::DeviceExecutable {
 public:
  Executable(std::shared_ptr<Context> context, SegmentCode code,
             std::vector<std::unique_ptr<Kernel>> kernels)
      : context_(std::move(context)), code_(std::move(code)), kernels_(std::move(kernels)) {}
  ~Executable() override {
    if (scratch_ != nullptr) context_->Free(scratch_);
    if (constants_ != nullptr) context_->Free(constants_);
    if (empty_ != nullptr) context_->Free(empty_);
  }
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Places every array the launches take: a parameter or result of the
  // segment, a constant, or scratch (other values, and temporaries).
  void Place(const compiler::Graph& segment) {
    for (size_t v = 0; v < segment.values.size(); ++v) {
      if (segment.values[v].bytes == 0) empty_arrays_.insert(static_cast<ValueId>(v));
    }
    for (size_t t = 0; t < code_.temporaries.size(); ++t) {
      if (code_.temporaries[t].bytes == 0) empty_arrays_.insert(TemporaryId(t));
    }
    for (size_t i = 0; i < segment.parameters.size(); ++i) {
      places_.emplace(segment.parameters[i], Where{Home::kParameter, i});
    }
    for (size_t r = 0; r < segment.results.size(); ++r) {
      places_.emplace(segment.results[r], Where{Home::kResult, r});
    }
    for (const Launch& launch : code_.launches) {
      for (ValueId value : launch.arrays) {
        if (places_.contains(value)) continue;
        if (value < 0) {
          places_.emplace(value, Where{Home::kScratch, scratch_bytes_});
          scratch_bytes_ += Aligned(code_.temporaries[TemporaryIndex(value)].bytes);
          continue;
        }
        const compiler::ValueInfo& info = segment.values[static_cast<size_t>(value)];
        if (info.constant) {
          places_.emplace(value, Where{Home::kConstant, constant_bytes_});
          constant_data_.emplace_back(constant_bytes_, info.constant);
          constant_bytes_ += Aligned(info.bytes);
        } else {
          places_.emplace(value, Where{Home::kScratch, scratch_bytes_});
          scratch_bytes_ += Aligned(info.bytes);
        }
      }
    }
  }

  Status Run(int ordinal, std::span<const runtime::DeviceAddress> parameters,
             std::span<const runtime::DeviceAddress> results) override {
    (void)ordinal;  // every virtual device is the one OpenCL device
    // Kernel arguments are set per run: one run at a time.
    std::lock_guard lock(mutex_);
    KILN_RETURN_IF_ERROR(Prepare());
    for (size_t l = 0; l < code_.launches.size(); ++l) {
      const Launch& launch = code_.launches[l];
      Kernel& kernel = *kernels_[l];
      for (size_t j = 0; j < launch.arrays.size(); ++j) {
        const Where& where = places_.at(launch.arrays[j]);
        cl_mem buffer = nullptr;
        cl_ulong offset = 0;
        switch (where.home) {
          case Home::kParameter:
            buffer = static_cast<cl_mem>(parameters[where.at].handle);
            offset = parameters[where.at].offset;
            break;
          case Home::kResult:
            buffer = static_cast<cl_mem>(results[where.at].handle);
            offset = results[where.at].offset;
            break;
          case Home::kConstant:
            buffer = constants_;
            offset = where.at;
            break;
          case Home::kScratch:
            buffer = scratch_;
            offset = where.at;
            break;
        }
        // An array of no bytes has no buffer: the runtime hands a
        // zero-byte parameter or result a placeholder that is no cl_mem.
        // The kernel never reads it, but the driver must get a real buffer
        // (PoCL asserted on the placeholder).
        if (buffer == nullptr || empty_arrays_.contains(launch.arrays[j])) {
          if (empty_ == nullptr) {
            KILN_ASSIGN_OR_RETURN(empty_, context_->Allocate(kAlignment));
          }
          buffer = empty_;
          offset = 0;
        }
        const auto index = static_cast<unsigned>(2 * j);
        KILN_RETURN_IF_ERROR(kernel.SetArgument(index, sizeof(cl_mem), &buffer));
        KILN_RETURN_IF_ERROR(kernel.SetArgument(index + 1, sizeof(cl_ulong), &offset));
      }
      KILN_RETURN_IF_ERROR(context_->Enqueue(kernel, launch.global, launch.local));
    }
    // Neither submitted nor waited for here: the runtime asks for the
    // queue's completion (DeviceBackend::Completion), whose wait or marker
    // submits it, and later work on the in-order queue runs after this.
    return Status::Ok();
  }

 private:
  enum class Home : uint8_t { kParameter, kResult, kConstant, kScratch };
  struct Where {
    Home home;
    size_t at;  // the parameter's or result's index; the byte offset in the buffer
  };

  // Allocates scratch and uploads the constants, on the first run.
  Status Prepare() {
    if (scratch_bytes_ > 0 && scratch_ == nullptr) {
      KILN_ASSIGN_OR_RETURN(scratch_, context_->Allocate(scratch_bytes_));
    }
    if (constant_bytes_ > 0 && constants_ == nullptr) {
      KILN_ASSIGN_OR_RETURN(cl_mem buffer, context_->Allocate(constant_bytes_));
      for (const auto& [offset, data] : constant_data_) {
        if (data->empty()) continue;
        Status written = context_->Write(buffer, offset, data->data(), data->size());
        if (!written.ok()) {
          context_->Free(buffer);
          return written;
        }
      }
      constants_ = buffer;
    }
    return Status::Ok();
  }

  std::shared_ptr<Context> context_;
  SegmentCode code_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::unordered_map<ValueId, Where> places_;
  std::unordered_set<ValueId> empty_arrays_;  // values and temporaries of no bytes
  size_t scratch_bytes_ = 0;
  size_t constant_bytes_ = 0;
  std::vector<std::pair<size_t, std::shared_ptr<const std::vector<uint8_t>>>> constant_data_;
  std::mutex mutex_;
  cl_mem scratch_ = nullptr;
  cl_mem constants_ = nullptr;
  cl_mem empty_ = nullptr;  // stands for arrays of no bytes
};

}  // namespace

StatusOr<std::unique_ptr<runtime::DeviceExecutable>> CompileSegment(
    std::shared_ptr<Context> context, const compiler::Graph& segment, const Target& target) {
  KILN_ASSIGN_OR_RETURN(SegmentCode code, Generate(segment, target));
  // KILN_OPENCL_DUMP=1: each segment's source on stderr, for whoever tunes
  // or debugs the generated kernels.
  if (GetEnv("KILN_OPENCL_DUMP").value_or("") == "1") {
    std::fprintf(stderr, "// Kiln OpenCL segment: %zu launches\n%s\n", code.launches.size(),
                 code.source.c_str());
  }
  std::vector<std::string_view> names;
  for (const Launch& launch : code.launches) names.push_back(launch.kernel);
  std::vector<std::unique_ptr<Kernel>> kernels;
  if (!names.empty()) {
    KILN_ASSIGN_OR_RETURN(kernels, context->BuildKernels(code.source, names, kBuildOptions));
  }
  auto executable = std::make_unique<Executable>(std::move(context), std::move(code),
                                                 std::move(kernels));
  executable->Place(segment);
  return std::unique_ptr<runtime::DeviceExecutable>(std::move(executable));
}

}  // namespace kiln::backends::opencl

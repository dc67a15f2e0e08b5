#include "kernels/semantics.h"

#include <atomic>

namespace kiln::kernels {
namespace {

std::atomic<bool> spec_semantics{false};

}  // namespace

void SetSpecSemantics(bool spec) { spec_semantics.store(spec, std::memory_order_relaxed); }

bool SpecSemantics() { return spec_semantics.load(std::memory_order_relaxed); }

}  // namespace kiln::kernels

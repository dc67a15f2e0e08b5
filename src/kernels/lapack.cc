#include "kernels/lapack.h"

#include <array>
#include <atomic>

namespace kiln::kernels::lapack {
namespace {

constexpr char kPrefixes[] = {'s', 'd', 'c', 'z'};

// Written once at start-up, read by every kernel call: atomics keep a
// registration racing a run well-defined.
std::array<std::atomic<void*>, 4> getrf{}, potrf{}, trsm{}, geqrf{}, orgqr{}, eigen{}, gesdd{};

std::atomic<void*>* Slot(std::string_view name) {
  if (name.size() < 2) return nullptr;
  int index = -1;
  for (int i = 0; i < 4; ++i) {
    if (name[0] == kPrefixes[i]) index = i;
  }
  if (index < 0) return nullptr;
  const std::string_view routine = name.substr(1);
  if (routine == "getrf") return &getrf[static_cast<size_t>(index)];
  if (routine == "potrf") return &potrf[static_cast<size_t>(index)];
  if (routine == "trsm") return &trsm[static_cast<size_t>(index)];
  if (routine == "geqrf") return &geqrf[static_cast<size_t>(index)];
  if (routine == "gesdd") return &gesdd[static_cast<size_t>(index)];
  const bool complex = index >= 2;
  if (routine == (complex ? "ungqr" : "orgqr")) return &orgqr[static_cast<size_t>(index)];
  if (routine == (complex ? "heevd" : "syevd")) return &eigen[static_cast<size_t>(index)];
  return nullptr;
}

template <typename F>
F* Get(const std::array<std::atomic<void*>, 4>& slots, ElementType type) {
  const int index = TypeIndex(type);
  if (index < 0) return nullptr;
  return reinterpret_cast<F*>(slots[static_cast<size_t>(index)].load(std::memory_order_acquire));
}

}  // namespace

int TypeIndex(ElementType type) {
  switch (type) {
    case ElementType::kF32: return 0;
    case ElementType::kF64: return 1;
    case ElementType::kC64: return 2;
    case ElementType::kC128: return 3;
    default: return -1;
  }
}

bool Register(std::string_view name, void* function) {
  std::atomic<void*>* slot = Slot(name);
  if (slot == nullptr) return false;
  slot->store(function, std::memory_order_release);
  return true;
}

Getrf* GetGetrf(ElementType type) { return Get<Getrf>(getrf, type); }
Potrf* GetPotrf(ElementType type) { return Get<Potrf>(potrf, type); }
Trsm* GetTrsm(ElementType type) { return Get<Trsm>(trsm, type); }
Geqrf* GetGeqrf(ElementType type) { return Get<Geqrf>(geqrf, type); }
Orgqr* GetOrgqr(ElementType type) { return Get<Orgqr>(orgqr, type); }
Syevd* GetSyevd(ElementType type) {
  return TypeIndex(type) < 2 ? Get<Syevd>(eigen, type) : nullptr;
}
Heevd* GetHeevd(ElementType type) {
  return TypeIndex(type) >= 2 ? Get<Heevd>(eigen, type) : nullptr;
}
Gesdd* GetGesdd(ElementType type) {
  return TypeIndex(type) < 2 ? Get<Gesdd>(gesdd, type) : nullptr;
}
GesddComplex* GetGesddComplex(ElementType type) {
  return TypeIndex(type) >= 2 ? Get<GesddComplex>(gesdd, type) : nullptr;
}

void ClearForTesting() {
  for (auto* slots : {&getrf, &potrf, &trsm, &geqrf, &orgqr, &eigen, &gesdd}) {
    for (auto& slot : *slots) slot.store(nullptr);
  }
}

}  // namespace kiln::kernels::lapack

// The floating-point environment programs run in. XLA's CPU backend runs
// with denormals flushed to zero (denormal inputs read as zero, denormal
// results written as zero) and Kiln does the same, so that results agree
// bit for bit; f16 denormals are unaffected (f16 computes in f32, where
// they are normal numbers).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "kernels/semantics.h"

namespace kiln::kernels {

#if defined(__x86_64__) || defined(__i386__)
// MXCSR: flush-to-zero (bit 15) and denormals-are-zero (bit 6).
inline constexpr unsigned kFlushDenormalBits = 0x8040;
inline unsigned FloatEnvironment() { return _mm_getcsr(); }
inline void SetFloatEnvironment(unsigned bits) { _mm_setcsr(bits); }
#else
inline constexpr unsigned kFlushDenormalBits = 0;
inline unsigned FloatEnvironment() { return 0; }
inline void SetFloatEnvironment(unsigned) {}
#endif

// Flushes denormals on this thread for the guard's lifetime, then restores
// the caller's environment (the framework's thread may run other code).
// Under the spec's semantics (semantics.h) it keeps denormals instead.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals()
      : saved_(FloatEnvironment()),
        wanted_(SpecSemantics() ? saved_ & ~kFlushDenormalBits : saved_ | kFlushDenormalBits) {
    if (wanted_ != saved_) SetFloatEnvironment(wanted_);
  }
  ~ScopedFlushDenormals() {
    if (wanted_ != saved_) SetFloatEnvironment(saved_);
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned saved_;
  unsigned wanted_;
};

// For threads that only ever run kernels (the thread pool's workers).
inline void FlushDenormalsOnThisThread() {
  SetFloatEnvironment(SpecSemantics() ? FloatEnvironment() & ~kFlushDenormalBits
                                      : FloatEnvironment() | kFlushDenormalBits);
}

}  // namespace kiln::kernels

// KILN_ISA_CLONES: compile a hot, non-template function once more for AVX2
// and for AVX-512 and pick the widest the CPU runs at load time (GCC's
// target_clones). The rest of Kiln is built for baseline x86-64 (SSE2), so
// a simple loop the compiler vectorizes would otherwise use 16-byte
// registers on every machine. Templates cannot be cloned: wrap a template's
// loop in one plain function per type. Clang, ASan builds and other
// architectures get the plain function.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define KILN_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_ISA_CLONES
#endif

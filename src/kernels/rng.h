// Random bits (stablehlo.rng_bit_generator) and the distributions built on
// them (stablehlo.rng). The generators reproduce XLA's expansion of
// RngBitGenerator bit for bit (xla/hlo/builder/lib/prng.cc and
// rng_bit_generator_expander.cc): Threefry-2x32 with 20 rounds and
// Philox-4x32 with 10 rounds, and the same placement of counters and words
// in the output. docs/execution.md ("Random numbers") describes the layout.
#pragma once

#include <cstdint>
#include <span>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

enum class RngAlgorithm : uint8_t { kThreeFry, kPhilox };

// The two 32-bit words Threefry-2x32 (20 rounds) makes of `counter` under `key`.
void ThreeFry2x32(uint32_t key0, uint32_t key1, uint32_t counter0, uint32_t counter1,
                  uint32_t out[2]);
// The four words Philox-4x32 (10 rounds) makes of `counter` under `key`.
void Philox4x32(uint32_t key0, uint32_t key1, const uint32_t counter[4], uint32_t out[4]);

// Checks that rng_bit_generator can produce `output_type` from a state of
// `state_size` u64 words with `algorithm`: integer and float types of 8, 16,
// 32 or 64 bits; Threefry needs 2 words, Philox 2 or 3.
Status CheckRngBitGenerator(RngAlgorithm algorithm, int64_t state_size, ElementType output_type);

// rng_bit_generator: fills `output` (dense, of `dims`, elements of
// `output_type`, which CheckRngBitGenerator accepted) with random bits from
// `state` (`state_size` words) and writes the state after them to
// `new_state` (which may alias `state`).
void RngBitGenerator(RngAlgorithm algorithm, const uint64_t* state, int64_t state_size,
                     ElementType output_type, std::span<const int64_t> dims, void* output,
                     uint64_t* new_state);

enum class RngDistribution : uint8_t { kUniform, kNormal };

// stablehlo.rng with XLA's distributions over Philox bits for `key` and the
// 128-bit counter `counter` (low word first): UNIFORM floats are
// a + (b - a) * (mantissa bits / 2^mantissa), UNIFORM integers
// a + bits mod (b - a) (XLA's form), NORMAL is Box-Muller scaled by b and
// shifted by a. `a` and `b` are scalars of `type`; f16/bf16 compute in f32.
// UNIMPLEMENTED for types other than 32/64-bit integers and f16, bf16, f32,
// f64; NORMAL needs floats.
Status RngDistributionKernel(RngDistribution distribution, ElementType type, const void* a,
                             const void* b, std::span<const int64_t> dims, uint64_t key,
                             const uint64_t counter[2], void* output);

}  // namespace kiln::kernels

/*
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC 2011) exactly as docs/ops.md section 14 defines it
 * for RANDOM_UNIFORM and RANDOM_NORMAL: the one definition of the plugins (issue 28). It is written
 * in what C, CUDA and GLSL share, so the rounds exist once: the reference and cuda plugins call it
 * (nvcc compiles it for kernels), the Vulkan shader (shaders/random.comp) includes this file
 * through glslc, and onednn runs the same rounds across 16 lanes at once. The conformance suite
 * holds all of them to the reference's numbers bit for bit; tests/cuda checks it against
 * Random123's known answers without a GPU. Part of plugin_support: header-only, needs only
 * <stdint.h>.
 *
 * Under GLSL (glslc defines VULKAN) only the rounds are compiled: the shader forms its counter from
 * 32-bit words itself, since GLSL has no 64-bit integers without an extension.
 */
#ifndef SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H
#define SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H

#if defined(VULKAN) /* GLSL, compiled by glslc for Vulkan */

#define SY_HOST_DEVICE
#define SY_PHILOX_U32 uint
#define SY_MUL_HI_LO(a, b, hi, lo) umulExtended(a, b, hi, lo)
struct SyPhiloxWords {
  uint w[4];
};

#else /* C or C++, for the host or (nvcc) for CUDA */

#include <stdint.h>

#if defined(__CUDACC__)
#define SY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SY_HOST_DEVICE inline
#endif
#define SY_PHILOX_U32 uint32_t
#define SY_MUL_HI_LO(a, b, hi, lo) sy_mul_hi_lo(a, b, &(hi), &(lo))

typedef struct SyPhiloxWords {
  uint32_t w[4];
} SyPhiloxWords;

SY_HOST_DEVICE void sy_mul_hi_lo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(product >> 32);
  *lo = (uint32_t)product;
}

#endif

/* The round's multipliers and the key's bumps (Weyl constants), for the vector versions too. */
#define SY_PHILOX_M0 0xD2511F53u
#define SY_PHILOX_M1 0xCD9E8D57u
#define SY_PHILOX_W0 0x9E3779B9u
#define SY_PHILOX_W1 0xBB67AE85u

/* Ten rounds on `counter` with `key`; the key is bumped after each round. */
SY_HOST_DEVICE SyPhiloxWords sy_philox4x32_10(SyPhiloxWords counter, SY_PHILOX_U32 key0,
                                              SY_PHILOX_U32 key1) {
  for (int round = 0; round < 10; ++round) {
    SY_PHILOX_U32 hi0, lo0, hi1, lo1;
    SY_MUL_HI_LO(SY_PHILOX_M0, counter.w[0], hi0, lo0);
    SY_MUL_HI_LO(SY_PHILOX_M1, counter.w[2], hi1, lo1);
    SyPhiloxWords next;
    next.w[0] = hi1 ^ counter.w[1] ^ key0;
    next.w[1] = lo1;
    next.w[2] = hi0 ^ counter.w[3] ^ key1;
    next.w[3] = lo0;
    counter = next;
    key0 += SY_PHILOX_W0;
    key1 += SY_PHILOX_W1;
  }
  return counter;
}

#if !defined(VULKAN)

/* The words for logical element `index` of a tensor filled with (seed, offset). */
SY_HOST_DEVICE SyPhiloxWords sy_philox_for_element(uint64_t seed, uint64_t offset, uint64_t index) {
  const uint64_t c = offset + index; /* wraps modulo 2^64 by definition */
  SyPhiloxWords counter;
  counter.w[0] = (uint32_t)c;
  counter.w[1] = (uint32_t)(c >> 32);
  counter.w[2] = 0;
  counter.w[3] = 0;
  return sy_philox4x32_10(counter, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* float(word >> 8) * 2^-24: exact, in [0, 1). */
SY_HOST_DEVICE float sy_unit_float(uint32_t word) {
  return (float)(word >> 8) * 5.9604644775390625e-08f;
}

/* fa + (fb - fa) * u with two separate roundings and no fused multiply-add. */
SY_HOST_DEVICE float sy_uniform_from_unit(float fa, float fb, float u) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(fa, __fmul_rn(__fsub_rn(fb, fa), u));
#else
  volatile float t = fb - fa; /* volatile keeps each rounding separate on every host compiler */
  t = t * u;
  return fa + t;
#endif
}

#endif /* !VULKAN */

#endif /* SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H */

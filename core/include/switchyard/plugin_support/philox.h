/*
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC 2011) exactly as docs/ops.md section 14 defines it
 * for RANDOM_UNIFORM and RANDOM_NORMAL: the one definition of the plugins (issue 28), in C that
 * compiles for the host and, under nvcc, for CUDA kernels. The reference and cuda plugins call it;
 * onednn runs the same rounds across 16 lanes at once and the Vulkan shader in GLSL, and the
 * conformance suite holds all of them to the reference's numbers bit for bit. tests/cuda checks it
 * against Random123's known answers without a GPU. Part of plugin_support: header-only, needs
 * only <stdint.h>.
 */
#ifndef SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H
#define SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define SY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SY_HOST_DEVICE inline
#endif

typedef struct SyPhiloxWords {
  uint32_t w[4];
} SyPhiloxWords;

SY_HOST_DEVICE void sy_mul_hi_lo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(product >> 32);
  *lo = (uint32_t)product;
}

/* Ten rounds on `counter` with `key`; the key is bumped after each round. */
SY_HOST_DEVICE SyPhiloxWords sy_philox4x32_10(SyPhiloxWords counter, uint32_t key0, uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    sy_mul_hi_lo(0xD2511F53u, counter.w[0], &hi0, &lo0);
    sy_mul_hi_lo(0xCD9E8D57u, counter.w[2], &hi1, &lo1);
    SyPhiloxWords next;
    next.w[0] = hi1 ^ counter.w[1] ^ key0;
    next.w[1] = lo1;
    next.w[2] = hi0 ^ counter.w[3] ^ key1;
    next.w[3] = lo0;
    counter = next;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return counter;
}

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

#endif /* SWITCHYARD_PLUGIN_SUPPORT_PHILOX_H */

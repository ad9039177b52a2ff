// SY_VECTOR_CLONES: a loop compiled three times, for AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and the
// baseline x86-64 (SSE2), with the loader picking the best the CPU has (GCC's target_clones, an
// ifunc resolved once). The plugin is built for the baseline so that it loads on any x86-64; a hot
// loop without this runs 4 floats per instruction, in legacy SSE encoding, between oneDNN's
// AVX-512 kernels: on a 2-core Zen 4 SGD_UPDATE of 65536 floats took 27-45 us that way against
// 17-25 us cloned, and digits-mlp's epoch dropped about 5%.
//
// The clones compute the same bits: the plugin is compiled with -ffp-contract=off
// (CMakeLists.txt), so no clone fuses a multiply and an add that the others round twice, and
// vectorising only reorders independent elements (reductions that would reorder a sum keep their
// own explicit order).
#pragma once

#define SY_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

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
//
// A clone is not proof of vectorisation: GCC leaves a loop scalar when a store may alias what it
// reads (a functor's members through a reference, many output pointers) or when it reduces into a
// bool. To list the AVX-512 clones without one vector instruction (the libm-bound exp/log/tanh
// spans and the f16 strided spans are expected there):
//   L=build/lib/switchyard/libswitchyard-onednn.so
//   nm -S -C $L | grep 'arch_x86_64_v4]$' | while read a sz t name; do
//     objdump -d --start-address=0x$a --stop-address=$((0x$a + 0x$sz)) $L | grep -q '[yz]mm' ||
//       echo "$name"; done
#pragma once

// Under ThreadSanitizer (tools/test --tsan) the clones' ifunc resolvers run while the plugin is
// being relocated, before the instrumentation they call into can run: dlopen crashed (a jump to an
// unrelocated address). That build keeps one baseline copy of each loop; the bits are the same.
#if defined(__SANITIZE_THREAD__)
#define SY_VECTOR_CLONES
#define SY_F16_CLONES
#else
#define SY_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
// f16 conversions: F16C (x86-64-v3) or the baseline.
#define SY_F16_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif

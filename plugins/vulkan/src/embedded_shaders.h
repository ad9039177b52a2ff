// The SPIR-V modules compiled from plugins/vulkan/shaders at build time (see
// cmake/EmbedSpirv.cmake, which generates the definition).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sy_vk {

struct EmbeddedShader {
  const char* name;  // "<shader>.<variant>", e.g. "binary.f16" or "copy.w32.w16"
  const uint32_t* words;
  size_t word_count;
};

std::span<const EmbeddedShader> embedded_shaders();

}  // namespace sy_vk

# Build-time shader compilation: each (shader, variant) is compiled by glslc to SPIR-V, and all the
# modules are embedded into one generated .cpp as uint32 arrays (EmbedSpirv.cmake, cmake only).

set(SWITCHYARD_VULKAN_SHADER_DIR ${CMAKE_CURRENT_LIST_DIR}/../shaders)
set(SWITCHYARD_VULKAN_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/EmbedSpirv.cmake)

# switchyard_vulkan_shader(<source name> <module name> "<DEF1;DEF2=v>" <list var to append to>)
function(switchyard_vulkan_shader source module defines out_list)
  set(src ${SWITCHYARD_VULKAN_SHADER_DIR}/${source}.comp)
  set(spv ${CMAKE_CURRENT_BINARY_DIR}/spirv/${module}.spv)
  set(define_flags)
  foreach(d ${defines})
    list(APPEND define_flags "-D${d}")
  endforeach()
  add_custom_command(
    OUTPUT ${spv}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/spirv
    COMMAND ${SWITCHYARD_GLSLC} -fshader-stage=compute --target-env=vulkan1.2 -O -Werror
            -I ${SWITCHYARD_VULKAN_SHADER_DIR} -I ${PROJECT_SOURCE_DIR}/core/include ${define_flags}
            -MD -MF ${spv}.d -o ${spv} ${src}
    DEPENDS ${src}
    DEPFILE ${spv}.d
    COMMENT "glslc ${module}"
    VERBATIM)
  set(${out_list} ${${out_list}} ${module} PARENT_SCOPE)
endfunction()

# switchyard_vulkan_embed(<output .cpp> "<module names>")
function(switchyard_vulkan_embed output modules)
  set(spvs)
  foreach(m ${modules})
    list(APPEND spvs ${CMAKE_CURRENT_BINARY_DIR}/spirv/${m}.spv)
  endforeach()
  string(REPLACE ";" "," module_arg "${modules}")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DSPIRV_DIR=${CMAKE_CURRENT_BINARY_DIR}/spirv
            "-DMODULES=${module_arg}" -P ${SWITCHYARD_VULKAN_EMBED_SCRIPT}
    DEPENDS ${spvs} ${SWITCHYARD_VULKAN_EMBED_SCRIPT}
    COMMENT "Embedding ${CMAKE_CURRENT_BINARY_DIR}/spirv/*.spv"
    VERBATIM)
endfunction()

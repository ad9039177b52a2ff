# switchyard_add_plugin(<name> SOURCES ... [LIBRARIES ...] [NO_INSTALL])
# Builds libswitchyard-<name>.so as a MODULE next to the other plugins, against the ABI header only
# (switchyard::abi: plugin_abi.h and the header-only plugin_support/), and installs it into
# <prefix>/lib/switchyard (unless NO_INSTALL).
# -Wl,-z,defs turns an unresolved symbol into a link error here instead of a load error later.
#
# The same file serves the source tree and an installed switchyard: find_package(switchyard)
# includes it, so an out-of-tree backend (a copy of <prefix>/share/switchyard/template) calls
# switchyard_add_plugin exactly as the in-tree ones do; its plugin lands in <build>/lib/switchyard.
include(GNUInstallDirs)

function(switchyard_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target switchyard-${name})
  if(DEFINED SWITCHYARD_PLUGIN_OUTPUT_DIR)
    set(output_dir ${SWITCHYARD_PLUGIN_OUTPUT_DIR})
  else()
    set(output_dir ${CMAKE_BINARY_DIR}/lib/switchyard)
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "switchyard-${name}"
    LIBRARY_OUTPUT_DIRECTORY ${output_dir}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE switchyard::abi ${ARG_LIBRARIES})
  if(TARGET switchyard_warnings)  # the source tree's warning flags (-Werror)
    target_link_libraries(${target} PRIVATE switchyard_warnings)
  endif()
  # Not in the fuzz build: clang's sanitizer and libFuzzer runtimes live in the executable, so a
  # plugin instrumented by them has undefined symbols until it is loaded.
  if(NOT SWITCHYARD_FUZZ)
    target_link_options(${target} PRIVATE -Wl,-z,defs)
  endif()
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_PLUGINS ${name})
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/switchyard)
  endif()
endfunction()

# One clear configure-time line for a plugin that cannot be built here.
function(switchyard_skip_plugin name reason)
  message(STATUS "switchyard: plugin '${name}' skipped: ${reason}")
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_SKIPPED_PLUGINS "${name}: ${reason}")
endfunction()

# switchyard_add_plugin(<name> SOURCES ... [LIBRARIES ...] [NO_INSTALL])
# Builds libswitchyard-<name>.so as a MODULE next to the other plugins, against the ABI header only,
# and installs it into <prefix>/lib/switchyard (unless NO_INSTALL).
# -Wl,-z,defs turns an unresolved symbol into a link error here instead of a load error later.
function(switchyard_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target switchyard-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "switchyard-${name}"
    LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_PLUGIN_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE switchyard_abi switchyard_warnings ${ARG_LIBRARIES})
  target_link_options(${target} PRIVATE -Wl,-z,defs)
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

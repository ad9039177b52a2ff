# CTest "plugin_sdk": the plugin SDK of an installed switchyard. Installs the build tree into a
# fresh prefix, copies the installed template (share/switchyard/template) to a folder of its own,
# builds it there with its own CMakeLists against the prefix (find_package(switchyard) provides
# switchyard_add_plugin and switchyard::abi), and loads it with the installed CLI: through
# SWITCHYARD_PLUGIN_PATH (plugins, conformance) and through a YAML file's plugin_paths.
include(${CMAKE_CURRENT_LIST_DIR}/install_steps.cmake)

foreach(file share/switchyard/template/CMakeLists.txt share/switchyard/template/entry.cpp
    share/switchyard/docs/writing-a-backend.md)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: <prefix>/${file}")
  endif()
endforeach()

set(backend ${WORK_DIR}/mybackend)
file(COPY ${prefix}/share/switchyard/template/ DESTINATION ${backend})
configure_and_build(${backend} ${backend}/build)
set(plugin_dir ${backend}/build/lib/switchyard)
if(NOT EXISTS ${plugin_dir}/libswitchyard-template.so)
  message(FATAL_ERROR "the out-of-tree build made no ${plugin_dir}/libswitchyard-template.so")
endif()

set(cli ${prefix}/bin/switchyard)
run_step("plugins" ${CMAKE_COMMAND} -E env SWITCHYARD_PLUGIN_PATH=${plugin_dir} ${cli} plugins)
expect_output("plugins lists the out-of-tree template"
  "template  loaded  v0.1.0\n  path: ${plugin_dir}/libswitchyard-template.so\n")
# The template implements no op: every case is skipped, and a run where nothing passed fails.
run_step_exiting("conformance" 1 ${CMAKE_COMMAND} -E env SWITCHYARD_PLUGIN_PATH=${plugin_dir} ${cli}
  conformance --backend template --filter relu --no-gradients)
expect_output("conformance runs on the out-of-tree template"
  "  relu           f32         0       0        6  skipped: backend template does not support relu for f32\n.*0 passed, 0 failed, 31 skipped\nswitchyard conformance: no case passed on template:0 \\(every case was skipped\\)\n$")

# A YAML file that finds the plugin through plugin_paths (relative to the file) may name it in
# backends: the name is checked after plugin_paths are searched.
file(WRITE ${backend}/uses-template.yaml
  "plugin_paths: [build/lib/switchyard]\nbackends: [template, reference]\n")
run_step("devices with plugin_paths" ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  ${cli} devices --config ${backend}/uses-template.yaml)
expect_output("devices lists the template device found through plugin_paths" "  template:0  template")
file(REMOVE_RECURSE ${WORK_DIR})

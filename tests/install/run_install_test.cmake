# CTest "install": installs the build tree into a fresh prefix, builds tests/install against it
# with find_package(switchyard), and runs the example on the reference backend (always usable).
# Inputs: -DBUILD_DIR=<switchyard build tree> -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch>.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run_step("configure the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install
  -B ${WORK_DIR}/example -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/example)
# Only the installed plugins count: no SWITCHYARD_PLUGIN_PATH, no build tree.
run_step("run the example" ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${WORK_DIR}/example/embed_example)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "device: reference:0")
  message(FATAL_ERROR "the example did not run on the installed reference plugin:\n${step_output}")
endif()
# The CLI is installed too and finds the installed plugins and data sets.
run_step("installed CLI" ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${prefix}/bin/switchyard run
  ${prefix}/share/switchyard/configs/iris-mlp.yaml --set train.checkpoint=none
  --set train.epochs=2 --set train.progress=none)
file(REMOVE_RECURSE ${WORK_DIR})

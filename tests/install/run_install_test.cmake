# CTest "install": installs the build tree into a fresh prefix, builds the installed embedding
# example (share/switchyard/examples/embed) and tests/install against it with
# find_package(switchyard), and runs the example on the reference backend (always usable).
include(${CMAKE_CURRENT_LIST_DIR}/install_steps.cmake)

foreach(file include/switchyard/switchyard.hpp include/switchyard/plugin_abi.h
    include/switchyard/plugin_support/status.h lib/cmake/switchyard/SwitchyardPlugin.cmake
    share/switchyard/examples/embed/CMakeLists.txt share/switchyard/examples/embed/embed_example.cpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: <prefix>/${file}")
  endif()
endforeach()

configure_and_build(${prefix}/share/switchyard/examples/embed ${WORK_DIR}/example)
configure_and_build(${SOURCE_DIR}/tests/install ${WORK_DIR}/abi)
# Only the installed plugins count: no SWITCHYARD_PLUGIN_PATH, no build tree. The example sets no
# environment itself: the core applies SWITCHYARD_BACKENDS.
run_step("run the example" ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${WORK_DIR}/example/embed_example)
message(STATUS "${step_output}")
expect_output("the example on the installed reference plugin"
  "environment: SWITCHYARD_BACKENDS=reference\ndevice: reference:0")
# The CLI is installed too and finds the installed plugins and data sets.
run_step("installed CLI" ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${prefix}/bin/switchyard run
  ${prefix}/share/switchyard/configs/iris-mlp.yaml --set train.checkpoint=none
  --set train.epochs=2 --set train.progress=none)
# An installed example config keeps its model in the current folder, never in the prefix, and the
# installed predict command reads it back with the checkpoint alone.
file(MAKE_DIRECTORY ${WORK_DIR}/user)
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${prefix}/bin/switchyard run
  ${prefix}/share/switchyard/configs/iris-species.yaml --set train.epochs=2
  WORKING_DIRECTORY ${WORK_DIR}/user RESULT_VARIABLE rc OUTPUT_VARIABLE step_output
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed iris-species.yaml failed (${rc}):\n${step_output}\n${err}")
endif()
expect_output("the default checkpoint line" "checkpoint: runs/iris-species/model.ckpt \\(train.checkpoint is not set")
if(NOT EXISTS ${WORK_DIR}/user/runs/iris-species/model.ckpt OR EXISTS ${prefix}/share/switchyard/runs)
  message(FATAL_ERROR "the installed example did not keep its model in the current folder")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
  SWITCHYARD_BACKENDS=reference ${prefix}/bin/switchyard predict runs/iris-species/model.ckpt
  ${prefix}/share/switchyard/data/iris-new.csv
  WORKING_DIRECTORY ${WORK_DIR}/user RESULT_VARIABLE rc OUTPUT_VARIABLE step_output
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed predict failed (${rc}):\n${step_output}\n${err}")
endif()
expect_output("predictions on standard output" "^id,predicted,probability,p_setosa,p_versicolor,p_virginica\nnew-1,")
message(STATUS "installed example configs write into the current folder: ok")
file(REMOVE_RECURSE ${WORK_DIR})

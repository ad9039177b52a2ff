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
# The C header, and the Python package where it is built: it finds the installed core and plugins
# from its own folder and predicts with the model the installed CLI just trained.
if(NOT EXISTS ${prefix}/include/switchyard/switchyard.h)
  message(FATAL_ERROR "not installed: <prefix>/include/switchyard/switchyard.h")
endif()
file(GLOB python_package ${prefix}/lib*/python3*/dist-packages/switchyard/__init__.py)
if(python_package)
  get_filename_component(package_dir ${python_package} DIRECTORY)
  get_filename_component(site_dir ${package_dir} DIRECTORY)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=SWITCHYARD_PLUGIN_PATH
    SWITCHYARD_BACKENDS=reference PYTHONPATH=${site_dir} /usr/bin/python3 -c
    "import numpy, switchyard; m = switchyard.Predictor('runs/iris-species/model.ckpt'); p = m.predict(numpy.array([[5.1, 3.5, 1.4, 0.2]])); print(m.device, switchyard.__file__.startswith('${site_dir}'), p.shape)"
    WORKING_DIRECTORY ${WORK_DIR}/user RESULT_VARIABLE rc OUTPUT_VARIABLE step_output
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed Python package failed (${rc}):\n${step_output}\n${err}")
  endif()
  expect_output("the installed Python package" "^reference:0 True \\(1, 3\\)")
  message(STATUS "installed Python package: ok")
endif()
file(REMOVE_RECURSE ${WORK_DIR})

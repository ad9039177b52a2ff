# Shared by the CTest scripts that work against an installed switchyard (run_install_test.cmake,
# run_plugin_sdk_test.cmake). Inputs: -DBUILD_DIR=<switchyard build tree> -DSOURCE_DIR=<repository>
# -DWORK_DIR=<scratch>. Installs the build tree into ${WORK_DIR}/prefix.

# run_step(<what> <command...>): runs the command, fails the test with its output if it fails, and
# leaves its stdout in step_output.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# run_step_exiting(<what> <exit code> <command...>): like run_step for a command that must exit with
# that code; step_output holds its stdout and then its stderr.
function(run_step_exiting what expected)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected)
    message(FATAL_ERROR "${what}: exit ${rc}, expected ${expected}:\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok (exit ${rc})")
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

# expect_output(<what> <regex>): fails unless the last step's output matches.
function(expect_output what regex)
  if(NOT step_output MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected output matching '${regex}', got:\n${step_output}")
  endif()
endfunction()

# configure_and_build(<source> <binary>): a CMake project built against the installed prefix.
function(configure_and_build source binary)
  run_step("configure ${source}" ${CMAKE_COMMAND} -S ${source} -B ${binary} -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
  run_step("build ${source}" ${CMAKE_COMMAND} --build ${binary})
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

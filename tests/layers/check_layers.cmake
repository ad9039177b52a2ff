# Test 'layers': the layers of core/CMakeLists.txt are enforced by the compiler. A file compiled
# as part of the tensor layer compiles when it includes its own and lower layers' headers
# (layer_probe_downward), and fails, because the header is not found, when it includes the train
# layer's (layer_probe_upward).
#   cmake -DBUILD_DIR=<build> -P check_layers.cmake
function(build_probe target out_result out_output)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} ${result} PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

build_probe(layer_probe_downward result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "a tensor-layer file including tensor, autograd, runtime and support headers "
                      "did not compile:\n${output}")
endif()
build_probe(layer_probe_upward result output)
if(result EQUAL 0)
  message(FATAL_ERROR "a tensor-layer file including train/trainer_impl.h compiled: the layers "
                      "are not enforced")
endif()
if(NOT output MATCHES "train/trainer_impl\\.h: No such file or directory")
  message(FATAL_ERROR "the upward include failed, but not because the header is out of reach:\n"
                      "${output}")
endif()
message(STATUS "tensor -> runtime, support: compiles; tensor -> train: "
               "'train/trainer_impl.h: No such file or directory'")

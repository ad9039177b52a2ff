# Test 'architecture': the layer graph in docs/architecture.md is the one the build defines.
# The build writes its graph (core/CMakeLists.txt, switchyard_layer) to
# <build>/switchyard-layers.txt; the document holds the same lines, in a fenced block, between
# the markers
#   <!-- layers: begin (checked against core/CMakeLists.txt by tests/layers) -->
#   <!-- layers: end -->
#   cmake -DBUILD_DIR=<build> -DDOC=<docs/architecture.md> -P check_architecture.cmake
file(READ ${BUILD_DIR}/switchyard-layers.txt built)
file(READ ${DOC} doc)
string(REGEX MATCH "<!-- layers: begin[^\n]*-->\n```\n(.*)```\n<!-- layers: end -->" found "${doc}")
if(NOT found)
  message(FATAL_ERROR "${DOC} has no layer graph between '<!-- layers: begin ... -->' and "
                      "'<!-- layers: end -->'")
endif()
set(documented "${CMAKE_MATCH_1}")
if(NOT documented STREQUAL built)
  message(FATAL_ERROR "the layer graph in ${DOC} differs from the build's (core/CMakeLists.txt), "
                      "which is ${BUILD_DIR}/switchyard-layers.txt: copy that file's lines "
                      "between the markers")
endif()
message(STATUS "docs/architecture.md's layer graph is the build's")

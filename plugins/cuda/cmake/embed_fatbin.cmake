# cmake -DINPUT=<file.fatbin> -DOUTPUT=<file.cpp> -DNAME=<identifier> -P embed_fatbin.cmake
# Writes a C++ file that holds the fatbin as a 64-byte aligned byte array,
# sy_cuda::fatbin::<NAME>_data / <NAME>_size, for cuModuleLoadData.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
# 16 bytes per line: "0xab," each.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_fatbin.cmake; do not edit.\n"
  "#include <cstddef>\n\n"
  "namespace sy_cuda::fatbin {\n"
  "extern const unsigned char ${NAME}_data[];\n"
  "extern const std::size_t ${NAME}_size;\n"
  "alignas(64) const unsigned char ${NAME}_data[] = {\n${bytes}\n};\n"
  "const std::size_t ${NAME}_size = ${byte_count};\n"
  "}  // namespace sy_cuda::fatbin\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")

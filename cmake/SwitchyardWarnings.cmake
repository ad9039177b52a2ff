# Warnings are errors in our own code (never in third-party headers, which are SYSTEM includes).
add_library(switchyard_warnings INTERFACE)
target_compile_options(switchyard_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
  -Wdouble-promotion -Wformat=2 -Werror
  # (-Wnull-dereference is left out: at -O3 GCC 12 reports it inside libstdc++ containers.)
  # GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string at -O3 (GCC bug 105329).
  -Wno-restrict)

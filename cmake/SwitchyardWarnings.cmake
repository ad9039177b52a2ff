# Warnings are errors in our own code (never in third-party headers, which are SYSTEM includes).
# The sanitizer builds (ASan/UBSan, TSan) report warnings without failing: GCC 12's flow-based warnings
# (stringop-overflow, array-bounds) misfire on libstdc++ once ASan instruments it, and the plain
# build already enforces -Werror on the same code. So does the fuzz build (clang: other warnings).
add_library(switchyard_warnings INTERFACE)
if(SWITCHYARD_SANITIZE OR SWITCHYARD_TSAN OR SWITCHYARD_FUZZ)
  set(_switchyard_werror "")
else()
  set(_switchyard_werror -Werror)
endif()
target_compile_options(switchyard_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
  -Wdouble-promotion -Wformat=2 ${_switchyard_werror}
  # (-Wnull-dereference is left out: at -O3 GCC 12 reports it inside libstdc++ containers.)
  # GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string at -O3 (GCC bug 105329);
  # clang has no such warning and would warn about the option.
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)

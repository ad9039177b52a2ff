# Warnings are errors in our own code (never in third-party headers, which are SYSTEM includes).
add_library(switchyard_warnings INTERFACE)
target_compile_options(switchyard_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
  -Wnull-dereference -Wdouble-promotion -Wformat=2 -Werror)

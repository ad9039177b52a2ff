// The dependency of the missing-dependency fixture; built into a folder no search path names.
extern "C" __attribute__((visibility("default"))) int sy_fixture_dependency_value(void) {
  return 1;
}

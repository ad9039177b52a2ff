// switchyard: one command-line tool for running, inspecting and checking backends.
#include <cstring>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const switchyard::cli::Args&);
  const char* summary;
};

const Command kCommands[] = {
    {"run", switchyard::cli::run_command, "train, evaluate or predict as a YAML file says"},
    {"predict", switchyard::cli::predict_command,
     "predict the rows of a CSV file with a checkpoint alone"},
    {"report", switchyard::cli::report_command,
     "summarise a training run from the files beside its checkpoint"},
    {"config", switchyard::cli::config_command,
     "show every config key's value and where it came from"},
    {"devices", switchyard::cli::devices_command, "list every device of every plugin"},
    {"plugins", switchyard::cli::plugins_command, "list every plugin file found, with its state"},
    {"doctor", switchyard::cli::doctor_command, "probe each plugin in a child process and explain"},
    {"bench", switchyard::cli::bench_command, "measure matmul, single ops and training speed"},
    {"conformance", switchyard::cli::conformance_command,
     "check every op of a backend against the reference"},
};

void print_usage(std::ostream& out) {
  out << "usage: switchyard <command> [options]\n\ncommands:\n";
  for (const auto& command : kCommands) {
    out << "  " << command.name << std::string(13 - std::strlen(command.name), ' ')
        << command.summary << "\n";
  }
  out << "\n'switchyard <command> --help' shows a command's options.\n"
         "Environment: SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE, SWITCHYARD_FALLBACK,\n"
         "SWITCHYARD_PLUGIN_PATH override the YAML file.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "switchyard " << SWITCHYARD_VERSION << "\n";
    return 0;
  }
  for (const auto& command : kCommands) {
    if (first == command.name) return command.run(switchyard::cli::Args(argv + 2, argv + argc));
  }
  std::cerr << "switchyard: unknown command '" << first << "'\n\n";
  print_usage(std::cerr);
  return 2;
}

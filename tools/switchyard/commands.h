// The switchyard CLI's subcommands. Each parses its own options (Boost.Program_options) from the
// arguments after the command name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace switchyard::cli {

using Args = std::vector<std::string>;

int plugins_command(const Args& args);
int devices_command(const Args& args);
int doctor_command(const Args& args);
int conformance_command(const Args& args);
int run_command(const Args& args);      // cmd_run.cpp (training and inference)
int predict_command(const Args& args);  // cmd_predict.cpp (from a checkpoint alone)
int bench_command(const Args& args);    // cmd_bench.cpp
int config_command(const Args& args);   // cmd_config.cpp (effective values, --reference)
int report_command(const Args& args);   // cmd_report.cpp (a training run's summary)

}  // namespace switchyard::cli

// The communicator as the CLI shows it without MPI: one process, and under a launcher a library
// that cannot be loaded is an error that says why (never a silent single-process run).
#include <catch2/catch.hpp>

#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::contains;
using switchyard::testing::run_command;
using switchyard::testing::write_temp_file;

TEST_CASE("devices and doctor show the single-process communicator without a launcher",
          "[cli][distributed]") {
  for (const char* command : {" devices", " doctor"}) {
    const auto result = run_command(
        "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK -u PMI_RANK -u MPI_LOCALNRANKS " +
        cli() + command);
    INFO(result.output);
    CHECK(contains(result.output, "communicator: single (one process, no launcher), rank 0 of 1"));
  }
}

TEST_CASE("under a launcher, a communicator that cannot be loaded stops the run with the reason",
          "[cli][distributed]") {
  const std::string config = write_temp_file(
      "switchyard-communicator-cli.yaml",
      "backends: [reference]\ndata: {dataset: iris}\ntrain: {epochs: 1, checkpoint: none}\n");
  const auto result = run_command("OMPI_COMM_WORLD_SIZE=2 SWITCHYARD_COMMUNICATOR=absent " + cli() +
                                  " run " + config);
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(contains(result.output, "OMPI_COMM_WORLD_SIZE is set"));
  CHECK(contains(result.output, "libswitchyard_comm-absent.so is not in any plugin folder"));
  CHECK_FALSE(contains(result.output, "epoch 1"));
}

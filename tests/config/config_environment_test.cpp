// SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE and SWITCHYARD_FALLBACK override the file's settings.
#include <catch2/catch.hpp>

#include "config/config_test_support.h"

using switchyard::FallbackPolicy;
using switchyard::RuntimeSettings;
using switchyard::StatusCode;
using switchyard::testing::ScopedEnvironment;

namespace {

struct CleanEnvironment {
  ScopedEnvironment backends{"SWITCHYARD_BACKENDS", std::nullopt};
  ScopedEnvironment device{"SWITCHYARD_DEVICE", std::nullopt};
  ScopedEnvironment fallback{"SWITCHYARD_FALLBACK", std::nullopt};
  ScopedEnvironment ours{"SWITCHYARD_LOCAL_RANK", std::nullopt};
  ScopedEnvironment torchrun{"LOCAL_RANK", std::nullopt};
  ScopedEnvironment open_mpi{"OMPI_COMM_WORLD_LOCAL_RANK", std::nullopt};
  ScopedEnvironment mpich{"MPI_LOCALRANKID", std::nullopt};
  ScopedEnvironment slurm{"SLURM_LOCALID", std::nullopt};
};

}  // namespace

TEST_CASE("unset or empty variables change nothing") {
  CleanEnvironment clean;
  RuntimeSettings settings;
  REQUIRE(settings.apply_environment().ok());
  REQUIRE(settings.backends == RuntimeSettings().backends);
  REQUIRE_FALSE(settings.backends_from_config);
  REQUIRE(settings.device == "auto");
  REQUIRE(settings.fallback == FallbackPolicy::kWarn);

  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "");
  ScopedEnvironment device("SWITCHYARD_DEVICE", "");
  ScopedEnvironment fallback("SWITCHYARD_FALLBACK", "");
  REQUIRE(settings.apply_environment().ok());
  REQUIRE(settings.backends == RuntimeSettings().backends);
  REQUIRE_FALSE(settings.backends_from_config);
  REQUIRE(settings.device == "auto");
}

TEST_CASE("SWITCHYARD_BACKENDS takes comma or colon separated names") {
  CleanEnvironment clean;
  {
    ScopedEnvironment backends("SWITCHYARD_BACKENDS", "vulkan, reference");
    RuntimeSettings settings;
    REQUIRE(settings.apply_environment().ok());
    REQUIRE(settings.backends == std::vector<std::string>{"vulkan", "reference"});
    REQUIRE(settings.backends_from_config);
  }
  {
    ScopedEnvironment backends("SWITCHYARD_BACKENDS", "cuda:onednn");
    RuntimeSettings settings;
    REQUIRE(settings.apply_environment().ok());
    REQUIRE(settings.backends == std::vector<std::string>{"cuda", "onednn"});
  }
}

TEST_CASE("an unknown name in SWITCHYARD_BACKENDS names the variable and the known backends") {
  CleanEnvironment clean;
  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "cuda,vulcan");
  ScopedEnvironment device("SWITCHYARD_DEVICE", "cuda:1");
  RuntimeSettings settings;
  const switchyard::Status status = settings.apply_environment();
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE(status.message() ==
          "SWITCHYARD_BACKENDS='cuda,vulcan': unknown backend 'vulcan' (did you mean 'vulkan'?), "
          "expected one of: reference, onednn, vulkan, cuda, template");
  // A bad variable leaves every setting as it was.
  REQUIRE(settings.backends == RuntimeSettings().backends);
  REQUIRE(settings.device == "auto");
}

TEST_CASE("SWITCHYARD_DEVICE uses the syntax of device:") {
  CleanEnvironment clean;
  {
    ScopedEnvironment device("SWITCHYARD_DEVICE", "cuda:1");
    RuntimeSettings settings;
    REQUIRE(settings.apply_environment().ok());
    REQUIRE(settings.device == "cuda:1");
  }
  {
    ScopedEnvironment device("SWITCHYARD_DEVICE", "gpu");
    RuntimeSettings settings;
    const switchyard::Status status = settings.apply_environment();
    REQUIRE(status.code() == StatusCode::kInvalidArgument);
    REQUIRE(status.message() ==
            "SWITCHYARD_DEVICE='gpu': unknown backend 'gpu' in device 'gpu', expected auto, cpu, "
            "<backend> or <backend>:<index>, where <backend> is one of: reference, onednn, "
            "vulkan, cuda, template");
    REQUIRE(settings.device == "auto");
  }
}

TEST_CASE("SWITCHYARD_FALLBACK is warn, error or silent") {
  CleanEnvironment clean;
  {
    ScopedEnvironment fallback("SWITCHYARD_FALLBACK", "error");
    RuntimeSettings settings;
    REQUIRE(settings.apply_environment().ok());
    REQUIRE(settings.fallback == FallbackPolicy::kError);
  }
  {
    ScopedEnvironment fallback("SWITCHYARD_FALLBACK", "silnet");
    RuntimeSettings settings;
    const switchyard::Status status = settings.apply_environment();
    REQUIRE(status.message() ==
            "SWITCHYARD_FALLBACK='silnet': unknown value 'silnet' (did you mean 'silent'?), "
            "expected one of: warn, error, silent");
    REQUIRE(settings.fallback == FallbackPolicy::kWarn);
  }
}

TEST_CASE("the environment overrides what the file says") {
  CleanEnvironment clean;
  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "reference");
  auto config =
      switchyard::Config::load_string("backends: [cuda, vulkan]\ndevice: cuda:0\n", "cfg.yaml");
  REQUIRE(config.ok());
  REQUIRE(config->runtime().apply_environment().ok());
  REQUIRE(config->runtime().backends == std::vector<std::string>{"reference"});
  REQUIRE(config->runtime().device == "cuda:0");
}

TEST_CASE("device_policy local_rank reads the launcher's local rank variable") {
  CleanEnvironment clean;
  RuntimeSettings settings;
  settings.device_policy = switchyard::DevicePolicy::kLocalRank;
  REQUIRE(settings.apply_environment().ok());
  CHECK(settings.local_rank.rank == 0);  // a single process: rank 0, and the log says no variable
  CHECK(settings.local_rank.source.empty());
  {
    ScopedEnvironment slurm("SLURM_LOCALID", "2");
    ScopedEnvironment open_mpi("OMPI_COMM_WORLD_LOCAL_RANK", "3");
    REQUIRE(settings.apply_environment().ok());
    CHECK(settings.local_rank.rank == 3);  // Open MPI's variable is read before Slurm's
    CHECK(settings.local_rank.source == "OMPI_COMM_WORLD_LOCAL_RANK");
    ScopedEnvironment ours("SWITCHYARD_LOCAL_RANK", "5");
    REQUIRE(settings.apply_environment().ok());
    CHECK(settings.local_rank.rank == 5);  // ours overrides any launcher's
  }
  {
    ScopedEnvironment torchrun("LOCAL_RANK", "one");
    const switchyard::Status status = settings.apply_environment();
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message() ==
          "LOCAL_RANK='one': expected the process's local rank, an integer >= 0 "
          "(device_policy: local_rank)");
  }
  {
    // Without the policy a launcher's odd variable is none of our business.
    ScopedEnvironment torchrun("LOCAL_RANK", "one");
    RuntimeSettings first;
    REQUIRE(first.apply_environment().ok());
  }
}

// How this rank was launched and which device it takes: small pure
// functions over the environment, so every rule is unit-tested.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runner/common/status.h"

namespace opverify {

using GetEnv = std::function<const char*(const char*)>;

struct LaunchInfo {
  std::string launcher = "none";  // "mpirun", "srun" or "none"
  int expected_world_size = 0;    // what the launcher promised (0: unknown)
  int local_rank = 0;             // this rank's index on its node
  int local_size = 1;             // ranks on this rank's node (what the memory limit is shared by)
};

// mpirun (Open MPI: OMPI_COMM_WORLD_*; MPICH/Hydra: PMI_* with
// MPI_LOCALRANKID), also inside a Slurm step (mpirun's daemons run in one);
// else srun's direct launch (SLURM_STEP_NUM_TASKS, SLURM_LOCALID).
LaunchInfo DetectLaunch(const GetEnv& getenv);

// srun without PMIx/PMI-2 support starts N singletons, each "rank 0 of 1":
// refuse that (and any other disagreement) with a message saying how to fix it.
Status CheckWorldSize(const LaunchInfo& launch, int world_size);

// The visible-devices value this rank's executors get, or nullopt to leave
// the inherited one alone. `inherited`: the variable as this rank sees it
// (unset: nullopt). A single inherited device is kept (Slurm's cgroup
// binding already shows each task its own GPU as device 0); a list is
// indexed by the local rank; with none inherited, the local rank picks one
// of `device_count` devices; with no devices there is nothing to choose.
std::optional<std::string> DeviceForRank(int local_rank, const std::optional<std::string>& inherited,
                                         int device_count);

// Accelerators the kernel driver shows on this machine (NVIDIA: entries of
// /proc/driver/nvidia/gpus; Ascend: /dev/davinciN), and the variable that
// selects among them.
struct LocalDevices {
  int count = 0;
  std::string visible_variable;  // CUDA_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES / empty
};
LocalDevices DetectLocalDevices(const std::string& backend);

}  // namespace opverify

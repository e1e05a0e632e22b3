#include "runner/batch/launch.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace opverify {
namespace {

std::optional<int> IntVar(const GetEnv& getenv, const char* name) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0) return std::nullopt;
  return static_cast<int>(parsed);
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace

LaunchInfo DetectLaunch(const GetEnv& getenv) {
  LaunchInfo info;
  // mpirun's own numbers come first: on the other nodes of a Slurm
  // allocation mpirun starts its daemons with srun, one per node, so its
  // ranks also see that step's SLURM_STEP_NUM_TASKS (the node count) and
  // SLURM_LOCALID (0 for every rank of the node).
  if (auto size = IntVar(getenv, "OMPI_COMM_WORLD_SIZE")) {
    info.launcher = "mpirun";
    info.expected_world_size = *size;
    info.local_rank = IntVar(getenv, "OMPI_COMM_WORLD_LOCAL_RANK").value_or(0);
    info.local_size = IntVar(getenv, "OMPI_COMM_WORLD_LOCAL_SIZE").value_or(1);
  } else if (auto pmi_size = IntVar(getenv, "PMI_SIZE");
             pmi_size && (getenv("MPI_LOCALRANKID") != nullptr || !getenv("SLURM_JOB_ID"))) {
    // MPICH's Hydra (MPI_LOCALRANKID is its own); srun --mpi=pmi2 sets PMI_SIZE too.
    info.launcher = "mpirun";
    info.expected_world_size = *pmi_size;
    info.local_rank = IntVar(getenv, "MPI_LOCALRANKID").value_or(IntVar(getenv, "PMI_LOCAL_RANK").value_or(0));
    info.local_size =
        IntVar(getenv, "MPI_LOCALNRANKS").value_or(IntVar(getenv, "PMI_LOCAL_SIZE").value_or(1));
  } else if (getenv("SLURM_STEP_ID") != nullptr && IntVar(getenv, "SLURM_STEP_NUM_TASKS")) {
    // Started by srun directly: Slurm's numbers.
    info.launcher = "srun";
    info.expected_world_size = *IntVar(getenv, "SLURM_STEP_NUM_TASKS");
    info.local_rank = IntVar(getenv, "SLURM_LOCALID").value_or(0);
    // "2(x3),1": the first node's count; a node's own is not named in Slurm's variables.
    if (const char* per_node = getenv("SLURM_STEP_TASKS_PER_NODE")) {
      info.local_size = std::max(1, std::atoi(per_node));
    }
  }
  return info;
}

Status CheckWorldSize(const LaunchInfo& launch, int world_size) {
  if (launch.expected_world_size == 0 || launch.expected_world_size == world_size) return Status::Ok();
  std::string message = launch.launcher + " started " + std::to_string(launch.expected_world_size) +
                        " tasks but MPI sees a world of " + std::to_string(world_size) + ".";
  if (launch.launcher == "srun" && world_size == 1) {
    message += " srun started independent singletons: this MPI was not reached through PMI. Run "
               "`srun --mpi=pmix` (or --mpi=pmi2; `srun --mpi=list` shows what Slurm supports), or "
               "use mpirun inside the allocation.";
  }
  return Status::InvalidInput(message);
}

std::optional<std::string> DeviceForRank(int local_rank, const std::optional<std::string>& inherited,
                                         int device_count) {
  if (inherited) {
    const std::vector<std::string> devices = SplitList(*inherited);
    if (devices.size() <= 1) return std::nullopt;
    return devices[static_cast<std::size_t>(local_rank) % devices.size()];
  }
  if (device_count <= 0) return std::nullopt;
  return std::to_string(local_rank % device_count);
}

LocalDevices DetectLocalDevices(const std::string& backend) {
  LocalDevices devices;
  std::error_code ec;
  if (backend == "auto" || backend == "cuda") {
    for (const auto& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      (void)entry;
      ++devices.count;
    }
    if (devices.count > 0) {
      devices.visible_variable = "CUDA_VISIBLE_DEVICES";
      return devices;
    }
  }
  if (backend == "auto" || backend == "npu") {
    for (int i = 0; fs::exists("/dev/davinci" + std::to_string(i), ec); ++i) ++devices.count;
    // Asked for by name, the npu backend binds ranks through Ascend's variable even
    // where no /dev/davinciN is seen (inside a container that maps them elsewhere):
    // an inherited list is then still split among the ranks.
    if (devices.count > 0 || backend == "npu") devices.visible_variable = "ASCEND_RT_VISIBLE_DEVICES";
  }
  return devices;
}

}  // namespace opverify

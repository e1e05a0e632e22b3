// How a rank learns its launcher, world size and device: the environments
// mpirun and srun really give (recorded on Debian 12's Open MPI 4.1.4 and
// Slurm 22.05), including mpirun's ranks inside a Slurm step, and the
// device rules with and without Slurm's per-task GPU binding.
#include "runner/batch/launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace opverify {
namespace {

using ::testing::HasSubstr;

LaunchInfo Detect(const std::map<std::string, std::string>& env) {
  return DetectLaunch([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// What a batch script's own environment holds (sbatch -n 2), also seen by
// every process it starts.
const std::map<std::string, std::string> kBatchStep = {
    {"SLURM_JOB_ID", "4"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}, {"SLURM_PROCID", "0"}};

std::map<std::string, std::string> InBatchStep(const std::map<std::string, std::string>& more) {
  std::map<std::string, std::string> env = kBatchStep;
  for (const auto& [key, value] : more) env[key] = value;
  return env;
}

struct LaunchCase {
  const char* what;
  std::map<std::string, std::string> env;
  std::string launcher;
  int world_size;
  int local_rank;
};

TEST(DetectLaunch, EachLauncherGivesItsWorldAndLocalRank) {
  const LaunchCase cases[] = {
      {"run directly: one rank without MPI", {}, "none", 0, 0},
      {"the batch script itself, no launcher", kBatchStep, "none", 0, 0},
      {"mpirun",
       {{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}},
       "mpirun",
       4,
       3},
      {"srun --mpi=pmix (direct launch)",
       InBatchStep({{"SLURM_STEP_ID", "0"},
                    {"SLURM_STEP_NUM_TASKS", "2"},
                    {"SLURM_LOCALID", "1"},
                    {"PMIX_RANK", "1"}}),
       "srun", 2, 1},
      // On the allocation's other nodes mpirun's daemons run as one srun
      // step, one task per node: its ranks there inherit SLURM_STEP_NUM_TASKS
      // (the node count) and SLURM_LOCALID 0. Taking those would refuse the
      // world ("1 task, world of 16") and put every rank of a node on one device.
      {"mpirun inside a Slurm step",
       InBatchStep({{"SLURM_STEP_ID", "0"},
                    {"SLURM_STEP_NUM_TASKS", "1"},
                    {"OMPI_COMM_WORLD_SIZE", "16"},
                    {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}}),
       "mpirun", 16, 5},
      {"srun --mpi=pmi2, which sets PMI_SIZE too",
       InBatchStep({{"SLURM_STEP_ID", "1"},
                    {"SLURM_STEP_NUM_TASKS", "8"},
                    {"SLURM_LOCALID", "2"},
                    {"PMI_SIZE", "8"},
                    {"PMI_RANK", "2"}}),
       "srun", 8, 2},
      {"MPICH's Hydra inside a Slurm step",
       InBatchStep({{"SLURM_STEP_ID", "1"},
                    {"SLURM_STEP_NUM_TASKS", "4"},
                    {"PMI_SIZE", "32"},
                    {"MPI_LOCALRANKID", "6"}}),
       "mpirun", 32, 6},
  };
  for (const LaunchCase& c : cases) {
    const LaunchInfo info = Detect(c.env);
    EXPECT_EQ(info.launcher, c.launcher) << c.what;
    EXPECT_EQ(info.expected_world_size, c.world_size) << c.what;
    EXPECT_EQ(info.local_rank, c.local_rank) << c.what;
  }
}

TEST(CheckWorldSize, SrunSingletonsAreRefusedWithTheFix) {
  LaunchInfo srun;
  srun.launcher = "srun";
  srun.expected_world_size = 2;
  const Status status = CheckWorldSize(srun, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("--mpi=pmix"));
  EXPECT_TRUE(CheckWorldSize(srun, 2).ok());
  EXPECT_TRUE(CheckWorldSize(LaunchInfo{}, 1).ok());
}

TEST(DeviceForRank, OneDeviceSlurmAlreadyChoseIsKept) {
  // --gpus-per-task=1 binds each task to its GPU: "3" without cgroup device
  // constraints, "0" with them (the task sees only its own GPU). Either
  // way the value stands; indexing by the local rank would pick a device
  // the task cannot see.
  EXPECT_EQ(DeviceForRank(3, std::string("3"), 8), std::nullopt);
  EXPECT_EQ(DeviceForRank(3, std::string("0"), 8), std::nullopt);
}

TEST(DeviceForRank, AListIsIndexedByTheLocalRank) {
  // mpirun in the allocation: every rank inherits the node's GPUs.
  EXPECT_EQ(DeviceForRank(2, std::string("4,5,6,7"), 8), "6");
  EXPECT_EQ(DeviceForRank(5, std::string("0,1,2,3"), 4), "1");  // more ranks than devices: wrap
}

TEST(DeviceForRank, WithNothingInheritedTheLocalRankPicksADevice) {
  EXPECT_EQ(DeviceForRank(2, std::nullopt, 8), "2");
  EXPECT_EQ(DeviceForRank(9, std::nullopt, 8), "1");
  EXPECT_EQ(DeviceForRank(0, std::nullopt, 0), std::nullopt);  // no accelerator: nothing to choose
}

TEST(DetectLocalDevices, TheNpuBackendAskedForByNameBindsThroughAscendsVariable) {
  // Whether or not this machine shows /dev/davinciN, --backend npu selects
  // devices with ASCEND_RT_VISIBLE_DEVICES, so an inherited list is split.
  EXPECT_EQ(DetectLocalDevices("npu").visible_variable, "ASCEND_RT_VISIBLE_DEVICES");
  EXPECT_TRUE(DetectLocalDevices("cpu").visible_variable.empty());
}

}  // namespace
}  // namespace opverify

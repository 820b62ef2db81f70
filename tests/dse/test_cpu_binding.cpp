// The binding checks of dse run (dse/driver/cpu_binding.hpp, issue 59 item 0): the threads a rank
// runs for --threads, and the warnings for the bindings seen with OpenMPI 4 (one core per rank for
// 1-2 ranks: `mpirun -np 1 --report-bindings` says "bound to socket 0[core 0[hwt 0]]").
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dse/driver/cpu_binding.hpp"

namespace dse {
namespace {

TEST(CpuBinding, ThreadsZeroMeansTheRanksCores) {
  EXPECT_EQ(threads_for(0, 6), 6);
  EXPECT_EQ(threads_for(3, 6), 3);
  EXPECT_EQ(threads_for(8, 1), 8);  // asked for: run, with a warning
}

// One rank bound to one core of a 2-core node, given --threads 8: the threads share that core.
TEST(CpuBinding, MoreThreadsThanTheBindingsCoresWarns) {
  const std::vector<RankCores> ranks = {{1, 2, 1, 8}};
  const auto w = binding_warnings(ranks, 8);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("--threads 8 asks for more threads than the 1 core(s) that rank 0 may run on", 0), 0u) << w[0];
  EXPECT_NE(w[0].find("--map-by ppr:1:node:PE=N --bind-to core"), std::string::npos);
}

// --threads 0 on one rank bound to 1 of 2 cores: one thread, a core idle.
TEST(CpuBinding, ThreadsZeroOnANarrowBindingWarns) {
  const std::vector<RankCores> ranks = {{1, 2, 1, 1}};
  const auto w = binding_warnings(ranks, 0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("rank 0 may run on 1 of the node's 2 cores (1 rank(s) on the node, 2 cores each), so "
                       "--threads 0 runs 1 thread(s) per rank and leaves cores idle",
                       0),
            0u)
      << w[0];
}

// Two ranks, one core each, on a 2-core node: each has its share; nothing to say.
TEST(CpuBinding, EachRankOnItsShareIsQuiet) {
  const std::vector<RankCores> ranks = {{1, 2, 2, 1}, {1, 2, 2, 1}};
  EXPECT_TRUE(binding_warnings(ranks, 0).empty());
  EXPECT_TRUE(binding_warnings(ranks, 1).empty());
  EXPECT_EQ(cores_per_rank_text({1, 1}), "1 (ranks 0-1)");
  EXPECT_EQ(cores_per_rank_text({2, 1}), "2 (rank 0), 1 (rank 1)");
}

// single_node_pml: the environments that OpenMPI 4.1's mpirun, Slurm's srun and a lone start give a
// rank (mpirun sets OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE, and OMPI_MCA_pml for --mca pml;
// srun --mpi=pmix sets PMIX_RANK and SLURM_STEP_NUM_NODES).
std::string pml_for(const std::map<std::string, std::string>& vars) {
  return single_node_pml([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(CpuBinding, OneNodeJobsTakeTheSharedMemoryPml) {
  EXPECT_EQ(pml_for({}), "ob1");  // started alone
  EXPECT_EQ(pml_for({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), "ob1");
  EXPECT_EQ(pml_for({{"PMIX_RANK", "0"}, {"SLURM_STEP_NUM_NODES", "1"}}), "ob1");
}

TEST(CpuBinding, JobsOverNodesOrWithAChosenPmlAreLeftAlone) {
  EXPECT_EQ(pml_for({{"OMPI_COMM_WORLD_SIZE", "64"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), "");
  EXPECT_EQ(pml_for({{"OMPI_COMM_WORLD_SIZE", "2"}}), "");  // no local size: not known to be one node
  EXPECT_EQ(pml_for({{"PMIX_RANK", "0"}, {"SLURM_STEP_NUM_NODES", "4"}}), "");
  EXPECT_EQ(pml_for({{"PMI_RANK", "0"}}), "");
  EXPECT_EQ(pml_for({{"OMPI_MCA_pml", "ucx"}}), "");
  EXPECT_EQ(pml_for({{"OMPI_MCA_pml", "cm"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), "");
}

}  // namespace
}  // namespace dse

// The cores each rank of `dse run` may run on (issue 59 item 0). mpirun binds ranks by itself:
// OpenMPI 4 binds each rank to one core when it starts at most two ranks and to a socket above
// that, so `mpirun -np 1 dse run ... --threads 2` ran both TBB threads on one core (27.44 s with
// --threads 1, 27.48 s with --threads 2) and nothing said so. Each rank reads its CPU set
// (sched_getaffinity); --threads 0 sizes the rank's TBB arena to it; rank 0 warns when --threads
// asks for more threads than a rank's binding allows, or when --threads 0 meets a binding that
// leaves a rank fewer cores than its share of the node; the run summary prints each rank's cores.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dse {

class Context;

// The CPUs this process may run on (sched_getaffinity), at least 1.
int allowed_cores();
// The CPUs online on this node, at least 1.
int node_cores();

// What one rank found.
struct RankCores {
  int cores = 1;       // its CPU set
  int node_cores = 1;  // CPUs online on its node
  int node_ranks = 1;  // ranks on its node
  int threads = 1;     // the TBB threads it runs
};

// The threads of a rank given --threads (0: one per core of its CPU set).
int threads_for(int requested, int cores);

// The problems of a binding, one line each ("" when none): ranks[r] is rank r's view, requested
// the --threads value (0: all of a rank's cores).
std::vector<std::string> binding_warnings(const std::vector<RankCores>& ranks, int requested);

// "1 (ranks 0-1)", "2 (rank 0), 1 (rank 1)": each run of equal values with its ranks.
std::string cores_per_rank_text(const std::vector<int>& cores);

// OpenMPI's point-to-point layer (PML) for a job whose ranks all run on this node, read from the
// environment before MPI_Init (`env` is getenv or a test's table). OpenMPI tries its PMLs in turn:
// Debian's 4.1 build first asks the cm PML, whose PSM and PSM2 transports (Omni-Path, InfiniPath)
// take 0.1 s each to find no adapter, then picks ob1 -- 0.22 s of every run's start on a machine
// without those adapters (a 16-point run: 0.40 -> 0.21 s under mpirun, 0.46 -> 0.25 s alone). Ranks
// on one node talk through shared memory whatever the fabric, and ob1 (its shared-memory transport)
// is that path, so "ob1" when: no PML is chosen (OMPI_MCA_pml, which `mpirun --mca pml X` also sets)
// and the job is one process started alone, an mpirun job with OMPI_COMM_WORLD_SIZE equal to
// OMPI_COMM_WORLD_LOCAL_SIZE, or a job of another launcher (PMIX_RANK or PMI_RANK set) over one
// node (SLURM_STEP_NUM_NODES 1). "" otherwise: a job over nodes keeps OpenMPI's own choice.
std::string single_node_pml(const std::function<const char*(const char*)>& env);

// Every rank's view, on every rank (collective; agreed first).
std::vector<RankCores> gather_rank_cores(Context& ctx, int requested);

}  // namespace dse

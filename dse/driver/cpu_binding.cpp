#include "dse/driver/cpu_binding.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <thread>

#include "dse/driver/agree.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/driver_archive.hpp"

namespace dse {

namespace {

// "0-3, 7, 9-10": ascending rank numbers as runs.
std::string rank_runs(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string ranks_text(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_runs(ranks);
}

constexpr const char* kHowToBind =
    "start one rank per node or socket with its cores: mpirun --map-by ppr:1:node:PE=N --bind-to core (N cores "
    "per rank) or mpirun --bind-to none; srun --cpus-per-task N --cpu-bind=cores (docs/cluster.md)";

}  // namespace

int allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int node_cores() { return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))); }

std::string single_node_pml(const std::function<const char*(const char*)>& env) {
  const auto set = [&](const char* name) {
    const char* v = env(name);
    return v != nullptr && *v != '\0';
  };
  const auto equal = [&](const char* name, std::string_view value) { return set(name) && env(name) == value; };
  if (set("OMPI_MCA_pml")) return "";
  bool one_node = false;
  if (set("OMPI_COMM_WORLD_SIZE")) {
    one_node = set("OMPI_COMM_WORLD_LOCAL_SIZE") && equal("OMPI_COMM_WORLD_SIZE", env("OMPI_COMM_WORLD_LOCAL_SIZE"));
  } else if (set("PMIX_RANK") || set("PMI_RANK")) {
    one_node = equal("SLURM_STEP_NUM_NODES", "1");
  } else {
    one_node = true;  // started alone: an MPI singleton
  }
  return one_node ? "ob1" : "";
}

int threads_for(int requested, int cores) { return requested > 0 ? requested : std::max(1, cores); }

std::vector<std::string> binding_warnings(const std::vector<RankCores>& ranks, int requested) {
  std::vector<std::string> out;
  std::vector<int> crowded;  // more threads than cores
  std::vector<int> confined;  // --threads 0 on fewer cores than the rank's share of its node
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankCores& c = ranks[r];
    if (c.threads > c.cores) crowded.push_back(static_cast<int>(r));
    const int share = c.node_cores / std::max(1, c.node_ranks);
    if (requested == 0 && c.cores < share) confined.push_back(static_cast<int>(r));
  }
  if (!crowded.empty()) {
    const RankCores& c = ranks[static_cast<std::size_t>(crowded.front())];
    out.push_back("--threads " + std::to_string(c.threads) + " asks for more threads than the " +
                  std::to_string(c.cores) + " core(s) that " + ranks_text(crowded) +
                  (crowded.size() > 1 ? " each" : "") +
                  " may run on (the rank's CPU binding, sched_getaffinity): the threads share those cores; " +
                  kHowToBind);
  }
  if (!confined.empty()) {
    const RankCores& c = ranks[static_cast<std::size_t>(confined.front())];
    out.push_back(ranks_text(confined) + (confined.size() > 1 ? " each" : "") + " may run on " +
                  std::to_string(c.cores) + " of the node's " + std::to_string(c.node_cores) + " cores (" +
                  std::to_string(c.node_ranks) + " rank(s) on the node, " +
                  std::to_string(c.node_cores / std::max(1, c.node_ranks)) +
                  " cores each), so --threads 0 runs " + std::to_string(c.cores) +
                  " thread(s) per rank and leaves cores idle; " + kHowToBind);
  }
  return out;
}

std::string cores_per_rank_text(const std::vector<int>& cores) {
  std::string out;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[i]) ++j;
    std::vector<int> ranks;
    for (std::size_t r = i; r <= j; ++r) ranks.push_back(static_cast<int>(r));
    if (!out.empty()) out += ", ";
    out += std::to_string(cores[i]) + " (" + ranks_text(ranks) + ")";
    i = j + 1;
  }
  return out;
}

std::vector<RankCores> gather_rank_cores(Context& ctx, int requested) {
  using driver_detail::get;
  using driver_detail::put;
  Bytes mine;
  agreed(ctx, [&] {
    const int cores = allowed_cores();
    put(mine, static_cast<std::int32_t>(ctx.rank()));
    put(mine, static_cast<std::int32_t>(cores));
    put(mine, static_cast<std::int32_t>(node_cores()));
    put(mine, static_cast<std::int32_t>(ctx.node_ranks()));
    put(mine, static_cast<std::int32_t>(threads_for(requested, cores)));
  });
  const Bytes all = driver_detail::all_gather_bytes(ctx, std::move(mine));
  std::vector<RankCores> out(static_cast<std::size_t>(ctx.size()));
  agreed(ctx, [&] {
    for (std::size_t off = 0; off < all.size();) {
      const auto r = static_cast<std::size_t>(get<std::int32_t>(all, off));
      RankCores& c = out.at(r);
      c.cores = get<std::int32_t>(all, off);
      c.node_cores = get<std::int32_t>(all, off);
      c.node_ranks = get<std::int32_t>(all, off);
      c.threads = get<std::int32_t>(all, off);
    }
  });
  return out;
}

}  // namespace dse

// Speed of the systolic-array models on a 50-layer SCALE-Sim topology: the
// four transformer GEMMs of data/oracles/scalesim/transformer_gemms.csv
// repeated to 50 layers, on the 256x256 TPU-like config s10_tpu_256x256_ws.cfg
// and on the 32x32 config s_gemm_32x32_ws.cfg.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "costmodel/systolic/systolic.hpp"
#include "dse/io/scalesim_io.hpp"

namespace {

const std::string kDir = std::string(DSE_ORACLES_DIR) + "/scalesim";

std::vector<dse::io::ScalesimLayer> fifty_layers() {
  const auto base = dse::io::read_scalesim_topology(kDir + "/transformer_gemms.csv", dse::io::TopologyKind::gemm);
  std::vector<dse::io::ScalesimLayer> out;
  for (std::size_t i = 0; out.size() < 50; ++i) out.push_back(base[i % base.size()]);
  return out;
}

enum class Model { fast, reference, native };

template <Model M>
void run(benchmark::State& state, const char* cfg_name) {
  const auto cfg = dse::io::read_scalesim_config(kDir + "/" + cfg_name);
  const auto layers = fifty_layers();
  for (auto _ : state) {
    std::int64_t cycles = 0;
    for (const auto& l : layers) {
      const auto r = M == Model::native      ? dse::costmodel::estimate_systolic(cfg.array, l.conv)
                     : M == Model::reference ? dse::costmodel::simulate_scalesim_reference(cfg.array, l.conv)
                                             : dse::costmodel::simulate_scalesim(cfg.array, l.conv);
      cycles += r.total_cycles;
    }
    benchmark::DoNotOptimize(cycles);
  }
  state.counters["layers"] = 50;
}

void BM_Scalesim50_Tpu256(benchmark::State& s) { run<Model::fast>(s, "s10_tpu_256x256_ws.cfg"); }
void BM_Scalesim50_32x32(benchmark::State& s) { run<Model::fast>(s, "s_gemm_32x32_ws.cfg"); }
void BM_Scalesim50_32x32_User8k(benchmark::State& s) { run<Model::fast>(s, "s8_gemm_32x32_ws_user_bw4_8k.cfg"); }
void BM_Reference50_Tpu256(benchmark::State& s) { run<Model::reference>(s, "s10_tpu_256x256_ws.cfg"); }
void BM_Reference50_32x32(benchmark::State& s) { run<Model::reference>(s, "s_gemm_32x32_ws.cfg"); }
void BM_Native50_Tpu256(benchmark::State& s) { run<Model::native>(s, "s10_tpu_256x256_ws.cfg"); }
void BM_Native50_32x32(benchmark::State& s) { run<Model::native>(s, "s_gemm_32x32_ws.cfg"); }

// A 50-layer convolution topology: the first 50 layers of SCALE-Sim v2's own
// ResNet-50 topology (scalesim-project/scale-sim-v2 topologies/conv_nets/
// Resnet50.csv, layer shapes unchanged; copied to bench/resnet50_scalesim.csv).
// Its 3x3 / 7x7 layers overlap (stride < filter) and its strided 1x1 layers
// read past the ifmap edge; on the TPU-like config (6 MiB ifmap SRAM) the
// ifmap stays in SCALE-Sim's first buffer window, so every layer takes the
// fold-level path (exact, see scalesim_fast_path_applies(array, layer)).
void BM_ScalesimResnet50_50Layers_Tpu256(benchmark::State& state) {
  const auto cfg = dse::io::read_scalesim_config(kDir + "/s10_tpu_256x256_ws.cfg");
  const auto layers = dse::io::read_scalesim_topology(std::string(DSE_BENCH_DIR) + "/resnet50_scalesim.csv",
                                                      dse::io::TopologyKind::conv);
  std::int64_t fold_level = 0;
  for (const auto& l : layers) fold_level += dse::costmodel::scalesim_fast_path_applies(cfg.array, l.conv) ? 1 : 0;
  for (auto _ : state) {
    std::int64_t cycles = 0;
    for (const auto& l : layers) cycles += dse::costmodel::simulate_scalesim(cfg.array, l.conv).total_cycles;
    benchmark::DoNotOptimize(cycles);
  }
  state.counters["layers"] = static_cast<double>(layers.size());
  state.counters["fold_level_layers"] = static_cast<double>(fold_level);
}

// The same 50 layers replayed row by row (what the fold-level path replaces).
void BM_ReferenceResnet50_50Layers_Tpu256(benchmark::State& state) {
  const auto cfg = dse::io::read_scalesim_config(kDir + "/s10_tpu_256x256_ws.cfg");
  const auto layers = dse::io::read_scalesim_topology(std::string(DSE_BENCH_DIR) + "/resnet50_scalesim.csv",
                                                      dse::io::TopologyKind::conv);
  for (auto _ : state) {
    std::int64_t cycles = 0;
    for (const auto& l : layers) cycles += dse::costmodel::simulate_scalesim_reference(cfg.array, l.conv).total_cycles;
    benchmark::DoNotOptimize(cycles);
  }
}

// AlexNet conv1 (11x11 windows, stride 4: overlapping) on the 64 KiB config:
// its 150528 ifmap words pass SCALE-Sim's first CALC window (32750
// insertions), so it is replayed row by row.
void BM_Scalesim_AlexnetConv1_32x32(benchmark::State& state) {
  const auto cfg = dse::io::read_scalesim_config(kDir + "/s1_alexnet_conv1_32x32_ws.cfg");
  const auto layers = dse::io::read_scalesim_topology(kDir + "/alexnet_conv1.csv", dse::io::TopologyKind::conv);
  for (auto _ : state) benchmark::DoNotOptimize(dse::costmodel::simulate_scalesim(cfg.array, layers[0].conv));
}

}  // namespace

BENCHMARK(BM_Scalesim50_Tpu256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scalesim50_32x32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scalesim50_32x32_User8k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reference50_Tpu256)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Reference50_32x32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Native50_Tpu256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Native50_32x32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScalesimResnet50_50Layers_Tpu256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceResnet50_50Layers_Tpu256)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Scalesim_AlexnetConv1_32x32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();

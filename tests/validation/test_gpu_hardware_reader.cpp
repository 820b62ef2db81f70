// The GPU-class hardware reader (dse/io/gpu_hardware_reader.hpp) on the shipped presets: the keys
// the timing model's validation relies on (pipeline stages, per-precision sustained fractions,
// the warp-MMA fraction, shared-memory bandwidth, tile k by precision, a library's selection
// table), their checks, and refusals with the file, line and key.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "costmodel/gpu/gpu.hpp"
#include "dse/error.hpp"
#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/yaml_reader.hpp"
#include "tests/scratch.hpp"

namespace {

using dse::costmodel::GpuHardware;

GpuHardware load(const std::string& file) {
  return dse::io::load_gpu_hardware(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/" + file);
}

// The hardware text `text` (read as `file`) is refused with a ConfigError whose message holds `want`.
void expect_refused(const std::string& text, const std::string& file, const std::string& want) {
  try {
    (void)dse::io::parse_gpu_hardware(text, file);
    ADD_FAILURE() << "accepted: " << want;
  } catch (const dse::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

// gemm_stages: with gemm_pipeline_stages_max, as many k-steps of both operand tiles as the shared
// memory holds after the carve-out, as cuBLASLt's sm90 kernels run them. By hand on the H200
// preset (233,472 B of shared memory, 16,852 B carved out, 4 to 16 stages) against the stage
// counts in the kernels' names (h200/attention/ and h200/kernels/h200_kernels.csv; 31 of the 34
// distinct kernels of run 11 follow the rule, three BF16 ones with a 32.9-49.4 KB epilogue run
// one stage fewer): FP8 64 x 64 x 128, 16,384 B a stage: 13
// (nvjet_sm90_qqtst_64x64_128x13); FP8 96 x 128 x 128, 28,672 B: 7 (..._96x128_128x7); BF16
// 64 x 8 x 64, 9,216 B: 23 fit, 16 at most (..._64x8_64x16); BF16 256 x 128 x 64, 49,152 B: 4
// (..._256x128_64x4). Without the key (A100) every tile runs gemm_pipeline_stages (3); a tile
// whose gemm_pipeline_stages do not fit gives 0.
TEST(GpuHardwareReader, GemmStagesFillSharedMemory) {
  const GpuHardware h200 = load("h200.yaml");
  EXPECT_EQ(h200.gemm_pipeline_stages_max, 16);
  EXPECT_DOUBLE_EQ(h200.gemm_stage_carveout_bytes, 16852.0);
  using dse::costmodel::GemmTile;
  using dse::costmodel::Precision;
  EXPECT_EQ(dse::costmodel::gemm_stages(h200, GemmTile{64, 64, 128}, Precision::fp8), 13);
  EXPECT_EQ(dse::costmodel::gemm_stages(h200, GemmTile{96, 128, 128}, Precision::fp8), 7);
  EXPECT_EQ(dse::costmodel::gemm_stages(h200, GemmTile{64, 8, 64}, Precision::bf16), 16);
  EXPECT_EQ(dse::costmodel::gemm_stages(h200, GemmTile{256, 128, 64}, Precision::bf16), 4);
  EXPECT_EQ(dse::costmodel::gemm_stages(h200, GemmTile{512, 512, 128}, Precision::bf16), 0);
  const GpuHardware a100 = load("a100-sxm4-80gb.yaml");
  EXPECT_EQ(a100.gemm_pipeline_stages_max, 0);
  EXPECT_EQ(dse::costmodel::gemm_stages(a100, GemmTile{64, 64, 64}, Precision::bf16), 3);
  const GpuHardware h100 = load("h100-sxm5.yaml");
  EXPECT_EQ(h100.gemm_pipeline_stages_max, 16);
  EXPECT_DOUBLE_EQ(h100.gemm_stage_carveout_bytes, 16852.0);
  // The keys' checks: a maximum below gemm_pipeline_stages, a carve-out without a maximum.
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/";
  const std::string base = dse::io::read_text_file(dir + "a100-sxm4-80gb.yaml", "(file)");
  const std::string key = "\n  gemm_pipeline_stages: 3";
  const auto at = base.find(key);
  ASSERT_NE(at, std::string::npos);
  const auto with = [&](const std::string& extra) {
    std::string y = base;
    y.insert(base.find('\n', at + 1), extra);
    return y;
  };
  expect_refused(with("\n  gemm_pipeline_stages_max: 2\n  gemm_stage_carveout_bytes: 0"), "a100.yaml",
                 "gemm_pipeline_stages_max");
  expect_refused(with("\n  gemm_stage_carveout_bytes: 100"), "a100.yaml", "gemm_stage_carveout_bytes");
  EXPECT_EQ(
      dse::io::parse_gpu_hardware(with("\n  gemm_pipeline_stages_max: 8\n  gemm_stage_carveout_bytes: 0"), "a100.yaml")
          .gemm_pipeline_stages_max,
      8);
}

// A gemm_tiles entry [M, N, K, CORES] is a tile CORES cores compute together (Blackwell's 2-SM
// MMA): the B200 file with CUTLASS's 256 x 256 x 64 pair tile put first reads it with cores = 2,
// keeps cores = 1 on its one-SM tiles, and stages half the pair tile's k-step operands per SM:
// (256 + 256) x 64 x 2 B / 2 = 32,768 B a stage, so its 4 stages fit the 233,472 B. An entry of
// more cores than the chip has, or of 2 or 5 integers, is refused with its place. The Gaudi
// presets stream their MMEs' tiles (gemm_waves_pipelined); the B200 does not.
TEST(GpuHardwareReader, TilesOfSeveralCoresAndStreamedWaves) {
  using dse::costmodel::GemmTile;
  const std::string path = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/b200.yaml";
  const std::string text = dse::io::read_text_file(path, "(file)");
  const std::string first = "\n    - [256, 128, 64]\n";
  const auto at = text.find(first);
  ASSERT_NE(at, std::string::npos);
  const auto with = [&](const std::string& e) { return std::string(text).insert(at + 1, "    " + e + "\n"); };
  const GpuHardware b200 = dse::io::parse_gpu_hardware(with("- [256, 256, 64, 2]"), "b200.yaml");
  ASSERT_GE(b200.gemm_tiles.size(), 2U);
  EXPECT_EQ(b200.gemm_tiles[0], (GemmTile{256, 256, 64, 1, 2}));
  EXPECT_EQ(b200.gemm_tiles[1], (GemmTile{256, 128, 64}));
  EXPECT_EQ(dse::costmodel::gemm_stages(b200, b200.gemm_tiles[0], dse::costmodel::Precision::bf16), 4);
  EXPECT_FALSE(b200.gemm_waves_pipelined);
  EXPECT_TRUE(load("gaudi2.yaml").gemm_waves_pipelined);
  EXPECT_TRUE(load("gaudi3.yaml").gemm_waves_pipelined);
  expect_refused(with("- [256, 256, 64, 149]"), "b200.yaml", "expected at most the chip's 148 cores");
  expect_refused(with("- [256, 256]"), "b200.yaml", "expected [M, N, K] or [M, N, K, CORES]");
  expect_refused(with("- [256, 256, 64, 2, 1]"), "b200.yaml", "gemm_tiles");
}

// The preset reader refuses an unknown key with file:line and the key path.
TEST(GpuHardwareReader, UnknownKeyIsRefusedWithPlace) {
  const std::string path = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/a100-sxm4-80gb.yaml";
  std::string text = dse::io::read_text_file(path, "(file)");
  const std::string key = "  hbm_latency_s:";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, key.size(), "  hbm_latncy_s:");
  try {
    (void)dse::io::parse_gpu_hardware(text, "a100.yaml");
    FAIL() << "a misspelt key was accepted";
  } catch (const dse::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a100.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find("memory.hbm_latncy_s"), std::string::npos) << what;
    EXPECT_NE(what.find("hbm_latency_s"), std::string::npos) << what;  // did-you-mean
  }
}

// sustained_fraction_per_precision: a share in (0, 1] for a precision the matrix
// engine lists; it replaces sustained_fraction for that precision only.
TEST(GpuHardwareReader, PerPrecisionSustainedFraction) {
  const std::string path = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/a100-sxm4-80gb.yaml";
  const std::string base = dse::io::read_text_file(path, "(file)");
  const std::string key = "\nvector:";
  ASSERT_NE(base.find(key), std::string::npos);
  const auto with = [&](const std::string& entry) {
    std::string t = base;
    t.insert(t.find(key), "\n  sustained_fraction_per_precision:\n    " + entry);
    return t;
  };
  const GpuHardware plain = dse::io::parse_gpu_hardware(base, "a100.yaml");
  const GpuHardware half = dse::io::parse_gpu_hardware(with("fp16: 0.5"), "a100.yaml");
  EXPECT_DOUBLE_EQ(half.sustained_fraction(dse::costmodel::Precision::fp16), 0.5);
  EXPECT_DOUBLE_EQ(half.sustained_fraction(dse::costmodel::Precision::bf16), plain.matrix_sustained_fraction);
  // A long compute-bound GEMM: at half the per-step rate its main loop takes
  // twice as long (prologue, epilogue and launch unchanged, so a bit under 2x).
  dse::costmodel::GemmShape s;
  s.m = s.n = s.k = 8192;
  const double t1 = dse::costmodel::evaluate_gemm(plain, s).latency_s;
  const double t2 = dse::costmodel::evaluate_gemm(half, s).latency_s;
  EXPECT_GT(t2 / t1, plain.matrix_sustained_fraction / 0.5 * 0.9);
  EXPECT_LT(t2 / t1, plain.matrix_sustained_fraction / 0.5 * 1.01);
  for (const std::string bad : {"fp16: 0", "fp16: 1.5", "fp17: 0.5", "fp8: 0.5"}) {
    SCOPED_TRACE(bad);
    expect_refused(with(bad), "a100.yaml", "sustained_fraction_per_precision");
  }
}

// warp_mma_fraction: optional, in (0, 1], default 1; the Hopper presets carry 0.594 (the share
// at which FlashAttention-2's measured forward rate on an H100 is reproduced, below the
// PyTorch FlashAttention-3 post's "about 2/3" ceiling for mma.sync on Hopper Tensor Cores).
TEST(GpuHardwareReader, WarpMmaFraction) {
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/";
  const std::string base = dse::io::read_text_file(dir + "a100-sxm4-80gb.yaml", "(file)");
  EXPECT_DOUBLE_EQ(dse::io::parse_gpu_hardware(base, "a100.yaml").warp_mma_fraction, 1.0);
  for (const char* hopper : {"h100-sxm5.yaml", "h200.yaml"})
    EXPECT_DOUBLE_EQ(
        dse::io::parse_gpu_hardware(dse::io::read_text_file(dir + hopper, "(file)"), hopper).warp_mma_fraction, 0.594)
        << hopper;
  const std::string key = "\nvector:";
  ASSERT_NE(base.find(key), std::string::npos);
  for (const std::string bad : {"0", "1.5", "-0.5"}) {
    SCOPED_TRACE(bad);
    std::string t = base;
    t.insert(t.find(key), "\n  warp_mma_fraction: " + bad);
    expect_refused(t, "a100.yaml", "warp_mma_fraction");
  }
}

// sram_bytes_per_cycle_per_core: optional, > 0, default 0 (not described: no shared-memory bound);
// the NVIDIA presets carry 128 (32 banks of 4 bytes a clock, CUDA C++ Programming Guide), the
// AMD ones leave it out. A value that is not a positive number is refused at its key.
TEST(GpuHardwareReader, SharedMemoryBandwidth) {
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/";
  for (const char* nvidia : {"a100-sxm4-40gb.yaml", "a100-sxm4-80gb.yaml", "h100-sxm5.yaml", "h200.yaml", "b200.yaml"})
    EXPECT_DOUBLE_EQ(dse::io::parse_gpu_hardware(dse::io::read_text_file(dir + nvidia, "(file)"), nvidia)
                         .sram_bytes_per_cycle_per_core,
                     128.0)
        << nvidia;
  for (const char* amd : {"mi210.yaml", "mi250x.yaml", "mi300x.yaml"})
    EXPECT_DOUBLE_EQ(dse::io::parse_gpu_hardware(dse::io::read_text_file(dir + amd, "(file)"), dir + amd)
                         .sram_bytes_per_cycle_per_core,
                     0.0)
        << amd;
  std::string base = dse::io::read_text_file(dir + "a100-sxm4-80gb.yaml", "(file)");
  const std::string line = "  sram_bytes_per_cycle_per_core: 128";
  const auto at = base.find(line);
  ASSERT_NE(at, std::string::npos);
  for (const std::string bad : {"0", "-128", "fast"}) {
    SCOPED_TRACE(bad);
    std::string t = base;
    t.replace(at, line.size(), "  sram_bytes_per_cycle_per_core: " + bad);
    expect_refused(t, "a100.yaml", "sram_bytes_per_cycle_per_core");
  }
}

// gemm_tile_k_scales_with_precision: set on the Hopper-class presets and the MI300X (hipBLASLt's
// gfx942 kernels), off (absent) on the A100 and the older AMD ones; a value other than true / false
// is refused at its key.
TEST(GpuHardwareReader, GemmTileKScalesWithPrecision) {
  for (const char* on : {"h100-sxm5.yaml", "h200.yaml", "b200.yaml", "mi300x.yaml"})
    EXPECT_TRUE(load(on).gemm_tile_k_scales_with_precision) << on;
  for (const char* off : {"a100-sxm4-80gb.yaml", "a100-sxm4-40gb.yaml", "mi250x.yaml", "mi210.yaml"})
    EXPECT_FALSE(load(off).gemm_tile_k_scales_with_precision) << off;
  std::string t = dse::io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/h200.yaml", "(file)");
  const std::string key = "gemm_tile_k_scales_with_precision: true";
  const auto at = t.find(key);
  ASSERT_NE(at, std::string::npos);
  t.replace(at, key.size(), "gemm_tile_k_scales_with_precision: 2");
  expect_refused(t, "h200.yaml", "software.gemm_tile_k_scales_with_precision: expected true or false");
}

// gemm_library: the table must be a plain .csv name beside the hardware file,
// exist, and hold the documented header and rows of integers; each problem is
// a ConfigError naming the file (and the table's line for a bad row).
TEST(GpuHardwareReader, GemmLibraryTableIsCheckedWithPlace) {
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/";
  const std::string base = dse::io::read_text_file(dir + "mi210.yaml", "(file)");
  const std::string key = "table: mi210-rocblas-hgemm-nn.csv";
  ASSERT_NE(base.find(key), std::string::npos);
  auto with_table = [&](const std::string& name) {
    std::string t = base;
    t.replace(t.find(key), key.size(), "table: " + name);
    return t;
  };
  expect_refused(with_table("../hardware/mi210-rocblas-hgemm-nn.csv"), dir + "mi210.yaml",
                 "software.gemm_library.table");
  expect_refused(with_table("absent.csv"), dir + "mi210.yaml", "an existing file");
  std::string bad_precision = base;
  bad_precision.replace(bad_precision.find("precision: fp16"), 15, "precision: fp12");
  expect_refused(bad_precision, dir + "mi210.yaml", "software.gemm_library.precision");
  // A table with a bad header and one with a bad row, in a scratch folder.
  const std::string scratch = dse::test::scratch_dir("gemm_library").string() + "/";
  const auto write = [&](const std::string& name, const std::string& body) { std::ofstream(scratch + name) << body; };
  write("header.csv", "# comment\nm,n,k,batch,tile_m,tile_n,tile_k,group_m,split_k,solution\n1,1,1,1,1,1,1,1,1,0\n");
  expect_refused(with_table("header.csv"), scratch + "chip.yaml", "header.csv:2:");
  write("row.csv",
        "m,n,batch,k,tile_m,tile_n,tile_k,group_m,split_k,solution\n1,1,1,1,1,1,1,1,1,0\n1,1,1,1,0,1,1,1,1,0\n");
  expect_refused(with_table("row.csv"), scratch + "chip.yaml", "row.csv:3:");
  write("short.csv", "m,n,batch,k,tile_m,tile_n,tile_k,group_m,split_k,solution\n1,1,1,1,1,1,1,1,1\n");
  expect_refused(with_table("short.csv"), scratch + "chip.yaml", "short.csv:2:");
  write("good.csv", "m,n,batch,k,tile_m,tile_n,tile_k,group_m,split_k,solution\n64,64,1,64,64,64,32,1,1,7\n");
  const GpuHardware hw = dse::io::parse_gpu_hardware(with_table("good.csv"), scratch + "chip.yaml");
  ASSERT_EQ(hw.gemm_library.size(), 1u);
  EXPECT_EQ(hw.gemm_library[0].solution, 7);
  EXPECT_EQ(hw.gemm_library[0].tile, (dse::costmodel::GemmTile{64, 64, 32, 1}));
}

}  // namespace

// Strategy knobs of `kind: system` hardware: pipeline, data and expert parallel
// degrees and the batching policy. Parsing (values, defaults, FILE:LINE:COL errors for
// degrees that do not fit the chips) and evaluation: relations derived by hand from
// the serving model (costmodel/system/serving.hpp) and agreement with the path
// `dse eval --system --tp --pp --dp` takes (costmodel/platform evaluate_system).
#include <gtest/gtest.h>

#include <string>

#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/driver/run.hpp"
#include "dse/io/scenario.hpp"

namespace dse {
namespace {

// Knob order (scenario.cpp's system field table): pp fastest, then dp, batching,
// batch_timeout_s, so variant v = pp_i + 2 dp_i + 4 batching_i + 8 timeout_i.
const std::string kKnobs = R"(name: knobs
seed: 3
hardware:
  - {name: h100, kind: system, system: dgx-h100-8, tp: 2, pp: {choices: [1, 2]}, dp: {choices: [1, 2]},
     batching: {choices: [continuous, static]}, batch_timeout_s: {choices: [0.0, 0.5]}}
workloads:
  - {name: chat, model: llama3-8b, prompt_tokens: 128, output_tokens: 16, rate_per_s: 0.001, requests: 200}
batch_sizes: [8]
)";

namespace pf = costmodel::platform;

// What evaluate_point asks of evaluate_system for kKnobs' chat workload at batch 8
// (dse/driver/run.cpp evaluate_served), at the given degrees.
pf::SystemRequest knobs_request(const Scenario& s, costmodel::system::ParallelismDegrees degrees) {
  pf::SystemRequest req;
  req.spec = s.workloads[0].model->spec;
  req.phase.phase = costmodel::workload::Phase::decode;
  req.phase.batch = 8;
  req.phase.seq = 1;
  req.phase.context = 128 + 16 / 2;
  req.degrees = degrees;
  req.serving.batch_sizes = {8};
  req.serving.prompt_tokens = 128;
  req.serving.output_tokens = 16;
  req.serving.rate_per_s = 0.001;
  req.serving.requests = 200;
  req.serving.seed = 3;
  return req;
}

std::string error_of(const std::string& hardware_lines) {
  const std::string text = "name: bad\nhardware:\n  - name: h\n    kind: system\n    system: dgx-h100-8\n" +
                           hardware_lines + "workloads:\n  - {name: chat, model: llama3-8b}\nbatch_sizes: [8]\n";
  try {
    (void)parse_scenario(text, "bad.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(StrategyKnobs, ParseValuesAndDefaults) {
  const Scenario s = parse_scenario(kKnobs, "knobs.yaml");
  ASSERT_EQ(s.hardware.size(), 1u);
  EXPECT_EQ(s.hardware[0].variants(), 16u);
  const SystemVariant v0 = s.hardware[0].variant(0).system;
  EXPECT_EQ(v0.tp, 2);
  EXPECT_EQ(v0.pp, 1);
  EXPECT_EQ(v0.dp, 1);
  EXPECT_EQ(v0.ep, 1);
  EXPECT_EQ(v0.batching, Batching::continuous);
  const SystemVariant v15 = s.hardware[0].variant(15).system;
  EXPECT_EQ(v15.pp, 2);
  EXPECT_EQ(v15.dp, 2);
  EXPECT_EQ(v15.batching, Batching::static_timeout);
  EXPECT_DOUBLE_EQ(v15.batch_timeout_s, 0.5);
  // Without dp the replicas fill the system: 8 chips / (tp 4 x pp 2) = 1.
  const Scenario f = parse_scenario(
      "name: f\nhardware:\n  - {name: h, kind: system, system: dgx-h100-8, tp: 4, pp: 2, ep: 4}\n"
      "workloads:\n  - {name: chat, model: llama3-8b}\nbatch_sizes: [8]\n",
      "f.yaml");
  EXPECT_EQ(f.hardware[0].variant(0).system.dp, 1);
  EXPECT_EQ(f.hardware[0].variant(0).system.ep, 4);
  // The cp knob: tp 2 x cp 2 leaves 2 replicas of the 8 chips. A served model's decode steps split
  // no sequence, so the point is infeasible and says why.
  const Scenario c = parse_scenario(
      "name: c\nhardware:\n  - {name: h, kind: system, system: dgx-h100-8, tp: 2, cp: 2}\n"
      "workloads:\n  - {name: chat, model: llama3-8b}\nbatch_sizes: [8]\n",
      "c.yaml");
  EXPECT_EQ(c.hardware[0].variant(0).system.cp, 2);
  EXPECT_EQ(c.hardware[0].variant(0).system.dp, 2);
  const PointRecord r = evaluate_point(c, design_space(c), 0);
  EXPECT_EQ(r.feasible, 0);
}

// Line 6 is the knob's line; its value starts at column 9 ("    tp: " is 8 characters).
TEST(StrategyKnobs, DegreesThatDoNotFitAreRefused) {
  EXPECT_EQ(error_of("    tp: 3\n"),
            "bad.yaml:6:9: hardware[0].tp: expected tp x cp x pp to divide the chip count (the 8 chips of system "
            "dgx-h100-8) (got tp 3 x cp 1 x pp 1 = 3)");
  EXPECT_EQ(error_of("    tp: 2\n    pp: {choices: [1, 8]}\n"),
            "bad.yaml:7:9: hardware[0].pp: expected tp x cp x pp to divide the chip count (the 8 chips of system "
            "dgx-h100-8) (got tp 2 x cp 1 x pp 8 = 16)");
  EXPECT_EQ(error_of("    tp: 2\n    dp: 3\n"),
            "bad.yaml:7:9: hardware[0].dp: expected tp x cp x pp x dp to divide the chip count (the 8 chips of "
            "system dgx-h100-8) (got tp 2 x cp 1 x pp 1 x dp 3 = 6)");
  EXPECT_EQ(error_of("    tp: 2\n    cp: 3\n"),
            "bad.yaml:7:9: hardware[0].cp: expected tp x cp x pp to divide the chip count (the 8 chips of system "
            "dgx-h100-8) (got tp 2 x cp 3 x pp 1 = 6)");
  EXPECT_EQ(error_of("    tp: 2\n    dp: 2\n    ep: 3\n"),
            "bad.yaml:8:9: hardware[0].ep: expected ep to divide tp x dp (the chips holding experts) "
            "(got ep 3 with tp 2 x dp 2 = 4)");
  EXPECT_EQ(error_of("    pp: 1.5\n"),
            "bad.yaml:6:9: hardware[0].pp: expected whole numbers from 1 to 8 (the 8 chips of system "
            "dgx-h100-8) (got 1.5)");
  EXPECT_EQ(error_of("    batching: dynamic\n"),
            "bad.yaml:6:15: hardware[0].batching: expected one of continuous static (got \"dynamic\")");
  EXPECT_EQ(error_of("    batch_timeout_s: 0.1\n"),
            "bad.yaml:6:22: hardware[0].batch_timeout_s: batch_timeout_s only with batching: static (got "
            "batching continuous)");
}

// Data-parallel replicas are independent and see rate / dp each (serving.hpp): the
// static-batch sweep's system tokens/s = instances x batch x output / e2e doubles
// from dp 1 to dp 2 while the request latency stays; the accelerator power of twice the
// chips doing the same work per chip doubles too (dynamic energy x tp x dp, static x
// chips). At the wall the system's idle chips draw their static power, the host its parts
// and its fans, cubic in the heat (power.hpp wall_power): by hand from the system file's figures.
TEST(StrategyKnobs, DataParallelReplicasScaleThroughputAndPower) {
  const Scenario s = parse_scenario(kKnobs, "knobs.yaml");
  const search::DesignSpace space = design_space(s);
  const PointRecord one = evaluate_point(s, space, 0);  // pp 1, dp 1, continuous
  const PointRecord two = evaluate_point(s, space, 2);  // pp 1, dp 2, continuous
  ASSERT_EQ(one.feasible, 1);
  ASSERT_EQ(two.feasible, 1);
  EXPECT_DOUBLE_EQ(two.throughput_samples_per_s, 2.0 * one.throughput_samples_per_s);
  EXPECT_DOUBLE_EQ(two.latency_s, one.latency_s);
  EXPECT_NEAR(two.accelerator_power_w / one.accelerator_power_w, 2.0, 1e-12);
  const auto& sys = s.hardware[0].system->system;
  const double eff = sys.host.psu_efficiency;
  for (const auto* r : {&one, &two}) {
    const int idle = sys.chips - (r == &one ? 2 : 4);  // tp 2 x dp 1 or 2
    const double heat = r->accelerator_power_w + idle * sys.power.static_power_w + sys.host.parts_w();
    const double load = heat / (sys.chips * sys.power.tdp_w + sys.host.parts_w());
    EXPECT_NEAR(r->power_w, (heat + sys.host.fans_w * load * load * load) / eff, 1e-9 * r->power_w);
  }
}

// The point with pp 2, dp 2 equals what `dse eval --system dgx-h100-8 --tp 2 --pp 2
// --dp 2 --phase decode --batch 8` computes (degrees {2, 2, 2, 1} into evaluate_system).
TEST(StrategyKnobs, PipelineDegreeReachesTheSystemEvaluation) {
  const Scenario s = parse_scenario(kKnobs, "knobs.yaml");
  const search::DesignSpace space = design_space(s);
  const PointRecord r = evaluate_point(s, space, 3);  // pp 2, dp 2, continuous
  const auto& sys = *s.hardware[0].system;
  const pf::SystemEval e = pf::evaluate_system(sys.chip, sys.system, knobs_request(s, {2, 2, 2, 1}));
  ASSERT_TRUE(e.feasible);
  ASSERT_EQ(r.feasible, 1);
  EXPECT_EQ(e.chips, 8);
  EXPECT_DOUBLE_EQ(r.throughput_samples_per_s, e.serving.sweep.front().tokens_per_s_system);
  EXPECT_DOUBLE_EQ(r.power_w, e.wall.wall_w);  // the wall (the system's host section)
  EXPECT_DOUBLE_EQ(r.accelerator_power_w, e.power.power_w);
  // And pipeline stages change the figure (the model is split over 2 stages).
  EXPECT_NE(r.latency_s, evaluate_point(s, space, 2).latency_s);
}

// Static batching with a timeout at an arrival rate so low (one request per 1,000 s)
// that requests never meet: each waits the full timeout alone, then runs alone, so
// every request latency -- hence the p99 -- is the timeout-0 latency + 0.5 s.
TEST(StrategyKnobs, StaticBatchingTimeoutAddsToEveryRequest) {
  const Scenario s = parse_scenario(kKnobs, "knobs.yaml");
  const search::DesignSpace space = design_space(s);
  const PointRecord no_wait = evaluate_point(s, space, 4);  // static, timeout 0
  const PointRecord wait = evaluate_point(s, space, 12);    // static, timeout 0.5 s
  ASSERT_EQ(no_wait.feasible, 1);
  ASSERT_EQ(wait.feasible, 1);
  EXPECT_NEAR(wait.p99_latency_s - no_wait.p99_latency_s, 0.5, 1e-6);
  // The static-batch sweep (no queueing) does not depend on the policy.
  EXPECT_DOUBLE_EQ(wait.latency_s, evaluate_point(s, space, 0).latency_s);
}

// A model workload on a static-shape stack (static_kv_tokens, prompt_bucket_tokens): the
// continuous-batching point equals evaluate_system with the same ServingOptions, and
// the static-batching simulation (run.cpp's own latency table) sees the padded shapes:
// its p99 request latency at one request per 1,000 s grows over the paged stack's.
TEST(StrategyKnobs, StaticShapeServingReachesBothBatchingPaths) {
  std::string text = kKnobs;
  const std::string chat = "rate_per_s: 0.001, requests: 200}";
  const std::string padded = "rate_per_s: 0.001, requests: 200, static_kv_tokens: 2048, prompt_bucket_tokens: 64}";
  text.replace(text.find(chat), chat.size(), padded);
  const Scenario st = parse_scenario(text, "static.yaml");
  const Scenario pg = parse_scenario(kKnobs, "knobs.yaml");
  ASSERT_EQ(st.workloads[0].model->static_kv_tokens, 2048);
  ASSERT_EQ(st.workloads[0].model->prompt_bucket_tokens, 64);
  const search::DesignSpace space = design_space(st);
  const PointRecord r = evaluate_point(st, space, 0);  // pp 1, dp 1, continuous
  const auto& sys = *st.hardware[0].system;
  pf::SystemRequest req = knobs_request(st, {2, 1, 1, 1});
  req.serving.static_kv_tokens = 2048;
  req.serving.prompt_bucket_tokens = 64;
  const pf::SystemEval e = pf::evaluate_system(sys.chip, sys.system, req);
  ASSERT_TRUE(e.serving.evaluated) << e.serving.reason;
  ASSERT_EQ(r.feasible, 1);
  EXPECT_DOUBLE_EQ(r.throughput_samples_per_s, e.serving.sweep.front().tokens_per_s_system);
  EXPECT_LT(r.throughput_samples_per_s, evaluate_point(pg, design_space(pg), 0).throughput_samples_per_s);
  const PointRecord st_static = evaluate_point(st, space, 4);  // static batching, timeout 0
  const PointRecord pg_static = evaluate_point(pg, design_space(pg), 4);
  ASSERT_EQ(st_static.feasible, 1);
  EXPECT_GT(st_static.p99_latency_s, pg_static.p99_latency_s);

  // A static cache shorter than prompt + output is refused where it is written.
  std::string short_kv = kKnobs;
  short_kv.replace(short_kv.find(chat), chat.size(), "rate_per_s: 0.001, requests: 200, static_kv_tokens: 100}");
  try {
    (void)parse_scenario(short_kv, "short.yaml");
    ADD_FAILURE() << "static_kv_tokens 100 accepted";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("workloads[0].static_kv_tokens: expected at least prompt_tokens + "
                                           "output_tokens (144) (got 100)"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace dse

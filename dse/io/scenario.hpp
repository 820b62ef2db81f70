// A scenario: what to explore (hardware choices x workloads x batch sizes),
// parsed once into validated value types. See scenarios/README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "costmodel/layer.hpp"
#include "dse/plan.hpp"
#include "costmodel/roofline.hpp"
#include "costmodel/platform/evaluate.hpp"
#include "costmodel/systolic/systolic_platform.hpp"
#include "costmodel/system/serving.hpp"
#include "costmodel/workload/spec.hpp"
#include "dse/io/overrides.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/scenario_chips.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse {

// A hardware entry of one kind (roofline, systolic, system or loopnest): its figures, of which some
// may be swept by knobs (ranges in the scenario). Variant v decodes as a mixed-radix
// number over the knobs, the first knob fastest; an entry without knobs has one
// variant. Figures are stored by index into the kind's field table (scenario.cpp).
enum class HardwareKind { roofline, systolic, system, loopnest };

struct HardwareKnob {
  std::string key;
  std::size_t field = 0;
  std::vector<double> values;
};

// How the served system forms batches (costmodel/system/serving.hpp): continuous
// (iteration-level) or static with a timeout; the point's batch size is the most
// requests in flight (continuous) or per batch (static) on each replica.
enum class Batching { continuous, static_timeout };

// A real multi-chip system (a preset of scenarios/systems) with strategy knobs.
// The chips used are tp x pp x dp (dp defaults to filling the system); ep groups
// MoE experts within tp x dp. parse_scenario checks that every combination fits.
struct SystemVariant {
  std::string name;
  std::shared_ptr<const io::SystemFile> system;  // shared by all variants of an entry
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  // Context parallelism (the `cp` knob): the sequence split over cp chips; the served
  // models' decode steps split none, so a variant with cp > 1 is infeasible for them (its
  // reason says so) until a context-parallel decode is modelled (docs/known-gaps.md).
  int cp = 1;
  costmodel::workload::Precision precision = costmodel::workload::Precision::bf16;
  costmodel::platform::FusionStrategy fusion = costmodel::platform::FusionStrategy::standard;
  Batching batching = Batching::continuous;
  double batch_timeout_s = 0.0;  // static_timeout: the oldest request waits at most this
  // The fused attention kernel of prefill steps (platform/evaluate.hpp AttentionKernel).
  costmodel::platform::AttentionKernel attention_kernel = costmodel::platform::AttentionKernel::native;
  // The serving stack whose per-iteration overhead the latency table carries: the entry's
  // `stack` knob, else the system file's default.
  costmodel::system::ServingStack stack;
};

// One concrete hardware point.
struct HardwareVariant {
  HardwareKind kind = HardwareKind::roofline;
  costmodel::RooflineHardware roofline;
  costmodel::SystolicHardware systolic;
  SystemVariant system;
  costmodel::lowering::LoopnestChip loopnest;  // kind: loopnest (dse/io/scenario_chips.hpp)
  [[nodiscard]] const std::string& name() const;
  [[nodiscard]] double engineering_risk() const;
  [[nodiscard]] double area_mm2() const;
  // The matrix peak a layer-list point's MFU is taken against (roofline, systolic).
  [[nodiscard]] double peak_flops_per_s() const;
};

struct HardwareEntry {
  std::string name;
  HardwareKind kind = HardwareKind::roofline;
  std::vector<double> figures;  // the base value of every field of the kind
  std::vector<HardwareKnob> knobs;
  std::shared_ptr<const io::SystemFile> system;  // kind: system (as its file gives it)
  std::vector<costmodel::system::ServingStack> stacks;  // kind: system, the `stack` values (field value k: stacks[k-1])
  // kind: system with `overrides:` (dse/io/overrides.hpp): the chip and system of every
  // combination of override values, read once. Override knob k's choice is the figure after the
  // system fields (field system fields + k); a knob of several values is a knob of the entry.
  std::shared_ptr<const io::SystemOverrides> overrides;
  std::shared_ptr<const LoopnestEntry> loopnest;  // kind: loopnest
  [[nodiscard]] std::uint64_t variants() const;
  // Variant v (< variants()); its name is "NAME" or "NAME#v".
  [[nodiscard]] HardwareVariant variant(std::uint64_t v) const;
  // What variant v is, as key=value fields in the units of the scenario keys, space-separated:
  // a system's strategy (tp, pp, dp, ep, precision, fusion, attention_kernel, batching and, for
  // static batching, batch_timeout_s, stack) and every swept figure; another kind's swept figures.
  [[nodiscard]] std::string describe(std::uint64_t v) const;
  // The same for each of `vs`, each knob value's number printed once for all of them.
  [[nodiscard]] std::vector<std::string> describe(std::span<const std::uint64_t> vs) const;
  // For a system variant, the `dse eval` options that select the same system and strategy
  // (--system FILE --tp ... --stack ... --override PATH=VALUE ...); for a loop-nest variant, the
  // `dse map` options that select the same architecture and mapping strategy
  // (chips::map_arguments); "" otherwise.
  [[nodiscard]] std::string eval_arguments(std::uint64_t v) const;
  // Every figure of variant v (its knobs' values set).
  [[nodiscard]] std::vector<double> figures_of(std::uint64_t v) const;
  // The system a variant's figures select (its override combination, else `system`), and the
  // override knobs' choices among them.
  [[nodiscard]] std::shared_ptr<const io::SystemFile> system_at(const std::vector<double>& f) const;
  [[nodiscard]] std::vector<std::size_t> override_choices(const std::vector<double>& f) const;
};

// A model served under load (kind: system hardware): a workload preset or file of the
// workload library, with the request shape and the arrival rate.
struct ModelWorkload {
  costmodel::workload::WorkloadSpec spec;
  std::string model_name;  // the preset name or file the scenario gives
  std::int64_t prompt_tokens = 1024;
  std::int64_t output_tokens = 256;
  // Lengths drawn per request (a uniform range, or a histogram file: dse/io/lengths_reader.hpp);
  // prompt_tokens and output_tokens are then their nominal (mean) lengths. Unset: fixed.
  std::optional<costmodel::system::LengthDistribution> prompt_lengths;
  std::optional<costmodel::system::LengthDistribution> output_lengths;
  std::string lengths_file;   // the histogram file, as the scenario names it resolved to a path
  double rate_per_s = 1.0;    // Poisson arrivals at the system
  int requests = 1000;        // simulated requests per point
  // A static-shape serving stack (costmodel/platform/system.hpp ServingOptions):
  // 0 = paged KV cache and unpadded prompts.
  std::int64_t static_kv_tokens = 0;
  std::int64_t prompt_bucket_tokens = 0;
};

// A workload entry: a list of layers (roofline, systolic and loop-nest hardware), a model
// served under load (systems) or a model at one phase (`phase:`; roofline, systolic and
// loop-nest hardware: dse/io/scenario_chips.hpp).
struct WorkloadEntry : costmodel::WorkloadSpec {
  std::optional<ModelWorkload> model;
  std::shared_ptr<const ChipWorkload> chip;
};

struct Scenario {
  std::string file;   // where it was read from (for messages)
  std::string text;   // the exact text, stored with the results
  std::string name;
  std::uint64_t seed = 0;
  std::vector<HardwareEntry> hardware;
  std::vector<WorkloadEntry> workloads;
  std::vector<std::int64_t> batch_sizes;
  SearchPlan search;  // default: exhaustive
  // The files the scenario made the reader read (system, hardware, workload files), each once;
  // not the scenario file itself.
  std::vector<io::InputFile> inputs;
};

// For a served model, the `dse eval` options that give the same workload, request lengths,
// load, simulation and decode context (--workload ... --phase decode --context ... --rate ...
// --seed ...); a point of batch B adds --batch B --max-batch B. "" for a layer list.
std::string eval_arguments(const WorkloadEntry& w, std::uint64_t seed);

// All hardware variants of all entries, and where variant h lives: (entry, variant).
std::uint64_t hardware_variants(const Scenario& s);
std::pair<std::size_t, std::uint64_t> locate_hardware(const Scenario& s, std::uint64_t h);

// Parse scenario text; `file` names it in messages. Throws ConfigError.
Scenario parse_scenario(const std::string& text, const std::string& file);
// Read and parse a scenario file. Throws ConfigError (also for a missing file).
Scenario load_scenario(const std::string& path);

}  // namespace dse

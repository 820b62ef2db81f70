// Layers of a skeleton workload: GEMMs and element-wise kernels whose row
// count scales with the batch. The workload library (symbolic graphs of real
// models) builds on the same idea: a shape is a function of batch and sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/roofline.hpp"

namespace dse::costmodel {

enum class LayerKind { gemm, elementwise };

struct LayerSpec {
  std::string name;
  LayerKind kind = LayerKind::gemm;
  // gemm: (rows_per_sample * batch) x n output, reduction k; weights k x n.
  std::int64_t rows_per_sample = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  // elementwise: elements per sample, flops per element, tensors read + written.
  std::int64_t elements_per_sample = 0;
  double flops_per_element = 1.0;
  int tensors_touched = 2;
  int bytes_per_element = 2;
};

struct WorkloadSpec {
  std::string name;
  std::vector<LayerSpec> layers;
};

// Work of one layer at a batch size: GEMM flops = 2*M*N*K, bytes = (M*K + K*N + M*N) * b;
// element-wise flops = E*f, bytes = E*t*b, with M = rows_per_sample * batch, E = elements * batch.
KernelWork layer_work(const LayerSpec& layer, std::int64_t batch) noexcept;

// Bytes that stay resident for a batch: weights plus the largest live activation pair.
double resident_bytes(const WorkloadSpec& w, std::int64_t batch) noexcept;

struct WorkloadCost {
  double latency_s = 0.0;          // one batch, layers in sequence
  double energy_j = 0.0;           // one batch
  double flops = 0.0;
  double bytes = 0.0;
  double throughput_samples_per_s = 0.0;
  double energy_per_sample_j = 0.0;
  double memory_bytes = 0.0;
  bool feasible = true;            // false when memory_bytes exceeds capacity
  Bottleneck bottleneck = Bottleneck::compute;  // the class that takes the most of latency_s (ClassTimes)
};

WorkloadCost evaluate_workload(const RooflineHardware& hw, const WorkloadSpec& w,
                               std::int64_t batch) noexcept;

// The per-batch figures every model derives the same way once latency, energy and
// the slowest layer's bottleneck are summed: throughput, energy per sample, resident
// memory and capacity feasibility (capacity <= 0: unbounded).
void finish_workload_cost(WorkloadCost& c, const WorkloadSpec& w, std::int64_t batch,
                          double memory_capacity_bytes) noexcept;

}  // namespace dse::costmodel

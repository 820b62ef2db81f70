#include "costmodel/loopnest/problem.hpp"

#include <algorithm>

namespace dse::costmodel::loopnest {

const char* layer_type_name(LayerType t) noexcept {
  switch (t) {
    case LayerType::attention: return "attention";
    case LayerType::ffn: return "ffn";
    case LayerType::conv: return "conv";
    case LayerType::norm: return "norm";
    case LayerType::elementwise: return "elementwise";
    case LayerType::embedding: return "embedding";
    case LayerType::collective: return "collective";
  }
  return "?";
}

int Problem::add_dim(const std::string& dim_name, std::int64_t size) {
  if (num_dims >= kMaxDims) return -1;
  dim_names[static_cast<std::size_t>(num_dims)] = dim_name;
  dim_sizes[static_cast<std::size_t>(num_dims)] = size;
  return num_dims++;
}

int Problem::add_tensor(const std::string& tensor_name, bool read_write, int precision_bits) {
  if (num_tensors >= kMaxTensors) return -1;
  Tensor& t = tensors[static_cast<std::size_t>(num_tensors)];
  t = Tensor{};
  t.name = tensor_name;
  t.read_write = read_write;
  t.precision_bits = precision_bits;
  return num_tensors++;
}

void Problem::add_rank(int t, std::initializer_list<Term> terms) {
  Tensor& ten = tensors[static_cast<std::size_t>(t)];
  if (ten.num_ranks >= kMaxRanks) return;
  Rank& r = ten.ranks[static_cast<std::size_t>(ten.num_ranks++)];
  for (const Term& term : terms) {
    if (r.num_terms < kMaxTerms) r.terms[static_cast<std::size_t>(r.num_terms++)] = term;
  }
}

int Problem::dim_index(const std::string& n) const noexcept {
  for (int d = 0; d < num_dims; ++d) {
    if (dim_names[static_cast<std::size_t>(d)] == n) return d;
  }
  return -1;
}

int Problem::tensor_index(const std::string& n) const noexcept {
  for (int t = 0; t < num_tensors; ++t) {
    if (tensors[static_cast<std::size_t>(t)].name == n) return t;
  }
  return -1;
}

std::int64_t points(const Problem& p) noexcept {
  std::int64_t n = 1;
  for (int d = 0; d < p.num_dims; ++d) n *= p.dim_sizes[static_cast<std::size_t>(d)];
  return n;
}

double macs(const Problem& p) noexcept { return static_cast<double>(points(p)) * p.macs_per_point; }
double flops(const Problem& p) noexcept { return static_cast<double>(points(p)) * p.flops_per_point; }

std::int64_t tensor_elements(const Problem& p, int t) noexcept {
  // Coordinate extent = sum over terms of coef*(size-1) + 1 (exact for the
  // dense projections of the factories; an upper bound otherwise).
  const Tensor& ten = p.tensors[static_cast<std::size_t>(t)];
  std::int64_t n = 1;
  for (int r = 0; r < ten.num_ranks; ++r) {
    const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
    std::int64_t extent = 1;
    for (int i = 0; i < rank.num_terms; ++i) {
      const Term& term = rank.terms[static_cast<std::size_t>(i)];
      extent += static_cast<std::int64_t>(term.coef) * (p.dim_sizes[static_cast<std::size_t>(term.dim)] - 1);
    }
    n *= extent;
  }
  return n;
}

double tensor_bytes(const Problem& p, int t) noexcept {
  return static_cast<double>(tensor_elements(p, t)) *
         p.tensors[static_cast<std::size_t>(t)].precision_bits / 8.0;
}

std::string validate(const Problem& p) {
  if (p.num_dims < 1) return "no dimensions";
  for (int d = 0; d < p.num_dims; ++d) {
    if (p.dim_sizes[static_cast<std::size_t>(d)] < 1) return "dimension " + p.dim_names[static_cast<std::size_t>(d)] + " has size < 1";
  }
  int rw = 0;
  for (int t = 0; t < p.num_tensors; ++t) {
    const Tensor& ten = p.tensors[static_cast<std::size_t>(t)];
    if (ten.read_write) ++rw;
    std::array<int, kMaxDims> used{};
    for (int r = 0; r < ten.num_ranks; ++r) {
      const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
      for (int i = 0; i < rank.num_terms; ++i) {
        const Term& term = rank.terms[static_cast<std::size_t>(i)];
        if (term.dim < 0 || term.dim >= p.num_dims) return "tensor " + ten.name + " uses an unknown dimension";
        if (term.coef < 0) return "tensor " + ten.name + " has a negative coefficient";
        if (used[static_cast<std::size_t>(term.dim)] != 0 && used[static_cast<std::size_t>(term.dim)] != r + 1) {
          return "tensor " + ten.name + " uses dimension " + p.dim_names[static_cast<std::size_t>(term.dim)] +
                 " in two coordinates";
        }
        used[static_cast<std::size_t>(term.dim)] = r + 1;
      }
    }
  }
  if (rw != 1) return "expected exactly one read-write (output) tensor";
  // points() and tensor_elements() count in int64: refuse problems whose counts (taken
  // here in double) would pass 2^62 rather than let them wrap.
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  double n = 1.0;
  for (int d = 0; d < p.num_dims; ++d) n *= static_cast<double>(p.dim_sizes[static_cast<std::size_t>(d)]);
  if (!(n <= kLimit)) return "the iteration space has more than 2^62 points";
  for (int t = 0; t < p.num_tensors; ++t) {
    const Tensor& ten = p.tensors[static_cast<std::size_t>(t)];
    double e = 1.0;
    for (int r = 0; r < ten.num_ranks; ++r) {
      const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
      double extent = 1.0;
      for (int i = 0; i < rank.num_terms; ++i) {
        const Term& term = rank.terms[static_cast<std::size_t>(i)];
        extent += static_cast<double>(term.coef) * static_cast<double>(p.dim_sizes[static_cast<std::size_t>(term.dim)] - 1);
      }
      e *= extent;
    }
    if (!(e <= kLimit)) return "tensor " + ten.name + " has more than 2^62 elements";
  }
  return "";
}

namespace {
Term t1(int dim, std::int32_t coef = 1) { return Term{static_cast<std::int8_t>(dim), coef}; }
}  // namespace

Problem make_gemm(std::int64_t m, std::int64_t n, std::int64_t k, int bits) {
  Problem p;
  p.name = "gemm";
  p.type = LayerType::ffn;
  const int dm = p.add_dim("M", m), dn = p.add_dim("N", n), dk = p.add_dim("K", k);
  const int a = p.add_tensor("A", false, bits), b = p.add_tensor("B", false, bits), z = p.add_tensor("Z", true, bits);
  p.tensors[static_cast<std::size_t>(b)].weights = true;  // activations (M x K) times a linear layer's weights
  p.add_rank(a, {t1(dm)});
  p.add_rank(a, {t1(dk)});
  p.add_rank(b, {t1(dk)});
  p.add_rank(b, {t1(dn)});
  p.add_rank(z, {t1(dm)});
  p.add_rank(z, {t1(dn)});
  return p;
}

Problem make_batched_gemm(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, int bits) {
  Problem p;
  p.name = "batched_gemm";
  p.type = LayerType::ffn;
  const int db = p.add_dim("B", batch), dm = p.add_dim("M", m), dn = p.add_dim("N", n), dk = p.add_dim("K", k);
  const int a = p.add_tensor("A", false, bits), b = p.add_tensor("B", false, bits), z = p.add_tensor("Z", true, bits);
  for (int t : {a, b, z}) p.add_rank(t, {t1(db)});
  p.add_rank(a, {t1(dm)});
  p.add_rank(a, {t1(dk)});
  p.add_rank(b, {t1(dk)});
  p.add_rank(b, {t1(dn)});
  p.add_rank(z, {t1(dm)});
  p.add_rank(z, {t1(dn)});
  return p;
}

Problem make_conv2d(const Conv2dShape& s, int bits) {
  Problem p;
  p.name = s.groups > 1 ? "grouped_conv2d" : "conv2d";
  p.type = LayerType::conv;
  const int dn = p.add_dim("N", s.n);
  const int dg = s.groups > 1 ? p.add_dim("G", s.groups) : -1;
  const int dc = p.add_dim("C", s.c), dm = p.add_dim("M", s.m);
  const int dp = p.add_dim("P", s.p), dq = p.add_dim("Q", s.q), dr = p.add_dim("R", s.r), ds = p.add_dim("S", s.s);
  const int w = p.add_tensor("Weights", false, bits), in = p.add_tensor("Inputs", false, bits),
            out = p.add_tensor("Outputs", true, bits);
  p.tensors[static_cast<std::size_t>(w)].weights = true;
  if (dg >= 0) p.add_rank(w, {t1(dg)});
  p.add_rank(w, {t1(dm)});
  p.add_rank(w, {t1(dc)});
  p.add_rank(w, {t1(dr)});
  p.add_rank(w, {t1(ds)});
  p.add_rank(in, {t1(dn)});
  if (dg >= 0) {
    p.add_rank(in, {t1(dg, static_cast<std::int32_t>(s.c)), t1(dc)});
  } else {
    p.add_rank(in, {t1(dc)});
  }
  p.add_rank(in, {t1(dp, static_cast<std::int32_t>(s.stride_w)), t1(dr, static_cast<std::int32_t>(s.dilation_w))});
  p.add_rank(in, {t1(dq, static_cast<std::int32_t>(s.stride_h)), t1(ds, static_cast<std::int32_t>(s.dilation_h))});
  p.add_rank(out, {t1(dn)});
  if (dg >= 0) {
    p.add_rank(out, {t1(dg, static_cast<std::int32_t>(s.m)), t1(dm)});
  } else {
    p.add_rank(out, {t1(dm)});
  }
  p.add_rank(out, {t1(dp)});
  p.add_rank(out, {t1(dq)});
  return p;
}

Problem make_depthwise_conv2d(std::int64_t n, std::int64_t channels, std::int64_t p_, std::int64_t q,
                              std::int64_t r, std::int64_t s, std::int64_t stride, int bits) {
  Problem p;
  p.name = "depthwise_conv2d";
  p.type = LayerType::conv;
  const int dn = p.add_dim("N", n), dg = p.add_dim("G", channels), dp = p.add_dim("P", p_), dq = p.add_dim("Q", q),
            dr = p.add_dim("R", r), ds = p.add_dim("S", s);
  const int w = p.add_tensor("Weights", false, bits), in = p.add_tensor("Inputs", false, bits),
            out = p.add_tensor("Outputs", true, bits);
  p.tensors[static_cast<std::size_t>(w)].weights = true;
  p.add_rank(w, {t1(dg)});
  p.add_rank(w, {t1(dr)});
  p.add_rank(w, {t1(ds)});
  p.add_rank(in, {t1(dn)});
  p.add_rank(in, {t1(dg)});
  p.add_rank(in, {t1(dp, static_cast<std::int32_t>(stride)), t1(dr)});
  p.add_rank(in, {t1(dq, static_cast<std::int32_t>(stride)), t1(ds)});
  p.add_rank(out, {t1(dn)});
  p.add_rank(out, {t1(dg)});
  p.add_rank(out, {t1(dp)});
  p.add_rank(out, {t1(dq)});
  return p;
}

Problem make_attention_qk(std::int64_t batch, std::int64_t heads, std::int64_t len_q, std::int64_t len_k,
                          std::int64_t head_dim, int bits) {
  Problem p;
  p.name = "attention_qk";
  p.type = LayerType::attention;
  const int db = p.add_dim("B", batch), dh = p.add_dim("H", heads), di = p.add_dim("I", len_q),
            dj = p.add_dim("J", len_k), dd = p.add_dim("D", head_dim);
  const int q = p.add_tensor("Q", false, bits), k = p.add_tensor("K", false, bits), s = p.add_tensor("S", true, bits);
  for (int t : {q, k, s}) {
    p.add_rank(t, {t1(db)});
    p.add_rank(t, {t1(dh)});
  }
  p.add_rank(q, {t1(di)});
  p.add_rank(q, {t1(dd)});
  p.add_rank(k, {t1(dj)});
  p.add_rank(k, {t1(dd)});
  p.add_rank(s, {t1(di)});
  p.add_rank(s, {t1(dj)});
  return p;
}

Problem make_attention_av(std::int64_t batch, std::int64_t heads, std::int64_t len_q, std::int64_t len_k,
                          std::int64_t head_dim, int bits) {
  Problem p;
  p.name = "attention_av";
  p.type = LayerType::attention;
  const int db = p.add_dim("B", batch), dh = p.add_dim("H", heads), di = p.add_dim("I", len_q),
            dj = p.add_dim("J", len_k), dd = p.add_dim("D", head_dim);
  const int a = p.add_tensor("A", false, bits), v = p.add_tensor("V", false, bits), o = p.add_tensor("O", true, bits);
  for (int t : {a, v, o}) {
    p.add_rank(t, {t1(db)});
    p.add_rank(t, {t1(dh)});
  }
  p.add_rank(a, {t1(di)});
  p.add_rank(a, {t1(dj)});
  p.add_rank(v, {t1(dj)});
  p.add_rank(v, {t1(dd)});
  p.add_rank(o, {t1(di)});
  p.add_rank(o, {t1(dd)});
  return p;
}

namespace {
Problem rowwise(const char* name, LayerType type, std::int64_t rows, std::int64_t cols, int inputs,
                bool reduce, double flops_per_point, int bits) {
  Problem p;
  p.name = name;
  p.type = type;
  p.macs_per_point = 0.0;
  p.flops_per_point = flops_per_point;
  const int dr = p.add_dim("R", rows), dc = p.add_dim("C", cols);
  for (int i = 0; i < inputs; ++i) {
    const int t = p.add_tensor(i == 0 ? "X" : "Y", false, bits);
    p.add_rank(t, {t1(dr)});
    p.add_rank(t, {t1(dc)});
  }
  const int z = p.add_tensor("Z", true, bits);
  p.add_rank(z, {t1(dr)});
  if (!reduce) p.add_rank(z, {t1(dc)});
  return p;
}
}  // namespace

Problem make_elementwise(std::int64_t rows, std::int64_t cols, int inputs, double flops_per_element,
                         LayerType type, int bits) {
  return rowwise("elementwise", type, rows, cols, std::clamp(inputs, 1, 2), false, flops_per_element, bits);
}
// Softmax: max, subtract, exp, sum, divide per element (5 FLOPs, the usual count).
Problem make_softmax(std::int64_t rows, std::int64_t cols, int bits) {
  return rowwise("softmax", LayerType::norm, rows, cols, 1, false, 5.0, bits);
}
// Layer normalisation: mean, variance, normalise, scale (about 5 FLOPs per element).
Problem make_normalization(std::int64_t rows, std::int64_t cols, int bits) {
  return rowwise("normalization", LayerType::norm, rows, cols, 1, false, 5.0, bits);
}
Problem make_reduction(std::int64_t rows, std::int64_t cols, int bits) {
  return rowwise("reduction", LayerType::elementwise, rows, cols, 1, true, 1.0, bits);
}

}  // namespace dse::costmodel::loopnest

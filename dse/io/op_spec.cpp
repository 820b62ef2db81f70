// dse/io/op_spec.hpp: the operator text of `dse map --op` and of loopnest_network cases.
#include "dse/io/op_spec.hpp"

#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "dse/error.hpp"

namespace dse::io {

costmodel::loopnest::Problem parse_loopnest_op(const std::string& text, int default_bits, const std::string& what) {
  namespace lp = costmodel::loopnest;
  std::istringstream in(text);
  std::string kind, tok;
  in >> kind;
  std::map<std::string, std::int64_t> kv;
  while (in >> tok) {
    const auto eq = tok.find('=');
    std::int64_t v = 0;
    try {
      v = eq == std::string::npos ? 0 : std::stoll(tok.substr(eq + 1));
    } catch (const std::exception&) {
      v = 0;
    }
    if (eq == std::string::npos || v < 1) throw InputError(what + ": expected KEY=POSITIVE_INTEGER (got '" + tok + "')");
    kv[tok.substr(0, eq)] = v;
  }
  auto take = [&](const std::string& k, std::int64_t fallback) {
    const auto it = kv.find(k);
    if (it == kv.end()) {
      if (fallback < 1) throw InputError(what + " " + kind + ": missing " + k + "=");
      return fallback;
    }
    const std::int64_t v = it->second;
    kv.erase(it);
    return v;
  };
  const int bits = static_cast<int>(take("bits", default_bits));
  lp::Problem p;
  if (kind == "gemm") {
    const std::int64_t m = take("M", 0), n = take("N", 0), k = take("K", 0);
    p = lp::make_gemm(m, n, k, bits);
  } else if (kind == "bmm") {
    const std::int64_t b = take("B", 0), m = take("M", 0), n = take("N", 0), k = take("K", 0);
    p = lp::make_batched_gemm(b, m, n, k, bits);
  } else if (kind == "conv2d") {
    lp::Conv2dShape s;
    s.n = take("N", 1);
    s.groups = take("groups", 1);  // C and K count every group's channels
    s.c = take("C", 0);
    const std::int64_t h = take("H", 0), w = take("W", 0);
    s.m = take("K", 0);
    if (s.c % s.groups != 0 || s.m % s.groups != 0)
      throw InputError(what + " conv2d: groups must divide C and K (got C=" + std::to_string(s.c) + " K=" + std::to_string(s.m) +
                       " groups=" + std::to_string(s.groups) + ")");
    s.c /= s.groups;
    s.m /= s.groups;
    s.r = take("R", 1);
    s.s = take("S", 1);
    s.stride_w = s.stride_h = take("stride", 1);
    if (h < s.s || w < s.r) throw InputError(what + " conv2d: H and W must be at least S and R (no padding)");
    s.p = (w - s.r) / s.stride_w + 1;
    s.q = (h - s.s) / s.stride_h + 1;
    p = lp::make_conv2d(s, bits);
  } else if (kind == "attention_qk" || kind == "attention_av") {
    const std::int64_t b = take("B", 1), heads = take("H", 1);
    const std::int64_t l = kv.count("L") != 0 ? take("L", 0) : 0;
    const std::int64_t lq = take("Lq", l), lk = take("Lk", l), d = take("D", 0);
    p = kind == "attention_qk" ? lp::make_attention_qk(b, heads, lq, lk, d, bits) : lp::make_attention_av(b, heads, lq, lk, d, bits);
  } else {
    throw InputError(what + ": expected gemm, bmm, conv2d, attention_qk or attention_av (got '" + kind + "')");
  }
  if (!kv.empty()) throw InputError(what + " " + kind + ": unknown key '" + kv.begin()->first + "'");
  p.name = text;
  return p;
}

}  // namespace dse::io

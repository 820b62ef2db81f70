#include "costmodel/systolic/systolic.hpp"

#include "costmodel/systolic/systolic_detail.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace dse::costmodel {

namespace {

using I64 = std::int64_t;

I64 ceil_div(I64 a, I64 b) { return (a + b - 1) / b; }

// Address generation of SCALE-Sim's compute/operand_matrix.py, as indices
// relative to each operand's base address (-1: no request).
struct Operands {
  LoweredShape s;
  ConvLayer l;
  [[nodiscard]] I64 ifmap(I64 px, I64 w) const {
    const I64 orow = px / s.ofmap_w;
    const I64 ocol = px % s.ofmap_w;
    const I64 irow = orow * l.stride_h;
    const I64 icol = ocol * l.stride_w;
    const I64 crow = w / (l.filter_w * l.channels);
    const I64 k = w % (l.filter_w * l.channels);
    const I64 ccol = k / l.channels;
    const I64 ch = k % l.channels;
    if (crow + irow >= l.ifmap_h || ccol + icol >= l.ifmap_w) return -1;
    return (irow + crow) * l.ifmap_w * l.channels + (icol + ccol) * l.channels + ch;
  }
  [[nodiscard]] I64 filter(I64 w, I64 k) const { return k * s.window + w; }
  [[nodiscard]] I64 ofmap(I64 px, I64 k) const { return s.filters * px + k; }
  [[nodiscard]] I64 ifmap_words() const { return l.ifmap_h * l.ifmap_w * l.channels; }
  [[nodiscard]] I64 filter_words() const { return s.window * s.filters; }
};

enum class Op { ifmap, filter, ofmap };

// One request row of a demand matrix; only columns [lo, hi) can be non-empty.
struct Line {
  std::vector<I64> addr;
  I64 lo = 0;
  I64 hi = 0;
  [[nodiscard]] bool any_valid() const {
    for (I64 j = lo; j < hi; ++j)
      if (addr[static_cast<std::size_t>(j)] >= 0) return true;
    return false;
  }
};

// One fold of one operand's demand matrix: `prefix` empty rows, `body` rows
// produced by elem(), then empty rows up to the fold length; optionally skewed
// (column j delayed by j rows) as SCALE-Sim's skew_matrix() does.
struct FoldShape {
  I64 width = 0;
  I64 prefix = 0;
  I64 body = 0;
  bool skew = false;
};

class DemandGen {
 public:
  DemandGen(const SystolicArray& a, const Operands& o, const FoldPlan& p) : a_(a), o_(o), p_(p) {}

  [[nodiscard]] I64 fold_lines() const { return detail::scalesim_fold_lines(a_, p_); }

  [[nodiscard]] FoldShape shape(Op op) const {
    const I64 r = a_.rows, c = a_.cols, t = p_.streamed_dim;
    switch (a_.dataflow) {
      case Dataflow::weight_stationary:
        if (op == Op::ifmap) return {r, r, t, true};
        if (op == Op::filter) return {c, 0, r, false};
        return {c, 2 * r - 1, t, true};
      case Dataflow::output_stationary:
        if (op == Op::ifmap) return {r, 0, t, true};
        if (op == Op::filter) return {c, 0, t, true};
        return {c, t - 1, r, true};
      case Dataflow::input_stationary:
        if (op == Op::ifmap) return {c, 0, r, false};
        if (op == Op::filter) return {r, r, t, true};
        return {c, 2 * r - 1, t, true};
    }
    return {};
  }

  // Element j of body row b of fold (fr, fc).
  [[nodiscard]] I64 elem(Op op, I64 fr, I64 fc, I64 b, I64 j) const {
    const I64 r = a_.rows, c = a_.cols;
    const LoweredShape& s = o_.s;
    switch (a_.dataflow) {
      case Dataflow::weight_stationary:
        if (op == Op::ifmap) {
          const I64 w = fr * r + j;
          return w < s.window ? o_.ifmap(b, w) : -1;
        }
        if (op == Op::filter) {
          const I64 w = fr * r + (r - 1 - b);
          const I64 k = fc * c + j;
          return (w < s.window && k < s.filters) ? o_.filter(w, k) : -1;
        } else {
          const I64 k = fc * c + j;
          return k < s.filters ? o_.ofmap(b, k) : -1;
        }
      case Dataflow::output_stationary:
        if (op == Op::ifmap) {
          const I64 px = fr * r + j;
          return px < s.ofmap_px ? o_.ifmap(px, b) : -1;
        }
        if (op == Op::filter) {
          const I64 k = fc * c + j;
          return k < s.filters ? o_.filter(b, k) : -1;
        } else {
          const I64 px = fr * r + (r - 1 - b);
          const I64 k = fc * c + j;
          return (px < s.ofmap_px && k < s.filters) ? o_.ofmap(px, k) : -1;
        }
      case Dataflow::input_stationary:
        if (op == Op::ifmap) {
          const I64 w = fr * r + (r - 1 - b);
          const I64 px = fc * c + j;
          return (w < s.window && px < s.ofmap_px) ? o_.ifmap(px, w) : -1;
        }
        if (op == Op::filter) {
          const I64 w = fr * r + j;
          return w < s.window ? o_.filter(w, b) : -1;
        } else {
          const I64 px = fc * c + j;
          return px < s.ofmap_px ? o_.ofmap(px, b) : -1;
        }
    }
    return -1;
  }

  // Row `t` of fold (fr, fc) of operand op: out.addr[lo, hi) may hold
  // requests; every other column of the row is empty.
  void row(Op op, I64 fr, I64 fc, I64 t, Line& out) const {
    const FoldShape f = shape(op);
    I64 lo = 0, hi = f.width;
    if (f.skew) {  // b = t - j - prefix in [0, body)
      lo = std::max<I64>(0, t - f.prefix - f.body + 1);
      hi = std::min<I64>(f.width, t - f.prefix + 1);
    } else if (t - f.prefix < 0 || t - f.prefix >= f.body) {
      hi = 0;
    }
    out.lo = lo;
    out.hi = std::max(lo, hi);
    out.addr.resize(static_cast<std::size_t>(f.width));
    for (I64 j = out.lo; j < out.hi; ++j) {
      out.addr[static_cast<std::size_t>(j)] = elem(op, fr, fc, (f.skew ? t - j : t) - f.prefix, j);
    }
  }

  // The prefetch (fetch) matrix SCALE-Sim installs in USER mode, flattened in
  // fetch order, valid addresses only.
  [[nodiscard]] std::vector<I64> fetch_sequence(Op op) const {
    const I64 r = a_.rows, c = a_.cols;
    const LoweredShape& s = o_.s;
    I64 m_rows = 0, n_cols = 0;
    bool diag = false;
    auto at = [&](I64 i, I64 j) -> I64 {
      switch (a_.dataflow) {
        case Dataflow::weight_stationary:
          if (op == Op::ifmap) {
            const I64 fr = i / s.ofmap_px, px = i % s.ofmap_px, w = fr * r + j;
            return w < s.window ? o_.ifmap(px, w) : -1;
          } else {
            const I64 fc = i / s.window, w = i % s.window, k = fc * c + j;
            return k < s.filters ? o_.filter(w, k) : -1;
          }
        case Dataflow::output_stationary:
          if (op == Op::ifmap) {
            const I64 fr = i / s.window, w = i % s.window, px = fr * r + j;
            return px < s.ofmap_px ? o_.ifmap(px, w) : -1;
          } else {
            const I64 fc = i / s.window, w = i % s.window, k = fc * c + j;
            return k < s.filters ? o_.filter(w, k) : -1;
          }
        case Dataflow::input_stationary:
          if (op == Op::ifmap) {
            const I64 fc = i / s.window, w = i % s.window, px = fc * c + j;
            return px < s.ofmap_px ? o_.ifmap(px, w) : -1;
          } else {
            const I64 fr = i / s.filters, k = i % s.filters, w = fr * r + j;
            return w < s.window ? o_.filter(w, k) : -1;
          }
      }
      return -1;
    };
    switch (a_.dataflow) {
      case Dataflow::weight_stationary:
        if (op == Op::ifmap) { m_rows = p_.row_folds * s.ofmap_px; n_cols = r; diag = true; }
        else { m_rows = p_.col_folds * s.window; n_cols = c; diag = false; }
        break;
      case Dataflow::output_stationary:
        if (op == Op::ifmap) { m_rows = p_.row_folds * s.window; n_cols = r; diag = true; }
        else { m_rows = p_.col_folds * s.window; n_cols = c; diag = true; }
        break;
      case Dataflow::input_stationary:
        if (op == Op::ifmap) { m_rows = p_.col_folds * s.window; n_cols = c; diag = false; }
        else { m_rows = p_.row_folds * s.filters; n_cols = r; diag = true; }
        break;
    }
    std::vector<I64> seq;
    seq.reserve(static_cast<std::size_t>(m_rows * n_cols));
    auto push = [&](I64 v) {
      if (v >= 0) seq.push_back(v);
    };
    if (!diag) {
      for (I64 i = 0; i < m_rows; ++i)
        for (I64 j = 0; j < n_cols; ++j) push(at(i, j));
    } else {
      for (I64 d = 0; d < m_rows + n_cols; ++d) {
        const I64 hi = std::min(d, m_rows - 1);
        const I64 lo = std::max<I64>(0, d - n_cols + 1);
        for (I64 i = hi; i >= lo; --i) push(at(i, d - i));
      }
    }
    return seq;
  }

 private:
  const SystolicArray& a_;
  const Operands& o_;
  const FoldPlan& p_;
};

// SCALE-Sim's read_buffer_estimate_bw.py (CALC mode): requests always hit;
// addresses are grouped into sets of floor(size/100) new addresses and the
// buffer remembers the sets since the last 50-set window shift.
class EstimateReadBuffer {
 public:
  EstimateReadBuffer(I64 size_words, I64 bandwidth, I64 addr_space)
      : items_per_set_(size_words / 100), default_bw_(bandwidth),
        last_set_(static_cast<std::size_t>(addr_space), -1) {}

  void request(I64 cycle, const Line& line) {
    if (!first_seen_ && line.any_valid()) {
      first_seen_ = true;
      first_cycle_ = cycle;
    }
    for (I64 j = line.lo; j < line.hi; ++j) {
      const I64 a = line.addr[static_cast<std::size_t>(j)];
      if (a < 0) continue;
      I64& at = last_set_[static_cast<std::size_t>(a)];
      if (at >= read_start_) continue;  // hit in the window or the current set
      at = current_set_;
      ++inserted_;
      if (++elems_current_ == items_per_set_) {
        elems_current_ = 0;
        ++current_set_;
        if (current_set_ == read_end_ + 1) window_shift(cycle);
      }
    }
  }

  void finish() {
    I64 cur = current_set_;
    if (elems_current_ == 0) --cur;
    if (!active_done_) {
      last_end_ = -2;
      const I64 cycles = ceil_div((cur + 1) * items_per_set_, default_bw_);
      last_start_ = last_end_ - cycles + 1;
      record_prefetch();
    } else {
      record_prefetch();
    }
  }

  [[nodiscard]] I64 reads() const { return inserted_; }
  [[nodiscard]] I64 trace_start() const { return trace_start_; }
  [[nodiscard]] I64 trace_stop() const { return trace_stop_; }

 private:
  static constexpr I64 kSetsActive = 50;  // int(0.5 * 100)
  static constexpr I64 kSetsPrefetch = 50;

  void record_prefetch() {
    // Rows at cycles last_start_..last_end_, served one cycle later (read_port latency 1).
    if (!traced_) {
      trace_start_ = last_start_ + 1;
      traced_ = true;
    }
    trace_stop_ = last_end_ + 1;
  }

  void window_shift(I64 cycle) {
    if (!active_done_) {
      last_end_ = first_cycle_ - 1 - 1;
      const I64 cycles = ceil_div(kSetsPrefetch * items_per_set_, default_bw_);
      last_start_ = last_end_ - cycles + 1;
      record_prefetch();
      active_done_ = true;
    } else {
      record_prefetch();
    }
    read_start_ += kSetsPrefetch;
    read_end_ += kSetsPrefetch;
    last_start_ = last_end_ + 1;
    last_end_ = cycle;
  }

  I64 items_per_set_;
  I64 default_bw_;
  std::vector<I64> last_set_;
  I64 current_set_ = 0;
  I64 elems_current_ = 0;
  I64 read_start_ = 0;
  I64 read_end_ = kSetsActive - 1;
  I64 inserted_ = 0;
  bool first_seen_ = false;
  I64 first_cycle_ = 0;
  bool active_done_ = false;
  I64 last_start_ = -2;
  I64 last_end_ = -1;
  bool traced_ = false;
  I64 trace_start_ = 0;
  I64 trace_stop_ = 0;
};

// SCALE-Sim's read_buffer.py (USER mode): the prefetch matrix is cut into
// lines ("sets") of ceil(SRAM words / 100) valid addresses; an active window of lines rotates forward by
// a prefetch window on every miss until the address is inside it.
class UserReadBuffer {
 public:
  // fetch: the valid addresses of the prefetch matrix in fetch order; padded_elems: its
  // size with the null requests (scalesim_prefetch_elems), which sets its number of lines.
  UserReadBuffer(I64 size_words, I64 bw, I64 addr_space, const std::vector<I64>& fetch, I64 padded_elems)
      : bw_(bw) {
    const I64 total = size_words;
    active_size_ = total - total / 2;  // ceil(total * 0.5)
    prefetch_size_ = total - active_size_;
    fetch_rows_ = std::max<I64>(1, ceil_div(padded_elems, bw_));
    // Hashed lines: chunks of set_ valid addresses; the last chunk always exists.
    const I64 n_valid = static_cast<I64>(fetch.size());
    set_ = ceil_div(total, 100);  // elems_per_set: the SRAM is 100 sets
    num_lines_ = n_valid / set_ + 1;
    // CSR: address -> sorted line ids.
    first_.assign(static_cast<std::size_t>(addr_space + 1), 0);
    for (const I64 a : fetch) ++first_[static_cast<std::size_t>(a) + 1];
    for (std::size_t i = 1; i < first_.size(); ++i) first_[i] += first_[i - 1];
    lines_.resize(fetch.size());
    std::vector<I64> fill(first_.begin(), first_.end() - 1);
    for (I64 i = 0; i < n_valid; ++i) {
      const I64 a = fetch[static_cast<std::size_t>(i)];
      lines_[static_cast<std::size_t>(fill[static_cast<std::size_t>(a)]++)] = i / set_;
    }
    const I64 max_active = ceil_div(active_size_, set_);
    const I64 max_prefetch = ceil_div(prefetch_size_, set_);
    num_active_ = std::min(num_lines_, max_active);
    num_prefetch_ = std::min(num_lines_ - num_active_, max_prefetch);
  }

  // Returns the cycle at which the line is served.
  I64 request(I64 cycle, const Line& line) {
    if (!active_full_) prefetch_active(cycle);
    I64 offset = 1;  // hit latency
    for (I64 j = line.lo; j < line.hi; ++j) {
      const I64 a = line.addr[static_cast<std::size_t>(j)];
      if (a < 0) continue;
      while (!hit(a)) {
        new_prefetch();
        // The offset grows by the stall a prefetch causes, never shrinks (read_buffer.py at 22f88b17,
        // "removing double counting of stall cycles"; before it, a prefetch that ended early moved
        // the line's served cycle earlier than the request's, which only the SRAM traces showed).
        const I64 potential = last_prefetch_cycle_ - (cycle + offset);
        if (potential > 0) offset += potential;
      }
    }
    return cycle + offset;
  }

  [[nodiscard]] I64 reads() const { return num_access_; }
  [[nodiscard]] I64 trace_start() const { return trace_start_; }
  [[nodiscard]] I64 trace_stop() const { return last_prefetch_cycle_; }

 private:
  [[nodiscard]] bool hit(I64 a) const {
    const auto b = lines_.begin() + first_[static_cast<std::size_t>(a)];
    const auto e = lines_.begin() + first_[static_cast<std::size_t>(a) + 1];
    if (b == e) return false;
    const I64 s = active_start_, t = active_end_;
    const auto it = std::lower_bound(b, e, s);
    if (s < t) return it != e && *it < t;
    if (it != e) return true;  // in [s, num_lines)
    return *b < t;             // in [0, t)
  }

  void prefetch_active(I64 start_cycle) {
    I64 n = ceil_div(active_size_, bw_);
    if (n >= fetch_rows_) n = fetch_rows_;
    num_access_ += n * bw_;
    // Requests at start - n + i - 1, served one cycle later.
    trace_start_ = start_cycle - n;
    last_prefetch_cycle_ = start_cycle - 1;
    active_start_ = 0;
    active_end_ = num_active_;
    active_full_ = true;
  }

  void new_prefetch() {
    active_start_ = (active_start_ + num_prefetch_) % num_lines_;
    active_end_ = (active_start_ + num_active_) % num_lines_;
    const I64 n = ceil_div(prefetch_size_, bw_);
    num_access_ += n * bw_;
    last_prefetch_cycle_ = last_prefetch_cycle_ + n + 1;
  }

  I64 bw_;
  I64 set_ = 1;
  I64 active_size_ = 0;
  I64 prefetch_size_ = 0;
  I64 fetch_rows_ = 1;
  I64 num_lines_ = 1;
  I64 num_active_ = 1;
  I64 num_prefetch_ = 0;
  std::vector<I64> first_;
  std::vector<I64> lines_;
  bool active_full_ = false;
  I64 active_start_ = 0;
  I64 active_end_ = 0;
  I64 last_prefetch_cycle_ = 0;
  I64 num_access_ = 0;
  I64 trace_start_ = 0;
};

// SCALE-Sim's write_buffer.py: words gather into lines of `bw`; when more
// than the active half is occupied and no drain is running, the lines written
// so far drain at one line per cycle; the array stalls only when the buffer
// is full while a drain runs.
class WriteBuffer {
 public:
  WriteBuffer(I64 size_words, I64 bw) : total_(size_words), bw_(bw) {
    active_size_ = total_ - total_ / 2;
    drain_size_ = total_ - active_size_;
    free_ = total_;
  }

  I64 write(I64 cycle, const Line& line) {
    I64 current = cycle;
    for (I64 j = line.lo; j < line.hi; ++j) {
      if (line.addr[static_cast<std::size_t>(j)] < 0) continue;
      store();
      if (current < drain_end_) {
        if (free_ <= 0) {
          current = drain_end_;  // stall until the running drain ends
        }
      } else if (free_ < active_size_) {
        flush_partial();
        drain_end_ = drain(current);
      }
    }
    return current;
  }

  void empty_all(I64 cycle) {
    flush_partial();
    if (line_counts_.empty()) return;
    while (drain_start_ < static_cast<I64>(line_counts_.size())) {
      drain_end_ = drain(cycle);
      cycle = drain_end_ + 1;
    }
  }

  [[nodiscard]] I64 writes() const { return num_access_; }
  [[nodiscard]] I64 trace_start() const { return trace_start_; }
  [[nodiscard]] I64 trace_stop() const { return trace_stop_; }

 private:
  void store() {
    ++line_idx_;
    --free_;
    if (line_idx_ == bw_) {
      line_counts_.push_back(bw_);
      line_idx_ = 0;
    }
  }
  void flush_partial() {
    if (line_idx_ != 0) {
      line_counts_.push_back(line_idx_);
      line_idx_ = 0;
    }
  }
  I64 drain(I64 start_cycle) {
    const I64 lines = ceil_div(drain_size_, bw_);
    const I64 end = std::min(drain_start_ + lines, static_cast<I64>(line_counts_.size()));
    const I64 n = end - drain_start_;
    if (n <= 0) return start_cycle;
    const I64 data = n * bw_ - (bw_ - line_counts_[static_cast<std::size_t>(end - 1)]);
    num_access_ += data;
    const I64 last = start_cycle + n - 1;  // write port latency 0
    // SCALE-Sim's trace ends (write_buffer.py get_external_access_start_stop_cycles: the first
    // and the last entry of its cycles): the first drain's first line and the last drain's last
    // line. The final drain starts at the last demand row's cycle, which can be before the end of
    // a drain still running, so the last line is not always the latest.
    if (!traced_) {
      trace_start_ = start_cycle;
      traced_ = true;
    }
    trace_stop_ = last;
    free_ += data;
    drain_start_ = end;
    return last;
  }

  I64 total_;
  I64 bw_;
  I64 active_size_ = 0;
  I64 drain_size_ = 0;
  I64 free_ = 0;
  I64 line_idx_ = 0;
  std::vector<I64> line_counts_;
  I64 drain_start_ = 0;
  I64 drain_end_ = 0;
  I64 num_access_ = 0;
  bool traced_ = false;
  I64 trace_start_ = 0;
  I64 trace_stop_ = 0;
};

}  // namespace

namespace detail {

// Static per-fold figures shared by both models.
void fill_fold_statistics(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p, I64 fold_lines,
                          SystolicResult& r) {
  const I64 rows = a.rows, cols = a.cols;
  double map_sum = 0.0, util_sum = 0.0;
  // The fold length SCALE-Sim uses for utilisation: rows of the unskewed
  // reference matrix plus its width minus one.
  I64 cycles_fold = 0;
  switch (a.dataflow) {
    case Dataflow::weight_stationary: cycles_fold = fold_lines + cols - 1; break;
    case Dataflow::output_stationary: cycles_fold = p.streamed_dim - 1 + rows + cols - 1; break;
    case Dataflow::input_stationary: cycles_fold = fold_lines + cols - 1; break;
  }
  for (I64 fc = 0; fc < p.col_folds; ++fc) {
    for (I64 fr = 0; fr < p.row_folds; ++fr) {
      const I64 ru = std::min(rows, p.array_rows_dim - fr * rows);
      const I64 cu = std::min(cols, p.array_cols_dim - fc * cols);
      const double used = static_cast<double>(ru * cu);
      map_sum += used / static_cast<double>(rows * cols);
      util_sum += used * static_cast<double>(p.streamed_dim) / (static_cast<double>(rows * cols * cycles_fold));
    }
  }
  const auto folds = static_cast<double>(p.folds());
  r.folds = p.folds();
  r.mapping_eff_pct = 100.0 * map_sum / folds;
  r.compute_util_pct = 100.0 * util_sum / folds;
  r.macs = s.macs;
  switch (a.dataflow) {
    case Dataflow::weight_stationary:
      r.sram_ifmap_reads = p.col_folds * s.ofmap_px * s.window;
      r.sram_filter_reads = s.window * s.filters;
      r.sram_ofmap_writes = p.row_folds * s.ofmap_px * s.filters;
      break;
    case Dataflow::output_stationary:
      r.sram_ifmap_reads = p.col_folds * s.window * s.ofmap_px;
      r.sram_filter_reads = p.row_folds * s.window * s.filters;
      r.sram_ofmap_writes = s.ofmap_px * s.filters + p.folds() * (rows + cols);
      break;
    case Dataflow::input_stationary:
      r.sram_ifmap_reads = s.ofmap_px * s.window;
      r.sram_filter_reads = p.col_folds * s.filters * s.window;
      r.sram_ofmap_writes = p.row_folds * s.filters * s.ofmap_px;
      break;
  }
}

std::int64_t scalesim_fold_lines(const SystolicArray& a, const FoldPlan& p) {
  const I64 r = a.rows, c = a.cols;
  switch (a.dataflow) {
    case Dataflow::weight_stationary: return 2 * r + c + p.streamed_dim - 2;
    case Dataflow::output_stationary: return p.streamed_dim + r + c - 2;
    case Dataflow::input_stationary: return 2 * r + c + p.streamed_dim - 2;
  }
  return 0;
}

}  // namespace detail

std::string_view to_string(Dataflow d) {
  switch (d) {
    case Dataflow::weight_stationary: return "ws";
    case Dataflow::output_stationary: return "os";
    case Dataflow::input_stationary: return "is";
  }
  return "?";
}

ConvLayer gemm_as_conv(std::int64_t m, std::int64_t n, std::int64_t k) {
  ConvLayer l;
  l.ifmap_h = m;
  l.ifmap_w = k;
  l.filter_h = 1;
  l.filter_w = k;
  l.channels = 1;
  l.num_filters = n;
  return l;
}

LoweredShape lower(const ConvLayer& l) {
  LoweredShape s;
  s.ofmap_h = ceil_div(l.ifmap_h - l.filter_h + l.stride_h, l.stride_h);
  s.ofmap_w = ceil_div(l.ifmap_w - l.filter_w + l.stride_w, l.stride_w);
  s.ofmap_px = s.ofmap_h * s.ofmap_w;
  s.window = l.filter_h * l.filter_w * l.channels;
  s.filters = l.num_filters;
  s.macs = s.ofmap_px * s.window * s.filters;
  return s;
}

FoldPlan fold_plan(const SystolicArray& a, const LoweredShape& s) {
  FoldPlan p;
  switch (a.dataflow) {
    case Dataflow::weight_stationary:
      p.array_rows_dim = s.window;
      p.array_cols_dim = s.filters;
      p.streamed_dim = s.ofmap_px;
      break;
    case Dataflow::output_stationary:
      p.array_rows_dim = s.ofmap_px;
      p.array_cols_dim = s.filters;
      p.streamed_dim = s.window;
      break;
    case Dataflow::input_stationary:
      p.array_rows_dim = s.window;
      p.array_cols_dim = s.ofmap_px;
      p.streamed_dim = s.filters;
      break;
  }
  p.row_folds = ceil_div(p.array_rows_dim, a.rows);
  p.col_folds = ceil_div(p.array_cols_dim, a.cols);
  return p;
}

double SystolicResult::avg_sram_ifmap_bw() const {
  return static_cast<double>(sram_ifmap_reads) / static_cast<double>(total_cycles);
}
double SystolicResult::avg_sram_filter_bw() const {
  return static_cast<double>(sram_filter_reads) / static_cast<double>(total_cycles);
}
double SystolicResult::avg_sram_ofmap_bw() const {
  return static_cast<double>(sram_ofmap_writes) / static_cast<double>(total_cycles);
}
double SystolicResult::avg_dram_ifmap_bw() const {
  return static_cast<double>(dram_ifmap_reads) / static_cast<double>(dram_ifmap_stop - dram_ifmap_start + 1);
}
double SystolicResult::avg_dram_filter_bw() const {
  return static_cast<double>(dram_filter_reads) / static_cast<double>(dram_filter_stop - dram_filter_start + 1);
}
double SystolicResult::avg_dram_ofmap_bw() const {
  return static_cast<double>(dram_ofmap_writes) / static_cast<double>(dram_ofmap_stop - dram_ofmap_start + 1);
}

namespace {

// The read buffers SCALE-Sim puts between each read operand's SRAM and DRAM: CALC's estimate
// buffers (`est`) or USER's read buffers (`usr`), fed the operand's whole fetch sequence; ifmap
// first, then filter.
void make_read_buffers(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p, const Operands& ops,
                       const DemandGen& gen, std::vector<EstimateReadBuffer>& est, std::vector<UserReadBuffer>& usr) {
  const I64 if_words = a.ifmap_sram_bytes / a.word_bytes;
  const I64 fl_words = a.filter_sram_bytes / a.word_bytes;
  if (a.bandwidth_mode == DramBandwidthMode::limited) {
    const I64 read_bw = a.dram_words_per_cycle;
    usr.emplace_back(if_words, read_bw, ops.ifmap_words(), gen.fetch_sequence(Op::ifmap),
                     detail::scalesim_prefetch_elems(a, s, p, true));
    usr.emplace_back(fl_words, read_bw, ops.filter_words(), gen.fetch_sequence(Op::filter),
                     detail::scalesim_prefetch_elems(a, s, p, false));
  } else {
    const I64 read_bw = 10;  // CALC: SCALE-Sim's fixed 10
    est.emplace_back(if_words, read_bw, ops.ifmap_words());
    est.emplace_back(fl_words, read_bw, ops.filter_words());
  }
}

// DRAM traffic and traces of the three buffers after the last output at `last_out`.
void finish_buffers(std::vector<EstimateReadBuffer>& est, const std::vector<UserReadBuffer>& usr,
                    WriteBuffer& ofmap_buf, I64 last_out, SystolicResult& r) {
  if (!est.empty()) {
    est[0].finish();
    est[1].finish();
    r.dram_ifmap_reads = est[0].reads();
    r.dram_filter_reads = est[1].reads();
    r.dram_ifmap_start = est[0].trace_start();
    r.dram_ifmap_stop = est[0].trace_stop();
    r.dram_filter_start = est[1].trace_start();
    r.dram_filter_stop = est[1].trace_stop();
  } else {
    r.dram_ifmap_reads = usr[0].reads();
    r.dram_filter_reads = usr[1].reads();
    r.dram_ifmap_start = usr[0].trace_start();
    r.dram_ifmap_stop = usr[0].trace_stop();
    r.dram_filter_start = usr[1].trace_start();
    r.dram_filter_stop = usr[1].trace_stop();
  }
  ofmap_buf.empty_all(last_out);
  r.dram_ofmap_writes = ofmap_buf.writes();
  r.dram_ofmap_start = ofmap_buf.trace_start();
  r.dram_ofmap_stop = ofmap_buf.trace_stop();
}

// An SRAM's trace: the cycle it serves its first row with a valid request (`start`, once
// `seen`) and its last (`stop`).
inline void note_sram(const Line& line, I64 out, bool& seen, I64& start, I64& stop) {
  if (!line.any_valid()) return;
  if (!seen) start = out;
  seen = true;
  stop = out;
}

}  // namespace

SystolicResult simulate_scalesim_reference(const SystolicArray& a, const ConvLayer& layer) {
  const LoweredShape s = lower(layer);
  const FoldPlan p = fold_plan(a, s);
  const Operands ops{s, layer};
  const DemandGen gen(a, ops, p);
  const I64 fold_lines = gen.fold_lines();

  SystolicResult r;
  detail::fill_fold_statistics(a, s, p, fold_lines, r);
  const bool user = a.bandwidth_mode == DramBandwidthMode::limited;
  std::vector<EstimateReadBuffer> est;
  std::vector<UserReadBuffer> usr;
  make_read_buffers(a, s, p, ops, gen, est, usr);
  WriteBuffer ofmap_buf(a.ofmap_sram_bytes / a.word_bytes, user ? a.dram_words_per_cycle : a.cols);

  Line if_line, fl_line, of_line;
  I64 stalls = 0;
  I64 i = 0;
  I64 last_out = 0;
  bool if_seen = false, fl_seen = false, of_seen = false;
  for (I64 fc = 0; fc < p.col_folds; ++fc) {
    for (I64 fr = 0; fr < p.row_folds; ++fr) {
      for (I64 t = 0; t < fold_lines; ++t, ++i) {
        const I64 cycle = i + stalls;
        gen.row(Op::ifmap, fr, fc, t, if_line);
        gen.row(Op::filter, fr, fc, t, fl_line);
        gen.row(Op::ofmap, fr, fc, t, of_line);
        I64 if_out = cycle + 1, fl_out = cycle + 1;
        if (user) {
          if_out = usr[0].request(cycle, if_line);
          fl_out = usr[1].request(cycle, fl_line);
        } else {
          est[0].request(cycle, if_line);
          est[1].request(cycle, fl_line);
        }
        const I64 of_out = ofmap_buf.write(cycle, of_line);
        stalls += std::max({if_out - cycle - 1, fl_out - cycle - 1, of_out - cycle});
        last_out = of_out;
        note_sram(if_line, if_out, if_seen, r.sram_ifmap_start, r.sram_ifmap_stop);
        note_sram(fl_line, fl_out, fl_seen, r.sram_filter_start, r.sram_filter_stop);
        note_sram(of_line, of_out, of_seen, r.sram_ofmap_start, r.sram_ofmap_stop);
      }
    }
  }
  finish_buffers(est, usr, ofmap_buf, last_out, r);
  r.total_cycles = last_out;
  r.stall_cycles = stalls;
  r.overall_util_pct = 100.0 * static_cast<double>(s.macs) /
                       (static_cast<double>(r.total_cycles) * static_cast<double>(a.rows * a.cols));
  return r;
}

SystolicResult estimate_systolic(const SystolicArray& a, const ConvLayer& layer) {
  const LoweredShape s = lower(layer);
  const FoldPlan p = fold_plan(a, s);
  const Operands ops{s, layer};
  const DemandGen gen(a, ops, p);
  const I64 fold_lines = gen.fold_lines();
  SystolicResult r;
  detail::fill_fold_statistics(a, s, p, fold_lines, r);

  // Compulsory traffic, re-streamed once per outer fold when the operand does
  // not fit in the active half of its SRAM.
  const I64 if_words = ops.ifmap_words();
  const I64 fl_words = ops.filter_words();
  const I64 of_words = s.ofmap_px * s.filters;
  const I64 if_active = (a.ifmap_sram_bytes / a.word_bytes) / 2;
  const I64 fl_active = (a.filter_sram_bytes / a.word_bytes) / 2;
  // ws/is keep the filter (ws) or ifmap (is) tile stationary: the streamed
  // operand is re-read once per column fold (ws) or row fold (is/os).
  I64 if_passes = 1, fl_passes = 1;
  switch (a.dataflow) {
    case Dataflow::weight_stationary: if_passes = if_words > if_active ? p.col_folds : 1; break;
    case Dataflow::output_stationary:
      if_passes = if_words > if_active ? p.col_folds : 1;
      fl_passes = fl_words > fl_active ? p.row_folds : 1;
      break;
    case Dataflow::input_stationary: fl_passes = fl_words > fl_active ? p.col_folds : 1; break;
  }
  r.dram_ifmap_reads = if_words * if_passes;
  r.dram_filter_reads = fl_words * fl_passes;
  r.dram_ofmap_writes = of_words;

  const I64 compute = p.folds() * fold_lines;
  I64 stall = 0;
  if (a.bandwidth_mode == DramBandwidthMode::limited) {
    const I64 bw = a.dram_words_per_cycle;
    const I64 per_operand = std::max({ceil_div(r.dram_ifmap_reads, bw), ceil_div(r.dram_filter_reads, bw),
                                      ceil_div(r.dram_ofmap_writes, bw)});
    stall = std::max<I64>(0, per_operand - compute);
  }
  r.total_cycles = compute + stall;
  r.stall_cycles = stall;
  r.overall_util_pct = 100.0 * static_cast<double>(s.macs) /
                       (static_cast<double>(r.total_cycles) * static_cast<double>(a.rows * a.cols));
  r.sram_ifmap_start = 0;
  r.sram_ifmap_stop = r.total_cycles;
  r.sram_filter_stop = r.total_cycles;
  r.sram_ofmap_stop = r.total_cycles;
  r.dram_ifmap_stop = r.total_cycles;
  r.dram_filter_stop = r.total_cycles;
  r.dram_ofmap_stop = r.total_cycles;
  return r;
}

}  // namespace dse::costmodel

// Fold-level evaluation of the SCALE-Sim v2 compatible systolic model. It
// returns exactly what simulate_scalesim_reference() (systolic.cpp) returns,
// without visiting every request; see the header of systolic.hpp for the
// idea and tests/costmodel/test_systolic.cpp for the randomised equality
// check against the reference.
//
// Notation: r x c array, RF x CF folds (fold f = fc * RF + fr, SCALE-Sim's
// order), Sr ofmap pixels, T = window, Sc = filters; ru(fr) / cu(fc) rows /
// columns of the array a fold uses. In every fold each operand's requests
// form either
//   - a "diagonal" stream: an H x W rectangle of distinct addresses walked
//     along anti-diagonals (the skewed operands), one demand row per
//     diagonal, starting at demand row `prefix`; or
//   - a "row" stream (the stationary operand of ws / is): rows of ru(fr)
//     demand rows of cu(fc) addresses each, rows walked backwards in the
//     window dimension.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "costmodel/systolic/systolic.hpp"
#include "costmodel/systolic/systolic_detail.hpp"

namespace dse::costmodel {

namespace {

using I64 = std::int64_t;

I64 ceil_div(I64 a, I64 b) { return (a + b - 1) / b; }

// sum_{v=1..x} min(v, cap); 0 for x <= 0.
I64 tri_clamped(I64 x, I64 cap) {
  if (x <= 0) return 0;
  if (x <= cap) return x * (x + 1) / 2;
  return cap * (cap + 1) / 2 + (x - cap) * cap;
}

// sum_{j=a..b-1} clamp(d - j, 0, cap).
I64 sum_clamp(I64 d, I64 a, I64 b, I64 cap) {
  if (b <= a || cap <= 0) return 0;
  return tri_clamped(d - a, cap) - tri_clamped(d - b, cap);
}

// An h x w rectangle walked along anti-diagonals u = b + j (j ascending
// within a diagonal): the order of a skewed demand block.
struct Rect {
  I64 h = 0, w = 0;
  [[nodiscard]] I64 before(I64 u) const { return sum_clamp(u, 0, w, h); }  // elements on diagonals < u
  [[nodiscard]] I64 diags() const { return h + w - 1; }
  [[nodiscard]] I64 diag_of(I64 p) const {  // diagonal holding element p (0-based)
    I64 lo = 0, hi = diags() - 1;
    while (lo < hi) {
      const I64 mid = (lo + hi + 1) / 2;
      if (before(mid) <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
};

// The ofmap writes of one fold: rectangle `rect` whose diagonal u is demand row start + u.
struct WriteStream {
  I64 start = 0;
  Rect rect;
  [[nodiscard]] I64 before_row(I64 t) const { return rect.before(t - start); }
  [[nodiscard]] I64 count(I64 t) const { return before_row(t + 1) - before_row(t); }
  [[nodiscard]] I64 row_of(I64 e) const { return start + rect.diag_of(e); }
};

// A prefetch (fetch) matrix of G groups of H rows; rows of the last group
// have n2 valid columns, the others n. Positions count valid entries only.
struct FetchMatrix {
  I64 h = 0, g = 0, n = 0, n2 = 0;
  [[nodiscard]] I64 m() const { return g * h; }
  [[nodiscard]] I64 m1() const { return (g - 1) * h; }
  [[nodiscard]] I64 width(I64 grp) const { return grp == g - 1 ? n2 : n; }
  [[nodiscard]] I64 valid() const { return m1() * n + h * n2; }
  // Row-major order: position of row i's first entry.
  [[nodiscard]] I64 row_start(I64 i) const { return std::min(i, m1()) * n + std::max<I64>(0, i - m1()) * n2; }
  // Anti-diagonal order (SCALE-Sim's skewed fetch matrix, row index
  // descending = column ascending within a diagonal).
  [[nodiscard]] I64 diag_before(I64 d) const { return sum_clamp(d, 0, n2, m()) + sum_clamp(d, n2, n, m1()); }
  [[nodiscard]] I64 diag_pos(I64 d, I64 j) const {
    const I64 lo = std::max<I64>(0, d - m() + 1);
    const I64 a_lo = std::max(lo, d - m1() + 1);  // rows above the last group: width n
    const I64 b_hi = std::min({j, n2, d - m1() + 1});
    return diag_before(d) + std::max<I64>(0, j - a_lo) + std::max<I64>(0, b_hi - lo);
  }
  // First entry of group grp at diagonal-order position >= x: its diagonal
  // and position; false when none.
  bool diag_find(I64 grp, I64 x, I64& d_out, I64& pos_out) const {
    const I64 w = width(grp), base = grp * h;
    auto jlo = [&](I64 d) { return std::max<I64>(0, d - base - h + 1); };
    auto jhi = [&](I64 d) { return std::min(w - 1, d - base); };
    I64 lo = base, hi = base + h + w - 2;
    if (diag_pos(hi, jhi(hi)) < x) return false;
    while (lo < hi) {
      const I64 mid = lo + (hi - lo) / 2;
      if (diag_pos(mid, jhi(mid)) >= x) hi = mid; else lo = mid + 1;
    }
    I64 a = jlo(lo), b = jhi(lo);
    while (a < b) {
      const I64 mid = a + (b - a) / 2;
      if (diag_pos(lo, mid) >= x) b = mid; else a = mid + 1;
    }
    d_out = lo;
    pos_out = diag_pos(lo, a);
    return true;
  }
};

// How one read operand is requested, per dataflow.
struct ReadGeom {
  bool diag = true;
  FetchMatrix fetch;
  I64 prefix = 0;         // diag: demand row of the fold's first diagonal
  bool group_is_fr = true;  // diag: the fetch group (and CALC block) is fr, else fc
};

// Rows of a demand row of fold (fr, fc) that carries requests, and more.
struct Event {
  I64 t = 0;
  I64 if_rot = -1;  // USER: rotations of the ifmap window so far, when this row rotated it
  I64 fl_rot = -1;
  unsigned flags = 0;
};
enum : unsigned {
  kIfFirst = 1U, kIfLast = 2U, kFlFirst = 4U, kFlLast = 8U, kOfFirst = 16U, kOfLast = 32U,
  kEnd = 64U, kIfShift = 128U, kFlShift = 256U,
};

// CALC read buffer (read_buffer_estimate_bw.py) at block granularity. Within
// an epoch of E = 50 * floor(size / 100) insertions an address is fetched
// once; a request hits iff its address was inserted during the current
// epoch. A fold's block is a list of distinct addresses, disjoint from every
// other block, so the part of it inserted in the current epoch is all of it
// (its last visit began after the epoch began), none (before), or the suffix
// from offset es_off (the epoch began inside that visit).
class CalcRead {
 public:
  CalcRead(I64 size_words, I64 bw, I64 blocks) : ips_(size_words / 100), bw_(bw), last_(static_cast<std::size_t>(blocks), -1) {
    e_ = 50 * ips_;
  }
  // Fold f reads block `block` (-1: a block no other fold reads) of y
  // addresses. Returns the offset of the last epoch shift inside it, or -1.
  I64 visit(I64 f, I64 block, I64 y) {
    I64 rho = y;
    if (block >= 0) {
      const I64 last = last_[static_cast<std::size_t>(block)];
      if (last >= 0 && last > es_fold_) rho = 0;
      else if (last >= 0 && last == es_fold_) rho = es_off_;
      last_[static_cast<std::size_t>(block)] = f;
    }
    const I64 room = e_ > 0 ? e_ - q_ : std::numeric_limits<I64>::max();
    if (rho < room) {
      inserted_ += rho;
      q_ += rho;
      return -1;
    }
    const I64 p_last = room - 1 + ((y - room) / e_) * e_;
    es_fold_ = f;
    es_off_ = p_last + 1;
    inserted_ += y;
    q_ = y - es_off_;
    return p_last;
  }
  // An operand whose requests repeat addresses (overlapping convolution
  // windows) and that never completes an epoch: each of its `distinct`
  // addresses is inserted exactly once, whatever the order.
  void insert_once(I64 distinct) {
    inserted_ += distinct;
    q_ += distinct;
  }
  // True when `distinct` insertions stay inside the first epoch (no window
  // shift): floor(size / 100) == 0 never completes a set.
  [[nodiscard]] static bool stays_in_first_epoch(I64 size_words, I64 distinct) {
    const I64 e = 50 * (size_words / 100);
    return e == 0 || distinct < e;
  }
  // DRAM reads and the trace of read_buffer_estimate_bw.py, given the cycle
  // of the first request and of the last window shift.
  void finish(I64 first_cycle, I64 last_shift_cycle, I64& reads, I64& start, I64& stop) const {
    reads = inserted_;
    if (e_ > 0 && inserted_ >= e_) {
      start = first_cycle - ceil_div(e_, bw_);
      stop = last_shift_cycle + 1;
      return;
    }
    const I64 cur_set = ips_ > 0 ? inserted_ / ips_ : 0;
    const I64 elems = ips_ > 0 ? inserted_ % ips_ : inserted_;
    const I64 cur = elems == 0 ? cur_set - 1 : cur_set;
    start = -ceil_div((cur + 1) * ips_, bw_);
    stop = -1;
  }

 private:
  I64 ips_, bw_, e_ = 0;
  std::vector<I64> last_;
  I64 inserted_ = 0, q_ = 0, es_fold_ = 0, es_off_ = 0;
};

// USER read buffer (read_buffer.py): the fetch sequence is cut into N lines
// of `set_` valid addresses; the active window holds A lines from s_ and a
// miss rotates it by Pf lines (Pf <= A, so the windows cover every line
// ahead) until the line is inside: k = floor((d - A) / Pf) + 1 rotations
// for a line at forward distance d >= A. Each rotation costs n_rot cycles
// of the interface and moves the "served" cycle by n_rot + 1, whatever the
// demand cycle, so rotations depend on the request order only.
class UserRead {
 public:
  // n_valid: valid addresses of the prefetch matrix; padded_elems: its size with the null
  // requests (scalesim_prefetch_elems), which sets its number of lines.
  UserRead(I64 size_words, I64 bw, I64 n_valid, I64 padded_elems) : bw_(bw) {
    const I64 active = size_words - size_words / 2;
    const I64 prefetch = size_words - active;
    set_ = ceil_div(size_words, 100);
    n_ = n_valid / set_ + 1;
    a_ = std::min(n_, ceil_div(active, set_));
    pf_ = std::min(n_ - a_, ceil_div(prefetch, set_));
    const I64 fetch_rows = std::max<I64>(1, ceil_div(padded_elems, bw_));
    n_init_ = std::min(ceil_div(active, bw_), fetch_rows);
    n_rot_ = ceil_div(prefetch, bw_);
  }
  // Walks requests of increasing fetch position; find(x, row, pos) gives the
  // first one at position >= x. Appends (row, rotations so far) per miss.
  template <class Find>
  void walk(I64 x, Find find, std::vector<std::pair<I64, I64>>& misses) {
    I64 row = 0, pos = 0;
    while (find(x, row, pos)) {
      const I64 line = pos / set_;
      I64 d = ((line - s_) % n_ + n_) % n_;
      if (d >= a_) {
        const I64 k = (d - a_) / pf_ + 1;
        s_ = (s_ + k * pf_) % n_;
        rot_ += k;
        misses.emplace_back(row, rot_);
        d = ((line - s_) % n_ + n_) % n_;
      }
      x = (line + a_ - d) * set_;
    }
  }
  // The active window holds every line of the fetch sequence: no request
  // ever misses, so the window never rotates.
  [[nodiscard]] bool never_rotates() const { return a_ == n_; }
  [[nodiscard]] I64 served(I64 rotations) const { return -1 + rotations * (n_rot_ + 1); }
  [[nodiscard]] I64 reads() const { return (n_init_ + rot_ * n_rot_) * bw_; }
  [[nodiscard]] I64 trace_start() const { return -n_init_; }
  [[nodiscard]] I64 trace_stop() const { return served(rot_); }

 private:
  I64 bw_, set_ = 1, n_ = 1, a_ = 1, pf_ = 0, n_init_ = 0, n_rot_ = 0;
  I64 s_ = 0, rot_ = 0;
};

// write_buffer.py driven by counts: the state machine of the reference
// WriteBuffer, advanced over runs of stores in one step.
class WriteBuffer {
 public:
  WriteBuffer(I64 size_words, I64 bw) : bw_(bw) {
    active_ = size_words - size_words / 2;
    drain_size_ = size_words - active_;
    free_ = size_words;
    max_lines_ = ceil_div(drain_size_, bw_);
  }

  // One demand row with m valid words at `cycle`; returns the cycle it is done.
  I64 write_row(I64 m, I64 cycle) {
    I64 current = cycle;
    while (m > 0) {
      if (current < drain_end_) {
        const I64 k = std::max<I64>(free_, 1);
        if (m < k) { store(m); break; }
        store(k);
        m -= k;
        current = drain_end_;  // full while a drain runs: stall
      } else {
        const I64 k = free_ >= active_ ? free_ - active_ + 1 : 1;
        if (m < k) { store(m); break; }
        store(k);
        m -= k;
        flush_partial();
        drain_end_ = drain(current);
      }
    }
    return current;
  }

  // Demand rows [t0, t1) of a fold; row t is at cycle base + t + stalls.
  void advance(const WriteStream& st, I64 t0, I64 t1, I64 base, I64& stalls) {
    I64 t = t0;
    while (t < t1) {
      const I64 e0 = st.before_row(t);
      const I64 cycle = base + t + stalls;
      I64 t_stop = t1, k = 0;
      if (cycle < drain_end_) {
        t_stop = std::min(t1, t + (drain_end_ - cycle));
        k = std::max<I64>(free_, 1);
      } else {
        k = free_ >= active_ ? free_ - active_ + 1 : 1;
      }
      const I64 m = st.before_row(t_stop) - e0;
      if (m < k) {
        store(m);
        t = t_stop;
        continue;
      }
      const I64 te = st.row_of(e0 + k - 1);
      store(st.before_row(te) - e0);
      const I64 c = base + te + stalls;
      stalls += write_row(st.count(te), c) - c;
      t = te + 1;
    }
  }

  void empty_all(I64 cycle) {
    flush_partial();
    while (pending_lines_ > 0) {
      drain_end_ = drain(cycle);
      cycle = drain_end_ + 1;
    }
  }

  [[nodiscard]] I64 writes() const { return num_access_; }
  [[nodiscard]] I64 trace_start() const { return trace_start_; }
  [[nodiscard]] I64 trace_stop() const { return trace_stop_; }

 private:
  struct Run {
    I64 lines;
    I64 words_each;
  };
  void push(I64 lines, I64 words) {
    if (lines <= 0) return;
    if (!pending_.empty() && pending_.back().words_each == words) pending_.back().lines += lines;
    else pending_.push_back({lines, words});
    pending_lines_ += lines;
  }
  void store(I64 m) {
    if (m <= 0) return;
    free_ -= m;
    line_idx_ += m;
    push(line_idx_ / bw_, bw_);
    line_idx_ %= bw_;
  }
  void flush_partial() {
    if (line_idx_ != 0) {
      push(1, line_idx_);
      line_idx_ = 0;
    }
  }
  I64 drain(I64 start_cycle) {
    const I64 n = std::min(max_lines_, pending_lines_);
    if (n <= 0) return start_cycle;
    I64 left = n, last = bw_;
    while (left > 0) {
      Run& f = pending_.front();
      const I64 take = std::min(left, f.lines);
      last = f.words_each;
      f.lines -= take;
      left -= take;
      if (f.lines == 0) pending_.pop_front();
    }
    pending_lines_ -= n;
    const I64 data = n * bw_ - (bw_ - last);  // SCALE-Sim pads all but the last line
    num_access_ += data;
    const I64 end = start_cycle + n - 1;
    // SCALE-Sim reports the first drain's first line and the last drain's last line (the
    // ends of its trace), not the extremes: the final drain starts at the last demand row's
    // cycle, which can be before the end of a drain still running.
    if (!traced_) {
      trace_start_ = start_cycle;
      traced_ = true;
    }
    trace_stop_ = end;
    free_ += data;
    return end;
  }

  I64 bw_, active_ = 0, drain_size_ = 0, free_ = 0, max_lines_ = 1;
  I64 line_idx_ = 0;
  std::deque<Run> pending_;
  I64 pending_lines_ = 0;
  I64 drain_end_ = 0, num_access_ = 0;
  bool traced_ = false;
  I64 trace_start_ = 0, trace_stop_ = 0;
};

// No window reads past the ifmap edge (SCALE-Sim's ceil rounding of E / F
// can make the last window do so; those requests are empty).
bool in_bounds(const ConvLayer& l, const LoweredShape& s) {
  return (s.ofmap_h - 1) * l.stride_h + l.filter_h <= l.ifmap_h &&
         (s.ofmap_w - 1) * l.stride_w + l.filter_w <= l.ifmap_w;
}

// Along one ifmap dimension of `size` with `outputs` windows of `filter` at
// `stride`: (1) the positions some window reads, (2) the (window, offset)
// pairs that fall inside the ifmap (requests that are not empty).
I64 covered_positions(I64 outputs, I64 filter, I64 stride, I64 size) {
  I64 covered = 0, end = 0;  // union of [o * stride, o * stride + filter) clipped to size
  for (I64 o = 0; o < outputs; ++o) {
    const I64 lo = std::max(o * stride, end), hi = std::min(o * stride + filter, size);
    if (hi > lo) covered += hi - lo;
    end = std::max(end, hi);
  }
  return covered;
}
I64 valid_pairs(I64 outputs, I64 filter, I64 stride, I64 size) {
  I64 n = 0;
  for (I64 o = 0; o < outputs; ++o) n += std::clamp<I64>(size - o * stride, 0, filter);
  return n;
}

// Distinct ifmap words the layer requests.
I64 covered_ifmap_words(const ConvLayer& l, const LoweredShape& s) {
  return covered_positions(s.ofmap_h, l.filter_h, l.stride_h, l.ifmap_h) *
         covered_positions(s.ofmap_w, l.filter_w, l.stride_w, l.ifmap_w) * l.channels;
}
// Non-empty ifmap requests of the layer (the valid entries of SCALE-Sim's
// ifmap prefetch matrix, every dataflow).
I64 valid_ifmap_requests(const ConvLayer& l, const LoweredShape& s) {
  return valid_pairs(s.ofmap_h, l.filter_h, l.stride_h, l.ifmap_h) *
         valid_pairs(s.ofmap_w, l.filter_w, l.stride_w, l.ifmap_w) * l.channels;
}

// Whether ifmap request (px, w) is not empty (compute/operand_matrix.py).
bool ifmap_valid(const ConvLayer& l, const LoweredShape& s, I64 px, I64 w) {
  const I64 orow = px / s.ofmap_w, ocol = px % s.ofmap_w;
  const I64 crow = w / (l.filter_w * l.channels);
  const I64 ccol = (w % (l.filter_w * l.channels)) / l.channels;
  return orow * l.stride_h + crow < l.ifmap_h && ocol * l.stride_w + ccol < l.ifmap_w;
}

}  // namespace

bool scalesim_fast_path_applies(const ConvLayer& l) {
  const LoweredShape s = lower(l);
  if (s.ofmap_h < 1 || s.ofmap_w < 1 || s.window < 1 || s.filters < 1) return false;
  const bool distinct_rows = l.filter_h <= l.stride_h || s.ofmap_h == 1;
  const bool distinct_cols = l.filter_w <= l.stride_w || s.ofmap_w == 1;
  return in_bounds(l, s) && distinct_rows && distinct_cols;
}

bool scalesim_fast_path_applies(const SystolicArray& a, const ConvLayer& l) {
  const I64 if_words = a.ifmap_sram_bytes / a.word_bytes;
  const I64 fl_words = a.filter_sram_bytes / a.word_bytes;
  const I64 of_words = a.ofmap_sram_bytes / a.word_bytes;
  if (std::min({if_words, fl_words, of_words}) < 2) return false;
  if (scalesim_fast_path_applies(l)) return true;
  const LoweredShape s = lower(l);
  if (s.ofmap_h < 1 || s.ofmap_w < 1 || s.window < 1 || s.filters < 1) return false;
  // Windows past the edge: the first and last folds must still hold a
  // non-empty ifmap request (the first / last ones are searched there). A ws
  // fold is a window slice over all pixels: pixel 0 reads every window
  // element inside the ifmap when the filter fits it. An os fold is a pixel
  // slice over the whole window: window element 0 of every pixel is inside
  // when no output row / column starts past the edge. An is fold pairs a
  // window slice with a pixel slice and may be empty: replayed.
  const bool filter_fits = l.filter_h <= l.ifmap_h && l.filter_w <= l.ifmap_w;
  const bool pixels_start_inside =
      (s.ofmap_h - 1) * l.stride_h < l.ifmap_h && (s.ofmap_w - 1) * l.stride_w < l.ifmap_w;
  const bool edge_ok = in_bounds(l, s) ||
                       (a.dataflow == Dataflow::weight_stationary && filter_fits) ||
                       (a.dataflow == Dataflow::output_stationary && filter_fits && pixels_start_inside);
  if (!edge_ok) return false;
  // Overlapping windows or windows past the edge: only when the ifmap buffer
  // never leaves its first window, so that the order of the repeated (or
  // empty) requests does not matter.
  if (a.bandwidth_mode == DramBandwidthMode::limited) {
    const UserRead probe(if_words, a.dram_words_per_cycle, valid_ifmap_requests(l, s),
                         detail::scalesim_prefetch_elems(a, s, fold_plan(a, s), true));
    return probe.never_rotates();
  }
  return CalcRead::stays_in_first_epoch(if_words, covered_ifmap_words(l, s));
}

namespace {

// A layer as the fold-level model walks it: the array, the lowered shape and fold plan, the
// request geometry of each read operand (see the file comment), and the demand rows of each
// fold that carry requests. `if_repeats`: overlapping windows or windows past the ifmap edge
// (taken only when the ifmap buffer stays in its first window, see scalesim_fast_path_applies):
// the ifmap is then fetched once, each covered word one insertion, and never stalls the array;
// only its first and last non-empty demand rows are searched for.
struct FoldWalk {
  const SystolicArray& a;
  const ConvLayer& layer;
  LoweredShape s;
  FoldPlan p;
  I64 fold_lines;
  I64 r, c, rf, cf, sr, t_win, sc;
  bool if_repeats;
  ReadGeom gi, gf;

  FoldWalk(const SystolicArray& arr, const ConvLayer& l)
      : a(arr), layer(l), s(lower(l)), p(fold_plan(arr, s)), fold_lines(detail::scalesim_fold_lines(arr, p)),
        r(arr.rows), c(arr.cols), rf(p.row_folds), cf(p.col_folds), sr(s.ofmap_px), t_win(s.window),
        sc(s.filters), if_repeats(!scalesim_fast_path_applies(l)) {
    const FetchMatrix by_fr_h_rows_of_r = {0, rf, r, ru(rf - 1)};
    const FetchMatrix by_fc_t_rows_of_c = {t_win, cf, c, cu(cf - 1)};
    switch (a.dataflow) {
      case Dataflow::weight_stationary:
        gi = {true, by_fr_h_rows_of_r, r, true};
        gi.fetch.h = sr;
        gf = {false, by_fc_t_rows_of_c, 0, false};
        break;
      case Dataflow::output_stationary:
        gi = {true, by_fr_h_rows_of_r, 0, true};
        gi.fetch.h = t_win;
        gf = {true, by_fc_t_rows_of_c, 0, false};
        break;
      case Dataflow::input_stationary:
        gi = {false, by_fc_t_rows_of_c, 0, false};
        gf = {true, by_fr_h_rows_of_r, r, true};
        gf.fetch.h = sc;
        break;
    }
  }

  [[nodiscard]] I64 ru(I64 fr) const { return std::min(r, p.array_rows_dim - fr * r); }
  [[nodiscard]] I64 cu(I64 fc) const { return std::min(c, p.array_cols_dim - fc * c); }
  [[nodiscard]] const ReadGeom& geom(int op) const { return op == 0 ? gi : gf; }

  [[nodiscard]] WriteStream write_stream(I64 fr, I64 fc) const {
    switch (a.dataflow) {
      case Dataflow::weight_stationary: return WriteStream{2 * r - 1, {sr, cu(fc)}};
      case Dataflow::output_stationary: return WriteStream{t_win - 1 + r - ru(fr), {ru(fr), cu(fc)}};
      case Dataflow::input_stationary: return WriteStream{2 * r - 1, {sc, cu(fc)}};
    }
    return WriteStream{};
  }
  // First / last demand row with requests of an operand in fold (fr, fc).
  void read_rows(const ReadGeom& g, I64 fr, I64 fc, I64& first, I64& last) const {
    if (g.diag) {
      const I64 grp = g.group_is_fr ? fr : fc;
      first = g.prefix;
      last = g.prefix + g.fetch.h + g.fetch.width(grp) - 2;
    } else {
      first = r - ru(fr);
      last = r - 1;
    }
  }
  // Whether ifmap demand row t of fold (fr, fc) holds a non-empty request
  // (the demand matrices of systolic.cpp's DemandGen, ifmap only).
  [[nodiscard]] bool if_row_valid(I64 fr, I64 fc, I64 t) const {
    switch (a.dataflow) {
      case Dataflow::weight_stationary:  // column j: window fr*r + j, pixel t - r - j
        for (I64 j = std::max<I64>(0, t - r - sr + 1); j < std::min(ru(fr), t - r + 1); ++j)
          if (ifmap_valid(layer, s, t - r - j, fr * r + j)) return true;
        return false;
      case Dataflow::output_stationary:  // column j: pixel fr*r + j, window t - j
        for (I64 j = std::max<I64>(0, t - t_win + 1); j < std::min(ru(fr), t + 1); ++j)
          if (ifmap_valid(layer, s, fr * r + j, t - j)) return true;
        return false;
      case Dataflow::input_stationary:  // window fr*r + r-1-t, pixels fc*c + j
        for (I64 j = 0; j < cu(fc); ++j)
          if (ifmap_valid(layer, s, fc * c + j, fr * r + r - 1 - t)) return true;
        return false;
    }
    return false;
  }
  // First / last demand row with a non-empty ifmap request of a fold.
  void if_read_rows(I64 fr, I64 fc, I64& first, I64& last) const {
    read_rows(gi, fr, fc, first, last);
    if (!if_repeats) return;  // every request in bounds
    while (first < last && !if_row_valid(fr, fc, first)) ++first;
    while (last > first && !if_row_valid(fr, fc, last)) --last;
  }
};

// The three buffers between the array and DRAM: per read operand (0 ifmap, 1 filter) a USER
// read buffer (a.bandwidth_mode limited) or a CALC one, and the ofmap write buffer.
struct Buffers {
  bool user;
  std::vector<CalcRead> calc;
  std::vector<UserRead> usr;
  WriteBuffer wb;

  explicit Buffers(const FoldWalk& w)
      : user(w.a.bandwidth_mode == DramBandwidthMode::limited),
        wb(w.a.ofmap_sram_bytes / w.a.word_bytes, user ? w.a.dram_words_per_cycle : w.a.cols) {
    const SystolicArray& a = w.a;
    const I64 read_bw = user ? a.dram_words_per_cycle : 10;  // CALC: SCALE-Sim's fixed 10
    const I64 sizes[2] = {a.ifmap_sram_bytes / a.word_bytes, a.filter_sram_bytes / a.word_bytes};
    for (int op = 0; op < 2; ++op) {
      const ReadGeom& g = w.geom(op);
      // (windows past the edge leave empty entries in the ifmap fetch matrix)
      const I64 n_valid = op == 0 && w.if_repeats ? valid_ifmap_requests(w.layer, w.s) : g.fetch.valid();
      if (user) usr.emplace_back(sizes[op], read_bw, n_valid, detail::scalesim_prefetch_elems(a, w.s, w.p, op == 0));
      else calc.emplace_back(sizes[op], read_bw, g.group_is_fr ? w.rf : w.cf);
    }
    if (w.if_repeats && !user) calc[0].insert_once(covered_ifmap_words(w.layer, w.s));
  }
};

// USER: the demand rows of fold (fr, fc) at which operand `op`'s read buffer misses, each with
// the rotations of its window so far. A diagonal stream's requests are searched along its
// fetch matrix's anti-diagonals; a row stream's rows are walked backwards in the window
// dimension, each a run of positions.
void user_read_events(const FoldWalk& w, int op, I64 fr, I64 fc, UserRead& buffer,
                      std::vector<std::pair<I64, I64>>& misses, std::vector<Event>& events) {
  const ReadGeom& g = w.geom(op);
  misses.clear();
  if (g.diag) {
    const I64 grp = g.group_is_fr ? fr : fc;
    auto find = [&](I64 x, I64& row, I64& pos) {
      I64 d = 0;
      if (!g.fetch.diag_find(grp, x, d, pos)) return false;
      row = g.prefix + d - grp * g.fetch.h;
      return true;
    };
    buffer.walk(0, find, misses);
  } else {
    const I64 width = w.cu(fc);
    for (I64 t = w.r - w.ru(fr); t < w.r; ++t) {
      const I64 start = g.fetch.row_start(fc * w.t_win + fr * w.r + w.r - 1 - t);
      auto find = [&](I64 x, I64& row, I64& pos) {
        if (x >= start + width) return false;
        row = t;
        pos = std::max(x, start);
        return true;
      };
      buffer.walk(start, find, misses);
    }
  }
  for (const auto& [row, rot] : misses) {
    Event e{row, -1, -1, 0U};
    (op == 0 ? e.if_rot : e.fl_rot) = rot;
    events.push_back(e);
  }
}

// CALC: fold f = (fr, fc) visits operand `op`'s block (a diagonal stream's fetch group, shared
// by the folds of that group; a row stream's own rows); the demand row at which the buffer's
// window last shifts inside it, if it does.
void calc_read_events(const FoldWalk& w, int op, I64 f, I64 fr, I64 fc, CalcRead& buffer,
                      std::vector<Event>& events) {
  const ReadGeom& g = w.geom(op);
  const unsigned flag = op == 0 ? kIfShift : kFlShift;
  if (g.diag) {
    const I64 grp = g.group_is_fr ? fr : fc;
    const Rect rect{g.fetch.h, g.fetch.width(grp)};
    const I64 sh = buffer.visit(f, grp, rect.h * rect.w);
    if (sh >= 0) events.push_back({g.prefix + rect.diag_of(sh), -1, -1, flag});
  } else {
    const I64 sh = buffer.visit(f, -1, w.ru(fr) * w.cu(fc));
    if (sh >= 0) events.push_back({w.r - w.ru(fr) + sh / w.cu(fc), -1, -1, flag});
  }
}

// The demand rows of fold (fr, fc) where something happens, sorted: the first and last requests
// of each operand (first and last folds), the read buffers' misses (USER) or window shifts (CALC),
// the first and last ofmap writes and the fold's end (last fold).
void fold_events(const FoldWalk& w, Buffers& buf, I64 fr, I64 fc, const WriteStream& ws,
                 std::vector<std::pair<I64, I64>>& misses, std::vector<Event>& events) {
  const I64 f = fc * w.rf + fr;
  const bool first_fold = f == 0, last_fold = f == w.rf * w.cf - 1;
  events.clear();
  for (int op = 0; op < 2; ++op) {
    I64 row_first = 0, row_last = 0;
    if (op == 0 && (first_fold || last_fold)) w.if_read_rows(fr, fc, row_first, row_last);
    else w.read_rows(w.geom(op), fr, fc, row_first, row_last);
    if (first_fold) events.push_back({row_first, -1, -1, op == 0 ? kIfFirst : kFlFirst});
    if (last_fold) events.push_back({row_last, -1, -1, op == 0 ? kIfLast : kFlLast});
    if (op == 0 && w.if_repeats) continue;  // counted once (CALC) / never rotates (USER)
    if (buf.user) user_read_events(w, op, fr, fc, buf.usr[static_cast<std::size_t>(op)], misses, events);
    else calc_read_events(w, op, f, fr, fc, buf.calc[static_cast<std::size_t>(op)], events);
  }
  if (first_fold) events.push_back({ws.start, -1, -1, kOfFirst});
  if (last_fold) {
    events.push_back({ws.start + ws.rect.diags() - 1, -1, -1, kOfLast});
    events.push_back({w.fold_lines - 1, -1, -1, kEnd});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) { return x.t < y.t; });
}

// The cycles the walk carries from fold to fold: stalls so far, the last output's cycle, and
// per read operand the cycle of its first request and of its buffer's last window shift (CALC).
struct WalkClock {
  I64 stalls = 0, last_out = 0;
  I64 first_cycle[2] = {0, 0}, shift_cycle[2] = {0, 0};
};

// Runs fold `f`'s demand rows: the write buffer advanced between events, and at each event (the
// events of one row merged) its reads served, its ofmap row written, the trace's first and last
// cycles noted and the stall it causes added.
void run_fold(const FoldWalk& w, Buffers& buf, const WriteStream& ws, const std::vector<Event>& events, I64 f,
              WalkClock& clk, SystolicResult& res) {
  const I64 base = f * w.fold_lines;
  I64 t = 0;
  for (std::size_t k = 0; k < events.size();) {
    Event e = events[k];
    for (++k; k < events.size() && events[k].t == e.t; ++k) {
      e.if_rot = std::max(e.if_rot, events[k].if_rot);
      e.fl_rot = std::max(e.fl_rot, events[k].fl_rot);
      e.flags |= events[k].flags;
    }
    buf.wb.advance(ws, t, e.t, base, clk.stalls);
    const I64 cycle = base + e.t + clk.stalls;
    // A row that makes its buffer fetch is served when the fetch ends, and never before the hit
    // latency of one cycle (read_buffer.py: the offset grows only by positive stalls).
    const I64 if_out = e.if_rot >= 0 ? std::max(cycle + 1, buf.usr[0].served(e.if_rot)) : cycle + 1;
    const I64 fl_out = e.fl_rot >= 0 ? std::max(cycle + 1, buf.usr[1].served(e.fl_rot)) : cycle + 1;
    const I64 of_out = buf.wb.write_row(ws.count(e.t), cycle);
    if (e.flags & kIfFirst) { res.sram_ifmap_start = if_out; clk.first_cycle[0] = cycle; }
    if (e.flags & kFlFirst) { res.sram_filter_start = fl_out; clk.first_cycle[1] = cycle; }
    if (e.flags & kOfFirst) res.sram_ofmap_start = of_out;
    if (e.flags & kIfLast) res.sram_ifmap_stop = if_out;
    if (e.flags & kFlLast) res.sram_filter_stop = fl_out;
    if (e.flags & kOfLast) res.sram_ofmap_stop = of_out;
    if (e.flags & kIfShift) clk.shift_cycle[0] = cycle;
    if (e.flags & kFlShift) clk.shift_cycle[1] = cycle;
    if (e.flags & kEnd) clk.last_out = of_out;
    clk.stalls += std::max({if_out - cycle - 1, fl_out - cycle - 1, of_out - cycle});
    t = e.t + 1;
  }
  buf.wb.advance(ws, t, w.fold_lines, base, clk.stalls);
}

// DRAM traffic and traces of the three buffers, the total and stall cycles and the utilisation.
void finish_result(const FoldWalk& w, Buffers& buf, const WalkClock& clk, SystolicResult& res) {
  if (buf.user) {
    res.dram_ifmap_reads = buf.usr[0].reads();
    res.dram_filter_reads = buf.usr[1].reads();
    res.dram_ifmap_start = buf.usr[0].trace_start();
    res.dram_ifmap_stop = buf.usr[0].trace_stop();
    res.dram_filter_start = buf.usr[1].trace_start();
    res.dram_filter_stop = buf.usr[1].trace_stop();
  } else {
    buf.calc[0].finish(clk.first_cycle[0], clk.shift_cycle[0], res.dram_ifmap_reads, res.dram_ifmap_start,
                       res.dram_ifmap_stop);
    buf.calc[1].finish(clk.first_cycle[1], clk.shift_cycle[1], res.dram_filter_reads, res.dram_filter_start,
                       res.dram_filter_stop);
  }
  buf.wb.empty_all(clk.last_out);
  res.dram_ofmap_writes = buf.wb.writes();
  res.dram_ofmap_start = buf.wb.trace_start();
  res.dram_ofmap_stop = buf.wb.trace_stop();
  res.total_cycles = clk.last_out;
  res.stall_cycles = clk.stalls;
  res.overall_util_pct = 100.0 * static_cast<double>(w.s.macs) /
                         (static_cast<double>(res.total_cycles) * static_cast<double>(w.a.rows * w.a.cols));
}

}  // namespace

SystolicResult simulate_scalesim(const SystolicArray& a, const ConvLayer& layer) {
  if (!scalesim_fast_path_applies(a, layer)) return simulate_scalesim_reference(a, layer);
  const FoldWalk w(a, layer);
  SystolicResult res;
  detail::fill_fold_statistics(a, w.s, w.p, w.fold_lines, res);
  Buffers buf(w);
  WalkClock clk;
  std::vector<Event> events;
  std::vector<std::pair<I64, I64>> misses;
  for (I64 fc = 0; fc < w.cf; ++fc) {
    for (I64 fr = 0; fr < w.rf; ++fr) {
      const WriteStream ws = w.write_stream(fr, fc);
      fold_events(w, buf, fr, fc, ws, misses, events);
      run_fold(w, buf, ws, events, fc * w.rf + fr, clk, res);
    }
  }
  finish_result(w, buf, clk, res);
  return res;
}

namespace detail {

std::int64_t scalesim_prefetch_elems(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p, bool ifmap) {
  switch (a.dataflow) {
    case Dataflow::weight_stationary:  // ifmap: window folds on rows; filter: filter folds on columns
      return ifmap ? p.row_folds * a.rows * s.ofmap_px : p.col_folds * a.cols * s.window;
    case Dataflow::output_stationary:  // ifmap: pixel folds on rows; filter: filter folds on columns
      return ifmap ? p.row_folds * a.rows * s.window : p.col_folds * a.cols * s.window;
    case Dataflow::input_stationary:  // ifmap: pixel folds on columns; filter: window folds on rows
      return ifmap ? p.col_folds * a.cols * s.window : p.row_folds * a.rows * s.filters;
  }
  return 0;
}

}  // namespace detail

}  // namespace dse::costmodel

// A table of rows about points (a compound dataset: a uint64 key column, then numbers and texts
// in the order the columns are declared), filled by every rank for the points of its part of the
// archive and written collectively: the ranks exchange their row counts and text widths, every rank
// makes the dataset and writes its rows after those of the lower ranks (the parts are in index order,
// so the rows are too, for any rank count). Each text column is as wide as its longest value (a loop nest is never cut).
// Used for /mapping_sheets, /risk_items, /step_breakdown, /serving_curves and /roofs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/h5/h5.hpp"

namespace dse {

enum class CellKind { number, integer, text };

struct PointTableColumn {
  std::string name;
  CellKind kind = CellKind::number;
};

class PointTable {
 public:
  // `key`: the name of the first column (uint64: point_index, or hardware_id).
  PointTable(std::string key, std::vector<PointTableColumn> columns);
  // A new row for `key`; then one add() per column, in order.
  void row(std::uint64_t key);
  void add(double v);
  void add(std::int64_t v);
  void add(const std::string& v);
  [[nodiscard]] std::size_t rows() const { return keys_.size(); }

  // Error when a row has not got every column or a number is not finite and >= 0 (every rank calls
  // it inside its agreed stretch).
  void check(const std::string& name) const;
  // Collective: every rank calls it with its rows (which must have passed check()), written after
  // the lower ranks' rows. Uncompressed, like every dataset written collectively.
  void write(hid_t file, Context& ctx, const std::string& name) const;

 private:
  std::string key_;
  std::vector<PointTableColumn> columns_;
  std::vector<std::uint64_t> keys_;
  std::vector<double> numbers_;         // row-major over the number columns
  std::vector<std::int64_t> integers_;  // row-major over the integer columns
  std::vector<std::string> texts_;      // row-major over the text columns
  std::size_t count(CellKind k) const;
};

}  // namespace dse

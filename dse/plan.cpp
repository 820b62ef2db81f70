#include "dse/plan.hpp"

#include "dse/error.hpp"

namespace dse {

std::string_view to_string(Store s) {
  switch (s) {
    case Store::all: return "all";
    case Store::archive: return "archive";
    case Store::none: return "none";
  }
  return "?";
}

Store parse_store(const std::string& s) {
  if (s == "all") return Store::all;
  if (s == "archive") return Store::archive;
  if (s == "none") return Store::none;
  throw InputError("--store: expected all, archive or none (got '" + s + "')");
}

std::string_view to_string(SamplerKind k) {
  switch (k) {
    case SamplerKind::exhaustive: return "exhaustive";
    case SamplerKind::random: return "random";
    case SamplerKind::nsga2: return "nsga2";
  }
  return "?";
}

}  // namespace dse

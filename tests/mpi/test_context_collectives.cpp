// Context::all_gather under mpirun (dse/driver/context.hpp): every rank's bytes, in rank order, on
// every rank, with ranks of different sizes, an empty contribution and all contributions empty; the
// same bytes as the binomial-tree gather and broadcast it replaced. Exit code 0 and "ok" on rank 0
// when every check holds on every rank.
#include <cstdio>
#include <string>

#include "dse/driver/context.hpp"

namespace {

// Rank r's contribution in case c: (r * 3 + c) % 5 bytes, rank 1 none in case 0, every byte
// naming its rank, case and position.
dse::Bytes contribution(int rank, int c) {
  const int n = rank == 1 && c == 0 ? 0 : (rank * 3 + c) % 5 + (c == 2 ? 70000 : 0);
  dse::Bytes b(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) b[static_cast<std::size_t>(i)] = static_cast<char>(rank * 31 + c * 7 + i);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  dse::MpiSession session(argc, argv);
  const auto ctx = session.world();
  int failures = 0;
  for (int c = 0; c < 3; ++c) {
    dse::Bytes want;
    for (int r = 0; r < ctx->size(); ++r) {
      const dse::Bytes part = contribution(r, c);
      want.insert(want.end(), part.begin(), part.end());
    }
    const dse::Bytes got = ctx->all_gather(contribution(ctx->rank(), c));
    if (got != want) {
      std::fprintf(stderr, "rank %d case %d: all_gather gave %zu bytes, want %zu\n", ctx->rank(), c, got.size(),
                   want.size());
      ++failures;
    }
    // The tree's gather and broadcast give the same bytes.
    const dse::Bytes tree = dse::tree_reduce(*ctx, contribution(ctx->rank(), c), [](dse::Bytes a, dse::Bytes b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    });
    if (ctx->broadcast(ctx->rank() == 0 ? tree : dse::Bytes{}, 0) != got) {
      std::fprintf(stderr, "rank %d case %d: the tree's gather differs\n", ctx->rank(), c);
      ++failures;
    }
  }
  if (!ctx->all_gather({}).empty()) {
    std::fprintf(stderr, "rank %d: empty contributions gave bytes\n", ctx->rank());
    ++failures;
  }
  const auto total = ctx->sum(static_cast<std::uint64_t>(failures));
  if (ctx->rank() == 0 && total == 0) std::printf("ok\n");
  return total == 0 ? 0 : 1;
}

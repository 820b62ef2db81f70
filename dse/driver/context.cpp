#include "dse/driver/context.hpp"

#include <stdexcept>

namespace dse {

namespace {

class LocalContext final : public Context {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  [[nodiscard]] bool distributed() const override { return false; }
  void barrier() override {}
  Bytes broadcast(Bytes data, int /*root*/) override { return data; }
  void send(const Bytes& /*data*/, int /*dest*/, int /*tag*/) override {
    throw std::logic_error("local context has no other rank to send to");
  }
  Bytes receive(int /*source*/, int /*tag*/) override {
    throw std::logic_error("local context has no other rank to receive from");
  }
  int poll(int /*tag*/) override { return -1; }
  int wait_any(int /*tag*/) override { throw std::logic_error("local context has no other rank to wait for"); }
  std::uint64_t sum(std::uint64_t value) override { return value; }
  std::int64_t max(std::int64_t value) override { return value; }
  Bytes all_gather(Bytes mine) override { return mine; }
  std::vector<Bytes> exchange(std::vector<Bytes> out) override {
    if (out.size() != 1) throw std::logic_error("local context: exchange() takes one buffer");
    return out;
  }
  [[nodiscard]] int node_ranks() const override { return 1; }
  void configure_hdf5_access(std::int64_t /*fapl*/) const override {}
};

}  // namespace

std::unique_ptr<Context> make_local_context() { return std::make_unique<LocalContext>(); }

Bytes tree_reduce(Context& ctx, Bytes local, const std::function<Bytes(Bytes, Bytes)>& combine) {
  constexpr int kTag = 7301;
  const int rank = ctx.rank();
  const int size = ctx.size();
  for (int step = 1; step < size; step <<= 1) {
    if (rank % (2 * step) == 0) {
      const int partner = rank + step;
      if (partner < size) local = combine(std::move(local), ctx.receive(partner, kTag));
    } else {
      ctx.send(local, rank - step, kTag);
      return {};
    }
  }
  return local;
}

}  // namespace dse

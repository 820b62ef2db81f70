#include "dse/driver/agree.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

#include "dse/error.hpp"

namespace dse {

namespace {

// The kind of an error as one byte, and its message.
std::pair<char, std::string> encode(const std::exception_ptr& e, int rank) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    return {'E', x.what()};
  } catch (const IoError& x) {
    return {'I', x.what()};
  } catch (const Interrupted& x) {
    return {'X', x.what()};
  } catch (const MpiError& x) {
    return {'M', x.what()};
  } catch (const Error& x) {
    return {'R', x.what()};
  } catch (const std::exception& x) {
    return {'S', "internal error on rank " + std::to_string(rank) + ": " + x.what()};
  } catch (...) {
    return {'S', "internal error on rank " + std::to_string(rank) + ": an unknown exception"};
  }
}

[[noreturn]] void raise(char kind, const std::string& message) {
  switch (kind) {
    case 'E': throw InputError(message);
    case 'I': throw IoError(message);
    case 'X': throw Interrupted(message);
    case 'M': throw MpiError(message);
    default: throw Error(message);
  }
}

}  // namespace

void agree(Context& ctx, std::exception_ptr local) {
  // The lowest failing rank, or size() when none failed: a maximum of negated ranks.
  const std::int64_t mine = local ? ctx.rank() : ctx.size();
  const std::int64_t first = -ctx.max(-mine);
  if (first >= ctx.size()) return;
  const auto [kind, message] = local ? encode(local, ctx.rank()) : std::pair<char, std::string>{'R', ""};
  Bytes payload;
  if (ctx.rank() == first) {
    payload.push_back(kind);
    payload.insert(payload.end(), message.begin(), message.end());
  }
  payload = ctx.broadcast(payload, static_cast<int>(first));
  if (payload.empty()) throw MpiError("agreeing on an error: an empty message");
  // The failing rank keeps its own exception (a ConfigError keeps its fields); a library
  // exception becomes the Error every other rank throws.
  if (ctx.rank() == first && kind != 'S') std::rethrow_exception(local);
  raise(payload[0], std::string(payload.begin() + 1, payload.end()));
}

void test_fault_point(const char* phase, int rank) {
  static const std::string spec = [] {
    const char* e = std::getenv("DSE_TEST_FAULT");
    return std::string(e != nullptr ? e : "");
  }();
  if (spec.empty()) return;
  const std::string here = std::string(phase) + ":" + std::to_string(rank);
  if (spec == here + ":signal") {
    static bool sent = false;  // once: a phase may be passed again (the next round)
    if (!sent) {
      sent = true;
      (void)std::raise(SIGTERM);
    }
    return;
  }
  if (spec == here) {
    throw Error("injected failure in " + std::string(phase) + " on rank " + std::to_string(rank) +
                " (DSE_TEST_FAULT)");
  }
}

}  // namespace dse

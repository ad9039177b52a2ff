// Built against the installed SDK by tests/install: what an out-of-tree plugin sees through
// switchyard::abi, the ABI header and the header-only plugin_support/ next to it, with nothing to
// link. The function is never called; that it compiles and links is the check.
#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/format_bytes.h"
#include "switchyard/plugin_support/memory_accounting.h"
#include "switchyard/plugin_support/status.h"

extern "C" sy_status plugin_support_check(uint64_t size_bytes, sy_memory_stats* stats) {
  sy_support::PoolAccounting accounting(size_bytes);
  sy_support::BlockCache<void*> cache;
  const uint64_t block_bytes = sy_support::size_class(size_bytes);
  if (!accounting.make_room(block_bytes, [&] { cache.drain([](uint64_t, void*) {}); })) {
    return sy_support::report(sy_support::resource_exhausted(
        accounting.over_cap_message("check", size_bytes, block_bytes)));
  }
  accounting.on_reserve(block_bytes);
  accounting.on_allocate(block_bytes);
  *stats = accounting.stats();
  return sy_support::report(sy_support::ok_status());
}

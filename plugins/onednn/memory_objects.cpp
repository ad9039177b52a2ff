#include "memory_objects.h"

namespace sy_onednn {

dnnl_memory_t MemoryObjects::get(const dnnl::memory::desc& desc, int arg,
                                 const dnnl::engine& engine, void* data) {
  auto [it, added] = entries_.try_emplace({&desc, arg});
  Entry& entry = it->second;
  if (added || !(entry.desc == desc)) {
    try {
      entry.memory = dnnl::memory(desc, engine, data);
    } catch (...) {
      entries_.erase(it);
      throw;
    }
    entry.desc = desc;
    return entry.memory.get();
  }
  dnnl::error::wrap_c_api(dnnl_memory_set_data_handle(entry.memory.get(), data),
                          "could not set a memory object's data");
  return entry.memory.get();
}

void MemoryObjects::trim() {
  if (entries_.size() > kMaxKept) entries_.clear();
}

}  // namespace sy_onednn

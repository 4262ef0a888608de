#include "deploy/runtime/gemm_launch_check.h"

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunefleet::runtime {
namespace {

constexpr int64_t kMaxKnob = int64_t{1} << 20;  // far above any tile or work-group side of the space

std::string Sizes(const std::vector<uint64_t>& sizes) {
  std::string out;
  for (uint64_t v : sizes) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out.empty() ? "(none)" : out;
}

}  // namespace

Status CheckGemmBufferLaunch(const PackedKernel& kernel, uint64_t m, uint64_t n, uint64_t k, uint64_t batch) {
  const std::string where = kernel.task + " (" + kernel.template_name + "): ";
  if (kernel.template_name != "gemm.buffer") {
    return Status::InvalidArgument(where + "the launch geometry of gemm.buffer kernels only is known here");
  }
  const std::pair<const char*, uint64_t> operands[3] = {
      {"A", batch * m * k}, {"B", batch * k * n}, {"C", batch * m * n}};
  for (const auto& [name, elements] : operands) {
    const PackBuffer* b = kernel.program.FindBuffer(name);
    std::string wrong;
    if (b == nullptr) {
      wrong = "is missing";
    } else if (b->type != ElemType::kFloat32) {
      wrong = "is not float32";
    } else if (b->count != elements) {
      wrong = "holds " + std::to_string(b->count) + " elements";
    }
    if (wrong.empty()) continue;
    return Status::InvalidArgument(where + "buffer '" + name + "' " + wrong + ", but the kernel indexes " +
                                   std::to_string(elements) + " float32 elements of it for M=" + std::to_string(m) +
                                   ", N=" + std::to_string(n) + ", K=" + std::to_string(k) +
                                   ": the pack was edited or is damaged, and a smaller buffer would pass its size "
                                   "check; not launched");
  }
  const std::vector<PackLaunch>& launches = kernel.program.launches;
  if (launches.size() != 1) {
    return Status::InvalidArgument(where + "a gemm.buffer program has one launch, this one " +
                                   std::to_string(launches.size()) + ": the pack was edited or is damaged");
  }
  const nlohmann::json config = nlohmann::json::parse(kernel.config, nullptr, false);
  int64_t knob[4] = {0, 0, 0, 0};
  const char* names[4] = {"MWG", "NWG", "MDIMC", "NDIMC"};
  std::string knobs;
  for (int i = 0; i < 4; ++i) {
    const auto it = config.is_object() ? config.find(names[i]) : config.end();
    if (!config.is_object() || it == config.end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kMaxKnob) {
      return Status::InvalidArgument(where + "its config has no " + names[i] +
                                     " of 1 or more, which gives its launch geometry: the pack was edited or is "
                                     "damaged");
    }
    knob[i] = it->get<int64_t>();
    knobs += std::string(i ? " " : "") + names[i] + "=" + std::to_string(knob[i]);
  }
  const auto mwg = static_cast<uint64_t>(knob[0]), nwg = static_cast<uint64_t>(knob[1]);
  const auto mdimc = static_cast<uint64_t>(knob[2]), ndimc = static_cast<uint64_t>(knob[3]);
  const std::vector<uint64_t> global = {(n + nwg - 1) / nwg * ndimc, (m + mwg - 1) / mwg * mdimc, batch};
  const std::vector<uint64_t> local = {ndimc, mdimc, 1};
  const PackLaunch& l = launches[0];
  if (l.global_size == global && l.local_size == local) return Status::OK();
  return Status::InvalidArgument(
      where + "launch '" + l.entry + "' asks for global size " + Sizes(l.global_size) + " and local size " +
      Sizes(l.local_size) + ", but its config (" + knobs + ") gives " + Sizes(global) + " and " + Sizes(local) +
      " for M=" + std::to_string(m) + ", N=" + std::to_string(n) +
      ": the pack was edited or is damaged, and more work-items would read and write past the buffers; not launched");
}

}  // namespace tunefleet::runtime

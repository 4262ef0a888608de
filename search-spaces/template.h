// A kernel template: turns (task, config) into a kernel program for the agent. Templates are declarative
// descriptions over the generic knob engine (space.h); only this folder knows what an operator is.
// Thread safety: templates are stateless and shared.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

class Template {
 public:
  virtual ~Template() = default;

  virtual std::string name() const = 0;  // "gemm.buffer", "conv2d_nchwc.image2d", ...
  virtual int version() const = 0;       // bump when generated code changes meaning of a config
  // True when this template can run `task` on a device with `limits` (op, precision, images...).
  // On false, `why` (when not null) says what is missing, e.g. "device has no cl_khr_fp16".
  virtual bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const = 0;
  // True when the template is one of `op`'s (whatever the task's shape and the device); a template that does not
  // say is taken as one of every op.
  virtual bool RunsOp(const std::string& op) const { return !op.empty(); }
  // The space for the task, device limits already added as constraints.
  virtual Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const = 0;
  // The candidate kernel program for one valid config (timing left at defaults: the tuner sets it).
  virtual Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const = 0;
  // The trusted reference program for the task (simple kernels), used for the correctness check.
  virtual proto::KernelProgram Reference(const Task& task) const = 0;
  // Floating-point operations of one run of the task.
  virtual double Flops(const Task& task) const = 0;
  // A config that is valid on any device meeting `limits` and reasonable without tuning.
  virtual Config Fallback(const Task& task, const Space& space) const = 0;
  // Template-aware features for the cost model (work-group size, work per item, local memory, ...).
  // Knob values are added by the cost model itself; this returns the derived ones only.
  virtual std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                             const DeviceLimits& limits) const = 0;
  // Work-items of one launch of the config's main kernel (its global size), which the tuner's device prior
  // weighs against what the device runs at once (tuner/device_prior.h); 0 when the task's shape is invalid.
  virtual double WorkItems(const Task& task, const Space& space, const Config& c) const = 0;
  // Whether the device prior fits the template: its configs run faster the nearer their launch comes to what the
  // device runs at once. True unless a template says otherwise; GEMM does (gemm_template.h).
  virtual bool FollowsDevicePrior() const { return true; }
};

// All templates, immutable, built once.
const std::vector<std::unique_ptr<Template>>& AllTemplates();
const Template* FindTemplate(const std::string& name);
// Finds a template by name: FindTemplate in production; tests may pass a registry of their own.
using TemplateLookup = std::function<const Template*(const std::string& name)>;
// FindTemplate, or InvalidArgument naming the unknown name and the known ones.
Result<const Template*> LookUpTemplate(const std::string& name);
// Templates whose op matches the task and that Supports() it on this device.
std::vector<const Template*> TemplatesFor(const Task& task, const DeviceLimits& limits);

}  // namespace tunefleet

// The template registry. To add a template: include its header (which declares its factory) and add one line to
// BuildAll().
#include <memory>
#include <vector>

#include "search-spaces/conv2d_1x1_buffer.h"
#include "search-spaces/conv2d_nchw_buffer.h"
#include "search-spaces/conv2d_nchwc_image2d.h"
#include "search-spaces/depthwise_conv2d_nchwc_image2d.h"
#include "search-spaces/elementwise_worksize.h"
#include "search-spaces/gemm_template.h"
#include "search-spaces/pool_worksize.h"
#include "search-spaces/template.h"
#include "search-spaces/winograd.h"

namespace tunefleet {

namespace {

std::vector<std::unique_ptr<Template>> BuildAll() {
  std::vector<std::unique_ptr<Template>> all;
  all.push_back(MakeGemmBufferTemplate());
  all.push_back(NewConv2dNchwBufferTemplate());
  all.push_back(NewConv2d1x1BufferTemplate());
  all.push_back(NewConv2dNchwcImage2dTemplate());
  all.push_back(NewDepthwiseConv2dNchwcImage2dTemplate());
  all.push_back(NewConv2dWinogradTemplate());
  all.push_back(NewPoolWorksizeTemplate());
  all.push_back(NewElementwiseWorksizeTemplate());
  return all;
}

}  // namespace

const std::vector<std::unique_ptr<Template>>& AllTemplates() {
  static const std::vector<std::unique_ptr<Template>> kAll = BuildAll();
  return kAll;
}

const Template* FindTemplate(const std::string& name) {
  for (const auto& t : AllTemplates())
    if (t->name() == name) return t.get();
  return nullptr;
}

Result<const Template*> LookUpTemplate(const std::string& name) {
  if (const Template* t = FindTemplate(name)) return t;
  std::string known;
  for (const auto& t : AllTemplates()) known += (known.empty() ? "" : ", ") + t->name();
  return Status::InvalidArgument("unknown template '" + name + "' (known: " + known + ")");
}

std::vector<const Template*> TemplatesFor(const Task& task, const DeviceLimits& limits) {
  std::vector<const Template*> out;
  for (const auto& t : AllTemplates())
    if (t->Supports(task, limits, nullptr)) out.push_back(t.get());
  return out;
}

}  // namespace tunefleet

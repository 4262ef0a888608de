#include "agent/cl_api.h"

#include <dlfcn.h>

#include <cstdlib>

namespace tunefleet::agent {

std::vector<std::string> ClApi::DefaultLibraryPaths() {
  return {
      "libOpenCL.so.1",
      "libOpenCL.so",
      // Android vendor drivers (Adreno, Mali, PowerVR) live outside the linker's default search path.
      "/system/vendor/lib64/libOpenCL.so",
      "/vendor/lib64/libOpenCL.so",
      "/system/lib64/libOpenCL.so",
      "/system/vendor/lib64/egl/libGLES_mali.so",
      "/vendor/lib64/egl/libGLES_mali.so",
      "/system/vendor/lib/libOpenCL.so",
      "/vendor/lib/libOpenCL.so",
      "/system/lib/libOpenCL.so",
      "/system/vendor/lib64/libPVROCL.so",
      "/vendor/lib64/libPVROCL.so",
  };
}

Result<std::unique_ptr<ClApi>> ClApi::Load(const std::string& path) {
  std::vector<std::string> candidates;
  std::string given;  // where an explicit path came from: a library that does not load there is bad input
  if (!path.empty()) {
    candidates.push_back(path);
    given = "--opencl-lib " + path;
  } else if (const char* env = std::getenv("TUNEFLEET_OPENCL_LIB"); env != nullptr && *env != '\0') {
    candidates.push_back(env);
    given = std::string("TUNEFLEET_OPENCL_LIB=") + env;
  } else {
    candidates = DefaultLibraryPaths();
  }

  std::string tried;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      if (!given.empty()) {
        return Status::InvalidArgument("cannot load OpenCL from " + given + ": " + (why ? why : "not found"));
      }
      tried += (tried.empty() ? "" : "; ") + candidate + " (" + (why ? why : "not found") + ")";
      continue;
    }
    std::unique_ptr<ClApi> api(new ClApi());
    api->handle_ = handle;
    api->library_path_ = candidate;
#define TF_CL_RESOLVE(name)                                                                         \
  api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                            \
  if (api->name == nullptr) {                                                                       \
    const std::string what = "OpenCL library " + candidate + " lacks the entry point " #name;       \
    return given.empty() ? Status::NotFound(what) : Status::InvalidArgument(given + ": " + what);   \
  }
    TF_CL_ENTRY_POINTS(TF_CL_RESOLVE)
#undef TF_CL_RESOLVE
    return api;
  }
  return Status::NotFound("cannot load OpenCL (set --opencl-lib or TUNEFLEET_OPENCL_LIB): tried " + tried);
}

ClApi::~ClApi() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace tunefleet::agent

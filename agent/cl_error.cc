#include "agent/cl_error.h"

namespace tunefleet::agent {

Status ClStatus(const char* call, cl_int code) {
  if (code == CL_SUCCESS) return Status::OK();
  return Status::Internal(std::string(call) + ": " + ClErrorName(code));
}

}  // namespace tunefleet::agent

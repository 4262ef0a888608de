// OpenCL error codes as names, and the Status the agent reports for a failed OpenCL call.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "agent/cl_include.h"
#include "common/status.h"

namespace tunefleet::agent {

// "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL_UNKNOWN_ERROR(<code>)" for codes it does not know.
std::string ClErrorName(cl_int code);

// OK for CL_SUCCESS, else Internal("<call>: <error name>"), e.g. "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE".
Status ClStatus(const char* call, cl_int code);

}  // namespace tunefleet::agent

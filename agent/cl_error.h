// The Status the agent reports for a failed OpenCL call, naming the error (common/cl_error_name.h).
// Thread safety: pure functions.
#pragma once

#include <string>

#include "agent/cl_include.h"
#include "common/cl_error_name.h"
#include "common/status.h"

namespace tunefleet::agent {

using tunefleet::ClErrorName;  // common/cl_error_name.h

// OK for CL_SUCCESS, else Internal("<call>: <error name>"), e.g. "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE".
Status ClStatus(const char* call, cl_int code);

}  // namespace tunefleet::agent

// Where the agent includes the OpenCL headers: OpenCL 1.2 API only (older phone drivers), no linking (the agent
// loads the ICD loader at run time; common/cl_error_name.h includes them the same way).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

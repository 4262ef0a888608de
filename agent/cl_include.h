// The one place the OpenCL headers are included: OpenCL 1.2 API only (older phone drivers), no linking.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

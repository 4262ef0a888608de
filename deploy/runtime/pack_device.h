// Whether a kernel pack was tuned on the device an application runs it on. A pack holds the device it was
// tuned on (name, vendor, driver, OpenCL version, as the agent read them); its kernels run on any device
// that builds them, but the configs were chosen for that device and may be slow elsewhere, or be refused at
// launch (a work-group larger than another device allows). CompareDevice reads the same four strings from
// the application's device and lists the ones that differ, so that an application can say so before it
// relies on the pack. A field the pack leaves empty (they are optional) is not compared.
// Thread safety: plain functions.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "deploy/runtime/kernel_pack.h"

namespace tunefleet::runtime {

struct DeviceDifference {
  std::string field;        // "name", "vendor", "driver", "opencl_version"
  std::string pack_value;   // as the pack holds it
  std::string device_value; // as the device reports it
};

struct DeviceComparison {
  std::vector<DeviceDifference> differences;  // empty: the pack was tuned on this device model and driver
  // Another device model (name or vendor differ), not only another driver or OpenCL version.
  bool OtherModel() const;
  // One line for a log: "tuned on another device (name 'X'), this device has name 'Y'", or "tuned with another
  // driver (driver '1.2'), this device has driver '1.3'", or "tuned on this device"; text from the pack escaped.
  std::string Describe() const;
};

// Errors: a clGetDeviceInfo call that fails (the call and the error's name).
Result<DeviceComparison> CompareDevice(const PackDevice& pack_device, cl_device_id device);

}  // namespace tunefleet::runtime

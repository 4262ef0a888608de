// Bounds on the free text agents and tuners give the tracker to keep: a RegisterAgent's DeviceInfo and agent version,
// an AcquireRequest's client. The tracker copies them into every Summary and Acquire reply, and gRPC refuses a reply
// over its message limit: two agents with 40 MiB of `extensions` each made Summary and every Acquire of their key
// fail. The limits are far above what real drivers report (an extension string is a few KiB); a message over them
// is refused whole (INVALID_ARGUMENT), not cut, so no tuner adopts a device description that is not the device's.
// Thread safety: pure functions.
#pragma once

#include <google/protobuf/descriptor.h>

#include <optional>
#include <string>

#include "proto/tunefleet.pb.h"

namespace tunefleet::tracker {

inline constexpr size_t kMaxDeviceTextBytes = 64 * 1024;   // each string of a DeviceInfo
inline constexpr size_t kMaxDeviceInfoBytes = 256 * 1024;  // a whole DeviceInfo, serialized
inline constexpr size_t kMaxAgentVersionBytes = 1024;
inline constexpr size_t kMaxClientBytes = 1024;  // AcquireRequest.client ("user@host, pid")
// Jobs in one MeasureBatch: a tune run sends at most its --batch (up to 1024). The tracker keeps ~150 bytes per job
// beyond the request: a 12 MB batch of 2 million empty jobs cost it 300 MB.
inline constexpr int kMaxJobsPerBatch = 4096;

namespace request_limits_internal {
inline std::string TooLong(const std::string& field, size_t bytes, size_t limit) {
  return field + " is " + std::to_string(bytes) + " bytes long (at most " + std::to_string(limit) + ")";
}
}  // namespace request_limits_internal

// What is too long in `reg`, as the end of "RegisterAgent's ..." ("device.extensions is 41943040 bytes long (at
// most 65536)"); nullopt when it is within the bounds.
inline std::optional<std::string> RegisterAgentProblem(const proto::RegisterAgent& reg) {
  using request_limits_internal::TooLong;
  const proto::DeviceInfo& device = reg.device();
  const google::protobuf::Descriptor* descriptor = device.GetDescriptor();
  const google::protobuf::Reflection* reflection = device.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {  // every string field, those added later too
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_STRING || field->is_repeated()) continue;
    std::string scratch;
    const size_t bytes = reflection->GetStringReference(device, field, &scratch).size();
    if (bytes > kMaxDeviceTextBytes) return TooLong("device." + std::string(field->name()), bytes, kMaxDeviceTextBytes);
  }
  if (const size_t bytes = device.ByteSizeLong(); bytes > kMaxDeviceInfoBytes) {
    return TooLong("device", bytes, kMaxDeviceInfoBytes);
  }
  if (reg.agent_version().size() > kMaxAgentVersionBytes) {
    return TooLong("agent_version", reg.agent_version().size(), kMaxAgentVersionBytes);
  }
  return std::nullopt;
}

// As the end of "AcquireRequest's ..."; nullopt when `client` is within the bound.
inline std::optional<std::string> AcquireClientProblem(const std::string& client) {
  if (client.size() > kMaxClientBytes)
    return request_limits_internal::TooLong("client", client.size(), kMaxClientBytes);
  return std::nullopt;
}

}  // namespace tunefleet::tracker

// The fingerprint of a kernel pack entry's program: FNV-1a of its compact JSON, written by the exporter as the
// entry's "program_fnv" and checked by KernelPack::Load. A program edited by hand or damaged (a "#define N 256" in a
// source whose buffers hold N = 64) would index past the application's buffers; its fingerprint no longer matches.
// It guards against accidents, not against a forger: the hash is not cryptographic.
// Thread safety: a pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/fnv_hash.h"

namespace tunefleet::runtime {

inline constexpr char kProgramFingerprintKey[] = "program_fnv";

// 16 hex digits, of the program dumped compact: JSON objects dump with their keys sorted, so the program as exported
// and as parsed back from the pack (indented, or re-indented by another tool) dump to the same text.
inline std::string ProgramFingerprint(const nlohmann::json& program) {
  return FnvHash().Add(program.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).Hex();
}

}  // namespace tunefleet::runtime

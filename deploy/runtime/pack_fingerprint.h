// The fingerprints of a kernel pack entry, written by the exporter and checked by KernelPack::Load: "program_fnv",
// FNV-1a of its program's compact JSON, and "entry_fnv", of its task, template and program together. A program
// edited by hand or damaged (a "#define N 256" in a source whose buffers hold N = 64) would index past the
// application's buffers; an entry whose task was edited (a 64^3 GEMM's program relabelled 128^3) would be found for
// a workload it was not built for and compute a corner of it. Their fingerprints no longer match. Packs written
// before "entry_fnv" carry "program_fnv" alone. They guard against accidents, not against a forger: the hash is not
// cryptographic.
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

inline constexpr char kEntryFingerprintKey[] = "entry_fnv";

// 16 hex digits, of {"program", "task", "template"} dumped compact (keys sorted, as above).
inline std::string EntryFingerprint(const std::string& task, const std::string& template_name,
                                    const nlohmann::json& program) {
  const nlohmann::json covered = {{"task", task}, {"template", template_name}, {"program", program}};
  return FnvHash().Add(covered.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).Hex();
}

}  // namespace tunefleet::runtime

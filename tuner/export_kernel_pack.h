// Export of a tuning log as kernel packs (format: deploy/runtime/kernel_pack.h): one pack per device model
// (device fingerprint), holding for each workload the best kernel program, regenerated from the template
// and the best config, plus each template's fallback program. Applications load packs with
// tunefleet-runtime.
// Thread safety: free functions; the log is used by the calling thread only.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {

struct KernelPackFile {
  std::string stem;     // file name without ".json": device name and fingerprint, safe for file systems
  nlohmann::json pack;
};

// One pack per device fingerprint. Records whose template is not built in, or was measured with another
// template version, are skipped with a note.
Result<std::vector<KernelPackFile>> BuildKernelPacks(TuningLog& log, const TemplateLookup& lookup,
                                                     std::ostream& notes);

// Writes the packs: to `out` itself when there is one pack and `out` is not a directory, else as
// `out`/<stem>.json (the directory is created). Returns the paths written.
Result<std::vector<std::string>> WriteKernelPacks(const std::vector<KernelPackFile>& packs, const std::string& out);

}  // namespace tunefleet

// Export of a tuning log as CSV for analysis (spreadsheets, pandas): one row per record with its task,
// template, device and results. RFC 4180 quoting; times in seconds; costs as a JSON array in one field.
// Thread safety: free functions; the log is used by the calling thread only.
#pragma once

#include <ostream>
#include <string>

#include "common/status.h"
#include "storage/tuning_log.h"

namespace tunefleet {

// The header line's columns, in order.
inline constexpr const char* kCsvHeader =
    "record_id,session_id,task,op,template,template_version,device,device_fingerprint,config_index,config,"
    "status,mean_cost,gflops,costs,compile_time,wall_time,timestamp,message";

// Quotes a field when it holds a comma, quote, CR or LF (quotes doubled).
std::string CsvField(const std::string& s);
// CsvField of free text from outside (a device's name and fingerprint, a driver's message): one that begins with
// '=', '+', '-', '@', a tab or a CR is prefixed with "'", so that a spreadsheet that opens the file shows it as text
// and does not run it as a formula.
std::string CsvTextField(const std::string& s);

// Writes the header and one row per record (or per best record in its template's space, tuner/best_in_space.h,
// whose notes go to `notes`); returns the number of rows.
Result<size_t> ExportCsv(TuningLog& log, bool best_only, std::ostream& out, std::ostream& notes);

}  // namespace tunefleet

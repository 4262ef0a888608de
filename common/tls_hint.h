// A hint for a connection to the tracker that failed in the TLS handshake, or for want of one: gRPC's words for it
// ("Socket closed", "wrong version number", "certificate verify failed") do not say what to change.
// Thread safety: a free function, no state.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace tunefleet {

// `why`: gRPC's reason for the failed connection; `root_pem`: the --tls-ca certificates the client dialled with
// (empty: a plain connection). Empty when there is no hint to give.
std::string TlsConnectionHint(std::string_view why, const std::string& root_pem, std::time_t now);

}  // namespace tunefleet

// gRPC's words for a connection that failed, shortened to the reason a user acts on.
//
// gRPC says a refused connection as "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9190:
// Failed to connect to remote host: Connection refused", and every line that said it already names the tracker's
// address: what is left is the system's reason ("Connection refused"), or the TLS library's ("Ssl handshake
// failed: ..."). A failed name lookup keeps the name and the resolver's reason, not its query's details.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace tunefleet {

inline std::string GrpcReason(std::string_view message) {
  constexpr std::string_view kEveryAddress = "failed to connect to all addresses; last error: ";
  constexpr std::string_view kRemoteHost = "Failed to connect to remote host: ";
  constexpr std::string_view kDns = "DNS resolution failed for ";
  std::string_view m = message;
  if (m.starts_with(kEveryAddress)) {
    m.remove_prefix(kEveryAddress.size());
    // The status code's name ("UNKNOWN: "), then the address tried ("ipv4:H:P: ", "ipv6:%5B::1%5D:P: ", "unix:F: ").
    if (const size_t colon = m.find(": "); colon != std::string_view::npos && colon > 0 &&
                                           m.substr(0, colon).find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                                               std::string_view::npos) {
      m.remove_prefix(colon + 2);
    }
    for (const std::string_view scheme : {"ipv4:", "ipv6:", "unix:", "unix-abstract:"}) {
      if (!m.starts_with(scheme)) continue;
      if (const size_t colon = m.find(": "); colon != std::string_view::npos) m.remove_prefix(colon + 2);
      break;
    }
    if (m.starts_with(kRemoteHost)) m.remove_prefix(kRemoteHost.size());
    return m.empty() ? std::string(message) : std::string(m);
  }
  if (m.starts_with(kDns)) {
    const size_t name_end = m.find(": ", kDns.size());
    const size_t last = m.rfind(": ");
    if (name_end != std::string_view::npos && last > name_end) {
      return std::string(m.substr(0, name_end)) + std::string(m.substr(last));
    }
  }
  return std::string(message);
}

}  // namespace tunefleet

// Whether a file's text holds a PEM block of a kind, so that a wrong --tls-* file is named in one line before gRPC
// reads it (gRPC logs several lines of its own, then the client only fails to connect).
// Thread safety: free function, no state.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tunefleet {

// True when `text` has a "-----BEGIN ...<label>-----" line: `label` "CERTIFICATE", or "PRIVATE KEY" (which also
// matches "RSA PRIVATE KEY" and "EC PRIVATE KEY").
inline bool HasPemBlock(std::string_view text, std::string_view label) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kDashes = "-----";
  for (size_t at = text.find(kBegin); at != std::string_view::npos; at = text.find(kBegin, at + 1)) {
    const size_t start = at + kBegin.size();
    const size_t end = text.find(kDashes, start);
    if (end == std::string_view::npos) return false;
    const std::string_view name = text.substr(start, end - start);
    if (name.size() >= label.size() && name.substr(name.size() - label.size()) == label) return true;
  }
  return false;
}

// The root certificates of a --tls-ca file, read whole: IOError when it cannot be read, InvalidArgument when it holds
// no PEM certificate (an empty file is read, and refused so).
inline Result<std::string> ReadPemCertificates(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream pem;
  if (in) pem << in.rdbuf();
  if (!in) return Status::IOError("cannot read the TLS root certificates '" + path + "'");
  if (!HasPemBlock(pem.str(), "CERTIFICATE"))
    return Status::InvalidArgument("TLS root certificates '" + path + "': no PEM certificate in it");
  return pem.str();
}

}  // namespace tunefleet

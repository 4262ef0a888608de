// Whether a file's text holds a PEM block of a kind, and whether OpenSSL can read a --tls-ca file's certificates, so
// that a wrong --tls-* file is named in one line before gRPC reads it (gRPC logs several lines of its own, then the
// client only fails to connect).
// Thread safety: free functions, no state; OpenSSL's error queue is per thread.
#pragma once

#include <cerrno>
#include <ctime>
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

// A pem_password_cb for OpenSSL's PEM_read_bio_* that gives no passphrase. Without one OpenSSL asks for it on the
// terminal (a daemon cannot answer), and an encrypted block then fails to read as any damaged one does.
int PemNoPassphrase(char* buf, int size, int rwflag, void* u);

// 0 when OpenSSL reads every certificate block of `pem` (as gRPC's root store reads them: CERTIFICATE,
// X509 CERTIFICATE, TRUSTED CERTIFICATE), else the 1-based number of the first one it cannot read. gRPC itself keeps
// the certificates before a damaged one and drops the rest unsaid; with none left it only fails to connect. Always 0
// in an agent-only build without OpenSSL (common/CMakeLists.txt).
int FirstUnreadablePemCertificate(const std::string& pem);

// Which certificates of a PEM text CertificateOutOfDate judges: the first alone (a server's own, before its chain),
// or every one (a bundle of roots, any of which may be the one that signed the server's).
enum class CertificatesJudged { kFirst, kEvery };

// A phrase naming a certificate of `pem` that is not valid at `now`, as "certificate 1 (CN=tracker) expired on
// 2026-12-05 08:57:34 UTC" or "... is not valid before ...": with kFirst, the first certificate when it is out of
// date; with kEvery, the first of them when every one is (a bundle that still holds a valid root says nothing: the
// failure is then another authority's, not a date's). Empty otherwise. gRPC's handshake says only "certificate verify
// failed" for it, as for a certificate of another authority. Always empty in a build without OpenSSL.
std::string CertificateOutOfDate(const std::string& pem, std::time_t now, CertificatesJudged judged);

// Whether `err` (an errno of open(2)) says the path given is wrong for this user: missing, not readable, not a file,
// too long. Such a file of the command line is its configuration (exit 2); any other errno (no descriptor left, an
// I/O error) is a failure at run time.
inline bool IsConfigurationErrno(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case ENAMETOOLONG:
      return true;
    default:
      return false;
  }
}

// The root certificates of a --tls-ca file, read whole: InvalidArgument when it holds no PEM certificate (an empty
// file is read, and refused so), one that OpenSSL cannot read (cut short, damaged), or cannot be read for a reason
// IsConfigurationErrno names; IOError for any other reason. Both say the system's reason.
Result<std::string> ReadPemCertificates(const std::string& path);

}  // namespace tunefleet

#include "common/tls_hint.h"

#include "common/pem_check.h"

namespace tunefleet {

std::string TlsConnectionHint(std::string_view why, const std::string& root_pem, std::time_t now) {
  // A TLS tracker closes a plain connection without a word.
  if (root_pem.empty()) {
    return why.find("Socket closed") != std::string_view::npos ? "if the tracker uses TLS, give --tls-ca" : "";
  }
  // OpenSSL's words for a plain server's first bytes taken as a TLS record.
  if (why.find("wrong version number") != std::string_view::npos) {
    return "the tracker does not use TLS: drop --tls-ca, or start the tracker with --tls-cert and --tls-key";
  }
  if (why.find("certificate verify failed") != std::string_view::npos) {
    const std::string out_of_date = CertificateOutOfDate(root_pem, now, CertificatesJudged::kEvery);
    if (!out_of_date.empty()) return "--tls-ca's " + out_of_date;
    return "the tracker's certificate is not signed by a certificate of --tls-ca, or is out of date";
  }
  return "";
}

}  // namespace tunefleet

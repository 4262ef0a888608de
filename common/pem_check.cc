#include "common/pem_check.h"

#if TUNEFLEET_HAVE_OPENSSL
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#endif

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace tunefleet {

int PemNoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return 0; }

int FirstUnreadablePemCertificate(const std::string& pem) {
#if !TUNEFLEET_HAVE_OPENSSL
  (void)pem;
  return 0;  // an agent-only build without OpenSSL: gRPC says what it cannot read
#else
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return 1;
  ERR_clear_error();  // the end of the blocks is told by the error the last read leaves
  int read = 0;
  for (;;) {
    std::unique_ptr<X509, decltype(&X509_free)> cert(
        PEM_read_bio_X509_AUX(bio.get(), nullptr, &PemNoPassphrase, nullptr), &X509_free);
    if (!cert) break;
    ++read;
  }
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();  // leave nothing of ours for gRPC to read on this thread
  const bool at_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  // No block read at all although HasPemBlock saw one: a "BEGIN ... CERTIFICATE" kind OpenSSL does not take.
  return at_end && read > 0 ? 0 : read + 1;
#endif
}

#if TUNEFLEET_HAVE_OPENSSL
namespace {

std::string TimeText(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
  char text[32];
  return std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0 ? text : "an unreadable date";
}

std::string CommonName(X509* cert) {
  char cn[256];
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  return n > 0 ? " (CN=" + std::string(cn, static_cast<size_t>(n)) + ")" : "";
}

}  // namespace
#endif

std::string CertificateOutOfDate(const std::string& pem, std::time_t now, CertificatesJudged judged) {
#if !TUNEFLEET_HAVE_OPENSSL
  (void)pem;
  (void)now;
  (void)judged;
  return "";
#else
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return "";
  std::string first_found;
  bool every = true;  // every certificate read so far is out of date
  int read = 0;
  for (int number = 1;; ++number) {
    std::unique_ptr<X509, decltype(&X509_free)> cert(
        PEM_read_bio_X509_AUX(bio.get(), nullptr, &PemNoPassphrase, nullptr), &X509_free);
    if (!cert) break;
    ++read;
    const std::string which = "certificate " + std::to_string(number) + CommonName(cert.get());
    std::string found;
    if (X509_cmp_time(X509_get0_notAfter(cert.get()), &now) < 0) {
      found = which + " expired on " + TimeText(X509_get0_notAfter(cert.get()));
    } else if (X509_cmp_time(X509_get0_notBefore(cert.get()), &now) > 0) {
      found = which + " is not valid before " + TimeText(X509_get0_notBefore(cert.get()));
    }
    if (found.empty()) every = false;
    if (first_found.empty()) first_found = found;
    if (judged == CertificatesJudged::kFirst || !every) break;
  }
  ERR_clear_error();  // the end of the blocks leaves an error: leave nothing of ours for gRPC to read on this thread
  return read > 0 && every ? first_found : "";
#endif
}

Result<std::string> ReadPemCertificates(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  const int open_errno = errno;
  std::ostringstream pem;
  if (in) pem << in.rdbuf();
  // A file of the command line that is not there or not for this user is bad input (exit 2), as one without a
  // certificate is.
  if (!in) {
    const std::string text = "cannot read the TLS root certificates '" + path + "'" +
                             (open_errno != 0 ? std::string(": ") + std::strerror(open_errno) : std::string());
    return IsConfigurationErrno(open_errno) ? Status::InvalidArgument(text) : Status::IOError(text);
  }
  if (!HasPemBlock(pem.str(), "CERTIFICATE"))
    return Status::InvalidArgument("TLS root certificates '" + path + "': no PEM certificate in it");
  if (const int bad = FirstUnreadablePemCertificate(pem.str()); bad != 0) {
    return Status::InvalidArgument("TLS root certificates '" + path + "': certificate " + std::to_string(bad) +
                                   " cannot be read (damaged or truncated)");
  }
  return pem.str();
}

}  // namespace tunefleet

#include "common/pem_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <iterator>

#include "common/temp_dir_testing.h"
#include "common/tls_testing.h"

namespace tunefleet {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(PemCheckTest, GivenPemBlocksTheirKindShouldBeFound) {
  const std::string cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  EXPECT_TRUE(HasPemBlock(cert, "CERTIFICATE"));
  EXPECT_FALSE(HasPemBlock(cert, "PRIVATE KEY"));
  // A key in any of the PEM forms openssl writes; a bundle with a key after a certificate.
  EXPECT_TRUE(HasPemBlock("-----BEGIN PRIVATE KEY-----\nMIIE\n", "PRIVATE KEY"));
  EXPECT_TRUE(HasPemBlock("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n", "PRIVATE KEY"));
  EXPECT_TRUE(HasPemBlock(cert + "-----BEGIN EC PRIVATE KEY-----\nMHc\n", "PRIVATE KEY"));
}

TEST(PemCheckTest, GivenTextThatIsNotPemNothingShouldBeFound) {
  EXPECT_FALSE(HasPemBlock("", "CERTIFICATE"));
  EXPECT_FALSE(HasPemBlock("my-hostname\n", "CERTIFICATE"));
  EXPECT_FALSE(HasPemBlock("-----BEGIN CERTIFICATE", "CERTIFICATE"));  // cut short
  EXPECT_FALSE(HasPemBlock("-----BEGIN PUBLIC KEY-----\n", "PRIVATE KEY"));
}

// Fixture: a real self-signed certificate in the test's folder (two with Second()), made with the openssl tool.
class ReadPemCertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::MakeSelfSignedCertificate(dir_.path())) GTEST_SKIP() << "openssl tool not available";
    cert_ = ReadWhole(dir_.File("cert.pem"));
  }
  std::string Second() {
    if (::mkdir(dir_.File("second").c_str(), 0700) != 0 || !testing::MakeSelfSignedCertificate(dir_.File("second")))
      return "";
    return ReadWhole(dir_.File("second/cert.pem"));
  }
  // Writes `text` as `name` in the test's folder and returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name), std::ios::binary) << text;
    return dir_.File(name);
  }

  TempDir dir_;
  std::string cert_;
};

TEST_F(ReadPemCertificatesTest, GivenOneOrTwoWholeCertificates_TheyShouldBeReadAsTheyAre) {
  const std::string one = Write("one.pem", cert_);
  Result<std::string> pem = ReadPemCertificates(one);
  ASSERT_TRUE(pem.ok()) << pem.status().ToString();
  EXPECT_EQ(*pem, cert_);

  const std::string second = Second();
  ASSERT_FALSE(second.empty());
  const std::string bundle = cert_ + second;
  pem = ReadPemCertificates(Write("two.pem", bundle));
  ASSERT_TRUE(pem.ok()) << pem.status().ToString();
  EXPECT_EQ(*pem, bundle);
}

// As in the report: the first 500 bytes of a real certificate have its BEGIN line; gRPC loaded no root from them, then
// the agent redialed for ever and the tuner said only "empty address list".
TEST_F(ReadPemCertificatesTest, GivenATruncatedCertificate_ItShouldBeRefusedInOneLineNamingTheFile) {
  const std::string cut = Write("cut.pem", cert_.substr(0, 500));
  Result<std::string> pem = ReadPemCertificates(cut);
  ASSERT_FALSE(pem.ok());
  EXPECT_EQ(pem.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(pem.status().message(),
            "TLS root certificates '" + cut + "': certificate 1 cannot be read (damaged or truncated)");
}

// gRPC keeps the roots before a damaged one and drops the rest without a word: the damaged one is named.
TEST_F(ReadPemCertificatesTest, GivenAWholeCertificateThenATruncatedOne_TheSecondShouldBeNamed) {
  const std::string second = Second();
  ASSERT_FALSE(second.empty());
  const std::string file = Write("bundle.pem", cert_ + second.substr(0, second.size() - 40));
  Result<std::string> pem = ReadPemCertificates(file);
  ASSERT_FALSE(pem.ok());
  EXPECT_EQ(pem.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(pem.status().message(),
            "TLS root certificates '" + file + "': certificate 2 cannot be read (damaged or truncated)");
}

// The certificate is valid for one day from its making: a day and a half later it has expired, an hour before
// it is not yet valid. kFirst judges the first certificate alone (a server's own); kEvery names one only when every
// certificate of a bundle is out of date (a bundle that still holds a valid root may have signed the server's).
TEST_F(ReadPemCertificatesTest, GivenAMomentOutsideACertificatesDates_ItShouldBeNamedWithTheDate) {
  const std::string second = Second();  // made before `now`: a certificate is not valid before it was made
  ASSERT_FALSE(second.empty());
  const std::time_t now = std::time(nullptr);
  for (CertificatesJudged judged : {CertificatesJudged::kFirst, CertificatesJudged::kEvery}) {
    EXPECT_EQ(CertificateOutOfDate(cert_, now, judged), "");
    const std::string expired = CertificateOutOfDate(cert_, now + 36 * 3600, judged);
    const std::string early = CertificateOutOfDate(cert_, now - 3600, judged);
    EXPECT_TRUE(expired.starts_with("certificate 1 (CN=localhost) expired on ")) << expired;
    EXPECT_TRUE(early.starts_with("certificate 1 (CN=localhost) is not valid before ")) << early;
    // The date said is the certificate's own end, a day after it was made (openssl's clock against ours).
    std::tm tm{};
    const std::string date = expired.substr(expired.rfind(" on ") + 4);
    ASSERT_NE(::strptime(date.c_str(), "%Y-%m-%d %H:%M:%S UTC", &tm), nullptr) << expired;
    EXPECT_NEAR(static_cast<double>(::timegm(&tm)), static_cast<double>(now + 24 * 3600), 120.0) << expired;
    EXPECT_EQ(CertificateOutOfDate(cert_ + second, now, judged), "");
    EXPECT_TRUE(CertificateOutOfDate(cert_ + second, now + 36 * 3600, judged).starts_with("certificate 1 "));
  }
  if (!testing::MakeExpiredCertificate(dir_.path())) return;
  const std::string old = ReadWhole(dir_.File("expired/cert.pem"));
  EXPECT_EQ(CertificateOutOfDate(cert_ + old, now, CertificatesJudged::kFirst), "");  // a chain's old certificate
  EXPECT_EQ(CertificateOutOfDate(old + cert_, now, CertificatesJudged::kFirst),
            "certificate 1 (CN=localhost) expired on 2020-01-02 00:00:00 UTC");
  EXPECT_EQ(CertificateOutOfDate(old + cert_, now, CertificatesJudged::kEvery), "");  // a valid root is left
  // Both out of date a day and a half on: the first is named.
  EXPECT_TRUE(CertificateOutOfDate(cert_ + old, now + 36 * 3600, CertificatesJudged::kEvery)
                  .starts_with("certificate 1 (CN=localhost) expired on "));
}

TEST(PemCheckTest, GivenABlockThatIsNoCertificate_ReadPemCertificatesShouldRefuseIt) {
  TempDir dir;
  const std::string file = dir.File("fake.pem");
  std::ofstream(file) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  Result<std::string> pem = ReadPemCertificates(file);
  ASSERT_FALSE(pem.ok());
  EXPECT_EQ(pem.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(pem.status().message(),
            "TLS root certificates '" + file + "': certificate 1 cannot be read (damaged or truncated)");

  std::ofstream(file) << "-----BEGIN CERTIFICATE-----\n";  // a BEGIN line alone
  pem = ReadPemCertificates(file);
  ASSERT_FALSE(pem.ok());
  EXPECT_NE(pem.status().message().find("certificate 1 cannot be read"), std::string::npos) << pem.status().message();
}

}  // namespace
}  // namespace tunefleet

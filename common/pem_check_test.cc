#include "common/pem_check.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

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

}  // namespace
}  // namespace tunefleet

#include "agent/disk_space.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <limits>

namespace tunefleet::agent {
namespace {

TEST(DiskSpaceTest, GivenAFolderThatDoesNotExistYet_ItsNearestExistingFolderShouldBeMeasured) {
  const std::optional<FreeSpace> tmp = FreeSpaceOf("/tmp");
  ASSERT_TRUE(tmp.has_value());
  const std::optional<FreeSpace> below = FreeSpaceOf("/tmp/tunefleet-no-such-folder/deeper");
  ASSERT_TRUE(below.has_value());
  // The same file system, measured moments apart: within what another process may have written meanwhile.
  EXPECT_LT(below->bytes > tmp->bytes ? below->bytes - tmp->bytes : tmp->bytes - below->bytes, uint64_t{256} << 20);
  EXPECT_GT(tmp->inodes, 0u);
}

TEST(DiskSpaceTest, GivenAThreshold_TheFirstFolderBelowItShouldBeNamedWithItsFreeSpace) {
  const std::vector<std::filesystem::path> dirs = {"/tmp/tunefleet-no-such-folder"};
  EXPECT_EQ(NearlyFullDisk(dirs, 0, 0), std::nullopt);
  const std::optional<std::string> full = NearlyFullDisk(dirs, std::numeric_limits<uint64_t>::max(), 0);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->rfind("/tmp/tunefleet-no-such-folder has ", 0), 0u) << *full;
  EXPECT_TRUE(full->ends_with(" free")) << *full;
  EXPECT_EQ(full->find("inodes"), std::string::npos) << *full;
  // Out of inodes, with bytes to spare (a folder of many small files), where the file system counts them.
  if (FreeSpaceOf("/tmp")->inodes == std::numeric_limits<uint64_t>::max()) return;
  const std::optional<std::string> no_inodes = NearlyFullDisk(dirs, 0, std::numeric_limits<uint64_t>::max() - 1);
  ASSERT_TRUE(no_inodes.has_value());
  EXPECT_TRUE(no_inodes->ends_with(" inodes free")) << *no_inodes;
}

TEST(DiskSpaceTest, GivenTheEnvironment_TheCompilersFoldersShouldFollowPoclsOrder) {
  setenv("TMPDIR", "/var/tmp", 1);
  setenv("POCL_CACHE_DIR", "/srv/pocl", 1);
  setenv("HOME", "/home/u", 1);
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CompilerWriteDirs("/agent/slot-0"), (std::vector<std::filesystem::path>{"/agent/slot-0"}));
  EXPECT_EQ(CompilerWriteDirs(""), (std::vector<std::filesystem::path>{"/srv/pocl"}));
  unsetenv("POCL_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/c", 1);
  EXPECT_EQ(CompilerWriteDirs(""), (std::vector<std::filesystem::path>{"/c/pocl"}));
  setenv("XDG_CACHE_HOME", "relative", 1);  // PoCL takes it from the working folder, as the check does
  EXPECT_EQ(CompilerWriteDirs(""), (std::vector<std::filesystem::path>{"relative/pocl"}));
  unsetenv("XDG_CACHE_HOME");
  unsetenv("TMPDIR");
  EXPECT_EQ(CompilerWriteDirs(""), (std::vector<std::filesystem::path>{"/home/u/.cache/pocl"}));  // TMPDIR is not
}

}  // namespace
}  // namespace tunefleet::agent

// The agent's kernel cache folder on the real file system: slots taken by lock files, and the pruning of the least
// recently used entries. The supervisor's use of it with a real PoCL worker is in worker_supervisor_test.cc.
#include "agent/kernel_disk_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace tunefleet::agent {
namespace {

namespace fs = std::filesystem;

class KernelDiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tunefleet-kcache-unit-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A program folder as PoCL makes one (dir/XX/NAME with program.bc and a kernel's object), of `bytes` bytes, its
  // files dated `age` ago.
  static void MakeEntry(const fs::path& dir, const std::string& name, size_t bytes, std::chrono::minutes age) {
    const fs::path entry = dir / name.substr(0, 2) / name;
    fs::create_directories(entry / "kern" / "8-8-1-goffs0-smallgrid");
    std::ofstream(entry / "program.bc") << std::string(bytes / 2, 'b');
    std::ofstream(entry / "kern" / "8-8-1-goffs0-smallgrid" / "kern.so") << std::string(bytes - bytes / 2, 's');
    const auto when = fs::file_time_type::clock::now() - age;
    for (const auto& f : fs::recursive_directory_iterator(entry)) fs::last_write_time(f.path(), when);
    fs::last_write_time(entry, when);
  }

  fs::path root_;
};

TEST_F(KernelDiskCacheTest, GivenTwoAgents_EachShouldTakeItsOwnSlotAndTheFirstFreedShouldBeTakenAgain) {
  auto first = KernelDiskCache::Claim(root_, 1 << 20);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = KernelDiskCache::Claim(root_, 1 << 20);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*first)->dir(), root_ / "slot-0");
  EXPECT_EQ((*second)->dir(), root_ / "slot-1");
  EXPECT_TRUE(fs::is_directory((*second)->dir()));
  first->reset();  // that agent stopped: a restarted one finds its folder
  auto third = KernelDiskCache::Claim(root_, 1 << 20);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ((*third)->dir(), root_ / "slot-0");
}

TEST_F(KernelDiskCacheTest, GivenARootThatCannotBeMade_ClaimShouldSayWhyAsBadInput) {
  const fs::path file = root_.string() + "-file";
  std::ofstream(file) << "x";
  auto claimed = KernelDiskCache::Claim(file / "cache", 1 << 20);
  fs::remove(file);
  ASSERT_FALSE(claimed.ok());
  EXPECT_EQ(claimed.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(claimed.status().message().find("cannot make the kernel cache folder"), std::string::npos);
}

TEST_F(KernelDiskCacheTest, GivenAFolderOverItsLimit_PruneShouldRemoveTheLeastRecentlyUsedDownToHalfTheLimit) {
  auto claimed = KernelDiskCache::Claim(root_, 100 * 1000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  KernelDiskCache& cache = **claimed;
  // Six programs of 20 kB: 120 kB, over the 100 kB limit; pruned to at most 50 kB, the two newest stay.
  const char* names[] = {"AAOLDEST", "ABOLDER", "AAMIDDLE", "BBMIDDLE", "BBNEWER", "CCNEWEST"};
  for (int i = 0; i < 6; ++i) MakeEntry(cache.dir(), names[i], 20 * 1000, std::chrono::minutes(60 - 10 * i));
  EXPECT_EQ(cache.Bytes(), 120u * 1000);
  auto pruned = cache.Prune();
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(pruned->entries, 4);
  EXPECT_EQ(pruned->bytes, 80u * 1000);
  EXPECT_EQ(pruned->left, 40u * 1000);
  EXPECT_EQ(cache.Bytes(), 40u * 1000);
  EXPECT_TRUE(fs::exists(cache.dir() / "BB" / "BBNEWER" / "program.bc"));
  EXPECT_TRUE(fs::exists(cache.dir() / "CC" / "CCNEWEST"));
  EXPECT_FALSE(fs::exists(cache.dir() / "BB" / "BBMIDDLE"));
  EXPECT_FALSE(fs::exists(cache.dir() / "AA"));  // emptied, removed too
  EXPECT_FALSE(fs::exists(cache.dir() / "AB"));
}

// A program used lately (PoCL touches its last_accessed file) is kept over one built later but not used since.
TEST_F(KernelDiskCacheTest, GivenAnOldProgramUsedLately_PruneShouldKeepIt) {
  auto claimed = KernelDiskCache::Claim(root_, 60 * 1000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  KernelDiskCache& cache = **claimed;
  MakeEntry(cache.dir(), "AAUSED", 20 * 1000, std::chrono::minutes(90));
  MakeEntry(cache.dir(), "BBIDLE1", 20 * 1000, std::chrono::minutes(30));
  MakeEntry(cache.dir(), "CCIDLE2", 20 * 1000, std::chrono::minutes(20));
  MakeEntry(cache.dir(), "DDIDLE3", 20 * 1000, std::chrono::minutes(10));
  std::ofstream(cache.dir() / "AA" / "AAUSED" / "last_accessed") << "";
  auto pruned = cache.Prune();
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(pruned->entries, 3);
  EXPECT_TRUE(fs::exists(cache.dir() / "AA" / "AAUSED" / "program.bc"));
  EXPECT_FALSE(fs::exists(cache.dir() / "DD"));
}

TEST_F(KernelDiskCacheTest, GivenAFolderWithinHalfItsLimit_PruneShouldRemoveNothing) {
  auto claimed = KernelDiskCache::Claim(root_, 100 * 1000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  MakeEntry((*claimed)->dir(), "AAONE", 40 * 1000, std::chrono::minutes(5));
  auto pruned = (*claimed)->Prune();
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(pruned->entries, 0);
  EXPECT_EQ((*claimed)->Bytes(), 40u * 1000);
}

}  // namespace
}  // namespace tunefleet::agent

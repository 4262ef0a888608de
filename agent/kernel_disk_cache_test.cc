// The agent's kernel cache folder on the real file system: slots taken by lock files, and the pruning of the least
// recently used entries. The supervisor's use of it with a real PoCL worker is in worker_supervisor_test.cc.
#include "agent/kernel_disk_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

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

// Two agents killed, then restarted in the other order: each takes the slot its predecessor of the same owner left;
// a new owner takes a slot no agent named rather than another's, and only the slot taken gets files.
TEST_F(KernelDiskCacheTest, GivenAgentsRestartedInAnotherOrder_EachShouldFindItsOwnSlotAgain) {
  auto a = KernelDiskCache::Claim(root_, 1 << 20, "key a, platform 0, device 0\n");
  auto b = KernelDiskCache::Claim(root_, 1 << 20, "key b, platform 0, device 1\n");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->dir(), root_ / "slot-0");
  EXPECT_EQ((*b)->dir(), root_ / "slot-1");
  EXPECT_EQ(std::distance(fs::directory_iterator(root_), fs::directory_iterator()), 4);  // two folders, two locks
  a->reset();
  b->reset();
  auto b_again = KernelDiskCache::Claim(root_, 1 << 20, "key b, platform 0, device 1\n");
  ASSERT_TRUE(b_again.ok());
  EXPECT_EQ((*b_again)->dir(), root_ / "slot-1");
  auto c = KernelDiskCache::Claim(root_, 1 << 20, "key c, platform 0, device 2\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->dir(), root_ / "slot-2");  // not a's free slot-0: a may come back
  auto a_again = KernelDiskCache::Claim(root_, 1 << 20, "key a, platform 0, device 0");  // no newline: the same
  ASSERT_TRUE(a_again.ok());
  EXPECT_EQ((*a_again)->dir(), root_ / "slot-0");
  std::ifstream lock(root_ / "slot-0.lock");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(lock), {}), "key a, platform 0, device 0\n");
}

// Every slot named by another owner and free: the first one is taken, and renamed.
TEST_F(KernelDiskCacheTest, GivenEverySlotNamedByOthers_TheFirstFreeShouldBeTaken) {
  fs::create_directories(root_);
  for (int i = 0; i < KernelDiskCache::kMaxSlots; ++i) {
    std::ofstream(root_ / ("slot-" + std::to_string(i) + ".lock")) << "key x, platform 0, device " << i << "\n";
  }
  auto held = KernelDiskCache::Claim(root_, 1 << 20, "key x, platform 0, device 0\n");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)->dir(), root_ / "slot-0");
  auto y = KernelDiskCache::Claim(root_, 1 << 20, "key y, platform 0, device 0\n");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)->dir(), root_ / "slot-1");
  std::ifstream lock(root_ / "slot-1.lock");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(lock), {}), "key y, platform 0, device 0\n");
  EXPECT_FALSE(fs::exists(root_ / "slot-2"));  // the slots passed over got no folder
}

// PoCL leaves a temporary file in the folder at each worker's start; with no worker running they go, and nothing
// else does.
TEST_F(KernelDiskCacheTest, GivenPoclsLeftoverTemporaryFiles_RemoveLeftoversShouldRemoveThemAlone) {
  auto cache = KernelDiskCache::Claim(root_, 1 << 20);
  ASSERT_TRUE(cache.ok());
  const fs::path dir = (*cache)->dir();
  MakeEntry(dir, "abcdef", 1000, std::chrono::minutes(1));
  std::ofstream(dir / "tempfile_Xa81kq");
  std::ofstream(dir / "tempfile_Xa81kq.cl") << "kernel";
  std::ofstream(dir / "notes.txt") << "kept";
  fs::create_directories(dir / "tempfile_folder");
  fs::create_symlink(root_ / "elsewhere", dir / "tempfile_link");
  EXPECT_EQ((*cache)->RemoveLeftovers(), 2);
  EXPECT_FALSE(fs::exists(dir / "tempfile_Xa81kq"));
  EXPECT_FALSE(fs::exists(dir / "tempfile_Xa81kq.cl"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir / "tempfile_folder"));
  EXPECT_TRUE(fs::is_symlink(dir / "tempfile_link"));
  EXPECT_TRUE(fs::exists(dir / "ab" / "abcdef" / "program.bc"));
}

// A slot this agent cannot use is passed over: a file where its folder should be, a lock file that is a link (it
// was followed, and its target created).
TEST_F(KernelDiskCacheTest, GivenSlotsThatCannotBeUsed_ClaimShouldTakeTheNextOne) {
  fs::create_directories(root_);
  std::ofstream(root_ / "slot-0") << "not a folder";
  fs::create_symlink(root_ / "elsewhere.lock", root_ / "slot-1.lock");
  auto claimed = KernelDiskCache::Claim(root_, 1 << 20);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ((*claimed)->dir(), root_ / "slot-2");
  EXPECT_FALSE(fs::exists(root_ / "elsewhere.lock"));
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
  const KernelDiskCache::Pruned pruned = cache.Prune();
  EXPECT_EQ(pruned.entries, 4);
  EXPECT_EQ(pruned.bytes, 80u * 1000);
  EXPECT_EQ(pruned.left, 40u * 1000);
  EXPECT_EQ(pruned.failed, 0);
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
  EXPECT_EQ(cache.Prune().entries, 3);
  EXPECT_TRUE(fs::exists(cache.dir() / "AA" / "AAUSED" / "program.bc"));
  EXPECT_FALSE(fs::exists(cache.dir() / "DD"));
}

TEST_F(KernelDiskCacheTest, GivenAFolderWithinHalfItsLimit_PruneShouldRemoveNothing) {
  auto claimed = KernelDiskCache::Claim(root_, 100 * 1000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  MakeEntry((*claimed)->dir(), "AAONE", 40 * 1000, std::chrono::minutes(5));
  EXPECT_EQ((*claimed)->Prune().entries, 0);
  EXPECT_EQ((*claimed)->Bytes(), 40u * 1000);
}

// A symbolic link in the folder is an entry of its own, counted and removed as a link: what it points to, outside the
// folder, is neither counted nor removed. A slot that is itself a link is followed.
TEST_F(KernelDiskCacheTest, GivenLinksInTheFolder_TheirTargetsShouldBeNeitherCountedNorRemoved) {
  const fs::path outside = root_.string() + "-outside";
  fs::create_directories(outside / "folder");
  std::ofstream(outside / "big") << std::string(300 * 1000, 'x');
  std::ofstream(outside / "folder" / "kept") << "k";
  fs::create_directories(root_ / "elsewhere");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "slot-0");
  auto claimed = KernelDiskCache::Claim(root_, 100 * 1000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  KernelDiskCache& cache = **claimed;
  MakeEntry(cache.dir(), "AAPROGRAM", 120 * 1000, std::chrono::minutes(30));
  fs::create_symlink(outside / "big", cache.dir() / "AA" / "AAPROGRAM" / "link-to-file");
  fs::create_directories(cache.dir() / "BB");
  fs::create_directory_symlink(outside / "folder", cache.dir() / "BB" / "BBLINK");
  EXPECT_EQ(cache.Bytes(), 120u * 1000);
  const KernelDiskCache::Pruned pruned = cache.Prune();
  EXPECT_EQ(pruned.bytes, 120u * 1000);
  EXPECT_EQ(cache.Bytes(), 0u);
  EXPECT_FALSE(fs::exists(root_ / "elsewhere" / "AA"));  // pruned through the slot's link
  EXPECT_EQ(fs::file_size(outside / "big"), 300u * 1000);
  EXPECT_TRUE(fs::exists(outside / "folder" / "kept"));
  fs::remove_all(outside);
}

// An entry the agent cannot remove (another user's folder) is left, and the others are pruned all the same: it
// stopped every later prune, and the folder grew past its limit for good. Run as the user nobody, in a child
// process, since root removes anything.
TEST_F(KernelDiskCacheTest, GivenAnEntryThatCannotBeRemoved_PruneShouldPassOverItAndRemoveTheOthers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run the prune as another user";
  const uid_t nobody = 65534;
  const fs::path slot = root_ / "slot-0";
  MakeEntry(slot, "AASTUCK", 40 * 1000, std::chrono::minutes(60));  // the oldest
  MakeEntry(slot, "BBOLD", 40 * 1000, std::chrono::minutes(50));
  MakeEntry(slot, "CCNEW", 40 * 1000, std::chrono::minutes(10));
  std::ofstream(root_ / "slot-0.lock") << "";
  for (const auto& f : fs::recursive_directory_iterator(root_)) ASSERT_EQ(lchown(f.path().c_str(), nobody, nobody), 0);
  ASSERT_EQ(chown(root_.c_str(), nobody, nobody), 0);
  // AASTUCK and what it holds stay root's: nobody cannot remove what is in it.
  for (const auto& f : fs::recursive_directory_iterator(slot / "AA" / "AASTUCK")) lchown(f.path().c_str(), 0, 0);
  ASSERT_EQ(chown((slot / "AA" / "AASTUCK").c_str(), 0, 0), 0);
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    if (setgid(nobody) != 0 || setuid(nobody) != 0) _exit(3);
    auto claimed = KernelDiskCache::Claim(root_, 100 * 1000);
    if (!claimed.ok()) _exit(4);
    const KernelDiskCache::Pruned p = (*claimed)->Prune();
    const std::string line = std::to_string(p.entries) + " " + std::to_string(p.failed) + " " +
                             std::to_string(p.stuck_bytes) + " " + std::to_string(p.left) + " " + p.first_failure;
    (void)!write(report[1], line.data(), line.size());
    _exit(0);
  }
  close(report[1]);
  std::string got;
  char buffer[512];
  for (ssize_t n; (n = read(report[0], buffer, sizeof(buffer))) > 0;) got.append(buffer, static_cast<size_t>(n));
  close(report[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // 120 kB, limit 100 kB: AASTUCK (40 kB, the oldest) stays, BBOLD goes, and CCNEW stays: the entries that can go
  // hold 40 kB, within half the limit, once BBOLD is gone.
  EXPECT_EQ(got.rfind("1 1 40000 80000 cannot remove " + (slot / "AA" / "AASTUCK").string(), 0), 0u) << got;
  EXPECT_FALSE(fs::exists(slot / "BB"));
  EXPECT_TRUE(fs::exists(slot / "CC" / "CCNEW" / "program.bc"));
  EXPECT_TRUE(fs::exists(slot / "AA" / "AASTUCK" / "program.bc"));
}

}  // namespace
}  // namespace tunefleet::agent

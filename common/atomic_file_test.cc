#include "common/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"
#include "common/utf8.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  TempDir dir_;
  std::string path_ = dir_.File("out.txt");
};

TEST_F(AtomicFileTest, GivenAWriteThatSucceeds_ThePathShouldHoldItAndNoPartialFileBeLeft) {
  std::ofstream(path_) << "the old content, longer than the new";
  Status s = WriteFileAtomically(path_, [](std::ostream& out) {
    out << "new";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Read(path_), "new");
  EXPECT_FALSE(fs::exists(path_ + ".partial"));
}

// A name of 250 bytes fits the file system's 255, its partial file ("NAME.partial") does not: the write failed
// with "File name too long". Both a new file and a replaced one are written, and no partial file is left.
TEST_F(AtomicFileTest, GivenANameTooLongForThePartialSuffix_ItShouldStillBeWritten) {
  for (const size_t length : {247, 248, 250, 255}) {
    const std::string path = dir_.File(std::string(length - 4, 'r') + ".csv");
    for (const char* content : {"first", "second"}) {
      Status s = WriteFileAtomically(path, [&](std::ostream& out) {
        out << content;
        return Status::OK();
      });
      ASSERT_TRUE(s.ok()) << length << ": " << s.ToString();
      EXPECT_EQ(Read(path), content) << length;
    }
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_.path()), fs::directory_iterator()), 4)
      << "a partial file is left";
}

// A long name of two-byte characters: the partial file's name is cut between characters, not inside one (a file
// system that takes only UTF-8 names refused it), and the write still lands.
TEST_F(AtomicFileTest, GivenALongNameOfMultiByteCharacters_ThePartialNameShouldStayUtf8) {
  std::string name = "a";
  for (int i = 0; i < 123; ++i) name += "\xc3\xa9";  // 'e' with an acute accent
  name += ".csv";                                  // 251 bytes
  const std::string path = dir_.File(name);
  std::string partial;
  Status s = WriteFileAtomically(path, [&](std::ostream& out) {
    for (const auto& entry : fs::directory_iterator(dir_.path())) partial = entry.path().filename().string();
    out << "written";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Read(path), "written");
  ASSERT_FALSE(partial.empty());
  EXPECT_TRUE(IsUtf8(partial)) << partial;
  EXPECT_LE(partial.size(), 255u);
  EXPECT_TRUE(partial.ends_with(".partial")) << partial;
}

TEST_F(AtomicFileTest, GivenAPathThatDoesNotExistYet_ItShouldBeCreated) {
  Status s = WriteFileAtomically(path_, [](std::ostream& out) {
    out << "first";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Read(path_), "first");
  EXPECT_FALSE(fs::exists(path_ + ".partial"));
}

TEST_F(AtomicFileTest, GivenAWriteThatFailsHalfway_ThePathShouldKeepItsOldContentAndItsErrorBeReturned) {
  std::ofstream(path_) << "what an earlier export wrote";
  Status s = WriteFileAtomically(path_, [](std::ostream& out) {
    out << "half of a new export";
    return Status::Corruption("record 7 is damaged");
  });
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message(), "record 7 is damaged");
  EXPECT_EQ(Read(path_), "what an earlier export wrote");
  EXPECT_FALSE(fs::exists(path_ + ".partial"));

  const std::string absent = dir_.File("absent.txt");  // and a path that was absent stays absent
  EXPECT_FALSE(WriteFileAtomically(absent, [](std::ostream&) { return Status::IOError("disk full"); }).ok());
  EXPECT_FALSE(fs::exists(absent));
}

TEST_F(AtomicFileTest, GivenAFolderThatDoesNotExist_TheErrorShouldNameThePath) {
  const std::string nowhere = dir_.File("no/such/out.txt");
  bool called = false;
  Status s = WriteFileAtomically(nowhere, [&](std::ostream&) {
    called = true;
    return Status::OK();
  });
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find(nowhere), std::string::npos) << s.message();
  EXPECT_FALSE(called);
}

TEST_F(AtomicFileTest, GivenAPathThatIsAFolder_ItShouldBeRefusedAndTheFolderKept) {
  fs::create_directories(dir_.File("taken"));
  std::ofstream(dir_.File("taken/inside")) << "x";
  Status s = WriteFileAtomically(dir_.File("taken"), [](std::ostream& out) {
    out << "y";
    return Status::OK();
  });
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("is a directory"), std::string::npos) << s.message();
  EXPECT_EQ(Read(dir_.File("taken/inside")), "x");
  EXPECT_FALSE(fs::exists(dir_.File("taken.partial")));
}

TEST_F(AtomicFileTest, GivenASymbolicLink_ItShouldStayALinkAndTheFileItNamesBeReplaced) {
  std::ofstream(path_) << "old";
  fs::permissions(path_, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path link = dir_.File("link.txt");
  fs::create_symlink(path_, link);
  Status s = WriteFileAtomically(link.string(), [](std::ostream& out) {
    out << "new";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(Read(path_), "new");
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

// A link whose file does not exist yet stays a link, and the file is made where it points.
TEST_F(AtomicFileTest, GivenALinkToAFileNotYetMade_ItShouldStayALinkAndTheFileBeMade) {
  const fs::path link = dir_.File("latest.csv");
  fs::create_symlink("out/run1.csv", link);  // relative, to a folder that exists only later
  fs::create_directories(dir_.File("out"));
  Status s = WriteFileAtomically(link.string(), [](std::ostream& out) {
    out << "new";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(Read(dir_.File("out/run1.csv")), "new");
  fs::remove_all(dir_.File("out"));
  s = WriteFileAtomically(link.string(), [](std::ostream& out) {  // its folder gone: an error, the link kept
    out << "again";
    return Status::OK();
  });
  EXPECT_FALSE(s.ok());
  // The folder it could not write, not the writer's own partial file.
  EXPECT_EQ(s.message(), link.string() + ": cannot write a file in its folder " + dir_.File("out") +
                             ": No such file or directory");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
}

// /dev/stdout into a pipe: a chain of links ending in "pipe:[N]", which names no path; the pipe is written into.
TEST_F(AtomicFileTest, GivenALinkToAPipeAsDevStdoutIsInAPipeline_ThePipeShouldBeWrittenInto) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string out = "/proc/self/fd/" + std::to_string(fds[1]);
  Status s = WriteFileAtomically(out, [](std::ostream& o) {
    o << "piped";
    return Status::OK();
  });
  close(fds[1]);
  char buf[16] = {};
  const ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "piped");
}

// A device or a FIFO (`report -o /dev/null`, `export -o /dev/stdout`) is written into, never replaced by a file.
TEST_F(AtomicFileTest, GivenAFifo_ItShouldBeWrittenIntoAndStayAFifo) {
  const std::string fifo = dir_.File("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = Read(fifo); });  // opening blocks until the writer opens it too
  Status s = WriteFileAtomically(fifo, [](std::ostream& out) {
    out << "through the pipe";
    return Status::OK();
  });
  reader.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
  EXPECT_FALSE(fs::exists(fifo + ".partial"));
}

// A full disk: the writer sees its stream fail and says so in its own words; the error names the file and the cause.
TEST_F(AtomicFileTest, GivenAFullDevice_TheErrorShouldNameTheFileAndTheCause) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  Status s = WriteFileAtomically("/dev/full", [](std::ostream& out) {
    out << std::string(1 << 16, 'x');
    return out ? Status::OK() : Status::IOError("writing the CSV failed");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "/dev/full: write failed: No space left on device");
}

TEST_F(AtomicFileTest, GivenStandardOutputOnAFullDevice_WriteOutputShouldSaySoWithTheCause) {
  std::filebuf full;
  if (!full.open("/dev/full", std::ios::out)) GTEST_SKIP() << "no /dev/full";
  std::streambuf* const terminal = std::cout.rdbuf(&full);
  Status s = WriteOutput("-", [](std::ostream& out) {
    out << std::string(1 << 16, 'x');
    return out ? Status::OK() : Status::IOError("writing the CSV failed");
  });
  std::cout.rdbuf(terminal);
  std::cout.clear();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "standard output: write failed: No space left on device");
}

}  // namespace
}  // namespace tunefleet

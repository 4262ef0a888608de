#include "tests/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/temp_dir_testing.h"

extern char** environ;

namespace tunefleet::testing {

Subprocess::Subprocess(std::vector<std::string> argv, std::string log_path, std::vector<std::string> env)
    : log_path_(std::move(log_path)) {
  // An entry of `env` replaces the inherited one of its name (glibc's getenv would find the inherited one first).
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::set<std::string> given;
  for (const auto& e : env) given.insert(name_of(e));
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e)
    if (!given.count(name_of(*e))) envs.emplace_back(*e);
  for (auto& e : env) envs.push_back(e);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  // Only the three standard streams, as a shell starts a command: a descriptor the test runner holds (CTest's) is
  // not the program's to write to, and the log is then the first file a command opens (bad_log_e2e's /dev/fd/3).
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  int rc = posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed: " + std::to_string(rc));
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }
}

bool Subprocess::running() { return !exit_code_ && !Wait(std::chrono::milliseconds(0)); }

void Subprocess::Signal(int sig) {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

std::optional<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (exit_code_) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string Subprocess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult Run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
              const std::vector<std::string>& env) {
  const TempDir dir("run");  // a folder of its own each time; the output is returned
  Subprocess p(argv, dir.path() + "/out.log", env);
  RunResult r;
  auto code = p.Wait(timeout);
  if (!code) {
    p.Signal(SIGKILL);
    p.Wait(std::chrono::seconds(10));
  }
  r.exit_code = code ? *code : -1;
  r.output = p.Log();
  return r;
}

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string BinDir() { return TUNEFLEET_BIN_DIR; }

}  // namespace tunefleet::testing

#include "tracker/summary_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/printable.h"

namespace tunefleet {
namespace {

using Row = std::vector<std::string>;

// Device names and lease holders come from agents and tuners: their control characters are shown escaped.
std::string Cell(const std::string& s) { return s.empty() ? "-" : Printable(s); }

std::string Age(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s ago", seconds);
  return buf;
}

std::string Waited(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

// Left-aligned columns separated by two spaces; no trailing blanks.
void PrintTable(std::ostringstream& out, const std::vector<Row>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

}  // namespace

std::string SummaryAsTable(const proto::SummaryReply& summary) {
  std::ostringstream out;
  if (summary.agents_size() == 0) {
    out << "no agents registered\n";
  } else {
    std::vector<Row> rows{{"AGENT", "KEY", "DEVICE", "STATE", "LEASE HOLDER", "JOBS DONE", "LAST SEEN"}};
    for (const auto& a : summary.agents()) {
      rows.push_back({a.agent_id(), a.key(), Cell(a.device().name()), a.state(), Cell(a.lease_holder()),
                      std::to_string(a.jobs_done()), Age(a.last_seen_age())});
    }
    PrintTable(out, rows);
  }
  out << "\n";
  std::vector<Row> keys{{"KEY", "FREE", "LEASED", "WAITING"}};
  for (const auto& k : summary.keys()) {
    keys.push_back({k.key(), std::to_string(k.free()), std::to_string(k.leased()), std::to_string(k.waiting())});
  }
  if (keys.size() == 1) {
    out << "no keys\n";
  } else {
    PrintTable(out, keys);
  }
  // Who waits, per key in the order they will be served: a run behind others sees its place and whom it waits for.
  std::vector<Row> queue{{"KEY", "PLACE", "WAITING CLIENT", "PRIORITY", "DEVICES", "WAITED"}};
  for (const auto& k : summary.keys()) {
    for (int i = 0; i < k.queue_size(); ++i) {
      const auto& q = k.queue(i);
      const std::string devices = q.min_count() < q.count()
                                      ? std::to_string(q.min_count()) + " to " + std::to_string(q.count())
                                      : std::to_string(q.count());
      queue.push_back({k.key(), std::to_string(i + 1), Cell(q.client()), std::to_string(q.priority()), devices,
                       Waited(q.waited_s())});
    }
  }
  if (queue.size() > 1) {
    out << "\n";
    PrintTable(out, queue);
  }
  return out.str();
}

std::string SummaryAsJson(const proto::SummaryReply& summary) {
  nlohmann::json j;
  j["tracker_version"] = summary.tracker_version();
  j["agents"] = nlohmann::json::array();
  for (const auto& a : summary.agents()) {
    j["agents"].push_back({{"agent_id", a.agent_id()},
                           {"key", a.key()},
                           {"device", a.device().name()},
                           {"device_fingerprint", a.device().fingerprint()},
                           {"state", a.state()},
                           {"lease_holder", a.lease_holder()},
                           {"jobs_done", a.jobs_done()},
                           {"last_seen_s", a.last_seen_age()},
                           {"peer", a.peer()}});
  }
  j["keys"] = nlohmann::json::array();
  for (const auto& k : summary.keys()) {
    nlohmann::json queue = nlohmann::json::array();
    for (const auto& q : k.queue()) {
      queue.push_back({{"client", q.client()},
                       {"priority", q.priority()},
                       {"count", q.count()},
                       {"min_count", q.min_count()},
                       {"waited_s", q.waited_s()}});
    }
    j["keys"].push_back({{"key", k.key()},
                         {"free", k.free()},
                         {"leased", k.leased()},
                         {"waiting", k.waiting()},
                         {"queue", queue}});
  }
  return j.dump(2) + "\n";
}

}  // namespace tunefleet

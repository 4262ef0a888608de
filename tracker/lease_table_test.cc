#include "tracker/lease_table.h"

#include <regex>

#include <gtest/gtest.h>

namespace tunefleet::tracker {
namespace {

class LeaseTableTest : public ::testing::Test {
 protected:
  LeaseTableTest() : table_(Seconds(30)) {}

  void AddAgents(const std::string& key, int n) {
    for (int i = 0; i < n; ++i) table_.AddAgent(key + "-" + std::to_string(next_++), key);
  }
  uint64_t Want(const std::string& key, uint32_t count, int32_t priority = 0, uint32_t min_count = 0) {
    return table_.Enqueue(AcquireSpec{key, count, min_count, priority, "test", {}});
  }
  // A request of a client that began to wait at `since` (AcquireRequest.queued_for).
  uint64_t WantSince(const std::string& key, TimePoint since, int32_t priority = 0) {
    return table_.Enqueue(AcquireSpec{key, 1, 0, priority, "test", since});
  }
  TimePoint At(double s) const { return t0_ + std::chrono::duration_cast<Clock::duration>(Seconds(s)); }

  LeaseTable table_;
  TimePoint t0_ = Clock::now();
  int next_ = 0;
};

TEST_F(LeaseTableTest, GivenFreeAgents_WeShouldGrantAtOnce) {
  AddAgents("phone", 2);
  const uint64_t w = Want("phone", 2);
  auto grants = table_.Pump(At(0));
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].waiter_id, w);
  EXPECT_EQ(grants[0].lease.agent_ids.size(), 2u);
  EXPECT_EQ(table_.Counts("phone").free, 0u);
  EXPECT_EQ(table_.Counts("phone").leased, 2u);
}

TEST_F(LeaseTableTest, GivenALease_ItsIdShouldNotBeGuessableFromTheSequence) {
  AddAgents("phone", 2);
  Want("phone", 1);
  Want("phone", 1);
  auto grants = table_.Pump(At(0));
  ASSERT_EQ(grants.size(), 2u);
  const std::regex form("lease-[0-9]+-[0-9a-f]{16}");
  for (const auto& g : grants) EXPECT_TRUE(std::regex_match(g.lease.lease_id, form)) << g.lease.lease_id;
  EXPECT_NE(grants[0].lease.lease_id.substr(grants[0].lease.lease_id.size() - 16),
            grants[1].lease.lease_id.substr(grants[1].lease.lease_id.size() - 16));
  // The sequence alone names no lease: another client cannot release or renew it by counting.
  EXPECT_EQ(table_.Release("lease-1").code(), Status::Code::kNotFound);
  EXPECT_EQ(table_.Renew("lease-2", At(1)).code(), Status::Code::kNotFound);
  EXPECT_EQ(table_.Counts("phone").leased, 2u);
}

// The id in the error is the caller's: a 100 KB one came back whole in the reply, and a control byte went into the
// tuner's error line as it was.
TEST_F(LeaseTableTest, GivenAnUnknownLeaseIdOfAnyLength_ItsErrorShouldShowItShortAndPrintable) {
  const std::string id = "lease-7-\x1b[31m" + std::string(100 * 1024, 'a');
  for (const Status& s : {table_.Release(id), table_.Renew(id, At(1))}) {
    EXPECT_EQ(s.code(), Status::Code::kNotFound);
    EXPECT_LT(s.message().size(), 400u) << s.message().size();
    EXPECT_EQ(s.message().find('\x1b'), std::string::npos);
    EXPECT_NE(s.message().find("no lease 'lease-7-\\x1b[31maaa"), std::string::npos) << s.message().substr(0, 80);
    EXPECT_NE(s.message().find("(expired or released)"), std::string::npos);
  }
}

TEST_F(LeaseTableTest, GivenWaitersOfMixedPriority_WeShouldServeHigherPriorityThenFifo) {
  AddAgents("gpu", 1);
  const uint64_t holder = Want("gpu", 1);
  auto first = table_.Pump(At(0));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].waiter_id, holder);

  const uint64_t low = Want("gpu", 1, /*priority=*/0);
  const uint64_t high_a = Want("gpu", 1, /*priority=*/5);
  const uint64_t high_b = Want("gpu", 1, /*priority=*/5);
  EXPECT_TRUE(table_.Pump(At(1)).empty());
  EXPECT_EQ(table_.Counts("gpu").waiting, 3u);

  std::vector<uint64_t> order;
  std::string lease = first[0].lease.lease_id;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(table_.Release(lease).ok());
    auto g = table_.Pump(At(2 + i));
    ASSERT_EQ(g.size(), 1u);
    order.push_back(g[0].waiter_id);
    lease = g[0].lease.lease_id;
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{high_a, high_b, low}));
}

TEST_F(LeaseTableTest, GivenAnUnrenewedLease_WeShouldExpireItAndFreeItsAgents) {
  AddAgents("cpu", 1);
  Want("cpu", 1);
  auto g = table_.Pump(At(0));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(table_.Expire(At(29)).empty());
  ASSERT_TRUE(table_.Renew(g[0].lease.lease_id, At(20)).ok());
  EXPECT_TRUE(table_.Expire(At(49)).empty());
  auto ended = table_.Expire(At(50));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].lease_id, g[0].lease.lease_id);
  EXPECT_EQ(table_.Counts("cpu").free, 1u);
  EXPECT_FALSE(table_.Renew(g[0].lease.lease_id, At(51)).ok());
}

TEST_F(LeaseTableTest, GivenAPinnedLease_WeShouldNotExpireItUntilUnpinned) {
  AddAgents("cpu", 1);
  Want("cpu", 1);
  auto g = table_.Pump(At(0));
  ASSERT_TRUE(table_.Pin(g[0].lease.lease_id).ok());
  EXPECT_TRUE(table_.Expire(At(100)).empty());
  table_.Unpin(g[0].lease.lease_id, At(100));
  EXPECT_TRUE(table_.Expire(At(129)).empty());
  EXPECT_EQ(table_.Expire(At(130)).size(), 1u);
}

TEST_F(LeaseTableTest, GivenAWaiter_WeShouldGrantItWhenALeaseIsReleased) {
  AddAgents("phone", 1);
  Want("phone", 1);
  auto g = table_.Pump(At(0));
  const uint64_t waiter = Want("phone", 1);
  EXPECT_TRUE(table_.Pump(At(1)).empty());
  EXPECT_TRUE(table_.IsWaiting(waiter));
  ASSERT_TRUE(table_.Release(g[0].lease.lease_id).ok());
  auto woke = table_.Pump(At(2));
  ASSERT_EQ(woke.size(), 1u);
  EXPECT_EQ(woke[0].waiter_id, waiter);
  EXPECT_FALSE(table_.IsWaiting(waiter));
}

TEST_F(LeaseTableTest, GivenMinCount_WeShouldGrantFewerThanCountOnlyWhenMinCountAreFree) {
  AddAgents("phone", 2);
  Want("phone", 4, 0, /*min_count=*/3);
  EXPECT_TRUE(table_.Pump(At(0)).empty());
  AddAgents("phone", 1);
  auto g = table_.Pump(At(1));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].lease.agent_ids.size(), 3u);
}

TEST_F(LeaseTableTest, GivenABlockedHead_WeShouldNotLetSmallerRequestsOvertakeIt) {
  AddAgents("phone", 2);
  Want("phone", 1);
  ASSERT_EQ(table_.Pump(At(0)).size(), 1u);  // one of the two agents is leased
  const uint64_t big = Want("phone", 2, 0, 2);
  const uint64_t small = Want("phone", 1);
  EXPECT_TRUE(table_.Pump(At(0)).empty());
  table_.CancelWaiter(big);
  auto g = table_.Pump(At(1));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].waiter_id, small);
}

// A request for more devices than the key has registered can only wait for more agents; it blocked every other
// request of its key until then.
TEST_F(LeaseTableTest, GivenAHeadWantingMoreAgentsThanRegistered_WeShouldGrantTheRequestsBehindIt) {
  AddAgents("phone", 2);
  const uint64_t big = Want("phone", 3, 0, 3);
  const uint64_t small = Want("phone", 1);
  auto g = table_.Pump(At(0));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].waiter_id, small);
  EXPECT_TRUE(table_.IsWaiting(big));
  // Once the fleet could satisfy it, it is the head again and blocks the smaller requests behind it.
  AddAgents("phone", 1);
  const uint64_t later = Want("phone", 1);
  EXPECT_TRUE(table_.Pump(At(1)).empty());
  EXPECT_TRUE(table_.IsWaiting(later));
  ASSERT_TRUE(table_.Release(g[0].lease.lease_id).ok());
  auto woke = table_.Pump(At(2));
  ASSERT_EQ(woke.size(), 1u);
  EXPECT_EQ(woke[0].waiter_id, big);
  EXPECT_EQ(woke[0].lease.agent_ids.size(), 3u);
  EXPECT_TRUE(table_.IsWaiting(later));
}

TEST_F(LeaseTableTest, GivenAnAgentRemovedFromALease_WeShouldKeepTheLeaseWithTheOthers) {
  AddAgents("phone", 2);
  Want("phone", 2);
  auto g = table_.Pump(At(0));
  const std::string gone = g[0].lease.agent_ids[0];
  EXPECT_EQ(table_.RemoveAgent(gone), g[0].lease.lease_id);
  const Lease* lease = table_.Find(g[0].lease.lease_id);
  ASSERT_NE(lease, nullptr);
  EXPECT_EQ(lease->agent_ids.size(), 1u);
  EXPECT_EQ(table_.Counts("phone").registered, 1u);
}

// A key is forgotten once it has no agent and no waiter: any client may ask for any key (without --token, anyone),
// and the tracker kept the state of every key ever asked for.
TEST_F(LeaseTableTest, GivenKeysAskedForAndLeft_TheirStateShouldBeForgotten) {
  for (int i = 0; i < 100; ++i) table_.CancelWaiter(Want("random-key-" + std::to_string(i), 1));
  EXPECT_TRUE(table_.Keys().empty());
  AddAgents("phone", 2);
  const uint64_t w = Want("phone", 1);
  ASSERT_EQ(table_.Pump(At(0)).size(), 1u);
  table_.CancelWaiter(w);  // already granted: nothing to cancel
  EXPECT_EQ(table_.Keys(), std::vector<std::string>{"phone"});
  table_.RemoveAgent("phone-0");
  table_.RemoveAgent("phone-1");
  EXPECT_TRUE(table_.Keys().empty());
  EXPECT_EQ(table_.Counts("phone").registered, 0u);
  AddAgents("phone", 1);  // and a key that comes back starts afresh
  EXPECT_EQ(table_.Counts("phone").registered, 1u);
  EXPECT_EQ(table_.Counts("phone").free, 1u);
}

TEST_F(LeaseTableTest, GivenAGrantWhoseAgentsWentAway_WeShouldRequeueItsWaiterAheadOfLaterOnes) {
  AddAgents("phone", 1);
  const AcquireSpec spec{"phone", 1, 0, 0, "test", At(0)};  // as the tracker queues it: with its time
  const uint64_t first = table_.Enqueue(spec);
  auto grants = table_.Pump(At(0));
  ASSERT_EQ(grants.size(), 1u);
  const uint64_t second = WantSince("phone", At(0.5));
  table_.RemoveAgent("phone-0");
  ASSERT_TRUE(table_.Release(grants[0].lease.lease_id).ok());
  table_.Requeue(first, spec);
  EXPECT_EQ(table_.Counts("phone").waiting, 2u);
  AddAgents("phone", 1);
  grants = table_.Pump(At(1));
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].waiter_id, first);  // its old place, not behind `second`
  EXPECT_TRUE(table_.IsWaiting(second));
}

// A run that lost its device asks again in calls of at most 10 s, each queued anew: it went behind every run that had
// come meanwhile, and a steady stream of them kept it waiting until its --device-wait ran out. Told how long it has
// waited, the queue puts it where it began to wait, among equal priorities; a higher priority still goes first.
TEST_F(LeaseTableTest, GivenARequestThatHasWaitedBefore_ItShouldKeepItsPlaceAmongEqualPriorities) {
  AddAgents("phone", 1);
  const uint64_t holder = Want("phone", 1);
  auto grants = table_.Pump(At(0));
  ASSERT_EQ(grants.size(), 1u);
  ASSERT_EQ(grants[0].waiter_id, holder);
  const uint64_t newcomer = WantSince("phone", At(2));
  const uint64_t again = WantSince("phone", At(1));  // asked later, waiting since before the newcomer came
  const uint64_t urgent = WantSince("phone", At(3), /*priority=*/5);
  std::vector<uint64_t> order;
  std::string lease = grants[0].lease.lease_id;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(table_.Release(lease).ok());
    grants = table_.Pump(At(4 + i));
    ASSERT_EQ(grants.size(), 1u);
    order.push_back(grants[0].waiter_id);
    lease = grants[0].lease.lease_id;
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{urgent, again, newcomer}));
}

// `query` shows each key's queue: the order must be the one Pump() serves, with each request's own client, counts and
// the time it began to wait.
TEST_F(LeaseTableTest, GivenWaitingRequests_TheQueueShouldListThemInServingOrder) {
  AddAgents("phone", 1);
  ASSERT_EQ(table_.Pump(At(0)).size(), 0u);
  const uint64_t holder = Want("phone", 1);
  ASSERT_EQ(table_.Pump(At(0)).size(), 1u);
  table_.Enqueue(AcquireSpec{"phone", 1, 0, 0, "newcomer", At(2)});
  table_.Enqueue(AcquireSpec{"phone", 3, 2, 0, "again", At(1)});
  table_.Enqueue(AcquireSpec{"phone", 0, 0, 5, "urgent", At(3)});
  EXPECT_TRUE(table_.Queue("nobody").empty());
  const std::vector<AcquireSpec> queue = table_.Queue("phone");
  ASSERT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue[0].client, "urgent");
  EXPECT_EQ(queue[0].count, 1u);  // 0 taken as 1
  EXPECT_EQ(queue[1].client, "again");
  EXPECT_EQ(queue[1].count, 3u);
  EXPECT_EQ(queue[1].min_count, 2u);
  EXPECT_EQ(queue[1].waiting_since, At(1));
  EXPECT_EQ(queue[2].client, "newcomer");
  (void)holder;
}

}  // namespace
}  // namespace tunefleet::tracker

#include "agent/host_contents_cache.h"

#include <gtest/gtest.h>

#include "agent/host_buffer.h"

namespace tunefleet::agent {
namespace {

proto::BufferSpec Spec(const std::string& name, uint64_t count, uint64_t seed) {
  proto::BufferSpec spec;
  spec.set_name(name);
  spec.set_type(proto::FLOAT32);
  spec.set_count(count);
  spec.set_init(proto::BufferSpec::RANDOM);
  spec.set_seed(seed);
  spec.set_lo(-1);
  spec.set_hi(1);
  return spec;
}

TEST(HostContentsCacheTest, GivenTheSameSpecTwiceWeShouldFillItOnceWithItsInitialContents) {
  HostContentsCache cache;
  HostContentsCache::Bytes first = cache.Get(Spec("a", 100, 7));
  HostContentsCache::Bytes again = cache.Get(Spec("a", 100, 7));
  EXPECT_EQ(first.get(), again.get());
  EXPECT_EQ(*first, InitialContents(Spec("a", 100, 7)));
  EXPECT_EQ(cache.fills(), 1u);
  EXPECT_EQ(cache.bytes(), 400u);
}

TEST(HostContentsCacheTest, GivenAnotherNameWithTheSameContentsWeShouldShareTheEntry) {
  HostContentsCache cache;
  HostContentsCache::Bytes a = cache.Get(Spec("a", 100, 7));
  HostContentsCache::Bytes b = cache.Get(Spec("b", 100, 7));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(cache.fills(), 1u);
}

TEST(HostContentsCacheTest, GivenAnotherSeedOrCountWeShouldFillAgain) {
  HostContentsCache cache;
  HostContentsCache::Bytes a = cache.Get(Spec("a", 100, 7));
  HostContentsCache::Bytes seed = cache.Get(Spec("a", 100, 8));
  HostContentsCache::Bytes count = cache.Get(Spec("a", 101, 7));
  EXPECT_NE(*a, *seed);
  EXPECT_EQ(*seed, InitialContents(Spec("a", 100, 8)));
  EXPECT_EQ(count->size(), 404u);
  EXPECT_EQ(cache.fills(), 3u);
  EXPECT_EQ(cache.entries(), 3u);
}

TEST(HostContentsCacheTest, GivenTheLimitTheLeastRecentlyUsedEntryShouldGoFirst) {
  HostContentsCache cache(1000);  // room for two 400-byte buffers
  HostContentsCache::Bytes a = cache.Get(Spec("a", 100, 1));
  (void)cache.Get(Spec("b", 100, 2));
  (void)cache.Get(Spec("a", 100, 1));  // a is now the most recent
  (void)cache.Get(Spec("c", 100, 3));  // evicts b
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.bytes(), 800u);
  EXPECT_EQ(cache.Get(Spec("a", 100, 1)).get(), a.get());
  EXPECT_EQ(cache.fills(), 3u);
  (void)cache.Get(Spec("b", 100, 2));  // filled again
  EXPECT_EQ(cache.fills(), 4u);
  EXPECT_LE(cache.bytes(), 1000u);
}

TEST(HostContentsCacheTest, GivenABufferOverTheLimitWeShouldFillItButNotKeepIt) {
  HostContentsCache cache(1000);
  HostContentsCache::Bytes big = cache.Get(Spec("big", 1000, 1));
  EXPECT_EQ(big->size(), 4000u);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

}  // namespace
}  // namespace tunefleet::agent

// The whole run's profile table (solvers/drivers/run_profile.h): phases summed by name in the
// order first met, the share of the wall, "other" as the wall less the sequential phases, the
// overlapped phases apart, and the PERFORMANCE line's fields.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "solvers/drivers/run_profile.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

TEST(RunProfile, AddsByNameInTheOrderFirstMet) {
  RunProfile p;
  p.add("read", 1.5, 1000, "the model");
  p.add("loop", 4.0);
  p.add("read", 0.5, 24, "ignored: the first description stays");
  ASSERT_EQ(p.phases().size(), 2u);
  EXPECT_EQ(p.phases()[0].name, "read");
  EXPECT_EQ(p.phases()[1].name, "loop");
  const RunPhase* read = p.find("read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->seconds, 2.0);
  EXPECT_EQ(read->bytes, 1024u);
  EXPECT_EQ(read->what, "the model");
  EXPECT_DOUBLE_EQ(read->gigabytes_per_second(), 1024 / 2.0 * 1e-9);
  EXPECT_EQ(p.find("output"), nullptr);
}

TEST(RunProfile, OverlappedPhasesAreNotPartOfTheSequentialSum) {
  RunProfile p;
  p.add("loop", 3.0);
  p.add("checkpoints", 2.0, 100, "files", true);
  p.add("output", 1.0, 50);
  EXPECT_DOUBLE_EQ(p.sequential_s(), 4.0);
}

TEST(RunProfile, RefusesATimeReadInTheWrongOrder) {
  RunProfile p;
  EXPECT_THROW(p.add("read", -0.1), std::invalid_argument);
  EXPECT_THROW(p.add("read", std::nan("")), std::invalid_argument);
  EXPECT_TRUE(p.phases().empty());
}

TEST(RunProfile, TablePrintsEveryPhaseTheRestAndThePerformanceLine) {
  RunProfile p;
  p.add("read", 2.0, 4000000000ull, "the model");
  p.add("set-up", 0.5);
  p.add("loop", 6.0);
  p.add("output", 1.0, 3000000000ull, "-o image.h5");
  p.add("checkpoints", 1.5, 2000000000ull, "1 file", true);
  std::ostringstream out;
  print_run_profile(p, 10.0, "rtm-test", out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("rtm: profile of the whole run: 10.000 s"));
  // read: 20% of the wall, 4e9 bytes in 2 s.
  EXPECT_THAT(text, ::testing::ContainsRegex("read +2.000 s +20.0% +3.73 GiB +2.00 GB/s +the model"));
  EXPECT_THAT(text, ::testing::ContainsRegex("output +1.000 s +10.0% .* 3.00 GB/s"));
  // other: 10 - (2 + 0.5 + 6 + 1), the checkpoints (beside the loop) not subtracted.
  EXPECT_THAT(text, ::testing::ContainsRegex("other +0.500 s +5.0%"));
  EXPECT_THAT(text, HasSubstr("1 file (apart: not added to the rows above)"));
  EXPECT_THAT(text, HasSubstr("PERFORMANCE rtm-test wall_s=10.000 read_s=2.000 read_bytes=4000000000 "
                              "read_gb_per_s=2.000 set_up_s=0.500 loop_s=6.000 output_s=1.000 "
                              "output_bytes=3000000000 output_gb_per_s=3.000 checkpoints_s=1.500 "
                              "checkpoints_bytes=2000000000 checkpoints_gb_per_s=1.333 other_s=0.500\n"));
  // The overlapped row comes after "other".
  EXPECT_LT(text.find("other "), text.find("checkpoints "));
}

// --profile under MPI: a row per rank, the loops' spread and who was slowest, the PERFORMANCE
// line; without a launcher the gather gives the rank's own times back.
TEST(RankProfile, RowsPerRankTheSpreadAndThePerformanceLine) {
  const std::vector<RankTimes> ranks = {{0, 0, 3, 1.25, 8.0, 0.5}, {1, 1, 2, 1.75, 6.0, 2.25},
                                        {2, 2, 2, 1.5, 7.0, 0.25}};
  std::ostringstream out;
  print_rank_profile(ranks, "tag", out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("rank   1  group   1     2 shot(s)  before    1.750 s  loop    6.000 s"));
  EXPECT_THAT(text, HasSubstr("loops 6.000 s (rank 1) to 8.000 s (rank 0), 25.0% apart"));
  EXPECT_THAT(text, HasSubstr("the longest before a loop 1.750 s (rank 1), after one 2.250 s (rank 1)"));
  EXPECT_THAT(text, HasSubstr("PERFORMANCE tag ranks=3 loop_min_s=6.000 loop_max_s=8.000 "
                              "before_max_s=1.750 after_max_s=2.250"));
  std::ostringstream none;
  print_rank_profile({}, "tag", none);
  EXPECT_EQ(none.str(), "");
  const RankTimes mine{0, 0, 4, 1.0, 2.0, 3.0};
  const std::vector<RankTimes> alone = gather_rank_times(mine, MPI_COMM_NULL);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].shots, 4);
  EXPECT_EQ(alone[0].after_loop_s, 3.0);
}

} // namespace
} // namespace rtm

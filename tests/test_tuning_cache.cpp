// --variant auto's tuning cache without a GPU: the key (solvers/contracts/tuning.h), where the file
// lives, its lines, and the file store (solvers/drivers/tuning_cache.h) finding, replacing and
// trimming choices, and never failing a run for a file it cannot write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "solvers/contracts/tuning.h"
#include "solvers/drivers/tuning_cache.h"

namespace rtm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TuningKey sample_key() {
  TuningKey key;
  key.device = "NVIDIA H200";
  key.compute_capability = 90;
  key.nx = 552;
  key.ny = 552;
  key.nz = 552;
  key.storage = "float32";
  key.memory = "";
  key.boundary = "cpml";
  key.candidates = {"naive_32x32", "blockz_128x8", "tma_ring"};
  key.table = "0123456789abcdef";
  return key;
}

TuningChoice sample_choice() {
  return {"tma_ring", {{"naive_32x32", 2.5}, {"blockz_128x8", 1.25}, {"tma_ring", 0.875}}};
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TuningKey, TextHoldsEveryFieldAndTellsKeysApart) {
  const TuningKey key = sample_key();
  EXPECT_EQ(tuning_key_text(key),
            "device=NVIDIA H200;cc=90;grid=552x552x552;storage=float32;memory=;boundary=cpml;"
            "candidates=naive_32x32,blockz_128x8,tma_ring;table=0123456789abcdef");
  const std::vector<void (*)(TuningKey&)> changes = {
      [](TuningKey& k) { k.device = "NVIDIA H100"; },
      [](TuningKey& k) { k.compute_capability = 80; },
      [](TuningKey& k) { k.nx = 551; },
      [](TuningKey& k) { k.ny = 551; },
      [](TuningKey& k) { k.nz = 551; },
      [](TuningKey& k) { k.storage = "half"; },
      [](TuningKey& k) { k.memory = "compressible"; },
      [](TuningKey& k) { k.boundary = "sponge"; },
      [](TuningKey& k) { k.candidates.pop_back(); },
      [](TuningKey& k) { k.table = "fedcba9876543210"; },
  };
  for (size_t c = 0; c < changes.size(); ++c) {
    TuningKey other = key;
    changes[c](other);
    EXPECT_NE(tuning_key_text(other), tuning_key_text(key)) << "change " << c;
  }
  // A name that would break the line or the fields is made harmless.
  TuningKey odd = key;
  odd.device = "GPU\twith;odd\nname";
  EXPECT_THAT(tuning_key_text(odd), HasSubstr("device=GPU with odd name;"));
}

TEST(TuningKey, FingerprintIsFnv1a) {
  EXPECT_EQ(tuning_fingerprint(""), "cbf29ce484222325");
  EXPECT_EQ(tuning_fingerprint("a"), "af63dc4c8601ec8c");
  EXPECT_NE(tuning_fingerprint("rows 1"), tuning_fingerprint("rows 2"));
}

TEST(TuningCachePlace, FromTheEnvironmentsVariables) {
  EXPECT_EQ(tuning_cache_place(nullptr, "/xdg", "/home/u").path, "/xdg/rtm/tuning.tsv");
  // XDG_CACHE_HOME must be absolute (the XDG rule); otherwise ~/.cache.
  EXPECT_EQ(tuning_cache_place(nullptr, "relative", "/home/u").path, "/home/u/.cache/rtm/tuning.tsv");
  EXPECT_EQ(tuning_cache_place(nullptr, nullptr, "/home/u").path, "/home/u/.cache/rtm/tuning.tsv");
  EXPECT_EQ(tuning_cache_place("/tmp/t.tsv", "/xdg", "/home/u").path, "/tmp/t.tsv");
  for (const char* off : {"off", "0", ""}) {
    const TuningCachePlace none = tuning_cache_place(off, "/xdg", "/home/u");
    EXPECT_TRUE(none.path.empty()) << off;
    EXPECT_THAT(none.why_none, HasSubstr("RTM_TUNING_CACHE=")) << off;
  }
  const TuningCachePlace homeless = tuning_cache_place(nullptr, nullptr, nullptr);
  EXPECT_TRUE(homeless.path.empty());
  EXPECT_THAT(homeless.why_none, HasSubstr("HOME"));
}

TEST(TuningLine, RoundTripsAndRefusesWhatIsNotOne) {
  const std::string line = format_tuning_line("rtm 0.1.0", "device=x;cc=90", sample_choice());
  EXPECT_EQ(line, "rtm 0.1.0\tdevice=x;cc=90\ttma_ring\tnaive_32x32=2.5,blockz_128x8=1.25,tma_ring=0.875");
  std::string version, key;
  TuningChoice choice;
  ASSERT_TRUE(parse_tuning_line(line, version, key, choice));
  EXPECT_EQ(version, "rtm 0.1.0");
  EXPECT_EQ(key, "device=x;cc=90");
  EXPECT_EQ(choice.variant, "tma_ring");
  EXPECT_EQ(choice.ms_per_step, sample_choice().ms_per_step);
  for (const char* bad : {"", "# a comment", "rtm\tkey\tvariant", "rtm\tkey\t\tx=1",
                          "rtm\tkey\tv\tx=fast", "rtm\tkey\tv\tx=-1", "rtm\tkey\tv\t=1",
                          "rtm\tkey\tv\tx=1\textra"})
    EXPECT_FALSE(parse_tuning_line(bad, version, key, choice)) << bad;
}

class FileTuning : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("rtm_tuning_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(FileTuning, RemembersInANewDirectoryAndFindsItFromAnotherProcessView) {
  const fs::path file = dir_ / "cache" / "rtm" / "tuning.tsv"; // no directory yet
  std::string note;
  TuningChoice found;
  FileTuningCache first(file.string(), "rtm 0.1.0");
  EXPECT_FALSE(first.find(sample_key(), found, note));
  EXPECT_TRUE(note.empty()) << "no file yet is no problem: " << note;
  first.remember(sample_key(), sample_choice(), note);
  EXPECT_TRUE(note.empty()) << note;
  EXPECT_EQ(first.describe(), "the tuning cache " + file.string());

  FileTuningCache second(file.string(), "rtm 0.1.0"); // a later run
  ASSERT_TRUE(second.find(sample_key(), found, note)) << note;
  EXPECT_EQ(found.variant, "tma_ring");
  EXPECT_EQ(found.ms_per_step, sample_choice().ms_per_step);
  TuningKey other = sample_key();
  other.nz = 300;
  EXPECT_FALSE(second.find(other, found, note));
  // Another release of rtm times again.
  FileTuningCache newer(file.string(), "rtm 0.2.0");
  EXPECT_FALSE(newer.find(sample_key(), found, note));
}

TEST_F(FileTuning, ReplacesAKeysChoiceAndKeepsOtherLines) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "tuning.tsv";
  { std::ofstream(file) << "# written by hand\nnot a line of the cache\n"; }
  FileTuningCache cache(file.string(), "rtm 0.1.0");
  std::string note;
  cache.remember(sample_key(), sample_choice(), note);
  TuningChoice slower = sample_choice();
  slower.variant = "blockz_128x8";
  cache.remember(sample_key(), slower, note);
  ASSERT_TRUE(note.empty()) << note;
  const std::vector<std::string> lines = lines_of(file);
  ASSERT_EQ(lines.size(), 3u); // the two others and one choice for the key
  EXPECT_EQ(lines[0], "# written by hand");
  TuningChoice found;
  ASSERT_TRUE(cache.find(sample_key(), found, note));
  EXPECT_EQ(found.variant, "blockz_128x8");
}

TEST_F(FileTuning, KeepsTheNewestLinesOnly) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "tuning.tsv";
  {
    std::ofstream out(file);
    for (int n = 0; n < FileTuningCache::kMaxTuningLines; ++n) out << "old line " << n << "\n";
  }
  FileTuningCache cache(file.string(), "rtm 0.1.0");
  std::string note;
  cache.remember(sample_key(), sample_choice(), note);
  const std::vector<std::string> lines = lines_of(file);
  ASSERT_EQ(int(lines.size()), FileTuningCache::kMaxTuningLines);
  EXPECT_EQ(lines.front(), "old line 1"); // the oldest went
  TuningChoice found;
  EXPECT_TRUE(cache.find(sample_key(), found, note));
}

TEST_F(FileTuning, AFileThatCannotBeWrittenIsANoteNotAFailure) {
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "plain_file") << "x"; }
  FileTuningCache cache((dir_ / "plain_file" / "rtm" / "tuning.tsv").string(), "rtm 0.1.0");
  std::string note;
  EXPECT_NO_THROW(cache.remember(sample_key(), sample_choice(), note));
  EXPECT_THAT(note, HasSubstr("cannot be written"));
  TuningChoice found;
  EXPECT_FALSE(cache.find(sample_key(), found, note));
}

} // namespace
} // namespace rtm

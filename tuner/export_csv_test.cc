#include "tuner/export_csv.h"

#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tuner/export_testing.h"

namespace tunefleet {
namespace {

TEST(ExportCsvTest, GivenFieldsWithCommasAndQuotes_WeShouldQuoteThem) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(R"({"a":[1,2]})"), R"("{""a"":[1,2]}")");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

// A device's name or a driver's message that a spreadsheet would run as a formula is written as text.
TEST(ExportCsvTest, GivenFreeTextThatReadsAsAFormula_WeShouldPrefixItSoItStaysText) {
  EXPECT_EQ(CsvTextField("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(CsvTextField("+1"), "'+1");
  EXPECT_EQ(CsvTextField("-2+3"), "'-2+3");
  EXPECT_EQ(CsvTextField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvTextField("Adreno (TM) 740"), "Adreno (TM) 740");
  EXPECT_EQ(CsvTextField(""), "");
  EXPECT_EQ(CsvField("=1"), "=1");  // the log's own fields (specs, numbers, JSON) stay as they are

  TempDir dir;
  auto log = std::move(TuningLog::Open(dir.File("log.db"))).value();
  proto::DeviceInfo device = AdrenoDevice();
  device.set_name("=1+1");
  AddTestRecord(*log, device, "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d", ConvConfig(), 0,
                {0.001}, 1700000000);
  std::ostringstream out;
  ASSERT_TRUE(ExportCsv(*log, false, out, std::cerr).ok());
  EXPECT_NE(out.str().find(",'=1+1,"), std::string::npos) << out.str();
}

TEST(ExportCsvTest, GivenRecords_WeShouldWriteTheHeaderAndOneRowEach) {
  TempDir dir;
  auto log = std::move(TuningLog::Open(dir.File("log.db"))).value();
  AddTestRecord(*log, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d", ConvConfig(),
                0, {0.001, 0.003}, 1700000000.5);
  AddTestRecord(*log, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d", ConvConfig(),
                4, {}, 1700000001);
  std::ostringstream out;
  auto rows = ExportCsv(*log, false, out, std::cerr);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 2u);
  std::istringstream in(out.str());
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(header, kCsvHeader);
  EXPECT_NE(first.find(R"(,"conv2d:1,32,16,16,32,3,3,1,1:float16",conv2d,conv2d_nchwc.image2d,1,)"), std::string::npos)
      << first;
  EXPECT_NE(first.find(",0,0.002,"), std::string::npos) << first;  // status, mean cost
  EXPECT_NE(first.find("\"[0.001,0.003]\""), std::string::npos) << first;
  EXPECT_NE(first.find("1700000000.500000"), std::string::npos) << first;
  EXPECT_NE(second.find("CL_OUT_OF_RESOURCES"), std::string::npos) << second;
}

// A device whose description in the log is damaged: its records are exported, with one note saying its limits and
// driver are unknown (the kernel pack's export said only "device has no image support" for each image template).
TEST(ExportCsvTest, GivenADeviceWhoseDescriptionIsDamaged_TheExportShouldSaySoOnce) {
  TempDir dir;
  auto log = std::move(TuningLog::Open(dir.File("log.db"))).value();
  for (double t : {1700000000.0, 1700000001.0}) {
    AddTestRecord(*log, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d", ConvConfig(),
                  0, {0.001}, t);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("log.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE devices SET info_json = '{broken'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const std::string note =
      "QUALCOMM Adreno(TM) 740 [adreno740-0800.14]: the log's description of this device does not parse as a device "
      "description (damaged): its limits and driver are unknown here, so what needs them is skipped or not judged, "
      "and its driver fields are written empty\n";
  std::ostringstream out, notes;
  auto rows = ExportCsv(*log, false, out, notes);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 2u);
  EXPECT_EQ(notes.str(), note);
  // The best only: said once, where the best is picked (its configs are not judged against unknown limits).
  std::ostringstream best_out, best_notes;
  rows = ExportCsv(*log, true, best_out, best_notes);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 1u);
  EXPECT_EQ(best_notes.str(), note);
}

}  // namespace
}  // namespace tunefleet

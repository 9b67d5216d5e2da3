// Type confusion anywhere in any document loraprobe reads is the document's fault:
// exit 2 with the JSON pointer, never an internal error (exit 4) or a crash. Each
// reader meets real documents (fixtures, the fuzz corpus, the embedded configs, a
// journal written by its writer, cache entries written by the cache) with every value
// replaced in turn by each JSON type (support/mutation.hpp: every key of every object;
// of a list, its first elements, which the rest are read like), and then what the
// command does with what it read runs too: every format of `report`, `diff` both ways
// and `merge` for reports and inspect documents, the plan and `--show-config` for a
// config, lookups for a tuned file, the listing for a manifest, a lookup for a cache
// entry. Each test prints its count line; the last one prints the total.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "formats/diff.hpp"
#include "formats/document.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/merge.hpp"
#include "formats/summary.hpp"
#include "inspect/cache.hpp"
#include "kernels/manifest.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "plan/tuned.hpp"
#include "report/journal.hpp"
#include "report/report.hpp"
#include "support/mutation.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::formats {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::mutate_each;
using test_support::MutationTally;

/// Of a list, the elements mutated fully: the first two (the rest go through the same
/// code); of a report's or inspect document's lists the first one, to stay within CI's time.
constexpr std::size_t k_elements = 2;
constexpr std::size_t k_document_elements = 1;

const std::string k_source = LP_SOURCE_DIR;

/// Every reader's tally, for the total line at the end.
MutationTally& total() {
  static MutationTally t;
  return t;
}

/// The line the closing notes quote, printed once the whole binary has run (CTest runs
/// each test in a process of its own, which prints its own reader's line).
class TotalLine : public ::testing::Environment {
 public:
  void TearDown() override {
    if (total().mutations > 0) {
      std::cout << total().line("total") << "\n";
    }
  }
};
[[maybe_unused]] ::testing::Environment* const k_total_line = ::testing::AddGlobalTestEnvironment(new TotalLine);

void expect_clean(const MutationTally& t, const std::string& what) {
  std::cout << t.line(what) << "\n";
  total() += t;
  std::vector<std::string> shown(t.failures.begin(), t.failures.begin() + std::min<std::size_t>(t.failures.size(), 40));
  EXPECT_EQ(t.other, 0U) << fmt::format("{}", fmt::join(shown, "\n"));
  EXPECT_GT(t.exit2, 0U) << "no mutation was refused: the reader saw none of them";
}

/// Writes `text` to `path` without write_file_atomic's fsync: thousands of mutated
/// documents a second, in a temporary folder.
void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

std::vector<std::string> files_in(const std::string& dir, const std::string& ending) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() >= ending.size() && p.compare(p.size() - ending.size(), ending.size(), ending) == 0) {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A command run on a document (read as every command reads it, once for all of them:
/// read_document) and its path, against the unmutated one.
using Command = std::function<void(const Document& doc, const std::string& path, const Document& reference)>;

/// What `loraprobe report` (every format), `diff` (both ways, against the unmutated
/// document) and `merge` do with a document, each a command of its own.
const std::vector<std::pair<std::string, Command>>& commands() {
  static const std::vector<std::pair<std::string, Command>> k_all = {
      {"report", [](const Document& doc, const std::string&, const Document&) {
         (void)summary_of(doc);
         (void)markdown_of(doc);
         (void)html_of(doc);
         (void)junit_of(doc);
         if (doc.kind == DocumentKind::report) {
           (void)as_report(doc).dump();  // --format json (an inspect document is refused there)
         }
       }},
      {"diff", [](const Document& doc, const std::string&, const Document& reference) {
         (void)diff_reports(reference, doc, {});
         (void)diff_reports(doc, reference, {});
       }},
      {"merge", [](const Document&, const std::string& path, const Document&) { (void)merge_reports({path}, {}); }},
  };
  return k_all;
}

/// Reads the document at `path` and runs `run` on it: the commands' refusals count as
/// one (exit 2), an internal error is rethrown with the command's name.
void run_commands(const std::vector<const std::pair<std::string, Command>*>& run, const std::string& path,
                  const Document& reference) {
  const Document doc = read_document(path);
  bool refused = false;
  std::string why;
  for (const auto* command : run) {
    try {
      command->second(doc, path, reference);
    } catch (const UsageError& e) {
      refused = true;
      why = e.what();
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", command->first, e.what()));
    }
  }
  if (refused) {
    throw UsageError(why);
  }
}

/// Mutates each document in `paths`, with the commands that accept it unmutated (merge
/// takes only a report of the current major, diff only reports).
MutationTally mutate_documents(const std::vector<std::string>& paths) {
  const TempDir dir("lp-mutation-");
  const std::string path = dir.path() + "/mutated.json";
  MutationTally tally;
  for (const std::string& p : paths) {
    const json original = json::parse(read_file(p));
    const Document reference = read_document(p);  // a corpus input no command reads is no real document
    write_text(path, original.dump());
    std::vector<const std::pair<std::string, Command>*> run;
    for (const auto& command : commands()) {
      try {
        command.second(reference, path, reference);
        run.push_back(&command);
      } catch (const UsageError&) {
      }
    }
    EXPECT_FALSE(run.empty()) << p;
    mutate_each(p.substr(k_source.size() + 1), original, k_document_elements, [&](const json& mutated) {
      write_text(path, mutated.dump());
      run_commands(run, path, reference);
    }, tally);
  }
  return tally;
}

TEST(Mutation, FullReports) {
  expect_clean(mutate_documents({k_source + "/fuzz/corpus/report/full-three-cases.json",
                                 k_source + "/fuzz/corpus/report/hostile-payloads.json"}),
               "report");
}

TEST(Mutation, CompactReports) {
  expect_clean(mutate_documents({k_source + "/tests/stack/fixtures/h100-check-run-amplify2.json"}),
               "compact report");
}

TEST(Mutation, InspectDocuments) {
  std::vector<std::string> paths;
  for (const std::string& p : files_in(k_source + "/fuzz/corpus/report", ".json")) {
    if (p.find("/inspect-") != std::string::npos) {
      paths.push_back(p);
    }
  }
  ASSERT_FALSE(paths.empty());
  expect_clean(mutate_documents(paths), "inspect document");
}

TEST(Mutation, Journals) {
  // A journal as a sweep writes it: the header, the controls and the cases of a real
  // report, each line mutated on its own.
  const TempDir dir("lp-mutation-");
  const std::string path = dir.path() + "/mutated.jsonl";
  const Document doc = read_document(k_source + "/fuzz/corpus/report/full-three-cases.json");
  report::JournalHeader header;
  header.schema_version = report::schema_version();
  header.version = "0.1.0";
  header.git_sha = "5bf6bd491828";
  header.kernel_sets = doc.environment.kernel_sets.value_or(std::vector<report::KernelSetRecord>{});
  header.fail_on = {"FAIL"};
  header.config_sha256 = std::string(64, 'c');
  header.plan_sha256 = std::string(64, 'a');
  header.argv = {"loraprobe", "sweep"};
  header.started_at = "2026-12-06T00:00:00Z";
  header.cases = doc.cases.size();
  header.shard = decltype(header.shard)::value_type{0, 2, std::string(64, 'b'), 2 * doc.cases.size()};
  {
    report::Journal journal(path, header);
    journal.append_controls(doc.controls);
    for (const report::CaseRecord& c : doc.cases) {
      journal.append_case(c);
    }
    journal.append_remedy(*doc.cases.begin());
  }
  std::vector<json> lines;
  std::istringstream text(read_file(path));
  for (std::string line; std::getline(text, line);) {
    lines.push_back(json::parse(line));
  }
  ASSERT_GE(lines.size(), 4U);
  MutationTally tally;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    mutate_each(fmt::format("journal line {}", i + 1), lines[i], k_elements, [&](const json& mutated) {
      std::string joined;
      for (std::size_t j = 0; j < lines.size(); ++j) {
        joined += (j == i ? mutated : lines[j]).dump() + "\n";
      }
      write_text(path, joined);
      (void)report::read_journal_header(path);
      (void)report::read_journal(path);
    }, tally);
  }
  tally.documents = 1;  // one journal, its lines mutated in turn
  expect_clean(tally, "journal");
}

TEST(Mutation, Configs) {
  std::vector<std::string> paths = files_in(k_source + "/configs", ".json");
  std::erase_if(paths, [](const std::string& p) { return p.ends_with("/models.json"); });  // not a sweep config
  MutationTally tally;
  for (const std::string& p : paths) {
    mutate_each(p.substr(k_source.size() + 1), json::parse(read_file(p)), k_elements, [](const json& mutated) {
      const plan::SweepConfig config = plan::parse_config(mutated.dump(), "mutated.json");
      (void)plan::format_config(config);  // --show-config
      std::size_t combinations = 1;
      for (const auto& [id, setting] : config.axes) {
        combinations *= setting.value.size();
      }
      if (combinations <= 20000) {  // a larger plan is refused by size, tested elsewhere
        (void)plan::expand_plan(config, {"3.6.0", "3.9.0"});
      }
    }, tally);
  }
  expect_clean(tally, "config");
}

TEST(Mutation, TunedFiles) {
  MutationTally tally;
  for (const std::string& p : files_in(k_source + "/tests/plan/fixtures/vllm-tuned", ".json")) {
    const std::string file = fs::path(p).filename().string();
    const std::string op = file.substr(std::string("NVIDIA_H200_").size(), file.size() - 17);
    mutate_each(p.substr(k_source.size() + 1), json::parse(read_file(p)), k_elements, [&](const json& mutated) {
      const plan::TunedConfigs tuned = plan::TunedConfigs::parse("NVIDIA H200", op, mutated.dump(), file);
      for (const std::int64_t m : {1, 16, 256, 4096}) {
        (void)tuned.expand(true, 1, 1, m, 16, 4096);
        (void)tuned.expand(false, 1, 1, m, 16, 4096);
        (void)tuned.shrink(1, 1, m, 4096, 16);
      }
    }, tally);
  }
  expect_clean(tally, "tuned file");
}

TEST(Mutation, Manifests) {
  MutationTally tally;
  for (const std::string& p : files_in(k_source + "/fuzz/corpus/manifest", ".json")) {
    mutate_each(p.substr(k_source.size() + 1), json::parse(read_file(p)), k_elements, [](const json& mutated) {
      const kernels::Manifest m = kernels::parse_manifest(mutated.dump(), "manifest.json");
      std::vector<std::pair<std::string, const kernels::Variant*>> rows;
      for (const kernels::Variant& v : m.variants) {
        (void)v.produced_ordinals();
        rows.emplace_back(m.triton_version, &v);
      }
      const kernels::ListedSet set{"mutated", m.triton_version, m.variants.size(), m.ptxas_json()};
      (void)kernels::listing_json({set}, rows).text();  // loraprobe list --json
    }, tally);
  }
  expect_clean(tally, "manifest");
}

TEST(Mutation, CacheEntries) {
  // Entries as the cache writes them (a real SASS report each, in its envelope), the
  // envelope mutated, and the payload mutated with its hash made right again, so that
  // the typed reader of the payload meets it. A lookup never throws: a bad entry is a miss.
  const TempDir dir("lp-mutation-");
  const inspect::ResultCache cache(dir.path());
  MutationTally tally;
  for (const std::string& p : files_in(k_source + "/fuzz/corpus/cache", ".json")) {
    const std::optional<sass::CubinReport> report = sass::cubin_report_from_json(json::parse(read_file(p)));
    if (!report) {
      continue;  // a regression input that is no report
    }
    const std::string key = sha256_hex(p);
    ASSERT_FALSE(cache.store_report(key, *report).has_value());
    const std::string entry_path = cache.path_of("sass", key);
    const json entry = json::parse(read_file(entry_path));
    const auto look_up = [&](const json& mutated) {
      write_text(entry_path, mutated.dump());
      (void)cache.load_report(key, report->cubin_sha256);
      (void)cache.load_compile(key);
    };
    mutate_each(p.substr(k_source.size() + 1), entry, k_elements, look_up, tally);
    mutate_each(p.substr(k_source.size() + 1) + " payload", entry.at("payload"), k_elements, [&](const json& payload) {
      json e = entry;
      e["payload"] = payload;
      e["payload_sha256"] = sha256_hex(payload.dump());
      look_up(e);
    }, tally);
  }
  std::cout << tally.line("cache entry") << "\n";
  total() += tally;
  EXPECT_EQ(tally.other, 0U) << fmt::format("{}", fmt::join(tally.failures, "\n"));
  EXPECT_GT(tally.mutations, 0U);
}


}  // namespace
}  // namespace lp::formats

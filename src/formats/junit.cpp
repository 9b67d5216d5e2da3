#include "formats/junit.hpp"

#include "formats/stack_matrix.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "formats/view.hpp"
#include "util/escape.hpp"

namespace lp::formats {


namespace {

/// One <testcase>: what it is called and how it came out.
struct TestCase {
  std::string name;
  std::string classname;
  double seconds = 0.0;
  std::string kind;     ///< "", "failure", "error", "skipped"
  std::string type;     ///< the verdict or status, for failure/error
  std::string message;  ///< one line
  std::string body;     ///< details (metrics summary, first finding)
  std::string out;      ///< <system-out>: the remedies measured for this case (sweep --remedies)
};

struct Suite {
  std::string name;
  std::vector<std::pair<std::string, std::string>> properties;  ///< <properties>: the stack matrix's say
  std::vector<std::size_t> members;  ///< its test cases, by their number (Tests::make)
};

/// The suites of a document, and a way to make any of its test cases: a report's are
/// made from its case when written, so a million cases are never a million TestCases.
struct Tests {
  std::vector<Suite> suites;
  std::function<TestCase(std::size_t)> make;
};

/// Each suite of a (Triton set, compiler) gets its stack-matrix cell and the matrix's
/// answer as properties, so a CI system shows "is it fixed?" beside the test counts.
void add_stack_properties(std::vector<Suite>& suites, const std::vector<std::pair<std::string, std::string>>& keys,
                          const StackMatrix& m) {
  for (std::size_t s = 0; s < suites.size(); ++s) {
    for (const StackRow& row : m.rows) {
      for (std::size_t i = 0; i < m.compilers.size(); ++i) {
        if (row.triton == keys[s].first && m.compilers[i] == keys[s].second) {
          suites[s].properties.push_back({"loraprobe.stack", row.cells[i].text()});
        }
      }
    }
    suites[s].properties.push_back({"loraprobe.answer", m.answer});
  }
}

/// The XML, in two passes over the test cases: the counts and times every <testsuite>
/// and the <testsuites> carry first, then each <testcase> made again and written.
void write(const Tests& tests, const std::string& name, const TextSink& sink) {
  struct Counts {
    std::size_t failures = 0;
    std::size_t errors = 0;
    std::size_t skipped = 0;
    double seconds = 0.0;
  };
  std::vector<Counts> per_suite(tests.suites.size());
  Counts all;
  std::size_t total = 0;
  for (std::size_t s = 0; s < tests.suites.size(); ++s) {
    Counts& n = per_suite[s];
    for (const std::size_t i : tests.suites[s].members) {
      const TestCase c = tests.make(i);
      n.failures += c.kind == "failure" ? 1 : 0;
      n.errors += c.kind == "error" ? 1 : 0;
      n.skipped += c.kind == "skipped" ? 1 : 0;
      n.seconds += c.seconds;
    }
    total += tests.suites[s].members.size();
    all.failures += n.failures;
    all.errors += n.errors;
    all.skipped += n.skipped;
    all.seconds += n.seconds;
  }
  sink(fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
                   "time=\"{:.6f}\">\n",
                   escape::xml(name), total, all.failures, all.errors, all.skipped, all.seconds));
  std::string out;
  for (std::size_t s = 0; s < tests.suites.size(); ++s) {
    const Suite& suite = tests.suites[s];
    const Counts& n = per_suite[s];
    std::string properties;
    if (!suite.properties.empty()) {
      properties = "    <properties>\n";
      for (const auto& [key, value] : suite.properties) {
        properties += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", escape::xml(key), escape::xml(value));
      }
      properties += "    </properties>\n";
    }
    sink(fmt::format(R"(  <testsuite name="{}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.6f}">)"
                     "\n{}",
                     escape::xml(suite.name), suite.members.size(), n.failures, n.errors, n.skipped, n.seconds,
                     properties));
    for (const std::size_t i : suite.members) {
      const TestCase c = tests.make(i);
      out = fmt::format(R"(    <testcase name="{}" classname="{}" time="{:.6f}")", escape::xml(c.name),
                        escape::xml(c.classname), c.seconds);
      if (c.kind.empty() && c.out.empty()) {
        out += "/>\n";
        sink(out);
        continue;
      }
      out += ">\n";
      if (c.kind == "skipped") {
        out += fmt::format("      <skipped message=\"{}\"/>\n", escape::xml(c.message));
      } else if (!c.kind.empty()) {
        out += fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", c.kind, escape::xml(c.message),
                           escape::xml(c.type), escape::xml(c.body), c.kind);
      }
      if (!c.out.empty()) {
        out += fmt::format("      <system-out>{}</system-out>\n", escape::xml(c.out));
      }
      out += "    </testcase>\n";
      sink(out);
    }
    sink("  </testsuite>\n");
  }
  sink("</testsuites>\n");
}

/// A report case's suite key: "<Triton>.<op>.<compiler>".
std::string suite_key(const AxisValues& axes) {
  const auto axis = [&](const char* name) { return axes.text(name).value_or(""); };
  return fmt::format("{}.{}.{}", axis("triton").empty() ? "?" : axis("triton"), axis("op"), axis("compiler"));
}

/// The <testcase> of a report's case.
TestCase report_test_case(const report::CaseRecord& c, bool latent_fails,
                          const std::map<std::string, std::string>& remedies_of) {
  const AxisValues& axes = c.axes;
  TestCase t;
  t.name = fmt::format("{} tokens={} [{}]", plan::row_label(axes), axes.integer("tokens").value_or(0), c.id);
  t.classname = "loraprobe." + suite_key(axes);
  if (c.timing) {
    // A time may be null (report.schema.json): a case whose events were lost to the fault of the case after it.
    t.seconds =
        (c.timing->kernel_ms.value_or(0.0) * static_cast<double>(c.runs) + c.timing->reference_ms.value_or(0.0)) /
        1000.0;
  }
  const std::string verdict(report::to_string(c.verdict));
  t.type = verdict;
  t.message = c.reason;
  t.body = c.metrics ? c.metrics->summary() : std::string();
  if (const auto it = remedies_of.find(c.id); it != remedies_of.end()) {
    t.out = it->second;
  }
  switch (c.verdict) {  // the reader refused any other verdict
    case report::Verdict::pass:
      break;
    case report::Verdict::fail:
      t.kind = "failure";
      break;
    case report::Verdict::fault:
    case report::Verdict::timeout:
    case report::Verdict::compile_error:
    case report::Verdict::incomplete:
      t.kind = "error";
      break;
    case report::Verdict::latent:
      t.kind = latent_fails ? "failure" : "skipped";
      break;
    case report::Verdict::skipped:
    case report::Verdict::incompatible:  // a pairing that cannot compile: not run, not a failure
      t.kind = "skipped";
      break;
  }
  return t;
}

Tests report_tests(const Document& doc, bool latent_fails) {
  // sweep --remedies: each hazardous case's testcase says what its remedies measured.
  auto remedies_of = std::make_shared<std::map<std::string, std::string>>();
  for (const report::HazardRemedies& h : doc.remedies ? doc.remedies->hazards : std::vector<report::HazardRemedies>{}) {
    std::string text_out = "remedies measured in this run:\n";
    for (const std::string& line : remedy_lines(h)) {
      text_out += "  " + line + "\n";
    }
    (*remedies_of)[h.case_id] = text_out;
  }
  std::map<std::string, std::size_t> suite_of;  // key -> index, suites in first-seen plan order
  std::vector<std::pair<std::string, std::string>> pairs;  // each suite's (Triton set, compiler)
  Tests tests;
  std::size_t i = 0;
  for (const report::CaseRecord& c : doc.cases) {
    const auto axis = [&](const char* name) { return c.axes.text(name).value_or(""); };
    const auto [it, added] = suite_of.emplace(suite_key(c.axes), tests.suites.size());
    if (added) {
      pairs.push_back({axis("triton"), axis("compiler")});
      tests.suites.emplace_back();
      tests.suites.back().name = fmt::format("loraprobe {} {} Triton {}", axis("op"), axis("compiler"), axis("triton"));
    }
    tests.suites[it->second].members.push_back(i++);
  }
  add_stack_properties(tests.suites, pairs, stack_matrix(doc));
  // A run that stopped short of its plan (a signal, a merge --allow-partial) is an error
  // of its own: the cases it holds may all pass, and a gate must not read that as green.
  if (doc.interrupted) {
    tests.suites.emplace_back();
    tests.suites.back().name = "loraprobe run";
    tests.suites.back().members.push_back(doc.cases.size());
  }
  tests.make = [&doc, latent_fails, remedies_of](std::size_t number) {
    if (number == doc.cases.size()) {
      TestCase t;
      t.name = "the whole plan ran";
      t.classname = "loraprobe.run";
      t.kind = "error";
      t.type = "incomplete";
      t.message = fmt::format("{} of {} planned case(s) are here; stopped: {}", doc.cases.size(), doc.meta.plan.cases,
                              doc.interrupted.value_or(""));
      return t;
    }
    return report_test_case(doc.cases[number], latent_fails, *remedies_of);
  };
  return tests;
}

Tests inspect_tests(const InspectDocument& doc) {
  std::map<std::string, Suite> by_key;
  std::vector<std::string> order;
  auto all = std::make_shared<std::vector<TestCase>>();
  for (const InspectItem& item : doc.items) {
    const std::string triton = item.triton.value_or("");
    const std::string compiler = item.compiler.value_or("");
    const std::string key = fmt::format("{}.{}", triton.empty() ? "files" : triton, compiler);
    if (by_key.count(key) == 0) {
      order.push_back(key);
      by_key[key].name = triton.empty() ? fmt::format("loraprobe inspect {}", compiler)
                                        : fmt::format("loraprobe inspect Triton {} {}", triton, compiler);
    }
    TestCase t;
    t.name = item.name.value_or("");
    t.classname = "loraprobe.inspect." + key;
    t.seconds = item.ms / 1000.0;
    const std::string status = item.status.value_or("");
    const std::string attribution = item.attribution.value_or("");
    const std::string early_attribution = item.early_read_attribution.value_or("");
    const std::string error = item.error.value_or("");
    t.type = status;
    if (status == "hazard") {
      t.kind = "failure";
      t.message = fmt::format("{} wgmma register hazard finding(s){}", item.finding_count,
                              attribution.empty() ? std::string() : fmt::format("; made by the {}", attribution));
      if (item.early_read_count > 0) {
        t.message += fmt::format("; {} gdc-early-read finding(s) (loads of a produced buffer before "
                                 "griddepcontrol.wait){}",
                                 item.early_read_count,
                                 early_attribution.empty() ? std::string()
                                                           : fmt::format("; made by the {}", early_attribution));
      }
      for (const report::ReportedKernel& kernel : item.sass.kernels) {
        if (kernel.first_finding_json) {
          t.body += *kernel.first_finding_json + "\n";
        }
        if (kernel.first_early_read_json) {
          t.body += *kernel.first_early_read_json + "\n";
        }
      }
    } else if (status == "error") {
      t.kind = "error";
      t.message = error.substr(0, error.find('\n'));
      t.body = error;
    } else if (status == "incompatible") {
      t.kind = "skipped";  // the compiler cannot read this PTX: not run, not failed
      t.message = "incompatible: " + error;
    }
    by_key[key].members.push_back(all->size());
    all->push_back(std::move(t));
  }
  Tests tests;
  for (const std::string& key : order) {
    tests.suites.push_back(std::move(by_key[key]));
  }
  tests.make = [all](std::size_t i) { return (*all)[i]; };
  return tests;
}

}  // namespace

void junit_of(const Document& doc, const JunitOptions& options, const TextSink& sink) {
  if (doc.kind == DocumentKind::inspect) {
    write(inspect_tests(doc.inspect), "loraprobe inspect", sink);
    return;
  }
  bool latent_fails = false;
  if (options.latent_fails) {
    latent_fails = *options.latent_fails;
  } else {
    latent_fails = doc.fail_on.count(report::Verdict::latent) > 0;
  }
  write(report_tests(doc, latent_fails), "loraprobe sweep", sink);
}

std::string junit_of(const Document& doc, const JunitOptions& options) {
  std::string out;
  junit_of(doc, options, [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace lp::formats

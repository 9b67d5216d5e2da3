#include "formats/junit.hpp"

#include "formats/stack_matrix.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "formats/view.hpp"
#include "util/escape.hpp"

namespace lp::formats {

using nlohmann::json;

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
  std::vector<TestCase> cases;
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

std::string write(const std::vector<Suite>& suites, const std::string& name) {
  std::size_t tests = 0;
  std::size_t failures = 0;
  std::size_t errors = 0;
  std::size_t skipped = 0;
  double seconds = 0.0;
  std::string body;
  for (const Suite& s : suites) {
    std::size_t f = 0;
    std::size_t e = 0;
    std::size_t k = 0;
    double t = 0.0;
    std::string cases;
    for (const TestCase& c : s.cases) {
      f += c.kind == "failure" ? 1 : 0;
      e += c.kind == "error" ? 1 : 0;
      k += c.kind == "skipped" ? 1 : 0;
      t += c.seconds;
      cases += fmt::format(R"(    <testcase name="{}" classname="{}" time="{:.6f}")", escape::xml(c.name),
                           escape::xml(c.classname), c.seconds);
      if (c.kind.empty() && c.out.empty()) {
        cases += "/>\n";
        continue;
      }
      cases += ">\n";
      if (c.kind == "skipped") {
        cases += fmt::format("      <skipped message=\"{}\"/>\n", escape::xml(c.message));
      } else if (!c.kind.empty()) {
        cases += fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", c.kind, escape::xml(c.message),
                             escape::xml(c.type), escape::xml(c.body), c.kind);
      }
      if (!c.out.empty()) {
        cases += fmt::format("      <system-out>{}</system-out>\n", escape::xml(c.out));
      }
      cases += "    </testcase>\n";
    }
    std::string properties;
    if (!s.properties.empty()) {
      properties = "    <properties>\n";
      for (const auto& [key, value] : s.properties) {
        properties += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", escape::xml(key), escape::xml(value));
      }
      properties += "    </properties>\n";
    }
    body += fmt::format(R"(  <testsuite name="{}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.6f}">)"
                        "\n{}{}  </testsuite>\n",
                        escape::xml(s.name), s.cases.size(), f, e, k, t, properties, cases);
    tests += s.cases.size();
    failures += f;
    errors += e;
    skipped += k;
    seconds += t;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
                     "time=\"{:.6f}\">\n{}</testsuites>\n",
                     escape::xml(name), tests, failures, errors, skipped, seconds, body);
}

std::vector<Suite> report_suites(const Document& doc, bool latent_fails) {
  // sweep --remedies: each hazardous case's testcase says what its remedies measured.
  std::map<std::string, std::string> remedies_of;
  for (const report::HazardRemedies& h : doc.remedies ? doc.remedies->hazards : std::vector<report::HazardRemedies>{}) {
    std::string text_out = "remedies measured in this run:\n";
    for (const std::string& line : remedy_lines(h)) {
      text_out += "  " + line + "\n";
    }
    remedies_of[h.case_id] = text_out;
  }
  std::map<std::string, Suite> by_key;
  std::vector<std::string> order;  // suites in first-seen plan order
  std::vector<std::pair<std::string, std::string>> pairs;  // each suite's (Triton set, compiler)
  for (const report::CaseRecord& c : doc.cases) {
    const AxisValues& axes = c.axes;
    const auto axis = [&](const char* name) { return axes.text(name).value_or(""); };
    const std::string key =
        fmt::format("{}.{}.{}", axis("triton").empty() ? "?" : axis("triton"), axis("op"), axis("compiler"));
    if (by_key.count(key) == 0) {
      order.push_back(key);
      pairs.push_back({axis("triton"), axis("compiler")});
      by_key[key].name = fmt::format("loraprobe {} {} Triton {}", axis("op"), axis("compiler"), axis("triton"));
    }
    TestCase t;
    t.name = fmt::format("{} tokens={} [{}]", plan::row_label(axes), axes.integer("tokens").value_or(0), c.id);
    t.classname = "loraprobe." + key;
    if (c.timing) {
      // A time may be null (report.schema.json): a case whose events were lost to the fault of the case after it.
      t.seconds = (c.timing->kernel_ms.value_or(0.0) * static_cast<double>(c.runs) + c.timing->reference_ms.value_or(0.0)) /
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
    by_key[key].cases.push_back(std::move(t));
  }
  std::vector<Suite> suites;
  for (const std::string& key : order) {
    suites.push_back(std::move(by_key[key]));
  }
  add_stack_properties(suites, pairs, stack_matrix(doc));
  return suites;
}

std::vector<Suite> inspect_suites(const json& doc) {
  std::map<std::string, Suite> by_key;
  std::vector<std::string> order;
  for (const json& item : member(doc, "items")) {
    const std::string triton = text(item, "triton");
    const std::string compiler = text(item, "compiler");
    const std::string key = fmt::format("{}.{}", triton.empty() ? "files" : triton, compiler);
    if (by_key.count(key) == 0) {
      order.push_back(key);
      by_key[key].name = triton.empty() ? fmt::format("loraprobe inspect {}", compiler)
                                        : fmt::format("loraprobe inspect Triton {} {}", triton, compiler);
    }
    TestCase t;
    t.name = text(item, "name");
    t.classname = "loraprobe.inspect." + key;
    t.seconds = number(item, "ms") / 1000.0;
    const std::string status = text(item, "status");
    t.type = status;
    if (status == "hazard") {
      t.kind = "failure";
      t.message = fmt::format("{} wgmma register hazard finding(s){}", integer(item, "finding_count"),
                              text(item, "attribution").empty()
                                  ? std::string()
                                  : fmt::format("; made by the {}", text(item, "attribution")));
      if (integer(item, "early_read_count") > 0) {
        t.message += fmt::format("; {} gdc-early-read finding(s) (loads of a produced buffer before "
                                 "griddepcontrol.wait){}",
                                 integer(item, "early_read_count"),
                                 text(item, "early_read_attribution").empty()
                                     ? std::string()
                                     : fmt::format("; made by the {}", text(item, "early_read_attribution")));
      }
      const json& sass = member(item, "sass");
      if (sass.is_object()) {
        for (const json& kernel : member(sass, "kernels")) {
          for (const json& f : member(kernel, "findings")) {
            t.body += f.dump() + "\n";
            break;
          }
          for (const json& f : member(kernel, "early_reads")) {
            t.body += f.dump() + "\n";
            break;
          }
        }
      }
    } else if (status == "error") {
      t.kind = "error";
      t.message = text(item, "error").substr(0, text(item, "error").find('\n'));
      t.body = text(item, "error");
    } else if (status == "incompatible") {
      t.kind = "skipped";  // the compiler cannot read this PTX: not run, not failed
      t.message = "incompatible: " + text(item, "error");
    }
    by_key[key].cases.push_back(std::move(t));
  }
  std::vector<Suite> suites;
  for (const std::string& key : order) {
    suites.push_back(std::move(by_key[key]));
  }
  return suites;
}

}  // namespace

std::string junit_of(const Document& doc, const JunitOptions& options) {
  if (doc.kind == DocumentKind::inspect) {
    return write(inspect_suites(doc.json), "loraprobe inspect");
  }
  bool latent_fails = false;
  if (options.latent_fails) {
    latent_fails = *options.latent_fails;
  } else {
    latent_fails = doc.fail_on.count(report::Verdict::latent) > 0;
  }
  return write(report_suites(doc, latent_fails), "loraprobe sweep");
}

}  // namespace lp::formats

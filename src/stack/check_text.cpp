// check's answer for people (the terminal, a bug report's Markdown) and CI (JUnit).

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "stack/answer.hpp"
#include "util/escape.hpp"

namespace lp::stack {

namespace {

std::string ptxas_line(const PythonStack& s) {
  if (!s.ptxas.sm90) {
    return fmt::format("unknown ({})", !s.ptxas.error.empty() ? s.ptxas.error
                                       : s.triton_version   ? "the probe named none"
                                                            : "no Triton to ask");
  }
  return fmt::format("{} for sm_90: {} ({})", s.ptxas.sm90->version, s.ptxas.sm90->path,
                     s.ptxas.overridden ? fmt::format("set by {}", s.ptxas.knob)
                                        : fmt::format("Triton's own; {} overrides it", s.ptxas.knob));
}

std::string pdl_line(const PythonStack& s) {
  std::string why = s.dual_stream.value ? fmt::format("VLLM_LORA_ENABLE_DUAL_STREAM={}", *s.dual_stream.value)
                                        : "VLLM_LORA_ENABLE_DUAL_STREAM unset";
  if (s.disable_pdl.value) {
    why += fmt::format(", VLLM_LORA_DISABLE_PDL={}", *s.disable_pdl.value);
  }
  for (const VllmFlag* f : {&s.dual_stream, &s.disable_pdl}) {
    if (!f->error.empty()) {
      why += fmt::format("; {}", f->error);
    }
  }
  return fmt::format("{} ({})", s.use_gdc() ? "on: the expand is built with USE_GDC and launched with PDL" : "off", why);
}

std::string made_by_words(const std::string& who) {
  return who == "ptx" ? "the PTX" : who.empty() ? "? (no PTX to tell)" : who;
}

std::string kernel_status(const KernelAnswer& k) {
  if (k.findings == 0 && k.early_reads == 0) {
    return k.status;
  }
  std::string out;
  if (k.findings > 0) {
    out = fmt::format("{} findings, made by {}", k.findings, made_by_words(k.made_by));
  }
  if (k.early_reads > 0) {
    out += fmt::format("{}{} early reads, made by {}", out.empty() ? "" : "; ", k.early_reads,
                       made_by_words(k.early_made_by));
  }
  return out;
}

/// to_string(status) for people: "does not fix".
std::string status_word(RemedyStatus status) {
  std::string word(to_string(status));
  std::replace(word.begin(), word.end(), '_', ' ');
  return word;
}

}  // namespace

std::string answer_text(const CheckAnswer& a) {
  std::string out;
  auto to = std::back_inserter(out);
  const PythonStack& s = a.stack;
  fmt::format_to(to, "{}\n\n", a.headline());
  using escape::terminal_line;  // a path may hold a newline: it must not forge a line of the answer
  fmt::format_to(to, "stack: {} (Python {})\n", terminal_line(s.executable.empty() ? s.python : s.executable),
                 s.python_version);
  fmt::format_to(to, "  vLLM     {}{}\n", s.vllm_version.value_or("not installed"),
                 s.vllm_ops_dir ? fmt::format("  (LoRA ops: {})", terminal_line(*s.vllm_ops_dir)) : std::string());
  fmt::format_to(to, "  torch    {}\n", s.torch_version.value_or("not installed"));
  fmt::format_to(to, "  Triton   {}{}\n", s.triton_version.value_or("not installed"),
                 s.triton_dir ? fmt::format("  ({})", terminal_line(*s.triton_dir)) : std::string());
  fmt::format_to(to, "  ptxas    {}\n", terminal_line(ptxas_line(s)));
  fmt::format_to(to, "  PDL      {}\n", terminal_line(pdl_line(s)));
  if (!a.gpu.empty()) {
    fmt::format_to(to, "  GPU      {}\n", a.gpu);
  }
  fmt::format_to(to, "  configs  {}\n",
                 s.tuned_folder ? fmt::format("tuned, VLLM_TUNED_CONFIG_FOLDER={}", terminal_line(*s.tuned_folder))
                                : std::string("vLLM's defaults (VLLM_TUNED_CONFIG_FOLDER unset)"));
  if (!a.kernels.empty()) {
    fmt::format_to(to, "\nkernels vLLM launches ({}), built with this Triton for sm_90a in {:.0f} s:\n", a.kernels_source,
                   a.build_seconds);
    for (const KernelAnswer& k : a.kernels) {
      fmt::format_to(to, "  {:<9} {}  [{}]\n", k.status, k.label, k.variant);
      if (k.findings > 0 || k.early_reads > 0 || !k.error.empty()) {
        fmt::format_to(to, "            {}\n", k.error.empty() ? kernel_status(k) : k.error);
      }
      if (!k.run.empty()) {
        fmt::format_to(to, "            run: {}\n", k.run);
      }
    }
  }
  if (!a.remedies.empty()) {
    fmt::format_to(to, "\nremedies, each checked by compiling the same kernels with it:\n");
    for (const Remedy& r : a.remedies) {
      fmt::format_to(to, "  [{}] {} (for the {})\n      {}\n      {}\n", status_word(r.status), r.what, r.fixes, r.how,
                     r.evidence);
    }
  }
  for (const std::string& note : a.notes) {
    fmt::format_to(to, "note: {}\n", note);
  }
  fmt::format_to(to, "exit code {} ({})\n", a.exit_code(), to_string(a.verdict));
  return out;
}

std::string answer_markdown(const CheckAnswer& a) {
  using escape::markdown_code;
  using escape::markdown_text;
  std::string out;
  auto to = std::back_inserter(out);
  const PythonStack& s = a.stack;
  fmt::format_to(to, "# loraprobe check: {}\n\n{}\n\n", verdict_word(a.verdict), markdown_text(a.headline()));
  fmt::format_to(to, "| part | what this Python runs |\n|---|---|\n");
  fmt::format_to(to, "| Python | {} ({}) |\n", markdown_code(s.executable), markdown_text(s.python_version));
  fmt::format_to(to, "| vLLM | {} |\n| torch | {} |\n| Triton | {} |\n",
                 markdown_text(s.vllm_version.value_or("not installed")),
                 markdown_text(s.torch_version.value_or("not installed")),
                 markdown_text(s.triton_version.value_or("not installed")));
  fmt::format_to(to, "| ptxas for sm_90 | {} |\n| dual-stream (PDL) | {} |\n| GPU | {} |\n\n",
                 markdown_text(ptxas_line(s)), markdown_text(pdl_line(s)),
                 markdown_text(a.gpu.empty() ? "not asked" : a.gpu));
  if (!a.kernels.empty()) {
    fmt::format_to(to, "## Kernels vLLM launches\n\n{}; built for sm_90a.\n\n| kernel | variant | SASS |\n|---|---|---|\n",
                   markdown_text(a.kernels_source));
    for (const KernelAnswer& k : a.kernels) {
      fmt::format_to(to, "| {} | {} | {}{} |\n", markdown_text(k.label), markdown_code(k.variant),
                     markdown_text(kernel_status(k)), k.run.empty() ? "" : "; run: " + markdown_text(k.run));
    }
  }
  if (!a.remedies.empty()) {
    fmt::format_to(to, "\n## Remedies, verified by compiling\n\n| remedy | fixes | how | result |\n|---|---|---|---|\n");
    for (const Remedy& r : a.remedies) {
      fmt::format_to(to, "| {} | {} | {} | **{}**: {} |\n", markdown_text(r.what), markdown_text(r.fixes),
                     markdown_code(r.how), status_word(r.status), markdown_text(r.evidence));
    }
  }
  for (const std::string& note : a.notes) {
    fmt::format_to(to, "\n- {}", markdown_text(note));
  }
  fmt::format_to(to, "{}\nExit code {} ({}).\n", a.notes.empty() ? "" : "\n", a.exit_code(), to_string(a.verdict));
  return out;
}

std::string answer_junit(const CheckAnswer& a) {
  using escape::xml;
  std::size_t failures = 0;
  std::size_t errors = 0;
  for (const KernelAnswer& k : a.kernels) {
    failures += (k.findings > 0 || k.early_reads > 0) ? 1 : 0;
    errors += (k.status == "error" || k.status == "not built") ? 1 : 0;
  }
  const std::size_t tests = std::max<std::size_t>(a.kernels.size(), 1);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"loraprobe check\" tests=\"{}\" failures=\"{}\" "
      "errors=\"{}\">\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
      tests, failures, errors + (a.kernels.empty() ? 1 : 0), xml(a.stack.headline()), tests, failures,
      errors + (a.kernels.empty() ? 1 : 0));
  auto to = std::back_inserter(out);
  if (a.kernels.empty()) {
    fmt::format_to(to, "    <testcase classname=\"check\" name=\"stack\">\n      <error message=\"{}\"/>\n    </testcase>\n",
                   xml(a.sentence));
  }
  for (const KernelAnswer& k : a.kernels) {
    fmt::format_to(to, "    <testcase classname=\"check.{}\" name=\"{}\">\n", xml(k.variant.substr(0, k.variant.find('-'))),
                   xml(k.label + " [" + k.variant + "]"));
    if (k.findings > 0 || k.early_reads > 0) {
      fmt::format_to(to, "      <failure message=\"{}\">{}</failure>\n", xml(kernel_status(k)), xml(a.sentence));
    } else if (k.status == "error" || k.status == "not built") {
      fmt::format_to(to, "      <error message=\"{}\"/>\n", xml(k.error));
    }
    fmt::format_to(to, "    </testcase>\n");
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace lp::stack

#include "repro/bundle.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fmt/ranges.h>

#include "compile/compiler.hpp"
#include "report/verdict_table.hpp"
#include "formats/view.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/axes.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "ptx/amplify.hpp"
#include "sass/analyze.hpp"
#include "sass/nvdisasm.hpp"
#include "sweep/images.hpp"
#include "compile/toolchain.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"
#include "version.hpp"
#include "util/text.hpp"

namespace lp::repro {

using formats::member;
using formats::text;
using nlohmann::json;

namespace {

/// "R24, R25": the registers a finding names.
std::string register_names(const std::vector<int>& registers) {
  std::vector<std::string> names;
  for (int r : registers) {
    names.push_back(sass::gpr_name(r));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

/// The case of `id`.
report::CaseRecord find_case(const formats::Document& report, const std::string& id) {
  for (const report::CaseRecord& c : report.cases) {
    if (c.id == id) {
      return c;
    }
  }
  // The summary names only the first cases; the full JSON names every one.
  throw UsageError(fmt::format("{}: no case {} ({} cases; every id: loraprobe report {} --format json --detail full)",
                               report.path, id, report.cases.size(), report.path));
}

/// The variants entry of (variant, Triton, compiler, amplify): what ran, with its cubin's
/// sha256; a record of only those names when the report has none.
report::VariantRecord find_variant(const formats::Document& report, const std::string& variant,
                                   const std::string& triton, const std::string& compiler, std::int64_t amplify) {
  for (const report::VariantRecord& v : report.variants) {
    if (v.variant == variant && v.triton == triton && v.compiler == compiler && v.amplify.value_or(0) == amplify) {
      return v;
    }
  }
  report::VariantRecord none;
  none.variant = variant;
  none.triton = triton;
  none.compiler = compiler;
  return none;
}

/// A sweep config of exactly this case: every config axis pinned to the case's value.
json case_config(const report::CaseRecord& c, const report::Meta& meta) {
  json axes = json::object();
  for (const plan::AxisInfo& info : plan::axis_table()) {
    if (c.axes.contains(info.key)) {
      axes[std::string(info.key)] = json::array({c.axes.value(info.key)});
    }
  }
  return {{"name", "repro-" + c.id},
          {"description", fmt::format("Exactly case {} of {} (loraprobe repro): {}, {} tokens.", c.id,
                                      text(meta.config.value(), "name", "?"), plan::row_label(c.axes),
                                      c.axes.integer("tokens").value_or(0))},
          {"axes", std::move(axes)},
          {"repeats", meta.repeats},
          {"seed", meta.seed}};
}

/// What each marked address is in the race.
std::map<std::uint64_t, std::string> race_marks(const sass::ListingReport& report) {
  std::map<std::uint64_t, std::string> marks;
  for (const sass::KernelReport& k : report.kernels) {
    for (const sass::Finding& f : k.findings) {
      const std::string regs = register_names(f.registers);
      std::string& note = marks[f.address];
      note += fmt::format("{}{} {} of the HGMMA at {} while it is in flight{}", note.empty() ? "" : "; ",
                          f.access == "write" ? "writes" : "reads",
                          regs, sass::format_address(f.wgmma_address),
                          f.over_back_edge ? " (next trip, round the back edge)" : "");
      marks.emplace(f.wgmma_address, "the HGMMA: in flight from here");
      if (!f.wait_instruction.empty()) {
        marks.emplace(f.wait_address, "waits for all but the youngest groups: the HGMMA stays in flight");
      }
    }
  }
  return marks;
}

/// The listing with the race marked: nvdisasm's own text where it printed text, else
/// rebuilt from the parsed instructions (its JSON form).
std::string marked_listing(const sass::Disassembly& d, const std::map<std::uint64_t, std::string>& marks) {
  std::string out;
  if (d.format == "text") {
    std::size_t start = 0;
    while (start < d.raw.size()) {
      const std::size_t end = std::min(d.raw.find('\n', start), d.raw.size());
      std::string line = d.raw.substr(start, end - start);
      const std::size_t open = line.find("/*");
      const std::size_t close = open == std::string::npos ? open : line.find("*/", open);
      if (close != std::string::npos && line.find_first_not_of(' ') == open) {
        // Not an address comment (no hex number there): the line stays as it is.
        const std::optional<std::uint64_t> address =
            parse_number<std::uint64_t>(trim(std::string_view(line).substr(open + 2, close - open - 2)), 16);
        if (const auto it = address ? marks.find(*address) : marks.end(); it != marks.end()) {
          line.replace(0, std::min<std::size_t>(2, open), ">>");
          line += "    // " + it->second;
        }
      }
      out += line + "\n";
      start = end + 1;
    }
    return out;
  }
  for (const sass::KernelListing& k : d.listing.kernels) {
    out += fmt::format("\t.text.{}:\n", k.name);
    for (const sass::Instruction& insn : k.instructions) {
      const auto it = marks.find(insn.address);
      out += fmt::format("{}      /*{:04x}*/  {} ;{}\n", it == marks.end() ? "  " : ">>", insn.address, insn.text,
                         it == marks.end() ? std::string() : "    // " + it->second);
    }
  }
  return out;
}

std::string safe_name(std::string s) {
  for (char& c : s) {
    if (!is_name_char(c)) {
      c = '_';
    }
  }
  return s;
}

struct Race {
  // Markdown, for the README: instructions as code spans.
  std::string mma;       ///< "HGMMA... at 0x2380"
  std::string wait;      ///< "WARPGROUP.DEPBAR.LE gsb0, 0x1 at 0x2390", or ""
  std::string first;     ///< the first overwriting instruction, with its address and registers
  std::size_t findings = 0;
};

Race race_of(const sass::ListingReport& report) {
  Race r;
  for (const sass::KernelReport& k : report.kernels) {
    for (const sass::Finding& f : k.findings) {
      if (r.findings++ > 0) {
        continue;
      }
      const std::string regs = register_names(f.registers);
      r.mma = fmt::format("{} at {}", escape::markdown_code(f.wgmma_instruction),
                          sass::format_address(f.wgmma_address));
      r.wait = f.wait_instruction.empty() ? std::string()
                                          : fmt::format("{} at {}", escape::markdown_code(f.wait_instruction),
                                                        sass::format_address(f.wait_address));
      r.first = fmt::format("{} at {} {}s {}{}", escape::markdown_code(f.instruction), sass::format_address(f.address),
                            f.access, escape::markdown_text(regs),
                            f.over_back_edge ? " on the next trip round the loop" : "");
    }
  }
  return r;
}

/// The compiler to build the case's cubin again with. prebuilt, driver and
/// ptxas=triton are the report's own: their binaries are the kernel set's cubin, the
/// GPU's driver, and the set's bundled ptxas that loraprobe finds by the sha256 its
/// manifest records. Any other ptxas is the binary here whose sha256 the report
/// recorded for the variant, among the user's --ptxas, the toolkit's and .tools'
/// ones, and never the path the report names: a report may come from anyone.
compile::Compiler trusted_compiler(const formats::Document& report, const std::string& case_id,
                                   const compile::Compiler& named, const report::VariantRecord& ran,
                                   const std::vector<std::string>& user_ptxas) {
  if (!named.is_ptxas() || named.is_bundled_ptxas()) {
    return named;
  }
  const json recorded = ran.compile.value();  // {kind, tool, version, sha256, options, ...}
  const std::string sha = text(recorded, "sha256");
  const std::string version = text(recorded, "version", "?");
  std::vector<compile::PtxasInfo> candidates;
  for (const std::string& spec : user_ptxas) {
    candidates.push_back(compile::resolve_ptxas(spec));
  }
  for (compile::PtxasInfo& info : compile::discover_ptxas()) {
    if (info.spec != "triton") {  // ptxas=triton means each set's bundled binary, not the python3's
      candidates.push_back(std::move(info));
    }
  }
  std::vector<std::string> here;
  for (const compile::PtxasInfo& c : candidates) {
    if (!sha.empty() && c.sha256 == sha) {
      return compile::Compiler::with_ptxas(c.spec);
    }
    const std::string name = c.spec == c.version ? c.spec : fmt::format("{} {}", c.spec, c.version.empty() ? "?" : c.version);
    here.push_back(fmt::format("{} (sha256 {})", name, c.sha256.substr(0, 12)));
  }
  if (sha.empty()) {
    throw UsageError(fmt::format("{}: case {} was compiled by {}, and the report does not record that ptxas's "
                                 "sha256: loraprobe does not run a program a report names; pass --ptxas with the "
                                 "ptxas to rebuild it with",
                                 report.path, case_id, named.to_string()));
  }
  throw UsageError(fmt::format("{}: case {} was compiled by {} (version {}, sha256 {}), which is none of the ptxas "
                               "here ({}): loraprobe does not run a program a report names; pass --ptxas PATH of a "
                               "ptxas {} with that sha256",
                               report.path, case_id, named.to_string(), version, sha.substr(0, 12),
                               here.empty() ? "none found" : fmt::format("{}", fmt::join(here, ", ")), version));
}

/// Why the cubin rebuilt here differs from the one that ran, by what the report
/// recorded of its build: the compiler's binary, its options, or (both the same) the
/// PTX, that is the kernel set, which a report of another loraprobe may have had.
std::string cubin_difference(const formats::Document& report, const report::VariantRecord& ran,
                             const sweep::Image& image) {
  const nlohmann::json& recorded = ran.compile.value();
  const std::string ran_ptxas = text(recorded, "sha256");
  const std::string here_ptxas = image.compile ? image.compile->sha256.value_or("") : std::string();
  const std::string compiler = image.compiler.to_string();
  if (ran_ptxas.empty() || here_ptxas.empty()) {
    return fmt::format("the report does not record which {} built it, so what differs is not known", compiler);
  }
  if (ran_ptxas != here_ptxas) {
    return fmt::format("the {} here (sha256 {}) is not the one the sweep used (sha256 {})", compiler,
                       here_ptxas.substr(0, 12), ran_ptxas.substr(0, 12));
  }
  const nlohmann::json ran_options = recorded.is_object() ? recorded.value("options", nlohmann::json()) : nlohmann::json();
  const nlohmann::json here_options = image.compile && image.compile->options ? nlohmann::json(*image.compile->options)
                                                                              : nlohmann::json();
  if (!ran_options.is_null() && ran_options != here_options) {
    return fmt::format("the same {} (sha256 {}) with other options: {} here, {} in the sweep", compiler,
                       here_ptxas.substr(0, 12), escape::terminal_line(here_options.dump()),
                       escape::terminal_line(ran_options.dump()));
  }
  return fmt::format("the same {} (sha256 {}) and options, so the PTX differs: Triton {}'s kernel set here (loraprobe "
                     "{}, git {}) is not the one the sweep loaded (loraprobe {}, git {})",
                     compiler, here_ptxas.substr(0, 12), image.triton, k_version, k_git_sha,
                     escape::terminal_line(report.meta.version), escape::terminal_line(report.meta.git_sha));
}

}  // namespace

Bundle write_bundle(const formats::Document& report, const std::string& case_id, const std::string& dir,
                    const BundleOptions& options) {
  if (report.kind != formats::DocumentKind::report) {
    throw UsageError(fmt::format("{}: an inspect document; a repro bundle is made from a sweep report", report.path));
  }
  const report::CaseRecord& the_case = find_case(report, case_id);
  const json record = the_case.to_json();  // its full form: the bundle's case-record.json
  const AxisValues& axes = the_case.axes;
  const report::Meta& meta = report.meta;
  const std::string variant = text(record, "variant");
  if (variant.empty()) {
    throw UsageError(fmt::format("{}: case {} ran no kernel variant ({}: {})", report.path, case_id,
                                 text(record, "verdict", "?"), text(record, "reason", "no reason")));
  }
  const std::string triton = axes.text("triton").value_or("");
  const std::string compiler_name = axes.text("compiler").value_or("");
  const std::int64_t amplify = axes.integer("amplify").value_or(0);
  const report::VariantRecord ran = find_variant(report, variant, triton, compiler_name, amplify);
  const compile::Compiler compiler = trusted_compiler(
      report, case_id,
      compile::Compiler::parse_or_throw(compiler_name, fmt::format("{}: case {}'s compiler", report.path, case_id)),
      ran, options.ptxas);
  const kernels::KernelSets sets = kernels::KernelSets::load(options.kernel_dirs);
  const std::vector<std::string> versions = sets.versions();
  if (std::find(versions.begin(), versions.end(), triton) == versions.end()) {
    throw EnvironmentError(fmt::format("case {} ran Triton {}'s kernel set, which is not here (sets: {}); give it "
                                       "with --kernel-dir",
                                       case_id, triton, fmt::join(versions, ", ")));
  }
  // An amplified case's bundle holds the amplified PTX and its cubin: what ran.
  if (amplify < 0 || amplify > k_max_amplify) {
    throw UsageError(fmt::format("{}: case {}: amplify {} is outside [0, {}]", report.path, case_id, amplify,
                                 k_max_amplify));
  }
  sweep::ImageSet images;
  const std::string key = images.add(protocol::ImageRef{triton, variant, compiler, static_cast<int>(amplify)});
  images.build_on_cpu(sets, 1);
  const sweep::Image& image = images.at(key);
  if (!image.error.empty()) {
    throw EnvironmentError(fmt::format("case {}: {} of Triton {} cannot be built here: {}", case_id, variant, triton,
                                       image.error));
  }
  Bundle b;
  b.dir = dir;
  make_output_dir(dir);
  auto put = [&](const std::string& name, const std::string& bytes) {
    write_file_atomic(dir + "/" + name, bytes);
    b.files.push_back(name);
  };
  if (image.ptx) {
    put("kernel.ptx", *image.ptx);
  } else {
    b.notes.push_back("the kernel set holds no PTX for this variant");
  }
  std::string sass_summary;
  Race race;
  std::string nvdisasm_line;
  if (image.cubin.empty()) {
    b.notes.push_back(fmt::format("no cubin: the {} compiler makes it on the GPU at load time, so only the PTX can "
                                  "be bundled without one",
                                  compiler_name));
  } else {
    put("kernel.cubin", image.cubin);
    const std::string sha = sha256_hex(image.cubin);
    const std::string ran_sha = ran.cubin_sha256.value_or("");
    if (!ran_sha.empty() && ran_sha != sha) {
      b.notes.push_back(fmt::format("kernel.cubin (sha256 {}) is not the cubin that ran (sha256 {}): {}",
                                    sha.substr(0, 12), ran_sha.substr(0, 12), cubin_difference(report, ran, image)));
    }
    // Without nvdisasm (or with a cubin it cannot read) the bundle is still one, without kernel.sass.
    const std::string why_not = error_of([&] {
      sass::NvdisasmSearch search;
      search.path = options.nvdisasm;
      const sass::Nvdisasm tool = sass::find_nvdisasm(search);
      const sass::Disassembly d = sass::disassemble(tool, image.cubin, variant);
      const sass::ListingReport analysis = sass::analyze_parsed(d.listing, {}, variant);
      race = race_of(analysis);
      nvdisasm_line = fmt::format("nvdisasm {} ({})", tool.version, tool.path);
      put("kernel.sass", fmt::format("// {} of kernel.cubin (sha256 {}). Lines marked >> are the race loraprobe's "
                                     "wgmma register check found: {} finding(s).\n",
                                     nvdisasm_line, sha, race.findings) +
                             marked_listing(d, race_marks(analysis)));
    });
    if (!why_not.empty()) {
      b.notes.push_back("no kernel.sass: " + why_not);
    }
  }
  const std::optional<compile::BuildRecord>& built = image.compile;
  const std::vector<std::string> ptxas_options =
      built && built->options ? *built->options : std::vector<std::string>{};
  const bool prebuilt = compiler.kind == compile::CompilerKind::prebuilt;
  // Every word of a command is quoted for sh: a reader pastes these.
  std::string command = escape::shell(prebuilt || !built ? "ptxas" : built->tool);
  for (const std::string& option : ptxas_options) {
    command += " " + escape::shell(option);
  }
  command += " kernel.ptx -o kernel.cubin";
  put("ptxas.txt", fmt::format("command: {}\ntool:    {}\nversion: {}\nsha256:  {}\n{}", command,
                               escape::terminal_line(built ? built->tool : "?"),
                               escape::terminal_line(built ? built->version : "?"),
                               escape::terminal_line(built ? built->sha256.value_or("?") : "?"),
                               prebuilt ? fmt::format("(the cubin is Triton {}'s own, built by the ptxas in its wheel, "
                                                      "triton/backends/nvidia/bin/ptxas)\n",
                                                      escape::terminal_line(triton))
                                        : std::string()));
  const json config = case_config(the_case, meta);
  put("case.json", escape::json_c1(config.dump(2)) + "\n");
  put("case-record.json", escape::json_c1(record.dump(2)) + "\n");
  // The bundle's config must plan exactly this case, or its README would lie.
  bool same_id = false;
  try {
    const plan::Plan p = plan::expand_plan(plan::load_config_file(dir + "/case.json"), versions);
    same_id = p.cases.size() == 1 && p.cases.front().id == case_id;
  } catch (const UsageError& e) {  // the config the report's axes make is not one this loraprobe plans
    b.notes.push_back(std::string("case.json does not load: ") + e.what());
  }
  if (!same_id) {
    b.notes.push_back(fmt::format("case.json does not plan case {} alone; re-run it from the original config with "
                                  "--case {}",
                                  case_id, case_id));
  }
  // Everything from the report is data: Markdown-escaped in prose, a code span that
  // cannot be closed from inside, and sh-quoted in commands.
  const auto md = [](const std::string& s) { return escape::markdown_text(s); };
  const auto code = [](const std::string& s) { return escape::markdown_code(s); };
  const std::string verdict = text(record, "verdict", "?");
  const std::string attribution = text(record, "attribution");
  const std::string source = text(meta.config.value(), "source");
  std::string readme = fmt::format(
      "# loraprobe repro: case {}, {}\n\n{}, {} tokens: Triton {}'s {} under the {} compiler.\n\n"
      "Verdict: **{}**{}.\n\n",
      md(case_id), md(verdict), code(plan::row_label(axes)), axes.integer("tokens").value_or(0), md(triton),
      code(variant), code(compiler_name), md(verdict),
      text(record, "reason").empty() ? "" : ": " + md(text(record, "reason")));
  readme += "## Files\n\n";
  for (const std::string& f : b.files) {
    readme += fmt::format("- {}\n", code(f));
  }
  std::string rerun;
  if (same_id) {
    rerun += "loraprobe sweep --config case.json --out repro.json\n";
  }
  rerun += source.empty() ? fmt::format("loraprobe sweep --config ORIGINAL-CONFIG --case {} --out repro.json\n",
                                        escape::shell(case_id))
                          : fmt::format("loraprobe sweep --config {} --case {} --out repro.json\n",
                                        escape::shell(source), escape::shell(case_id));
  readme += "\n## Re-run exactly this case\n\n" + escape::markdown_fence(rerun, "sh") + "\n";
  readme += fmt::format("The same id means the same shapes, inputs (seed {}) and {} repeats.\n\n",
                        meta.seed, meta.repeats);
  readme += "## Make the cubin again\n\n" + escape::markdown_fence(command + "\n", "sh") + "\n";
  for (const std::string& n : b.notes) {
    readme += "Note: " + md(n) + ".\n\n";
  }
  // The paragraph for whoever owns the fix.
  const std::string owner = attribution == "ptx" ? "Triton" : attribution == "ptxas" ? "NVIDIA (ptxas)" : "";
  readme += fmt::format("## For a bug report{}\n\n", owner.empty() ? "" : " to " + owner);
  std::string paragraph = fmt::format(
      "On sm\\_90 (Hopper), the LoRA expand kernel {} generated by Triton {} and compiled by {} ({}) ", code(variant),
      md(triton), prebuilt ? "Triton's bundled ptxas" : "ptxas", md(built ? built->version : std::string("?")));
  if (race.findings > 0) {
    paragraph += fmt::format("has a wgmma register hazard in its SASS: the register-sourced {} is still in flight{} "
                             "when {}. {} such instruction(s) in all; {} marks each.",
                             race.mma, race.wait.empty() ? "" : " after " + race.wait, race.first, race.findings,
                             code("kernel.sass"));
  } else {
    paragraph += "has no static finding in its SASS.";
  }
  if (attribution == "ptx") {
    paragraph += " The PTX itself writes registers of the pending `wgmma.mma_async` before the `wgmma.wait_group` "
                 "that retires it, so every ptxas gives the hazard: the fix belongs in the PTX Triton generates.";
  } else if (attribution == "ptxas") {
    paragraph += " The PTX is well-formed (no register of a pending `wgmma.mma_async` is written before its "
                 "`wgmma.wait_group`): this ptxas moved the writes before the wait.";
  }
  paragraph += fmt::format(" loraprobe ran the case {} times ({} wrong){}.", formats::integer(record, "runs"),
                           formats::integer(record, "failed_runs"),
                           verdict == "LATENT" ? "; no run showed wrong numbers on this GPU, which the hazard does not "
                                                 "make safe"
                                               : "");
  readme += "> " + paragraph + "\n\n";
  const json gpu = report.environment.gpu.value();
  if (gpu.is_object()) {
    readme += fmt::format("Measured on {}, driver {}, with loraprobe {}{}.\n", md(text(gpu, "name", "?")),
                          md(text(gpu, "driver_version", "?")), md(meta.version),
                          nvdisasm_line.empty() ? "" : "; SASS by " + md(nvdisasm_line));
  }
  put("README.md", readme);
  return b;
}

std::vector<Bundle> save_bundles(const formats::Document& report, const std::string& dir,
                                 const BundleOptions& options) {
  std::vector<Bundle> out;
  std::set<std::string> done;
  for (const report::CaseRecord& c : report.cases) {
    if ((c.verdict != report::Verdict::fail && c.verdict != report::Verdict::latent) || c.variant.value_or("").empty()) {
      continue;
    }
    const std::string name = safe_name(fmt::format("{}-t{}-{}", *c.variant, c.axes.text("triton").value_or(""), c.axes.text("compiler").value_or("")));
    if (!done.insert(name).second) {
      continue;
    }
    out.push_back(write_bundle(report, c.id, dir + "/" + name, options));
  }
  return out;
}

}  // namespace lp::repro

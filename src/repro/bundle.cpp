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
                                      meta.config.record().value_or(report::ReportedConfig{}).name.value_or("?"), plan::row_label(c.axes),
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
  const std::optional<compile::BuildRecord>& recorded = ran.compile.record();
  const std::string sha = recorded ? recorded->sha256.value_or("") : std::string();
  const std::string version = recorded ? recorded->version : std::string("?");
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
  const std::optional<compile::BuildRecord>& recorded = ran.compile.record();
  const std::string ran_ptxas = recorded ? recorded->sha256.value_or("") : std::string();
  const std::string here_ptxas = image.compile ? image.compile->sha256.value_or("") : std::string();
  const std::string compiler = image.compiler.to_string();
  if (ran_ptxas.empty() || here_ptxas.empty()) {
    return fmt::format("the report does not record which {} built it, so what differs is not known", compiler);
  }
  if (ran_ptxas != here_ptxas) {
    return fmt::format("the {} here (sha256 {}) is not the one the sweep used (sha256 {})", compiler,
                       here_ptxas.substr(0, 12), ran_ptxas.substr(0, 12));
  }
  const nlohmann::json ran_options = recorded && recorded->options ? nlohmann::json(*recorded->options) : nlohmann::json();
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

/// What a bundle is made of: the case, what ran it, and the image built again here.
struct BundleCase {
  const formats::Document& report;
  report::CaseRecord the_case;
  std::string variant;
  std::string triton;
  std::string compiler_name;
  std::int64_t amplify = 0;
  report::VariantRecord ran;
  compile::Compiler compiler;
  kernels::KernelSets sets;           ///< the kernel sets here
  std::vector<std::string> versions;  ///< their Triton versions
};

/// The case `case_id` of `report` and what ran it, checked: it ran a variant, of a kernel
/// set that is here, with a compiler loraprobe trusts, amplified within the bound.
BundleCase bundle_case(const formats::Document& report, const std::string& case_id, const BundleOptions& options) {
  const report::CaseRecord the_case = find_case(report, case_id);
  const std::string variant = the_case.variant.value_or("");
  if (variant.empty()) {
    throw UsageError(fmt::format("{}: case {} ran no kernel variant ({}: {})", report.path, case_id,
                                 report::to_string(the_case.verdict),
                                 the_case.reason.empty() ? "no reason" : the_case.reason));
  }
  const std::string triton = the_case.axes.text("triton").value_or("");
  const std::string compiler_name = the_case.axes.text("compiler").value_or("");
  const std::int64_t amplify = the_case.axes.integer("amplify").value_or(0);
  report::VariantRecord ran = find_variant(report, variant, triton, compiler_name, amplify);
  compile::Compiler compiler = trusted_compiler(
      report, case_id,
      compile::Compiler::parse_or_throw(compiler_name, fmt::format("{}: case {}'s compiler", report.path, case_id)),
      ran, options.ptxas);
  kernels::KernelSets sets = kernels::KernelSets::load(options.kernel_dirs);
  std::vector<std::string> versions = sets.versions();
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
  return {report,         the_case,           variant,         triton, compiler_name, amplify, std::move(ran),
          std::move(compiler), std::move(sets), std::move(versions)};
}

/// A bundle's folder as it is filled: each file written and named in order.
class BundleWriter {
 public:
  explicit BundleWriter(const std::string& dir) {
    m_bundle.dir = dir;
    make_output_dir(dir);
  }
  void put(const std::string& name, const std::string& bytes) {
    write_file_atomic(m_bundle.dir + "/" + name, bytes);
    m_bundle.files.push_back(name);
  }
  void note(std::string why) { m_bundle.notes.push_back(std::move(why)); }
  [[nodiscard]] const Bundle& bundle() const { return m_bundle; }

 private:
  Bundle m_bundle;
};

/// What the SASS of the rebuilt cubin showed: the race, and the nvdisasm that showed it.
struct SassSeen {
  Race race;
  std::string nvdisasm_line;  ///< "" when there was no listing
};

/// kernel.cubin and kernel.sass, the race marked; a note for what could not be bundled.
SassSeen put_cubin_and_sass(BundleWriter& out, const BundleCase& bc, const sweep::Image& image,
                            const BundleOptions& options) {
  SassSeen seen;
  if (image.cubin.empty()) {
    out.note(fmt::format("no cubin: the {} compiler makes it on the GPU at load time, so only the PTX can "
                         "be bundled without one",
                         bc.compiler_name));
    return seen;
  }
  out.put("kernel.cubin", image.cubin);
  const std::string sha = sha256_hex(image.cubin);
  const std::string ran_sha = bc.ran.cubin_sha256.value_or("");
  if (!ran_sha.empty() && ran_sha != sha) {
    out.note(fmt::format("kernel.cubin (sha256 {}) is not the cubin that ran (sha256 {}): {}", sha.substr(0, 12),
                         ran_sha.substr(0, 12), cubin_difference(bc.report, bc.ran, image)));
  }
  // Without nvdisasm (or with a cubin it cannot read) the bundle is still one, without kernel.sass.
  const std::string why_not = error_of([&] {
    sass::NvdisasmSearch search;
    search.path = options.nvdisasm;
    const sass::Nvdisasm tool = sass::find_nvdisasm(search);
    const sass::Disassembly d = sass::disassemble(tool, image.cubin, bc.variant);
    const sass::ListingReport analysis = sass::analyze_parsed(d.listing, {}, bc.variant);
    seen.race = race_of(analysis);
    seen.nvdisasm_line = fmt::format("nvdisasm {} ({})", tool.version, tool.path);
    out.put("kernel.sass", fmt::format("// {} of kernel.cubin (sha256 {}). Lines marked >> are the race loraprobe's "
                                       "wgmma register check found: {} finding(s).\n",
                                       seen.nvdisasm_line, sha, seen.race.findings) +
                               marked_listing(d, race_marks(analysis)));
  });
  if (!why_not.empty()) {
    out.note("no kernel.sass: " + why_not);
  }
  return seen;
}

/// ptxas.txt: the command that makes the cubin again (every word quoted for sh: a
/// reader pastes it), the tool, its version and sha256. Returns the command.
std::string put_ptxas_command(BundleWriter& out, const BundleCase& bc, const sweep::Image& image) {
  const std::optional<compile::BuildRecord>& built = image.compile;
  const bool prebuilt = bc.compiler.kind == compile::CompilerKind::prebuilt;
  std::string command = escape::shell(prebuilt || !built ? "ptxas" : built->tool);
  for (const std::string& option : built && built->options ? *built->options : std::vector<std::string>{}) {
    command += " " + escape::shell(option);
  }
  command += " kernel.ptx -o kernel.cubin";
  out.put("ptxas.txt", fmt::format("command: {}\ntool:    {}\nversion: {}\nsha256:  {}\n{}", command,
                                   escape::terminal_line(built ? built->tool : "?"),
                                   escape::terminal_line(built ? built->version : "?"),
                                   escape::terminal_line(built ? built->sha256.value_or("?") : "?"),
                                   prebuilt ? fmt::format("(the cubin is Triton {}'s own, built by the ptxas in its "
                                                          "wheel, triton/backends/nvidia/bin/ptxas)\n",
                                                          escape::terminal_line(bc.triton))
                                            : std::string()));
  return command;
}

/// case.json and case-record.json; whether case.json plans exactly this case (the
/// README offers it only then), a note when it does not.
bool put_case_config(BundleWriter& out, const BundleCase& bc, const std::string& dir) {
  const std::string& case_id = bc.the_case.id;
  out.put("case.json", escape::json_c1(case_config(bc.the_case, bc.report.meta).dump(2)) + "\n");
  out.put("case-record.json", escape::json_c1(bc.the_case.to_json().dump(2)) + "\n");
  bool same_id = false;
  try {
    const plan::Plan p = plan::expand_plan(plan::load_config_file(dir + "/case.json"), bc.versions);
    same_id = p.cases.size() == 1 && p.cases.front().id == case_id;
  } catch (const UsageError& e) {  // the config the report's axes make is not one this loraprobe plans
    out.note(std::string("case.json does not load: ") + e.what());
  }
  if (!same_id) {
    out.note(fmt::format("case.json does not plan case {} alone; re-run it from the original config with --case {}",
                         case_id, case_id));
  }
  return same_id;
}

/// The paragraph for whoever owns the fix (Markdown; everything from the report escaped).
std::string bug_report_paragraph(const BundleCase& bc, const sweep::Image& image, const Race& race) {
  const auto md = [](const std::string& s) { return escape::markdown_text(s); };
  const auto code = [](const std::string& s) { return escape::markdown_code(s); };
  const std::string attribution = bc.the_case.attribution.value_or("");
  const bool prebuilt = bc.compiler.kind == compile::CompilerKind::prebuilt;
  std::string paragraph = fmt::format(
      "On sm\\_90 (Hopper), the LoRA expand kernel {} generated by Triton {} and compiled by {} ({}) ",
      code(bc.variant), md(bc.triton), prebuilt ? "Triton's bundled ptxas" : "ptxas",
      md(image.compile ? image.compile->version : std::string("?")));
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
  paragraph += fmt::format(" loraprobe ran the case {} times ({} wrong){}.", bc.the_case.runs,
                           bc.the_case.failed_runs,
                           bc.the_case.verdict == report::Verdict::latent
                               ? "; no run showed wrong numbers on this GPU, which the hazard does not make safe"
                               : "");
  return paragraph;
}

/// README.md: what the case is, the files, how to re-run it and make the cubin again,
/// the notes, and the paragraph for a bug report.
std::string readme_of(const BundleCase& bc, const Bundle& b, const std::string& command, bool same_id,
                      const sweep::Image& image, const SassSeen& seen) {
  // Everything from the report is data: Markdown-escaped in prose, a code span that
  // cannot be closed from inside, and sh-quoted in commands.
  const auto md = [](const std::string& s) { return escape::markdown_text(s); };
  const auto code = [](const std::string& s) { return escape::markdown_code(s); };
  const report::Meta& meta = bc.report.meta;
  const report::CaseRecord& c = bc.the_case;
  const std::string verdict(report::to_string(c.verdict));
  std::string readme = fmt::format(
      "# loraprobe repro: case {}, {}\n\n{}, {} tokens: Triton {}'s {} under the {} compiler.\n\n"
      "Verdict: **{}**{}.\n\n",
      md(c.id), md(verdict), code(plan::row_label(c.axes)), c.axes.integer("tokens").value_or(0), md(bc.triton),
      code(bc.variant), code(bc.compiler_name), md(verdict), c.reason.empty() ? "" : ": " + md(c.reason));
  readme += "## Files\n\n";
  for (const std::string& f : b.files) {
    readme += fmt::format("- {}\n", code(f));
  }
  const std::string source = meta.config.record().value_or(report::ReportedConfig{}).source.value_or("");
  std::string rerun = same_id ? "loraprobe sweep --config case.json --out repro.json\n" : "";
  rerun += fmt::format("loraprobe sweep --config {} --case {} --out repro.json\n",
                       source.empty() ? std::string("ORIGINAL-CONFIG") : escape::shell(source), escape::shell(c.id));
  readme += "\n## Re-run exactly this case\n\n" + escape::markdown_fence(rerun, "sh") + "\n";
  readme += fmt::format("The same id means the same shapes, inputs (seed {}) and {} repeats.\n\n", meta.seed,
                        meta.repeats);
  readme += "## Make the cubin again\n\n" + escape::markdown_fence(command + "\n", "sh") + "\n";
  for (const std::string& n : b.notes) {
    readme += "Note: " + md(n) + ".\n\n";
  }
  const std::string attribution = c.attribution.value_or("");
  const std::string owner = attribution == "ptx" ? "Triton" : attribution == "ptxas" ? "NVIDIA (ptxas)" : "";
  readme += fmt::format("## For a bug report{}\n\n", owner.empty() ? "" : " to " + owner);
  readme += "> " + bug_report_paragraph(bc, image, seen.race) + "\n\n";
  if (const std::optional<report::ReportedGpu>& gpu = bc.report.environment.gpu.record()) {
    readme += fmt::format("Measured on {}, driver {}, with loraprobe {}{}.\n", md(gpu->name.value_or("?")),
                          md(gpu->driver_version.value_or("?")), md(meta.version),
                          seen.nvdisasm_line.empty() ? "" : "; SASS by " + md(seen.nvdisasm_line));
  }
  return readme;
}

}  // namespace

Bundle write_bundle(const formats::Document& report, const std::string& case_id, const std::string& dir,
                    const BundleOptions& options) {
  if (report.kind != formats::DocumentKind::report) {
    throw UsageError(fmt::format("{}: an inspect document; a repro bundle is made from a sweep report", report.path));
  }
  const BundleCase bc = bundle_case(report, case_id, options);
  sweep::ImageSet images;
  const std::string key = images.add(protocol::ImageRef{bc.triton, bc.variant, bc.compiler, static_cast<int>(bc.amplify)});
  images.build_on_cpu(bc.sets, 1);
  images.read_all_ptx(1);  // kernel.ptx
  const sweep::Image& image = images.at(key);
  if (!image.error.empty()) {
    throw EnvironmentError(fmt::format("case {}: {} of Triton {} cannot be built here: {}", case_id, bc.variant,
                                       bc.triton, image.error));
  }
  BundleWriter out(dir);
  if (image.ptx) {
    out.put("kernel.ptx", *image.ptx);
  } else {
    out.note("the kernel set holds no PTX for this variant");
  }
  const SassSeen seen = put_cubin_and_sass(out, bc, image, options);
  const std::string command = put_ptxas_command(out, bc, image);
  const bool same_id = put_case_config(out, bc, dir);
  out.put("README.md", readme_of(bc, out.bundle(), command, same_id, image, seen));
  return out.bundle();
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

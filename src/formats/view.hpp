#pragma once
// What a person reads in a sweep report, computed once from the report and drawn by
// the Markdown and HTML writers (formats/markdown.hpp, formats/html.hpp): the
// environment block, the command, the verdict map, the cases worth reading first,
// SASS excerpts of each hazardous variant, the remedies this run measured, and the
// margin of the clean cases.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>


#include "formats/document.hpp"
#include "plan/axes.hpp"
#include "report/verdict_table.hpp"

namespace lp::formats {

struct EnvRow {
  std::string label;
  std::string value;
};

/// first failure, minimal failure, first latent: the case and its numbers.
struct NotableCase {
  std::string title;
  report::CaseRecord record;
};

struct ExcerptLine {
  std::string address;
  std::string instruction;
  std::string note;  ///< what the line does in the race
  bool marked = false;
};

/// The race of one hazardous (variant, Triton, compiler) in the SASS that ran.
struct Excerpt {
  std::string variant;
  std::string triton;
  std::string compiler;
  int findings = 0;
  std::string attribution;  ///< ptx, ptxas, none, or "" when not analysed
  std::string attribution_text;
  std::vector<ExcerptLine> lines;
  /// gdc-early-read (inspect items): the count, who made it, and one line per load:
  /// "/*1800*/ LDGSTS.E.BYPASS.128 [R5+0x4000], desc[UR12][R18.64], P2  // reads input_ptr before ACQBULK at 0x22e0".
  int early_reads = 0;
  std::string early_attribution;
  std::vector<std::string> early_lines;
};

/// A known remedy, judged by the neighbours of the hazardous cases that this run
/// measured: the same case with one axis changed.
struct Remedy {
  std::string name;          ///< "block_n 32"
  std::string why;           ///< where the remedy comes from
  std::size_t measured = 0;  ///< hazardous cases whose neighbour ran
  std::size_t clean = 0;     ///< of which the neighbour is PASS
};

/// A piece of a line of prose, in the style each writer lays out in its own markup.
struct Span {
  enum class Style { text, code, strong };
  Style style = Style::text;
  std::string text;  ///< data: each writer escapes it for its language
};

/// A line of prose: its spans one after another.
using Line = std::vector<Span>;

/// An item of a list, and the list under it (which may be empty) when it has one.
struct ListItem {
  Line line;
  std::optional<std::vector<Line>> children;
};

/// The remedies part of "What this means", built once here and laid out by each writer.
/// The intros are loraprobe's own words (no document data), written as they are.
struct RemediesSection {
  /// sweep --remedies: the paragraph before the list; "" when the report measured none.
  std::string measured_intro;
  std::vector<ListItem> measured;  ///< each hazardous case with its remedies' lines, then the notes
  /// The neighbours among the run's own cases: the paragraph before the list; "" when none ran.
  std::string neighbours_intro;
  std::vector<Line> neighbours;
  /// No neighbour ran but hazards were found: the flags that would measure remedies.
  /// The Markdown lays it out; the HTML page leaves it out, as it always has.
  Line no_remedy;
};

struct ReportView {
  std::string headline;                 ///< one sentence: the outcome
  std::vector<EnvRow> environment;
  /// environment.compilers, one row each: Triton set, compiler, ptxas version, sha256
  /// (12 digits), options or why it was unavailable.
  std::vector<std::vector<std::string>> compilers;
  std::string command;
  std::string counts;                   ///< "540 LATENT, 4740 PASS of 5280 planned"
  /// --model: what no case covered ("Not swept: experts.gate_up_proj, ... (why)."), or "".
  std::string not_swept;
  int exit_code = -1;
  std::string outcome;
  report::VerdictMap map;
  std::vector<NotableCase> notable;
  std::vector<Excerpt> excerpts;        ///< every hazardous variant, in report order
  RemediesSection remedies;
  std::string bound;                    ///< the 3/n sentence
  std::string race;                     ///< the race control's summary, or ""
  std::vector<std::string> attributions;  ///< one sentence per (Triton, compiler) with a hazard
  std::vector<double> clean_margins;    ///< worst deviation over tolerance of each PASS case
};

/// The view of a sweep report (DocumentKind::report). Throws nlohmann::json
/// exceptions on a document that is not the shape its schema version promises.
ReportView view_of(const Document& doc);

/// A report's meta.plan.not_swept (--model: projections no case covered) as one
/// sentence, or "" when there are none.
std::string not_swept_sentence(const std::vector<plan::NotSwept>& not_swept);

/// The race excerpt of one variant's sass record (sass::ListingReport JSON): per
/// in-flight MMA, the MMA, the wait it passes, the instructions that touch it.
std::vector<ExcerptLine> excerpt_lines_of(const report::ReportedSass& sass);

/// One line per gdc-early-read finding of a sass record: the load, the parameter it
/// reads, the wait it precedes.
std::vector<std::string> early_read_lines_of(const report::ReportedSass& sass);

/// The excerpt of one hazardous cubin of an inspect document (its items[]), lines included.
Excerpt excerpt_of_item(const InspectItem& item);

/// The measured remedies of one hazard of a report's remedies block, one line each:
/// "block_n 32: PASS, static clean, 2.1x the kernel time".
std::vector<std::string> remedy_lines(const report::HazardRemedies& hazard);

/// A case's numbers as short "label: value" pairs (NaN/Inf counts, deviations, the
/// first bad element with expected and actual).
std::vector<EnvRow> case_numbers(const report::CaseRecord& record);

}  // namespace lp::formats

#pragma once
// JUnit XML of a sweep report or an inspect document, for CI systems (Jenkins,
// GitLab, GitHub Actions test reporters):
//   report:  one <testsuite> per (op, compiler, Triton version), one <testcase> per
//            case, named by its configuration, tokens and id; FAIL -> <failure>,
//            fault / timeout / compile_error / incomplete -> <error>, LATENT ->
//            <failure> when latent fails the run (--fail-on latent) and <skipped>
//            with the reason otherwise, skipped -> <skipped>. A case's time is its
//            measured kernel and reference time (timing.kernel_ms x runs +
//            reference_ms); the suite's is their sum.
//   inspect: one <testsuite> per (Triton version, compiler), one <testcase> per
//            cubin; a hazard is a <failure> with its first finding, an error an <error>.

#include <optional>
#include <set>
#include <string>

#include "formats/document.hpp"
#include "util/files.hpp"

namespace lp::formats {

struct JunitOptions {
  /// Whether LATENT fails: nullopt reads the report's own meta.fail_on.
  std::optional<bool> latent_fails;
};

std::string junit_of(const Document& doc, const JunitOptions& options = {});
/// As above, the XML passed to `sink` a <testcase> at a time (a report's test cases are
/// made as they are written).
void junit_of(const Document& doc, const JunitOptions& options, const TextSink& sink);

}  // namespace lp::formats

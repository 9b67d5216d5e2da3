#pragma once
// Test helper: type confusion by mutation. Each value of a real document (every key
// of every object; of a list, its first elements only: the rest are read by the same
// code) is replaced in turn by each JSON type, and the reader and what the command
// does with its result run on the mutated document. What the CLI would make of it:
// returned is exit 0, lp::UsageError (InputError included) exit 2, anything else
// (a nlohmann::json::exception, std::out_of_range, ...) is the internal error, exit 4.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace lp::test_support {

/// What the mutations of one or more documents gave.
struct MutationTally {
  std::size_t documents = 0;
  std::size_t values = 0;     ///< values replaced (each in turn)
  std::size_t mutations = 0;  ///< documents consumed: values x replacement types
  std::size_t exit0 = 0;
  std::size_t exit2 = 0;
  std::size_t other = 0;
  std::vector<std::string> failures;  ///< "<document> <pointer> = <value>: <what>" per other

  MutationTally& operator+=(const MutationTally& t) {
    documents += t.documents;
    values += t.values;
    mutations += t.mutations;
    exit0 += t.exit0;
    exit2 += t.exit2;
    other += t.other;
    failures.insert(failures.end(), t.failures.begin(), t.failures.end());
    return *this;
  }

  /// The one line the closing notes quote.
  [[nodiscard]] std::string line(const std::string& what) const {
    return fmt::format("mutation {}: {} documents, {} values, {} mutations, exit 0: {}, exit 2: {}, other: {}", what,
                       documents, values, mutations, exit0, exit2, other);
  }
};

/// Every JSON type: two numbers (a whole one and a fraction), a string, both booleans,
/// null, a list and an object.
inline const std::vector<nlohmann::json>& replacements() {
  static const std::vector<nlohmann::json> k_all = {7,    2.5,     "x", true, false, nullptr, nlohmann::json::array(),
                                                    nlohmann::json::object()};
  return k_all;
}

/// The pointers of `j` and of every value under it; of a list, only the first
/// `elements` elements are walked.
inline void mutation_pointers(const nlohmann::json& j, const nlohmann::json::json_pointer& at, std::size_t elements,
                              std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      mutation_pointers(value, at / key, elements, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size() && i < elements; ++i) {
      mutation_pointers(j[i], at / i, elements, out);
    }
  }
}

/// Runs `consume` on `doc` with each value replaced by each other JSON type in turn,
/// counting into `tally`. `name` names the document in failures.
inline void mutate_each(const std::string& name, const nlohmann::json& doc, std::size_t elements,
                        const std::function<void(const nlohmann::json&)>& consume, MutationTally& tally) {
  std::vector<nlohmann::json::json_pointer> all;
  mutation_pointers(doc, nlohmann::json::json_pointer(), elements, all);
  ++tally.documents;
  tally.values += all.size();
  for (const nlohmann::json::json_pointer& at : all) {
    for (const nlohmann::json& replacement : replacements()) {
      const nlohmann::json& original = doc.at(at);
      if (original == replacement && original.type() == replacement.type()) {
        continue;
      }
      nlohmann::json mutated = doc;
      mutated.at(at) = replacement;
      ++tally.mutations;
      try {
        consume(mutated);
        ++tally.exit0;
      } catch (const UsageError&) {
        ++tally.exit2;
      } catch (const std::exception& e) {
        ++tally.other;
        tally.failures.push_back(fmt::format("{} {} = {}: {}", name, at.to_string(), replacement.dump(), e.what()));
      }
    }
  }
}

}  // namespace lp::test_support

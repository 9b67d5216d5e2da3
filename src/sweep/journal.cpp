#include "sweep/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::sweep {

using nlohmann::json;

JournalContents read_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  JournalContents contents;
  std::string line;
  std::size_t number = 0;
  std::string pending_error;
  while (std::getline(in, line)) {
    ++number;
    if (!pending_error.empty()) {
      // Only the last line may be torn: a bad line followed by more is corruption.
      throw InputError(path, "", pending_error);
    }
    if (line.empty()) {
      continue;
    }
    json entry;
    try {
      entry = json::parse(line);
    } catch (const json::exception&) {
      pending_error = fmt::format("line {} is not JSON", number);
      continue;
    }
    const std::string type = entry.value("type", "");
    if (number == 1) {
      if (type != "header") {
        throw InputError(path, "", "line 1 is not a loraprobe journal header");
      }
      contents.header = entry;
    } else if (type == "controls") {
      contents.controls = entry.at("controls");
    } else if (type == "case") {
      try {
        report::CaseRecord record = report::CaseRecord::from_json(entry.at("record"));
        contents.cases[record.id] = std::move(record);
      } catch (const std::exception& e) {
        throw InputError(path, "", fmt::format("line {}: {}", number, e.what()));
      }
    } else {
      throw InputError(path, "", fmt::format("line {}: unknown entry type \"{}\"", number, type));
    }
  }
  if (contents.header.is_null()) {
    throw InputError(path, "", "empty journal");
  }
  return contents;
}

Journal::Journal(const std::string& path, const json& header) : m_path(path) {
  // A line torn by a crash mid-write is dropped, so appended lines start clean.
  {
    std::ifstream existing(path, std::ios::binary);
    if (existing) {
      const std::string text((std::istreambuf_iterator<char>(existing)), std::istreambuf_iterator<char>());
      if (!text.empty() && text.back() != '\n') {
        const std::size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
          throw UsageError(fmt::format("{}: cannot drop its torn last line: {}", path, std::strerror(errno)));
        }
      }
    }
  }
  m_file = std::fopen(path.c_str(), "a");
  if (m_file == nullptr) {
    throw UsageError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  std::fseek(m_file, 0, SEEK_END);
  if (std::ftell(m_file) == 0) {
    json h = header;
    h["type"] = "header";
    const std::string line = h.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
    ::fsync(::fileno(m_file));
  }
}

Journal::~Journal() {
  if (m_file != nullptr) {
    std::fclose(m_file);
  }
}

void Journal::append(const std::string& type, json fields) {
  fields["type"] = type;
  const std::string line = fields.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), m_file) != line.size() || std::fflush(m_file) != 0) {
    throw Error(fmt::format("{}: write failed: {}", m_path, std::strerror(errno)));
  }
  ::fsync(::fileno(m_file));
}

}  // namespace lp::sweep

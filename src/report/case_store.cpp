#include "report/case_store.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/packed.hpp"

namespace lp::report {

namespace {

/// A block of record bytes; a record larger than this gets a block of its own.
constexpr std::size_t k_block_bytes = std::size_t{1} << 20;
/// Distinct texts the shared table holds; later ones are written inline, so that a
/// report whose every case has its own reason does not pay for a table of them.
constexpr std::size_t k_max_texts = 65536;

/// The presence of a record's optional parts, one bit each.
enum RecordBits : std::uint64_t {
  has_variant = 1U << 0U,
  has_metrics = 1U << 1U,
  has_timing = 1U << 2U,
  has_findings = 1U << 3U,
  has_attribution = 1U << 4U,
  has_device = 1U << 5U,
  has_amplification = 1U << 6U,
};
enum MetricBits : std::uint64_t { has_huge = 1U << 0U, has_unwritten = 1U << 1U, has_first_bad = 1U << 2U };
enum TimingBits : std::uint64_t {
  has_kernel_ms = 1U << 0U,
  has_reference_ms = 1U << 1U,
  has_bytes = 1U << 2U,
  has_grid = 1U << 3U,
};
enum AmplificationBits : std::uint64_t { has_unamplified = 1U << 0U };

template <class T>
std::uint64_t bit_if(const std::optional<T>& v, std::uint64_t bit) {
  return v ? bit : 0;
}

/// A comparison's metrics, after their presence bits; `put_text` writes a shared text.
template <class PutText>
void pack_metrics(ByteWriter& out, const CompareMetrics& m, PutText&& put_text) {
  out.varint(bit_if(m.huge, has_huge) | bit_if(m.unwritten, has_unwritten) | bit_if(m.first_bad, has_first_bad));
  for (const std::uint64_t n : {m.elements, m.untouched_elements, m.nan, m.inf, m.untouched_rows_written, m.mismatches,
                                m.reference_nonfinite, m.failing_tiles, m.total_tiles}) {
    out.varint(n);
  }
  if (m.huge) {
    out.varint(*m.huge);
  }
  if (m.unwritten) {
    out.varint(*m.unwritten);
  }
  for (const double d : {m.max_abs_dev, m.max_rel_dev, m.worst_dev_over_tolerance, m.atol, m.rtol, m.rel_floor}) {
    out.real(d);
  }
  put_text(m.tolerance_why);
  if (m.first_bad) {
    const BadElement& b = *m.first_bad;
    out.varint(b.index);
    out.signed_varint(b.slice);
    out.signed_varint(b.token);
    out.signed_varint(b.column);
    out.real(b.expected);
    out.real(b.actual);
    out.varint(b.expected_bits);
    out.varint(b.actual_bits);
    out.byte(b.untouched_row ? 1 : 0);
    out.byte(static_cast<std::uint8_t>(b.dtype));
  }
}

/// pack_metrics' inverse.
template <class GetText>
CompareMetrics unpack_metrics(ByteReader& in, GetText&& get_text) {
  CompareMetrics m;
  const std::uint64_t metric_bits = in.varint();
  for (std::uint64_t* n : {&m.elements, &m.untouched_elements, &m.nan, &m.inf, &m.untouched_rows_written, &m.mismatches,
                           &m.reference_nonfinite, &m.failing_tiles, &m.total_tiles}) {
    *n = in.varint();
  }
  m.huge = (metric_bits & has_huge) != 0 ? std::optional<std::uint64_t>(in.varint()) : std::nullopt;
  m.unwritten = (metric_bits & has_unwritten) != 0 ? std::optional<std::uint64_t>(in.varint()) : std::nullopt;
  for (double* d : {&m.max_abs_dev, &m.max_rel_dev, &m.worst_dev_over_tolerance, &m.atol, &m.rtol, &m.rel_floor}) {
    *d = in.real();
  }
  m.tolerance_why = get_text();
  if ((metric_bits & has_first_bad) != 0) {
    BadElement& b = m.first_bad.emplace();
    b.index = in.varint();
    b.slice = in.signed_varint();
    b.token = in.signed_varint();
    b.column = in.signed_varint();
    b.expected = in.real();
    b.actual = in.real();
    b.expected_bits = static_cast<std::uint32_t>(in.varint());
    b.actual_bits = static_cast<std::uint32_t>(in.varint());
    b.untouched_row = in.byte() != 0;
    b.dtype = static_cast<DType>(in.byte());
  }
  return m;
}

/// A case's timing, after its presence bits.
void pack_timing(ByteWriter& out, const CaseTiming& t) {
  out.varint(bit_if(t.kernel_ms, has_kernel_ms) | bit_if(t.reference_ms, has_reference_ms) | bit_if(t.bytes, has_bytes) |
             bit_if(t.grid, has_grid));
  if (t.kernel_ms) {
    out.real(*t.kernel_ms);
  }
  if (t.reference_ms) {
    out.real(*t.reference_ms);
  }
  if (t.bytes) {
    out.varint(*t.bytes);
  }
  if (t.grid) {
    for (const std::int64_t g : *t.grid) {
      out.signed_varint(g);
    }
  }
}

/// pack_timing's inverse.
CaseTiming unpack_timing(ByteReader& in) {
  CaseTiming t;
  const std::uint64_t timing_bits = in.varint();
  if ((timing_bits & has_kernel_ms) != 0) {
    t.kernel_ms = in.real();
  }
  if ((timing_bits & has_reference_ms) != 0) {
    t.reference_ms = in.real();
  }
  if ((timing_bits & has_bytes) != 0) {
    t.bytes = in.varint();
  }
  if ((timing_bits & has_grid) != 0) {
    std::array<std::int64_t, 3>& grid = t.grid.emplace();
    for (std::int64_t& g : grid) {
      g = in.signed_varint();
    }
  }
  return t;
}

/// What the amplifier did, after its presence bits.
template <class PutText>
void pack_amplification(ByteWriter& out, const AmplificationRecord& a, PutText&& put_text) {
  out.varint(bit_if(a.unamplified_findings, has_unamplified));
  out.signed_varint(a.amplify);
  out.varint(a.sites);
  out.varint(a.pending_sites);
  if (a.unamplified_findings) {
    out.signed_varint(*a.unamplified_findings);
  }
  put_text(a.serialised);
  put_text(a.void_reason);
}

/// pack_amplification's inverse.
template <class GetText>
AmplificationRecord unpack_amplification(ByteReader& in, GetText&& get_text) {
  AmplificationRecord a;
  const std::uint64_t amplification_bits = in.varint();
  a.amplify = static_cast<int>(in.signed_varint());
  a.sites = in.varint();
  a.pending_sites = in.varint();
  if ((amplification_bits & has_unamplified) != 0) {
    a.unamplified_findings = static_cast<int>(in.signed_varint());
  }
  a.serialised = get_text();
  a.void_reason = get_text();
  return a;
}

}  // namespace

CaseStore::CaseStore(std::initializer_list<CaseRecord> records) {
  for (const CaseRecord& r : records) {
    push_back(r);
  }
}

CaseStore::CaseStore(const std::vector<CaseRecord>& records) {
  reserve(records.size());
  for (const CaseRecord& r : records) {
    push_back(r);
  }
}

void CaseStore::put_text(ByteWriter& out, const std::string& text) {
  // 0: empty; 1: inline; n + 2: the table's text n.
  if (text.empty()) {
    out.varint(0);
    return;
  }
  if (const auto it = m_text_numbers.find(text); it != m_text_numbers.end()) {
    out.varint(std::uint64_t{it->second} + 2);
    return;
  }
  if (m_texts.size() < k_max_texts) {
    const auto n = static_cast<std::uint32_t>(m_texts.size());
    m_texts.push_back(text);
    m_text_numbers.emplace(text, n);
    out.varint(std::uint64_t{n} + 2);
    return;
  }
  out.varint(1);
  out.text(text);
}

std::string CaseStore::get_text(ByteReader& in) const {
  const std::uint64_t tag = in.varint();
  if (tag == 0) {
    return {};
  }
  if (tag == 1) {
    return in.text();
  }
  if (tag - 2 >= m_texts.size()) {
    throw Error("case store: a text number that is not in the table (an internal bug)");
  }
  return m_texts[tag - 2];
}

CaseStore::Slot CaseStore::append(const std::string& bytes) {
  if (m_blocks.empty() || m_blocks.back().size() + bytes.size() > m_blocks.back().capacity()) {
    m_blocks.emplace_back();
    m_blocks.back().reserve(std::max(k_block_bytes, bytes.size()));
  }
  if (m_blocks.size() > UINT32_MAX || m_blocks.back().size() > UINT32_MAX) {
    throw Error("case store: more records than it can index");
  }
  const Slot slot{static_cast<std::uint32_t>(m_blocks.size() - 1), static_cast<std::uint32_t>(m_blocks.back().size())};
  m_blocks.back().append(bytes);
  return slot;
}

void CaseStore::push_back(const CaseRecord& record) {
  std::string bytes;
  ByteWriter out(bytes);
  const CaseRecord& c = record;
  out.varint(bit_if(c.variant, has_variant) | bit_if(c.metrics, has_metrics) | bit_if(c.timing, has_timing) |
             bit_if(c.static_findings, has_findings) | bit_if(c.attribution, has_attribution) |
             bit_if(c.device, has_device) | bit_if(c.amplification, has_amplification));
  out.varint(c.index);
  out.text(c.id);
  c.axes.pack(out, m_axes);
  if (c.variant) {
    put_text(out, *c.variant);
  }
  out.byte(static_cast<std::uint8_t>(c.verdict));
  put_text(out, c.reason);
  out.signed_varint(c.runs);
  out.signed_varint(c.failed_runs);
  const auto text = [&](const std::string& t) { put_text(out, t); };
  if (c.metrics) {
    pack_metrics(out, *c.metrics, text);
  }
  if (c.timing) {
    pack_timing(out, *c.timing);
  }
  if (c.static_findings) {
    out.signed_varint(*c.static_findings);
  }
  if (c.attribution) {
    put_text(out, *c.attribution);
  }
  if (c.device) {
    out.signed_varint(*c.device);
  }
  if (c.amplification) {
    pack_amplification(out, *c.amplification, text);
  }
  m_records.push_back(append(bytes));
}

const CaseRecord CaseStore::operator[](std::size_t i) const {
  if (i >= m_records.size()) {
    throw Error(fmt::format("case store: record {} of {} (an internal bug)", i, m_records.size()));
  }
  const Slot slot = m_records[i];
  const std::string& block = m_blocks[slot.block];
  ByteReader in(std::string_view(block).substr(slot.offset));
  CaseRecord c;
  const std::uint64_t bits = in.varint();
  c.index = in.varint();
  c.id = in.text();
  c.axes = AxisValues::unpack(in, m_axes);
  if ((bits & has_variant) != 0) {
    c.variant = get_text(in);
  }
  c.verdict = static_cast<Verdict>(in.byte());
  c.reason = get_text(in);
  c.runs = static_cast<int>(in.signed_varint());
  c.failed_runs = static_cast<int>(in.signed_varint());
  const auto text = [&] { return get_text(in); };
  if ((bits & has_metrics) != 0) {
    c.metrics = unpack_metrics(in, text);
  }
  if ((bits & has_timing) != 0) {
    c.timing = unpack_timing(in);
  }
  if ((bits & has_findings) != 0) {
    c.static_findings = static_cast<int>(in.signed_varint());
  }
  if ((bits & has_attribution) != 0) {
    c.attribution = get_text(in);
  }
  if ((bits & has_device) != 0) {
    c.device = static_cast<int>(in.signed_varint());
  }
  if ((bits & has_amplification) != 0) {
    c.amplification = unpack_amplification(in, text);
  }
  return c;
}

void CaseStore::set(std::size_t i, const CaseRecord& record) {
  if (i >= m_records.size()) {
    throw Error(fmt::format("case store: record {} of {} (an internal bug)", i, m_records.size()));
  }
  push_back(record);
  m_records[i] = m_records.back();
  m_records.pop_back();
}

void CaseStore::clear() { *this = CaseStore(); }

std::vector<CaseRecord> CaseStore::records() const {
  std::vector<CaseRecord> out;
  out.reserve(size());
  for (const CaseRecord& c : *this) {
    out.push_back(c);
  }
  return out;
}

std::size_t CaseStore::bytes() const {
  std::size_t n = m_records.capacity() * sizeof(Slot);
  for (const std::string& b : m_blocks) {
    n += b.capacity();
  }
  for (const std::string& t : m_texts) {
    n += 2 * (sizeof(std::string) + t.capacity()) + 32;  // the text and its key in the map
  }
  return n;
}

}  // namespace lp::report

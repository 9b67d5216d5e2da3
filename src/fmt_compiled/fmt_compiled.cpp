// fmt's compiled part (its FMT_API functions: vformat_to, the float formatter, the
// locale hooks), built once, here.
//
// With FMT_HEADER_ONLY every file that includes <fmt/format.h> compiled these again:
// measured 4.0 s of the 4.7 s a one-line fmt::format file took at -O2 -g, in each of
// about 150 files, a third of the whole build's CPU time. Debian's libfmt-dev has only
// a shared libfmt.so, which the GPU hosts do not have (they get our binary and no -dev
// packages), so the project compiles the same definitions into its own static library.
// The list of explicit instantiations is the one <fmt/format.h> declares `extern
// template` (plus vformat_to and locale_ref, which it declares FMT_API); a missing one
// is a link error, never a silent difference.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);
template FMT_API locale_ref::locale_ref(const std::locale&);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
}  // namespace detail
FMT_END_NAMESPACE

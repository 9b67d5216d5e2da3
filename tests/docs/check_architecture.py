#!/usr/bin/env python3
"""ARCHITECTURE.md's dependency table says what the CMake graph does.

For every row of the table that names a folder under src/ and its library, the
"depends on" column (folder names; "nothing project-specific", or "everything" for
the tool) must equal the lp_* libraries that folder's CMakeLists.txt links its library
to (lp_options, lp_fmt and the precompiled-header targets are flags, not layers).
Also the rule of its conventions that no header under src/ includes <nlohmann/json.hpp>
(json_fwd at most), and that no unit of the libraries it names JSON-free does, which
ARCHITECTURE.md states.
Usage: check_architecture.py <source dir>. Exit 1 with one line per difference."""

import pathlib
import re
import sys

FLAGS = {"lp_options", "lp_fmt", "lp_pch", "lp_test_pch"}
JSON_FREE = ("sweep", "worker", "cli", "ptx")


def table_rows(text):
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*`src/([a-z_]+)`\s*\|\s*`([a-z_]+)`\s*\|.*\|\s*([^|]*)\|\s*$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3).strip())
    return rows


def named_deps(column):
    if column in ("nothing project-specific", "fmt's headers", "everything"):
        return None if column == "everything" else set()
    # "formats, sweep (images), sass": folder names, a parenthesis says which part.
    column = re.sub(r"\([^)]*\)", "", column)
    return {part.strip() for part in column.split(",") if part.strip()}


def cmake_deps(cmake_text, library):
    deps = set()
    for m in re.finditer(r"target_link_libraries\(\s*" + re.escape(library) + r"\b(.*?)\)", cmake_text, re.S):
        for token in re.findall(r"\blp_[a-z_]+\b", m.group(1)):
            if token not in FLAGS:
                deps.add("fmt_compiled" if token == "lp_fmt" else token[len("lp_"):])
    return deps


def main():
    root = pathlib.Path(sys.argv[1])
    rows = table_rows((root / "ARCHITECTURE.md").read_text())
    problems = []
    folders = sorted(p.name for p in (root / "src").iterdir() if (p / "CMakeLists.txt").exists())
    for folder in folders:
        if folder not in rows:
            problems.append(f"src/{folder}: has a CMakeLists.txt but no row in ARCHITECTURE.md")
    for folder, (library, column) in sorted(rows.items()):
        cmake_file = root / "src" / folder / "CMakeLists.txt"
        if not cmake_file.exists() and folder == "fmt_compiled":
            cmake_file = root / "CMakeLists.txt"  # fmt's compiled part is declared beside the flags
        if not cmake_file.exists():
            problems.append(f"src/{folder}: a row in ARCHITECTURE.md but no CMakeLists.txt")
            continue
        text = cmake_file.read_text()
        target = "loraprobe" if library == "loraprobe" else library
        if not re.search(r"add_(library|executable)\(\s*" + re.escape(target) + r"\b", text):
            problems.append(f"src/{folder}: ARCHITECTURE.md says it builds {library}; its CMakeLists.txt does not")
            continue
        said = named_deps(column)
        if said is None:
            continue
        built = cmake_deps(text, target)
        if said != built:
            missing = sorted(built - said)
            extra = sorted(said - built)
            problems.append(f"src/{folder} ({library}): CMake links {sorted(built)}, ARCHITECTURE.md says {sorted(said)}"
                            + (f"; not in the table: {missing}" if missing else "")
                            + (f"; not linked: {extra}" if extra else ""))
    if "no header under src/ includes `<nlohmann/json.hpp>`" not in (root / "ARCHITECTURE.md").read_text():
        problems.append("ARCHITECTURE.md: the rule on nlohmann/json.hpp in headers is gone; change this check with it")
    for header in sorted((root / "src").rglob("*.hpp")):
        if re.search(r"#\s*include\s*<nlohmann/json\.hpp>", header.read_text()):
            problems.append(f"{header.relative_to(root)}: includes <nlohmann/json.hpp>; a header includes json_fwd at most")
    # The libraries ARCHITECTURE.md names as JSON-free: none of their units compiles it.
    for folder in JSON_FREE:
        for unit in sorted((root / "src" / folder).glob("*.cpp")):
            if re.search(r"#\s*include\s*<nlohmann/json\.hpp>", unit.read_text()):
                problems.append(f"{unit.relative_to(root)}: includes <nlohmann/json.hpp>; ARCHITECTURE.md says "
                                f"src/{folder} has no JSON (a record's owner writes its to_json_text())")
    for p in problems:
        print(p)
    print(f"check_architecture: {len(rows)} rows, {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Lists C++ functions and classes by length, reading braces (no compiler needed).

A function's length is its lines from the first line of its signature to its
closing brace, inclusive; a class's from `class`/`struct` to its closing brace.
Comments, string and character literals (raw strings included) are blanked first,
so braces inside them do not count. A function is a brace at namespace or class
scope whose header ends in `)` plus qualifiers, a trailing return type or a
constructor's initialiser list; lambdas and blocks inside a function belong to it.

Usage: function_lengths.py [--max-function N] [--max-class N] [--list] PATH...
Exit 1 when a function or class is over its limit (each printed as
"file:line: name: N lines"), 0 otherwise. Without limits it prints the longest."""

import argparse
import pathlib
import re
import sys

QUALIFIED_END = re.compile(
    r"\)\s*(?:const|noexcept(?:\([^()]*\))?|override|final|mutable|volatile|&&?|\s|->[^{;]*|"
    r":[^;{]*|requires[^{;]*|\[\[[^\]]*\]\])*$", re.S)
CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)[^;{()]*$", re.S)


def blank(text):
    """Text with comments and literals replaced by spaces, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = i
            while True:  # a preprocessor line, with its continuations
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    head = header[:header.rfind(")") + 1]
    depth = 0
    for k in range(len(head) - 1, -1, -1):  # the "(" matching the last ")"
        depth += {")": 1, "(": -1}.get(head[k], 0)
        if depth == 0:
            m = re.search(r"([~\w:]+(?:\s*operator\s*[^\s(]+)?|\])\s*$", head[:k])
            return m.group(1) if m else "?"
    return "?"


def measure(path):
    text = blank(path.read_text(errors="replace"))
    items = []  # (kind, name, first line, last line)
    stack = []  # (kind, name, start line)
    start = 0   # where the current header begins
    line_of = lambda pos: text.count("\n", 0, pos) + 1
    for pos, c in enumerate(text):
        if c in ";":
            if not any(k == "function" for k, _, _ in stack):
                start = pos + 1
        elif c == "{":
            inside = any(k == "function" for k, _, _ in stack)
            header = text[start:pos]
            first = start + len(header) - len(header.lstrip())
            if inside:
                stack.append(("block", "", 0))
                continue
            if re.search(r"\bnamespace\b[^)]*$|extern\s*$", header.strip()) or header.strip().startswith("extern"):
                stack.append(("namespace", "", 0))
            elif CLASS_HEAD.search(header) and "=" not in header and not QUALIFIED_END.search(header.rstrip()):
                stack.append(("class", CLASS_HEAD.search(header).group(2), line_of(first)))
            elif ")" in header and QUALIFIED_END.search(header.rstrip()) and not re.search(r"=\s*$", header.rstrip()):
                stack.append(("function", function_name(header), line_of(first)))
            else:
                stack.append(("block", "", 0))
            start = pos + 1
        elif c == "}":
            if stack:
                kind, name, first_line = stack.pop()
                if kind in ("function", "class"):
                    items.append((kind, name, first_line, line_of(pos)))
            if not any(k == "function" for k, _, _ in stack):
                start = pos + 1
        elif c == ":" and not any(k == "function" for k, _, _ in stack):
            # "public:" and friends end a header inside a class
            if re.search(r"\b(public|private|protected)\s*$", text[start:pos]):
                start = pos + 1
    return items


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-function", type=int)
    parser.add_argument("--max-class", type=int)
    parser.add_argument("--list", action="store_true", help="print every function and class")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.rglob("*.[ch]pp")) + sorted(p.rglob("*.cu")) if p.is_dir() else [p]
    rows = []
    for f in files:
        for kind, name, a, b in measure(f):
            rows.append((b - a + 1, kind, name, f"{f}:{a}"))
    over = [r for r in rows if (r[1] == "function" and args.max_function and r[0] > args.max_function)
            or (r[1] == "class" and args.max_class and r[0] > args.max_class)]
    shown = rows if args.list else (over if args.max_function or args.max_class else
                                    sorted(rows, reverse=True)[:args.top])
    for n, kind, name, where in sorted(shown, reverse=True):
        print(f"{where}: {kind} {name}: {n} lines")
    fns = [r for r in rows if r[1] == "function"]
    classes = [r for r in rows if r[1] == "class"]
    print(f"{len(fns)} functions, {sum(1 for r in fns if r[0] > 80)} over 80 lines, "
          f"{sum(1 for r in fns if r[0] > 100)} over 100, {sum(1 for r in fns if r[0] > 150)} over 150; "
          f"largest class {max(classes)[0] if classes else 0} lines ({max(classes)[2] if classes else '-'})",
          file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

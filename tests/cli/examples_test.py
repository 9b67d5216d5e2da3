#!/usr/bin/env python3
"""The loraprobe commands README.md and every subcommand's --help show still work.

Each example line (README: `build/loraprobe ...` at the start of a line; --help:
the lines after "Examples:") is checked by what it can be without a GPU:
  - every option it names is one its subcommand's --help lists;
  - a `sweep` runs with --dry-run added (flags, config and plan), unless it
    names a file that is not there (a report or journal the example supposes);
  - `list`, `env` and `version` run as written;
and must exit 0. Commands with placeholder paths (/path/to, ~/, my-set, your
files) get the option check alone.

    examples_test.py LORAPROBE REPO_ROOT
"""

import os
import re
import shlex
import subprocess
import sys

SUBCOMMANDS = ("sweep", "list", "inspect", "env", "report", "diff", "repro", "merge", "version")
# Arguments that stand for something the reader has, not a file of this repository.
PLACEHOLDERS = ("/path/to", "~/", "my-set", "kernel.ptx", "/opt/", "/tmp/", "bug.json", "bug.jsonl", "report.json",
                "old.json", "new.json", "base.json", "shard")


def commands_of(line: str) -> list:
    """The loraprobe commands of one example line: a comment (two or more spaces, or
    " # ") ends it, `&&` separates commands, and a redirection ends a command."""
    line = re.split(r"\s{2,}| # ", line.strip())[0]
    out = []
    for part in line.split("&&"):
        part = re.split(r"\s[>|]\s?", part)[0].strip()
        if part:
            out.append(part)
    return out
RUN_AS_WRITTEN = ("list", "env", "version")


def readme_examples(root: str) -> list:
    out = []
    in_code = False
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code and line.startswith("build/loraprobe "):
                out += [(f"README.md:{number}", c) for c in commands_of(line)]
    return out


def help_text(lp: str, sub: str) -> str:
    r = subprocess.run([lp, sub, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{lp} {sub} --help exited {r.returncode}: {r.stderr}")
    return r.stdout


def help_examples(lp: str, sub: str, text: str) -> list:
    lines = text.splitlines()
    out = []
    if "Examples:" not in lines:
        return out
    for line in lines[lines.index("Examples:") + 1:]:
        if not line.startswith("  loraprobe "):
            break
        out += [(f"loraprobe {sub} --help", c) for c in commands_of(line)]
    return out


def options_of(text: str) -> set:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


def check(lp: str, root: str, where: str, command: str, helps: dict) -> list:
    words = shlex.split(command)
    words[0] = lp
    sub = words[1] if len(words) > 1 else ""
    if sub not in SUBCOMMANDS:
        return [f"{where}: `{command}`: no subcommand {sub!r}"]
    problems = []
    known = options_of(helps[sub])
    for w in words[2:]:
        option = w.split("=", 1)[0]
        if option.startswith("--") and option not in known:
            problems.append(f"{where}: `{command}`: {sub} has no option {option}")
    if problems:
        return problems
    placeholder = any(p in w for w in words for p in PLACEHOLDERS)
    run = None
    if sub == "sweep" and not placeholder and "--resume" not in words:
        run = words + ([] if "--dry-run" in words or "--show-config" in words else ["--dry-run"])
    elif sub in RUN_AS_WRITTEN and not placeholder:
        run = words
    if run is None:
        return []
    r = subprocess.run(run, cwd=root, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        return [f"{where}: `{command}` (run as `{shlex.join(run[1:])}`) exited {r.returncode}: {last}"]
    return []


def main(argv):
    lp, root = argv[0], argv[1]
    helps = {sub: help_text(lp, sub) for sub in SUBCOMMANDS}
    examples = readme_examples(root)
    for sub in SUBCOMMANDS:
        examples += help_examples(lp, sub, helps[sub])
    problems = []
    for where, command in examples:
        problems += check(lp, root, where, command, helps)
    for p in problems:
        print(p)
    print(f"{len(examples)} examples (README.md and --help): {len(problems)} problem(s)")
    # A check that saw no example could not fail: the extraction itself is asserted.
    return 1 if problems or len(examples) < 20 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

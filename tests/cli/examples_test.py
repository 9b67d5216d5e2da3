#!/usr/bin/env python3
"""The loraprobe commands README.md, docs/*.md and every subcommand's --help show still work.

Each example line (README and docs: a line of a code block that starts with
`build/loraprobe ` or `loraprobe `, continued by a trailing backslash; --help: the
lines after "Examples:") is checked by what it can be without a GPU:
  - every option it names is one its subcommand's --help lists;
  - a `sweep` runs with --dry-run added (flags, config and plan): a sweep needs a
    Hopper GPU, so that is how an example that needs one is checked, unless it names
    a file that is not there (a report or journal the example supposes);
  - an `inspect --config` (the variants a sweep of a config loads: seconds) and
    `inspect --list-checks` run as written and must exit 0 or 1 (1: the hazard the
    embedded sets hold); other inspects (minutes cold) get the option check alone;
  - `list`, `env` and `version` run as written;
and the rest must exit 0. `check` examples need the Python environment vLLM runs in,
with Triton (and `--run` a GPU): they get the option check alone. Commands with placeholder paths (/path/to, ~/, my-set, your
files) get the option check alone.

Where an example runs says what it promises: `build/loraprobe` (the source build) runs
in the checkout; `loraprobe` (as pip installs it) and the --help examples run in an
empty folder outside it, as after `pip install` in a fresh virtual environment.

    examples_test.py LORAPROBE REPO_ROOT
"""

import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

SUBCOMMANDS = ("sweep", "list", "inspect", "env", "report", "diff", "repro", "merge", "version", "check")
# Subcommands that need what this test does not have: only their options are checked.
NOT_RUN = {"check": "needs the Python environment vLLM runs in, with Triton"}
# Arguments that stand for something the reader has, not a file of this repository.
PLACEHOLDERS = ("/path/to", "~/", "my-set", "kernel.ptx", "/opt/", "/tmp/", "bug.json", "bug.jsonl", "report.json",
                "old.json", "new.json", "base.json", "shard")
RUN_AS_WRITTEN = ("list", "env", "version")
# What each command line run in each folder did (check() runs each once).
RAN = {}


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


def markdown_examples(root: str, relative: str) -> list:
    """(where, command, in_checkout) for each example of one Markdown file."""
    out = []
    in_code = False
    lines = open(os.path.join(root, relative), encoding="utf-8").read().splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code or not (line.startswith("build/loraprobe ") or line.startswith("loraprobe ")):
            continue
        first = number
        while line.endswith("\\") and number < len(lines):
            line = line[:-1].rstrip() + " " + lines[number].strip()
            number += 1
        in_checkout = line.startswith("build/")
        out += [(f"{relative}:{first}", c, in_checkout) for c in commands_of(line)]
    return out


def help_text(lp: str, sub: str):
    """The subcommand's --help; a subcommand the documents name must exist."""
    r = subprocess.run([lp, sub, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{lp} {sub} --help exited {r.returncode}: {r.stderr}")
    return r.stdout


def help_examples(sub: str, text: str) -> list:
    lines = text.splitlines()
    out = []
    if "Examples:" not in lines:
        return out
    for line in lines[lines.index("Examples:") + 1:]:
        if not line.startswith("  loraprobe "):
            break
        out += [(f"loraprobe {sub} --help", c, False) for c in commands_of(line)]
    return out


def options_of(text: str) -> set:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


def run_of(sub: str, words: list):
    """The command line this test runs for an example, and the exit codes it accepts."""
    # words[0] is this loraprobe's own path, which may lie anywhere (CI's clone can be in /tmp).
    if any(p in w for w in words[1:] for p in PLACEHOLDERS) or sub in NOT_RUN:
        return None, ()
    if sub == "sweep" and "--resume" not in words:
        return words + ([] if "--dry-run" in words or "--show-config" in words else ["--dry-run"]), (0,)
    if sub == "inspect" and ("--list-checks" in words or any(w.split("=")[0] in ("--config", "-c") for w in words)):
        return words, (0, 1)
    if sub in RUN_AS_WRITTEN:
        return words, (0,)
    return None, ()


def check(lp: str, where: str, command: str, cwd: str, env: dict, helps: dict) -> tuple:
    """(problems, ran) of one example."""
    words = shlex.split(command)
    words[0] = lp
    sub = words[1] if len(words) > 1 else ""
    if sub not in SUBCOMMANDS:
        return [f"{where}: `{command}`: no subcommand {sub!r}"], False
    problems = []
    known = options_of(helps[sub])
    for w in words[2:]:
        option = w.split("=", 1)[0]
        if option.startswith("--") and option not in known:
            problems.append(f"{where}: `{command}`: {sub} has no option {option}")
    run, accepted = run_of(sub, words)
    if problems or run is None:
        return problems, False
    key = (tuple(run), cwd)
    if key not in RAN:  # the docs repeat commands: each command line runs once per folder
        RAN[key] = subprocess.run(run, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    r = RAN[key]
    if r.returncode not in accepted:
        last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        where_run = "the checkout" if cwd != env["LP_EXAMPLES_OUTSIDE"] else "a folder outside the checkout"
        return [f"{where}: `{command}` (run as `{shlex.join(run[1:])}` in {where_run}) exited {r.returncode}: "
                f"{last}"], True
    return [], True


def main(argv):
    lp, root = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    helps = {sub: help_text(lp, sub) for sub in SUBCOMMANDS}
    documents = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    examples = []
    per_document = {}
    for relative in documents:
        found = markdown_examples(root, relative)
        per_document[relative] = len(found)
        examples += found
    for sub in SUBCOMMANDS:
        examples += help_examples(sub, helps[sub])
    problems = []
    ran = 0
    with tempfile.TemporaryDirectory(prefix="lp-examples-") as outside:
        env = dict(os.environ, LP_EXAMPLES_OUTSIDE=outside, XDG_CACHE_HOME=os.path.join(outside, ".cache"))
        for where, command, in_checkout in examples:
            found, did_run = check(lp, where, command, root if in_checkout else outside, env, helps)
            problems += found
            ran += did_run
    for p in problems:
        print(p)
    print(f"{len(examples)} examples ({', '.join(f'{d} {n}' for d, n in per_document.items() if n)}, and --help), "
          f"{ran} run: {len(problems)} problem(s)")
    # A check that saw no example could not fail: the extraction itself is asserted.
    missing = [d for d in ("README.md", "docs/install.md", "docs/sweep.md", "docs/inspect.md") if not per_document.get(d)]
    if missing:
        print(f"no example found in {', '.join(missing)}: the extraction is broken")
    return 1 if problems or missing or len(examples) < 40 or ran < 20 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

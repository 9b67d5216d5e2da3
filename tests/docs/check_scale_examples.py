#!/usr/bin/env python3
"""The examples of docs/scale.md are valid: every ```yaml block parses with PyYAML
(each document of it: a Job with completionMode Indexed and one GPU per pod, and a
merge Job), and every ```bash block passes `bash -n` and, where Debian's shellcheck
is installed, shellcheck. Usage: check_scale_examples.py docs/scale.md"""

import re
import shutil
import subprocess
import sys
import tempfile

import yaml


def blocks(text, lang):
    return re.findall(r"^```" + lang + r"\n(.*?)^```", text, re.S | re.M)


def main(path):
    text = open(path, encoding="utf-8").read()
    errors = []
    yamls, scripts = blocks(text, "yaml"), blocks(text, "bash")
    if not yamls or len(scripts) < 2:
        return [f"{path}: expected a yaml block and two bash blocks, found {len(yamls)} and {len(scripts)}"]
    for block in yamls:
        docs = list(yaml.safe_load_all(block))
        indexed = [d for d in docs if d["spec"].get("completionMode") == "Indexed"]
        if len(indexed) != 1:
            errors.append(f"{path}: {len(indexed)} Indexed Jobs in the YAML, expected 1")
            continue
        job = indexed[0]
        pod = job["spec"]["template"]["spec"]
        gpus = pod["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")
        if gpus != 1:
            errors.append(f"{path}: the shard pod asks for {gpus} GPUs, expected 1")
        command = " ".join(pod["containers"][0]["command"])
        if f"--shard auto/{job['spec']['completions']}" not in command:
            errors.append(f"{path}: the shard command does not say --shard auto/<completions>: {command}")
        if not any("loraprobe merge" in " ".join(c["command"]) for d in docs for c in
                   d["spec"]["template"]["spec"]["containers"]):
            errors.append(f"{path}: no merge step in the YAML")
    if "#SBATCH --array=0-7" not in scripts[0] or "#SBATCH --gres=gpu:1" not in scripts[0]:
        errors.append(f"{path}: the Slurm script lacks #SBATCH --array=0-7 or --gres=gpu:1")
    shellcheck = shutil.which("shellcheck")
    with tempfile.TemporaryDirectory(prefix="lp-scale-doc-") as scratch:
        for i, script in enumerate(scripts):
            name = f"{scratch}/block-{i}.sh"
            with open(name, "w") as f:
                f.write(script)
            r = subprocess.run(["bash", "-n", name], capture_output=True, text=True)
            if r.returncode != 0:
                errors.append(f"{path}: bash block {i}: bash -n: {r.stderr.strip()}")
            if shellcheck:
                r = subprocess.run([shellcheck, "-s", "bash", name], capture_output=True, text=True)
                if r.returncode != 0:
                    errors.append(f"{path}: bash block {i}: shellcheck:\n{r.stdout.strip()}")
    print(f"{path}: {len(yamls)} yaml block(s), {len(scripts)} bash block(s); shellcheck "
          f"{'ran' if shellcheck else 'not installed, skipped'}")
    return errors


if __name__ == "__main__":
    errs = main(sys.argv[1])
    print("\n".join(errs) if errs else "ok")
    sys.exit(1 if errs else 0)

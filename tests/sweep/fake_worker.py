#!/usr/bin/env python3
"""A scripted stand-in for `loraprobe __worker` (src/worker, protocol/protocol.hpp),
so the sweep's parent can be tested on a machine without a GPU.

The script is the JSON file named by $LP_FAKE_WORKER_SCRIPT:
  {"by_index": {"1": "fail", "2": "fault", "4": "hang", "5": "die"}, "log": "/path/runs.log",
   "device_count": 2, "by_device": {"1": "fault"}}
(device_count: the GPUs the ready message reports; by_device: an action for every job
on that --device, which wins over by_index; "after_device:D:N" passes once device D
has run N jobs.)
  pass   every run right (the default)     fail   every run wrong
  fault  a sticky fault: answers, then exits 4   die   exits without answering
  hang   never answers (the parent's --case-timeout kills it)
  chatter  passes, after printing what a library or a kernel's printf may print on
         the worker's stdout: a line with a terminal escape (a window title and a
         bell) and a line nested 100,000 deep
  sigint killed by SIGINT without answering (a terminal's Ctrl-C reaches the group)
"die_loading": "TEXT" makes the worker exit at once on a load batch with an image key
containing TEXT.
A job whose expand kernel is the positive control (a "-rawbits" variant) fails, as
on a GPU. Every start and every job is appended to the log, one line each ("run I
ACTION device D", with " pdl expand=VARIANT" before " device" for a job the parent
asks to launch with programmatic dependent launch; "load KEY KEY ..." for a load batch).
"""
import json
import os
import sys
import time

script = json.load(open(os.environ["LP_FAKE_WORKER_SCRIPT"]))
log_path = script.get("log")


def log(line):
    if log_path:
        with open(log_path, "a") as f:
            f.write(line + "\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def metrics(failed, elements):
    return {"elements": elements, "nan": 7 if failed else 0, "inf": 0, "unwritten": None,
            "untouched_rows_written": 0, "mismatches": 9 if failed else 0, "max_abs_dev": 0.001,
            "max_rel_dev": 0.002, "worst_dev_over_tolerance": 5.0 if failed else 0.25, "first_bad": None,
            "failing_tiles": 1 if failed else 0, "total_tiles": 8, "reference_nonfinite": 0, "atol": 1e-5,
            "rtol": 0.01, "tolerance_why": "fake", "summary": ("FAIL 9 mismatches" if failed else "PASS")}


device = int(sys.argv[sys.argv.index("--device") + 1]) if "--device" in sys.argv else 0
log(f"start {os.getpid()} device {device}")
# The whole record a worker sends (protocol::GpuRecord: the parent reads every field).
send({"type": "ready", "pid": os.getpid(),
      "gpu": {"name": "fake H200", "compute_capability": "9.0", "driver_version": "fake", "jit_cache_disabled": True,
              "module_loading": "LAZY", "ordinal": device, "device_count": script.get("device_count", 1),
              "uuid": f"GPU-fake-{device}", "pci_bus_id": "0000:00:00.0", "sm_count": 132, "sm_clock_mhz": 1980,
              "memory_clock_mhz": 3201, "memory_bus_width_bits": 6144, "peak_bandwidth_gb_s": 4917.0,
              "total_memory_bytes": 150000000000, "free_memory_bytes": 149000000000, "ecc_enabled": True,
              "driver_cuda_version": "13.0", "runtime_version": "13.0", "cublas_version": "13.0.0",
              "driver_library": "fake", "cuda_cache_disable_env": "1", "module_loading_env": ""}})
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind == "quit":
        sys.exit(0)
    if kind == "load_batch":
        log("load " + " ".join(item["key"] for item in request["items"]))
        if any(script.get("die_loading", "\0") in item["key"] for item in request["items"]):
            os._exit(9)  # a load that kills the worker (a driver crash on a cubin)
        send({"type": "loaded_batch", "results": [{"key": item["key"], "ok": True} for item in request["items"]]})
    elif kind == "race":
        send({"type": "race_result", "error": "the fake worker has no GPU to race on"})
    elif kind == "run":
        job = request["job"]
        expand = job.get("expand") or {}
        action = script.get("by_index", {}).get(str(job["index"]), "pass")
        action = script.get("by_device", {}).get(str(device), action)
        if action.startswith("after_device:"):
            # "after_device:D:N": answer only once device D has run N jobs (any outcome),
            # so which GPU gets which case does not depend on timing.
            other, want = action.split(":")[1:3]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with open(log_path) as f:
                    if sum(1 for line in f if line.startswith("run ") and line.endswith(f" device {other}\n")) >= int(want):
                        break
                time.sleep(0.02)
            action = script.get("by_index", {}).get(str(job["index"]), "pass")
        if expand.get("variant", "").endswith("-rawbits"):
            action = "fail"
        # A dual-stream job says so, with the expand it launches with programmatic dependent launch.
        pdl = f" pdl expand={expand.get('variant', '?')}" if job["pdl"] else ""
        log(f"run {job['index']} {action}{pdl} device {device}")
        if action == "chatter":
            sys.stdout.write("\x1b]0;owned\x07 cuBLAS says hi\n" + "[" * 100000 + "]" * 100000 + "\n")
            sys.stdout.flush()
            action = "pass"
        if action == "hang":
            time.sleep(3600)
        if action == "die":
            sys.exit(1)
        if action == "sigint":
            import signal
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(60)
        outcome = "fault" if action == "fault" else "ran"
        failed = action == "fail"
        runs = job["repeats"]
        send({"type": "result", "result": {
            "index": job["index"], "case_id": job["case_id"], "outcome": outcome,
            "reason": "fake sticky fault" if outcome == "fault" else ("FAIL 9 mismatches" if failed else ""),
            "runs": 0 if outcome == "fault" else runs, "failed_runs": runs if failed else 0,
            "metrics": None if outcome == "fault" else metrics(failed, 4096 * job["num_tokens"]),
            "timing": None}})
        if outcome == "fault":
            sys.exit(4)
    else:
        send({"type": "error", "error": f"fake worker: unknown request {kind}"})

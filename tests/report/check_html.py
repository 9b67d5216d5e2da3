#!/usr/bin/env python3
"""`loraprobe report --format html` of every sample report and of the committed H200
report, checked twice: the file is self-contained (nothing is fetched: no src, href,
url() or @import pointing anywhere), and a real headless browser (Debian chromium)
renders it into a screenshot whose pixels hold the heat map's colours: PASS green
and, where the report has such cases, LATENT amber and FAIL red; and in the DOM the
browser built, the first table of a report with cases is the stack matrix (the
answer to "is my stack fixed?" comes first).

    check_html.py LORAPROBE OUTDIR REPORT.json...

Exits 77 (CTest's skip) with "skipped: no headless browser" when chromium is not
installed (scripts/test.sh installs it; scripts/setup.sh --with-browser).
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import schema_validation  # noqa: E402  (tests/schema_validation.py: report_cases)

COLOURS = {"PASS": (0x2D, 0xA4, 0x4E), "LATENT": (0xD4, 0xA7, 0x2C), "FAIL": (0xCF, 0x22, 0x2E)}
EXTERNAL = re.compile(r"""(?:\bsrc\s*=|\bhref\s*=|url\(|@import)""", re.I)


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG, no libraries."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise SystemExit(f"{path}: PNG depth {depth} colour type {colour}, expected 8-bit RGB(A)")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, rows, channels


def colour_counts(path):
    width, height, rows, channels = png_pixels(path)
    counts = {name: 0 for name in COLOURS}
    wanted = {rgb: name for name, rgb in COLOURS.items()}
    for line in rows:
        for x in range(0, width * channels, channels):
            name = wanted.get((line[x], line[x + 1], line[x + 2]))
            if name:
                counts[name] += 1
    return width, height, counts


def main(argv):
    lp, out, reports = argv[0], argv[1], argv[2:]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    errors = []
    os.makedirs(out, exist_ok=True)
    pages = []
    for report in reports:
        page = os.path.join(out, os.path.basename(report).replace(".json", ".html"))
        r = subprocess.run([lp, "report", report, "--format", "html", "-o", page], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"{report}: loraprobe report --format html exited {r.returncode}: {r.stderr.strip()}")
            continue
        html = open(page, encoding="utf-8").read()
        for m in EXTERNAL.finditer(html):
            errors.append(f"{page}: refers outside the file at offset {m.start()}: {html[m.start():m.start() + 60]!r}")
        if not html.startswith("<!DOCTYPE html>") or "</html>" not in html:
            errors.append(f"{page}: not a whole HTML document")
        with open(report) as f:
            verdicts = {c["verdict"] for c in schema_validation.report_cases(json.load(f))}
        pages.append((page, verdicts))
    if errors:
        print("\n".join(errors))
        return 1
    if browser is None:
        print(f"skipped: no headless browser (chromium); {len(pages)} pages checked as files only")
        return 77
    # The legend draws a swatch of every colour; the page of a report without LATENT
    # and FAIL cases gives the legend's own pixels, and every other page must exceed
    # them by at least one heat-map cell (about 34 x 16 pixels) per verdict it has.
    baseline = None
    for page, verdicts in sorted(pages, key=lambda p: p[1] & {"LATENT", "FAIL"} != set()):
        shot = page.replace(".html", ".png")
        r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--window-size=1400,1600", f"--screenshot={shot}", "file://" + os.path.abspath(page)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(shot):
            errors.append(f"{page}: {browser} exited {r.returncode}: {r.stderr.strip()[-300:]}")
            continue
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              "file://" + os.path.abspath(page)], capture_output=True, text=True, timeout=120).stdout
        first_table = re.search(r"<table\b[^>]*>", dom)
        if verdicts and (first_table is None or "stack" not in first_table.group(0).split("class=", 1)[-1]):
            errors.append(f"{page}: the first table the browser built is "
                          f"{first_table.group(0) if first_table else 'none'}, not the stack matrix")
        width, height, counts = colour_counts(shot)
        print(f"{os.path.basename(shot)}: {width}x{height}, pixels of the verdict colours {counts}")
        if (width, height) != (1400, 1600):
            errors.append(f"{shot}: {width}x{height}, expected 1400x1600")
        if baseline is None:
            if verdicts & {"LATENT", "FAIL"}:
                errors.append("no sample report without LATENT and FAIL cases to measure the legend with")
                break
            baseline = counts
            continue
        for name in ("LATENT", "FAIL"):
            if name in verdicts and counts[name] < baseline[name] + 300:
                errors.append(f"{shot}: {counts[name]} {name} pixels, the legend alone has {baseline[name]}, "
                              f"but the report has {name} cases")
            if name not in verdicts and abs(counts[name] - baseline[name]) > 50:
                errors.append(f"{shot}: {counts[name]} {name} pixels, the legend alone has {baseline[name]}, "
                              f"and the report has no {name} case")
    print("\n".join(errors) if errors else f"ok: {len(pages)} pages rendered by {browser}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

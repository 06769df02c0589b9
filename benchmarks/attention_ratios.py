#!/usr/bin/python3
"""Issue 34's regression check for the efficient-attention kernels: today's speed-ups against the recorded ones.

    /usr/bin/python3 benchmarks/attention_ratios.py [--binary build/src/transformer-atlas] [--repeat 5]
    /usr/bin/python3 benchmarks/attention_ratios.py --check-baseline      # only read the recorded table

Runs `bench-attention --sweep` for LSH (4 rounds, chunk 64), Longformer (window 512), BigBird and strided attention
(stride 128). Each sweep times its kernel and full attention at N = 256 ... 16384 in the same process, one right
after the other, so a speed-up is measured under the same conditions however the machine's speed drifts. The
speed-up at 16384 tokens and the log-log slope over 2048 ... 16384 are compared with the table under "Speed-up
baseline" in docs/benchmarks.md, with the rows of this machine's vector width: the build is for the machine's CPU,
and the kernels' lead over full attention (OpenBLAS's AVX2 product either way) is about twice as large with AVX-512
as with AVX2. A speed-up that fell by more than 25 % is a regression, and so is a slope that rose by more than 25 %. Exits 1 on a regression. Prints today's rows in the table's format, to record after a change that
is meant to move them. Run it on a quiet machine, before resolving any issue that touches the engine.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
HEADING = "### Speed-up baseline"
KERNELS = [
    ("lsh", ["rounds=4", "chunk=64"]),
    ("longformer", ["window=512"]),
    ("bigbird", []),
    ("strided", ["stride=128"]),
]
TOLERANCE = 0.25


def vector_width():
    """"AVX-512" or "AVX2": what this machine's CPU offers (/proc/cpuinfo), and so what the build uses."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return "AVX-512" if "avx512f" in flags else "AVX2"


def read_baseline(path=DOC):
    """{width: {kernel: (speed-up at 16384, slope)}} from the table under HEADING:
    | kernel | speed-up | slope | date | machine |, the machine naming its vector width (AVX-512 or AVX2)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = lines.index(HEADING)
    except ValueError:
        sys.exit(f"{path}: no '{HEADING}' section")
    baseline = {}
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("kernel", "") or cells[0].startswith("---"):
            continue
        width = next((w for w in ("AVX-512", "AVX2") if len(cells) >= 5 and w in cells[4]), None)
        if width is None:
            sys.exit(f"{path}: '{HEADING}': the row '{line}' names no vector width (AVX-512 or AVX2) in its machine")
        try:
            baseline.setdefault(width, {})[cells[0].strip("`")] = (float(cells[1].rstrip("×")), float(cells[2]))
        except ValueError:
            sys.exit(f"{path}: '{HEADING}': cannot read the row '{line}' (kernel | speed-up× | slope | ...)")
    for width, rows in baseline.items():
        missing = [k for k, _ in KERNELS if k not in rows]
        if missing:
            sys.exit(f"{path}: '{HEADING}' has no {width} row for {', '.join(missing)}")
    return baseline


def measure(binary, kernel, params, repeat):
    command = [binary, "bench-attention", "--kernel", kernel, "--sweep", "--repeat", str(repeat)]
    for p in params:
        command += ["--attention-param", p]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    row = re.search(r"^\| 16384 \|.*\| ([0-9.]+)× \|$", out, re.M)
    slope = re.search(r"log-log slope .*: ([0-9.]+)$", out, re.M)
    if not row or not slope:
        sys.exit(f"cannot read the speed-up at 16384 or the slope from:\n{out}")
    return float(row.group(1)), float(slope.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "transformer-atlas"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check-baseline", action="store_true", help="only read the recorded table")
    args = parser.parse_args()
    tables = read_baseline()
    if args.check_baseline:
        for width, rows in sorted(tables.items()):
            print(f"{DOC}: '{HEADING}' has {len(rows)} {width} kernels: {', '.join(sorted(rows))}")
        return 0
    width = vector_width()
    baseline = tables.get(width, {})
    print(f"This machine: {width}; " + (f"compared with the baseline's {width} rows.\n" if baseline
                                        else f"the baseline has no {width} rows: today's are printed to record.\n"))
    regressions = []
    print("| kernel | recorded speed-up | today | change | recorded slope | today | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    today = {}
    for kernel, params in KERNELS:
        ratio, slope = measure(args.binary, kernel, params, args.repeat)
        today[kernel] = (ratio, slope)
        if kernel not in baseline:
            print(f"| {kernel} | – | {ratio:.1f}× | – | – | {slope:.2f} | no baseline |", flush=True)
            continue
        old_ratio, old_slope = baseline[kernel]
        fell = ratio < (1 - TOLERANCE) * old_ratio
        rose = slope > (1 + TOLERANCE) * old_slope
        verdict = "regression" if fell or rose else "ok"
        if fell or rose:
            regressions.append(kernel)
        print(f"| {kernel} | {old_ratio:.1f}× | {ratio:.1f}× | {100 * (ratio / old_ratio - 1):+.0f} % "
              f"| {old_slope:.2f} | {slope:.2f} | {verdict} |", flush=True)
    print("\nToday's rows, in the baseline's format:")
    for kernel, (ratio, slope) in today.items():
        print(f"| `{kernel}` | {ratio:.1f}× | {slope:.2f} | DATE | MACHINE, {width} |")
    if not baseline:
        return 1
    if regressions:
        print(f"\nfell by more than {int(100 * TOLERANCE)} %: {', '.join(regressions)}")
        return 1
    print(f"\nno kernel fell by more than {int(100 * TOLERANCE)} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

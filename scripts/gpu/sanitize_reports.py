#!/usr/bin/env python3
"""The reports of one compute-sanitizer log, split by who launched the kernel (sanitize.sh's rows).

Prints one tab-separated line: total (the ERROR/RACECHECK SUMMARY counts, else the printed reports:
a run cut by its time limit prints no summary), ours (printed reports in kernels batchsolve launched),
library (printed reports in kernels an NVIDIA library launched: the first host frame past libcuda is
libcusolver, libcublas, libcublasLt, libcufft or libcurand), and the distinct kernels reported, as
"kind @ kernel [who]" joined by "; ". A report without a host backtrace counts as ours.
  sanitize_reports.py LOG
"""
import re
import sys

LIBRARIES = re.compile(r"in (libcusolver|libcublasLt|libcublas|libcufft|libcurand)[^ ]*\.so")
TOP = re.compile(r"^========= (\S.*)$")  # a report starts at a line with one space after the marks
NOT_A_REPORT = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application|"
                          r"This can occur|Saved host|Host Frame|Device Frame|Address|No )")


def main(path):
    text = open(path, errors="replace").read().splitlines()
    summary = [int(m.group(1)) for line in text for m in [re.search(r"ERROR SUMMARY: (\d+)", line)] if m]
    hazards = [int(m.group(1)) for line in text for m in [re.search(r"RACECHECK SUMMARY: (\d+) hazard", line)] if m]
    blocks, current = [], None
    for line in text:
        m = TOP.match(line)
        if m and not NOT_A_REPORT.match(m.group(1)):
            current = [m.group(1)]
            blocks.append(current)
        elif current is not None and line.startswith("=========  "):
            current.append(line[10:].strip())
        elif m:
            current = None
    ours = library = 0
    kernels = {}
    for block in blocks:
        kind = block[0][:60]
        kernel = next((l[3:] for l in block if l.startswith("at ")), "")
        race = re.search(r" in (\S+)", block[0])
        kernel = re.sub(r"^void ", "", kernel or (race.group(1) if race else "?"))[:70]
        frames = [l for l in block if l.startswith("Host Frame:") and "libcuda.so" not in l]
        who = "library" if frames and LIBRARIES.search(frames[0]) else "ours"
        if who == "library":
            library += 1
        else:
            ours += 1
        kernels.setdefault(f"{kind} @ {kernel} [{who}]", 0)
        kernels[f"{kind} @ {kernel} [{who}]"] += 1
    total = sum(summary) + sum(hazards) if summary or hazards else len(blocks)
    names = "; ".join(f"{k} x{v}" for k, v in kernels.items())
    print(f"{total}\t{ours}\t{library}\t{names}")


if __name__ == "__main__":
    main(sys.argv[1])

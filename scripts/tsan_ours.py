#!/usr/bin/env python3
"""Lists the ThreadSanitizer reports of LOG files in which an access's innermost frame is the project's own source.

gRPC, protobuf and the OpenCL driver come from Debian's packages, built without ThreadSanitizer: their own locks and
atomics are invisible to it, so a test that uses gRPC gets hundreds of reports inside gRPC (our frames only further
down, as callers). A race in the project's code has one of its accesses' frame #0 in the project's sources.
usage: scripts/tsan_ours.py ROOT LOG...   (exit 1 when such a report is found)"""
import re
import sys


def ours(report: str, root: str) -> list:
    tops = []
    for block in re.split(r"\n  (?=(?:Write|Read|Previous|Atomic))", report):
        if block.startswith(("Write", "Read", "Previous", "Atomic")):
            m = re.search(r"#0 (\S+) (\S+)", block)
            if m and m.group(2).startswith(root) and "/build" not in m.group(2)[len(root):]:
                tops.append(f"{m.group(1)} {m.group(2)[len(root):].lstrip('/')}")
    return tops


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    root, found, total = sys.argv[1].rstrip("/"), 0, 0
    for path in sys.argv[2:]:
        text = open(path, errors="replace").read()
        for report in text.split("WARNING: ThreadSanitizer")[1:]:
            total += 1
            report = report.split("SUMMARY")[0]
            tops = ours(report, root)
            if tops:
                found += 1
                print(f"{path}: {report.splitlines()[0].strip(': ')} at {'; '.join(tops)}")
    print(f"{total} reports, {found} with an access in the project's own code")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

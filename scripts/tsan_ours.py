#!/usr/bin/env python3
"""Lists the ThreadSanitizer reports of LOG files in which an access's innermost frame is the project's own source.

gRPC, protobuf and the OpenCL driver come from Debian's packages, built without ThreadSanitizer: their own locks and
atomics are invisible to it, so a test that uses gRPC gets hundreds of reports inside gRPC (our frames only further
down, as callers). A race in the project's code has one of its accesses' innermost frame in the project's sources,
counted past ThreadSanitizer's own frames (its interceptors: memmove, operator new and delete, pthread calls) and
the C++ library's inlined templates (/usr/include/c++: a std::condition_variable, a vector's copy), which stand
between an access and the code that made it.
usage: scripts/tsan_ours.py ROOT LOG...   (exit 1 when such a report is found)"""
import re
import sys


FRAME = re.compile(r"^\s*#\d+ (.*) (\S+) \(([^()]*)\)$", re.M)  # "#2 function file:line (module+0x...)"


def innermost(block: str):
    """The function and file:line of the access's first frame that is neither the sanitizer's nor the C++ library's."""
    for function, location, module in FRAME.findall(block):
        if module.startswith("libtsan") or "libsanitizer" in location or location.startswith("/usr/include/c++/"):
            continue
        return function, location
    return None


def ours(report: str, root: str) -> list:
    tops = []
    for block in re.split(r"\n  (?=(?:Write|Read|Previous|Atomic|Mutex|Location|Thread))", report):
        if block.startswith(("Write", "Read", "Previous", "Atomic")):
            frame = innermost(block)
            if frame and frame[1].startswith(root + "/") and not frame[1][len(root):].startswith("/build"):
                tops.append(f"{frame[0]} {frame[1][len(root):].lstrip('/')}")
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

#!/usr/bin/env python3
"""Best-so-far curves of tuning runs, from CSV exports of their logs (`tunefleet export --format csv`).

Each CSV holds one run (one task, template, tuner and seed; file name <template>-<task>-<tuner>-<seed>.csv, as
bench/search_vs_random.sh writes them). Trials are counted in record order, failed ones included. Per task and
template, for each tuner: the median over seeds of the best GFLOPS after each checkpoint, and the median trials to
reach 90% and 95% of the best GFLOPS any run of that task found (a run that never reaches it counts as its length
+ 1 and the figure is marked '>' when half the runs or more never reach it); then the median GFLOPS of the trials
after the first --first (a failure counts as 0), which shows how good the configs a search proposes are once a
model can steer it, and the failed trials per run (median). Standard library only.
"""
import argparse
import csv
import os
import statistics
import sys
from collections import defaultdict


def read_run(path):
    if not os.path.isfile(path):
        raise SystemExit(f"search_curves: no CSV export at {path}")
    gflops = []
    with open(path, newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["record_id"]))
    if not rows:
        raise SystemExit(f"{path}: no records")
    for r in rows:
        gflops.append(float(r["gflops"]) if r["status"] == "0" and r["gflops"] else 0.0)
    return rows[0]["task"], rows[0]["template"], gflops


def best_after(gflops, n):
    return max(gflops[:n], default=0.0)


def trials_to(gflops, level):
    for i, g in enumerate(gflops):
        if g >= level:
            return i + 1, True
    return len(gflops) + 1, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    ap.add_argument("--first", type=int, default=32, help="trials before the proposals counted as steered")
    ap.add_argument("csvs", nargs="+")
    args = ap.parse_args()
    runs = defaultdict(lambda: defaultdict(list))  # (task, template) -> tuner -> [gflops per trial]
    for path in args.csvs:
        task, template, gflops = read_run(path)
        tuner = os.path.basename(path)[: -len(".csv")].split("-")[-2]
        runs[(task, template)][tuner].append(gflops)
    for (task, template), by_tuner in runs.items():
        top = max(max(g) for seeds in by_tuner.values() for g in seeds)
        print(f"{task}  {template}  best of all runs {top:.1f} GFLOPS")
        head = "  ".join(f"{'@' + str(c):>9}" for c in args.checkpoints)
        print(f"  {'tuner':<8} {'seeds':>5}  {head}  {'to 90%':>7}  {'to 95%':>7}  "
              f"{'median after ' + str(args.first):>16}  {'failed':>6}")
        for tuner, seeds in by_tuner.items():
            cells = "  ".join(f"{statistics.median(best_after(g, c) for g in seeds):9.1f}" for c in args.checkpoints)
            reach = []
            for level in (0.90, 0.95):
                hits = [trials_to(g, level * top) for g in seeds]
                med = statistics.median(t for t, _ in hits)
                unreached = sum(1 for _, ok in hits if not ok)
                reach.append(f"{'>' if unreached * 2 >= len(hits) else ''}{med:g}")
            later = statistics.median(x for g in seeds for x in g[args.first:]) if any(
                len(g) > args.first for g in seeds) else 0.0
            failed = statistics.median(sum(1 for x in g if x == 0) for g in seeds)
            print(f"  {tuner:<8} {len(seeds):>5}  {cells}  {reach[0]:>7}  {reach[1]:>7}  {later:16.1f}  {failed:6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What `tune --confirm K` buys, replayed offline on the recorded spaces of bench/data/.

Every config of those spaces was measured in several passes (5 on PoCL, 3 on the H200), so a pass's value is one
real measurement of it. A simulated run tries TRIALS random configs and sees one random pass of each, as `tune` sees
one measurement. Without --confirm it picks the config with the lowest measurement; with --confirm K it measures its
K best twice more (two other passes) and picks the lowest lower median, as the tuner and `tunefleet best` do. The
search is the same in both: what differs is only which of the tried configs is picked. The picked config is judged
by its ground truth, the lower median of all its passes, against the best tried config's ground truth:

    slowdown = truth(picked) / min(truth(tried))      (1.00: the best of what was tried)

usage: bench/confirm_replay.py [--trials 64] [--seeds 200] [--confirm 4,8] FILE.db[.xz]...
"""
import argparse
import lzma
import math
import os
import random
import sqlite3
import statistics
import sys
import tempfile
from collections import defaultdict


def lower_median(values):
    v = sorted(values)
    return v[(len(v) - 1) // 2]


def open_log(path):
    if not os.path.isfile(path):
        sys.exit(f"confirm_replay: no tuning log at {path}")
    if not path.endswith(".xz"):
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True), None
    tmp = tempfile.NamedTemporaryFile(suffix=".db", delete=False)
    with lzma.open(path) as src:
        tmp.write(src.read())
    tmp.close()
    return sqlite3.connect(tmp.name), tmp.name


def spaces(db):
    """(task spec, {config: [pass costs in record order]}) per task, configs whose every record ran."""
    rows = db.execute("SELECT t.spec, r.config_index, r.status, r.mean_cost FROM records r "
                      "JOIN tasks t ON t.id = r.task_id ORDER BY r.id").fetchall()
    tasks = defaultdict(lambda: defaultdict(list))
    failed = defaultdict(set)
    for spec, index, status, cost in rows:
        if status == 0 and cost > 0:
            tasks[spec][index].append(cost)
        else:
            failed[spec].add(index)
    for spec, configs in tasks.items():
        ran = {i: c for i, c in configs.items() if i not in failed[spec] and len(c) >= 3}
        yield spec, ran


def pick(tried, measured, confirm, rng, passes):
    """The index the tuner would pick: lowest measurement, or lowest lower median of the confirmed K."""
    if confirm == 0:
        return min(tried, key=lambda i: measured[i][0])
    top = sorted(tried, key=lambda i: measured[i][0])[:confirm]
    results = {}
    for i in tried:
        results[i] = [measured[i][0]]
    for i in top:
        others = [p for p in range(len(passes[i])) if p != measured[i][1]]
        results[i] += [passes[i][p] for p in rng.sample(others, 2)]
    return min(tried, key=lambda i: lower_median(results[i]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--confirm", default="4,8", help="values of K to compare with no confirmation")
    args = ap.parse_args()
    ks = [0] + [int(k) for k in args.confirm.split(",") if k]
    print(f"random search of {args.trials} trials, {args.seeds} seeds; slowdown of the picked config against the best "
          "tried (ground truth: lower median of every pass)")
    print("| file | task | configs | passes | " +
          " | ".join(f"{'no confirm' if k == 0 else f'--confirm {k}'}: mean, p90, share > 1.05" for k in ks) + " |")
    print("|---|---|---|---|" + "---|" * len(ks))
    for path in args.files:
        db, tmp = open_log(path)
        try:
            for spec, passes in spaces(db):
                if len(passes) < args.trials:
                    continue
                truth = {i: lower_median(c) for i, c in passes.items()}
                indices = sorted(passes)
                cells = []
                for k in ks:
                    slow = []
                    for seed in range(args.seeds):
                        rng = random.Random(seed)
                        tried = rng.sample(indices, args.trials)
                        measured = {}
                        for i in tried:
                            p = rng.randrange(len(passes[i]))
                            measured[i] = (passes[i][p], p)
                        # the same search and first measurements for every k: the confirmations draw afterwards
                        chosen = pick(tried, measured, k, random.Random(seed + 1_000_003), passes)
                        slow.append(truth[chosen] / min(truth[i] for i in tried))
                    slow.sort()
                    p90 = slow[math.ceil(0.9 * len(slow)) - 1]  # nearest rank (the same index at 200 seeds)
                    share = sum(s > 1.05 for s in slow) / len(slow)
                    cells.append(f"{statistics.mean(slow):.3f}, {p90:.3f}, {share:.0%}")
                n = min(len(c) for c in passes.values())
                print(f"| {os.path.basename(path)} | {spec} | {len(passes)} | {n} | " + " | ".join(cells) + " |")
        finally:
            db.close()
            if tmp:
                os.unlink(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())

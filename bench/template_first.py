#!/usr/bin/env python3
"""Which of a task's templates should get the task's first batch? Reads tune logs (tunefleet's SQLite files) and, for
each task whose every template got a batch (at least MIN_TRIALS records each), compares the template that tuned best
(its fastest record) with two guesses made before any batch: the template whose fallback config (its first record) ran
fastest, and the first template in the run's order (the first whose record comes first in the log). Only logs of a run
that began with a fallback round count (one record for each unit before any other; `tune` on a short budget): there a
unit's first record is its fallback. Without a round, a batch's records come in the order the devices finished them.
Prints one line per task and the counts.
  usage: bench/template_first.py [--min-trials N] LOG.db...
"""
import argparse
import os
import sqlite3
import urllib.parse


def tasks_of(path, min_trials):
    if not os.path.isfile(path):
        raise SystemExit(f"template_first: no tuning log at {path}")
    db = sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=ro", uri=True)  # read-only: never creates a file
    spec = dict(db.execute("SELECT id, spec FROM tasks"))
    name = dict(db.execute("SELECT id, name FROM templates"))
    rows = db.execute("SELECT task_id, template_id, status, mean_cost FROM records ORDER BY id").fetchall()
    units = {(task, tmpl) for task, tmpl, *_ in rows}
    if len({(task, tmpl) for task, tmpl, *_ in rows[:len(units)]}) != len(units):
        print(f"{path}: no fallback round, left out")
        return
    first, best, count, order = {}, {}, {}, {}
    for task, tmpl, status, cost in rows:
        unit = (task, tmpl)
        ok = status == 0 and cost > 0
        if unit not in first:
            first[unit] = cost if ok else float("inf")
            order.setdefault(task, []).append(tmpl)
        count[unit] = count.get(unit, 0) + 1
        if ok:
            best[unit] = min(best.get(unit, float("inf")), cost)
    for task, tmpls in order.items():
        if len(tmpls) < 2 or any(count[(task, m)] < min_trials or (task, m) not in best for m in tmpls):
            continue
        tuned = min(tmpls, key=lambda m: best[(task, m)])
        fallback = min(tmpls, key=lambda m: first[(task, m)])
        yield spec[task], {m: name[m] for m in tmpls}, tuned, fallback, tmpls[0], \
            {name[m]: (first[(task, m)], best[(task, m)]) for m in tmpls}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-trials", type=int, default=8)
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    n = by_fallback = by_order = 0
    for path in args.logs:
        for spec, names, tuned, fallback, run_first, costs in tasks_of(path, args.min_trials):
            n += 1
            by_fallback += fallback == tuned
            by_order += run_first == tuned
            detail = " ".join(f"{m}:{f * 1e6:.0f}/{b * 1e6:.0f}us" for m, (f, b) in costs.items())
            print(f"{path} {spec}: tuned best {names[tuned]}, fastest fallback {names[fallback]}, "
                  f"first in the run {names[run_first]} (fallback/best: {detail})")
    print(f"{n} tasks: the template that tuned best had the fastest fallback in {by_fallback}, "
          f"was the first in the run's order in {by_order}")


if __name__ == "__main__":
    main()

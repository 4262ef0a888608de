#!/usr/bin/env python3
"""How learnable the top of a recorded space is: where a replay's target (95% of the best) can and cannot be met.

For every task of a recorded space (a tuning log holding every valid config, several passes: bench/record_spaces.sh;
NAME.db or NAME.db.xz) it prints, judging configs as `tunefleet simulate` does (the lower median of their passes):
  - configs, those that ran, and those within --target of the best: random's median is near
    configs / (within + 1) * ln 2, so few within means a slow random search and room for a model;
  - an oracle that knows every knob value's mean share of the best over the whole space and picks configs by the
    sum of their knob values' means: the trial at which it first picks a config within the target. Where the
    fastest configs combine knob values that are slow on average (an interaction, or a compiler's luck), a model
    that learns the knobs' main effects first is led away from them;
  - an oracle that already knows one pass's measurements and picks configs in that pass's order, judged by the
    lower median of the other passes (leave one out): the trial at which it first picks a config within the
    target, per pass. That is a model as good as one more measurement: where even it needs many trials, the
    target lies within the measurement noise;
  - for each other task of the file (a sibling, as `simulate --transfer-from` uses it), the main effects oracle
    fitted on the sibling's records alone (a knob value the sibling lacks counts 0): how far a transfer of the
    sibling's main effects, with no result of the task itself, would get.
Standard library only. Usage: bench/space_ceiling.py [--target 0.95] DB [DB ...]
"""
import argparse
import collections
import json
import lzma
import os
import sqlite3
import statistics
import sys
import tempfile


def open_db(path, tmpdir):
    if not os.path.isfile(path):
        sys.exit(f"{os.path.basename(sys.argv[0]).removesuffix('.py')}: no recorded space at {path}")
    if path.endswith(".xz"):
        dest = os.path.join(tmpdir, os.path.basename(path)[:-3])
        with lzma.open(path) as src, open(dest, "wb") as out:
            out.write(src.read())
        path = dest
    return sqlite3.connect(path)


def lower_median(values):
    v = sorted(values)
    return v[(len(v) - 1) // 2]


def within(costs, target):  # config -> cost; the configs within `target` of the best
    best = min(costs.values())
    return {i for i, c in costs.items() if best / c >= target}


def main_effects(configs, share):  # (knob, JSON value) -> mean share over the configs that have it
    effect = collections.defaultdict(list)
    for i, knobs in configs.items():
        for kv in knobs:
            effect[kv].append(share.get(i, 0.0))
    return {kv: statistics.fmean(v) for kv, v in effect.items()}


def first_hit(configs, effect, hits):  # trial at which the order by summed effects first picks one of `hits`
    order = sorted(configs, key=lambda i: -sum(effect.get(kv, 0.0) for kv in configs[i]))
    return next(n + 1 for n, i in enumerate(order) if i in hits)


def report(db, name, target):
    tasks = []  # (spec, configs, hits, effect): each task's configs by index, its configs within target, its effects
    for task_id, spec in db.execute("SELECT id, spec FROM tasks ORDER BY id"):
        # One device per recorded space: the one with the most records of the task, as simulate takes it.
        row = db.execute("SELECT device_id FROM records WHERE task_id = ? GROUP BY device_id ORDER BY COUNT(*) DESC "
                         "LIMIT 1", (task_id,)).fetchone()
        if row is None:
            continue
        # Pass k: every config's k-th record (a pass may have been recorded over several sessions).
        # A config's knob values as (knob, JSON value) pairs, its successful costs, and pass k's costs.
        configs, seen = {}, collections.Counter()
        runs, per_pass = collections.defaultdict(list), collections.defaultdict(dict)
        for index, config, status, cost in db.execute(
                "SELECT config_index, config, status, mean_cost FROM records WHERE task_id = ? AND device_id = ? "
                "ORDER BY id", (task_id, row[0])):
            configs[index] = [(k, json.dumps(v)) for k, v in json.loads(config).items()]
            seen[index] += 1
            if status == 0 and cost > 0:
                runs[index].append(cost)
                per_pass[seen[index]][index] = cost
        if not runs:
            continue
        median = {i: lower_median(v) for i, v in runs.items()}
        hits = within(median, target)
        # Each knob value's mean share of the best over the whole space (a config that failed counts as 0); a
        # config's score is the sum over its knobs.
        best_cost = min(median.values())
        effect = main_effects(configs, {i: best_cost / c for i, c in median.items()})
        tasks.append((spec, configs, hits, effect))
        oracle = []
        for k, costs in sorted(per_pass.items()):
            others = {i: lower_median(v) for i, v in
                      ((i, [p[i] for s, p in per_pass.items() if s != k and i in p]) for i in runs) if v}
            if not others:
                continue
            goal = within(others, target)
            order = sorted(configs, key=lambda i: costs.get(i, float("inf")))
            oracle.append(next(n + 1 for n, i in enumerate(order) if i in goal))
        print(f"{name} {spec}: {len(configs)} configs, {len(runs)} ran, {len(hits)} within {target:g}; "
              f"knob main effects' order: {first_hit(configs, effect, hits)}; one pass's order, leave one out: "
              f"{oracle} (median {statistics.median(oracle) if oracle else 0:g})")
    for spec, configs, hits, _ in tasks:
        for other, _, _, effect in tasks:
            if other != spec:
                print(f"{name} {spec}: the main effects of {other} alone: {first_hit(configs, effect, hits)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("dbs", nargs="+")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.dbs:
            name = os.path.basename(path).split(".db")[0]
            try:
                report(open_db(path, tmp), name, args.target)
            except (sqlite3.Error, lzma.LZMAError) as e:
                sys.exit(f"space_ceiling: {path} is not a tunefleet tuning log: {e}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Kernel Tuner's search strategies replayed over the recorded spaces of bench/data/, counted as `tunefleet simulate`
counts its own.

For every task of the given recorded spaces (tunefleet tuning logs that hold every valid config, several passes each:
NAME.db or NAME.db.xz), it writes a Kernel Tuner cache file (JSON) of the whole space and replays each strategy over
it with Kernel Tuner's simulation mode (`tune_kernel(..., cache=FILE, simulation_mode=True)`), seeds 1..K. Each
tunefleet knob is one tune parameter whose values are the knob's options (a split [1,2,4] as the string "1x2x4"), and
a restriction admits exactly the configs recorded, so Kernel Tuner searches the same space as `simulate`.

Counted as `tunefleet simulate` counts (tuner/simulate.cc, TrialsToTarget):
  - a config's value is the lower median of its successful passes; a config with none failed, and is in the cache as
    Kernel Tuner records a failure (RuntimeFailedConfig; CompilationFailedConfig when its message names a build);
  - the best is the best value among the configs that ran; a hit is a config within --target of it;
  - a trial is a config evaluated for the first time (Kernel Tuner's own count of function evaluations: a config
    served again from the cache costs nothing), failures included; the result is the trial of the first hit.
The replay stops a run at its first hit (a wrapper around Kernel Tuner's SimulationRunner.run ends the budget there).
max_fevals is the whole space, so a run that ends without a hit has exhausted a strategy's own stopping rule (or
--time-limit); it counts as the space's size + 1 and the line says how many did.

Seeds: Kernel Tuner's strategies draw from Python's `random` and NumPy's global generator; both are seeded with the
seed before each run. bayes_opt's Latin hypercube (scipy.stats.qmc) draws from fresh OS entropy unless given a seed;
the replay passes it one drawn from the seeded NumPy generator. bayes_opt's default method also decides when to refit
by the wall clock; the replay gives it a clock that counts 1 s per evaluation (class Clock). mls and greedy_ils
depend on the order of sets of strings, which Python randomizes per process: the script runs itself with
PYTHONHASHSEED=0. So runs repeat.

Prints one line per (task, strategy): trials per seed, the median, and random_sample's median / the strategy's
median (tunefleet's target for a tuner without history: >= 3); then a summary table. With --tunefleet FILE (lines
"DB_STEM<TAB>TASK<TAB>the last line of `tunefleet simulate`", as bench/kernel_tuner_replay.sh writes them) the table
also shows tunefleet's own tuner and baseline. --list prints "DB_STEM TEMPLATE TASK" per task and needs no Kernel
Tuner.
Python standard library plus kernel_tuner (1.5.0) and its dependencies.
Usage: bench/kernel_tuner_replay.py [--seeds 10] [--strategies a,b] [--target 0.95] [--tunefleet FILE] DB [DB ...]
"""
import argparse
import contextlib
import io
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from space_ceiling import lower_median, open_db, within  # noqa: E402 (the loading and judging simulate does)

STRATEGIES = ["random_sample", "genetic_algorithm", "simulated_annealing", "mls", "greedy_ils", "pso", "bayes_opt"]
SHORT = {"conv2d_nchwc.image2d": "nchwc", "depthwise_conv2d_nchwc.image2d": "dwconv", "conv2d_winograd": "winograd"}


class Task:
    """One task of a recorded space: its configs (index -> knob dict), values (index -> lower median, None = failed)."""

    def __init__(self, stem, template, spec, configs, value, messages, target):
        self.stem, self.template, self.spec, self.configs, self.value = stem, template, spec, configs, value
        self.messages = messages  # index -> the message of a failed record
        ran = {i: c for i, c in value.items() if c is not None}
        self.hits = within(ran, target)  # judged as simulate judges: best / value >= target
        self.ran = len(ran)

    def label(self):
        device = "H200" if self.stem.startswith("gpu_") else "PoCL"
        dims = self.spec.split(":")[1] if ":" in self.spec else self.spec
        return f"{device} {SHORT.get(self.template, self.template)} {dims}"


def load_tasks(db, stem, target):
    """Every task of a log, read as space_ceiling.py and `simulate` read it: the device with the most records."""
    tasks = []
    for task_id, spec in db.execute("SELECT id, spec FROM tasks ORDER BY id").fetchall():
        row = db.execute("SELECT r.device_id, t.name FROM records r JOIN templates t ON t.id = r.template_id "
                         "WHERE r.task_id = ? GROUP BY r.device_id, t.name ORDER BY COUNT(*) DESC LIMIT 1",
                         (task_id,)).fetchone()
        if row is None:
            continue
        configs, runs, messages = {}, {}, {}
        for index, config, status, cost, message in db.execute(
                "SELECT r.config_index, r.config, r.status, r.mean_cost, r.message FROM records r "
                "JOIN templates t ON t.id = r.template_id WHERE r.task_id = ? AND r.device_id = ? AND t.name = ? "
                "ORDER BY r.id", (task_id, row[0], row[1])):
            configs[index] = json.loads(config)
            runs.setdefault(index, [])
            if status == 0 and cost > 0:
                runs[index].append(cost)
            elif message:
                messages.setdefault(index, message)
        value = {i: (lower_median(v) if v else None) for i, v in runs.items()}
        if any(v is not None for v in value.values()):
            tasks.append(Task(stem, row[1], spec, configs, value, messages, target))
    return tasks


def encode(v):
    return "x".join(str(x) for x in v) if isinstance(v, list) else v


def write_cache(task, path, permute=0):
    """A Kernel Tuner cache of the whole space; returns (tune_params, the recorded configs as tuples, key -> index).
    Each parameter's values are in sorted order, or with `permute` N > 0 in an order drawn per parameter from N (its
    own generator: independent of the strategies' seeds): Kernel Tuner's neighbourhoods follow that order."""
    keys = sorted({k for c in task.configs.values() for k in c})
    options = {k: sorted({json.dumps(c[k]) for c in task.configs.values()}, key=lambda s: json.loads(s))
               for k in keys}
    tune_params = {k: [encode(json.loads(s)) for s in options[k]] for k in keys}
    if permute:
        for k in keys:
            random.Random(f"permute:{permute}:{k}").shuffle(tune_params[k])
    cache, allowed, index_of = {}, set(), {}
    for i, c in task.configs.items():
        params = {k: encode(c[k]) for k in keys}
        key = ",".join(str(params[k]) for k in keys)
        allowed.add(tuple(params[k] for k in keys))
        index_of[key] = i
        entry = dict(params, compile_time=0, verification_time=0, benchmark_time=0)
        if task.value[i] is None:
            build = any(w in task.messages.get(i, "").lower() for w in ("build", "compil"))
            entry["__error__"] = "CompilationFailedConfig" if build else "RuntimeFailedConfig"
        else:
            entry["time"] = task.value[i] * 1e3  # Kernel Tuner's unit: ms
        cache[key] = entry
    with open(path, "w") as f:
        json.dump({"device_name": task.stem, "kernel_name": "tunefleet_replay", "problem_size": [1],
                   "tune_params_keys": keys, "tune_params": tune_params, "objective": "time", "cache": cache}, f)
    return tune_params, allowed, index_of


class Watch:
    """The run in progress: which keys are hits, the configs evaluated so far, and the trial of the first hit."""
    hits, seen, hit = set(), set(), None


class Clock:
    """bayes_opt's clock (its default method refits its model only when the evaluations since the last prediction
    took 5 times as long as that prediction, or every 5 rounds): 1 s per first evaluation and nothing else, as a live
    run, whose compile and benchmark outlast a prediction, sees it. With the wall clock a replay's instant evaluations
    would make it refit by timing luck, so runs would neither repeat nor resemble a live run."""
    now = 0.0

    @staticmethod
    def perf_counter():
        return Clock.now

    @staticmethod
    def perf_counter_ns():
        return int(Clock.now * 1e9)


def install_hooks():
    """Count first evaluations and end a run's budget at its first hit; seed bayes_opt's Latin hypercube and give it
    a clock that repeats (Clock)."""
    import numpy as np
    from kernel_tuner.runners.simulation import SimulationRunner
    from kernel_tuner.strategies import bayes_opt

    run = SimulationRunner.run

    def watched_run(self, parameter_space, tuning_options):
        results = []
        for element in parameter_space:  # one at a time, so that a batch stops right after its first hit
            result = run(self, [element], tuning_options)[0]
            results.append(result)
            key = ",".join(str(v) for v in element)
            if result is None or key in Watch.seen:
                continue
            Watch.seen.add(key)
            Clock.now += 1.0
            assert len(Watch.seen) == tuning_options.budget.num_fevals, "a trial Kernel Tuner did not count"
            if Watch.hit is None and key in Watch.hits:
                Watch.hit = len(Watch.seen)
                tuning_options.budget.max_fevals = tuning_options.budget.num_fevals
        return results

    SimulationRunner.run = watched_run
    bayes_opt.time = Clock
    lhs = bayes_opt.LatinHypercube
    bayes_opt.LatinHypercube = lambda *a, **kw: lhs(*a, seed=int(np.random.randint(2**31)), **kw)


def replay(task, cachefile, tune_params, allowed, index_of, strategy, seed, time_limit):
    import numpy as np
    from kernel_tuner import tune_kernel
    from kernel_tuner.util import StopCriterionReached

    Watch.hits = {k for k, i in index_of.items() if i in task.hits}
    Watch.seen, Watch.hit = set(), None
    random.seed(seed)
    np.random.seed(seed)
    options = {"max_fevals": len(task.configs), "time_limit": time_limit}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            tune_kernel("tunefleet_replay", "", (1,), [], tune_params, cache=cachefile,
                        simulation_mode=True, strategy=strategy, strategy_options=options, quiet=True,
                        restrictions=[restriction(tune_params, allowed)])
        except StopCriterionReached:
            pass
    return Watch.hit, len(Watch.seen)


def restriction(tune_params, allowed):
    """The recorded configs as a restriction (a plain function of the config's dict: Kernel Tuner parses lambdas)."""
    keys = list(tune_params)

    def recorded(p):
        return tuple(p[k] for k in keys) in allowed
    return recorded


def check_space(tune_params, allowed):
    """Kernel Tuner's search space after the restriction must be the recorded configs, no more and no fewer."""
    from kernel_tuner.searchspace import Searchspace
    space = Searchspace(tune_params, [restriction(tune_params, allowed)], 1_000_000_000)
    if set(space.list) != allowed:
        sys.exit(f"kernel_tuner_replay: Kernel Tuner's space has {space.size} configs, the recording {len(allowed)}")


def median(v):
    return statistics.median(v) if v else float("nan")


def read_tunefleet(path):
    """(stem, task) -> (tuner, median, baseline, median, ratio) from 'trials-to-95%: xgb 68 random 195.5 ratio 2.88'."""
    out = {}
    with open(path) as f:
        for line in f:
            stem, spec, last = (line.rstrip("\n").split("\t") + ["", ""])[:3]
            w = last.split()
            if len(w) >= 7 and w[0].startswith("trials-to-") and w[5] == "ratio":
                out[(stem, spec)] = (w[1], float(w[2]), w[3], float(w[4]), float(w[6]))
    return out


def fmt(x):
    return f"{x:g}" if x == int(x) else f"{x:.1f}"


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":  # Kernel Tuner iterates over sets of strings: fix their order
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="runs per strategy, seeds 1..K (default 10)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated Kernel Tuner strategies")
    ap.add_argument("--target", type=float, default=0.95, help="share of the best to reach (default 0.95)")
    ap.add_argument("--time-limit", type=float, default=600, help="seconds per run before it counts as a miss")
    ap.add_argument("--skip", default="", help="strategy:max_configs,...: skip a strategy on larger spaces")
    ap.add_argument("--tunefleet", help="tunefleet simulate's results to show beside (see above)")
    ap.add_argument("--list", action="store_true", help="print DB_STEM TEMPLATE TASK per task and exit")
    ap.add_argument("--task", default="", help="only the tasks whose spec holds this text")
    ap.add_argument("--permute-values", type=int, default=0, metavar="N",
                    help="list each parameter's values in an order drawn from N, not sorted (0, the default)")
    ap.add_argument("dbs", nargs="+")
    args = ap.parse_args()
    strategies = [s for s in args.strategies.split(",") if s]
    skip = {s.split(":")[0]: int(s.split(":")[1]) for s in args.skip.split(",") if s}
    with tempfile.TemporaryDirectory() as tmp:
        tasks = []
        for path in args.dbs:
            stem = os.path.basename(path).split(".db")[0]
            try:
                tasks += [t for t in load_tasks(open_db(path, tmp), stem, args.target) if args.task in t.spec]
            except (sqlite3.Error, OSError, EOFError) as e:
                sys.exit(f"kernel_tuner_replay: {path} is not a tunefleet tuning log: {e}")
        if args.list:
            for t in tasks:
                print(t.stem, t.template, t.spec)
            return
        import kernel_tuner
        install_hooks()
        print(f"kernel_tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else '?'}, "
              f"{args.seeds} seeds, target {args.target:g}; a run without a hit counts as the space's size + 1",
              flush=True)
        table = {}  # (task label) -> {strategy: (median, misses)}
        for t in tasks:
            cachefile = os.path.join(tmp, f"{t.stem}-{len(table)}.json")
            tune_params, allowed, index_of = write_cache(t, cachefile, args.permute_values)
            check_space(tune_params, allowed)
            row = table.setdefault(t, {})
            for s in strategies:
                if s in skip and len(t.configs) > skip[s]:
                    continue
                start, trials, misses = time.monotonic(), [], 0
                for seed in range(1, args.seeds + 1):
                    hit, _ = replay(t, cachefile, tune_params, allowed, index_of, s, seed, args.time_limit)
                    misses += hit is None
                    trials.append(hit if hit is not None else len(t.configs) + 1)
                row[s] = (median(trials), misses)
                base = row.get("random_sample", (float("nan"),))[0]
                ratio = f"; random_sample/{s} {base / row[s][0]:.2f}" if "random_sample" in row else ""
                print(f"{t.stem} {t.spec} {s}: trials per seed {' '.join(map(str, trials))}; median "
                      f"{fmt(row[s][0])}{ratio}; no hit {misses}/{args.seeds} [{time.monotonic() - start:.1f} s]",
                      flush=True)
    summary(table, strategies, read_tunefleet(args.tunefleet) if args.tunefleet else {}, args)


def summary(table, strategies, tunefleet, args):
    short = {"random_sample": "random_sample", "genetic_algorithm": "GA", "simulated_annealing": "SA",
             "greedy_ils": "greedy_ils"}
    head = ["task", "configs (ran)", "within"] + [short.get(s, s) for s in strategies]
    if tunefleet:
        head += ["tunefleet xgb", "tunefleet random"]
    print(f"\nMedian trials to {args.target:g} of the best over {args.seeds} seeds; in brackets random_sample's "
          "median / the strategy's (tunefleet: its random's / its xgb's); * = some seeds found no hit "
          "(counted as size + 1); - = not run")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for t, row in table.items():
        base = row.get("random_sample", (float("nan"), 0))[0]
        cells = [t.label(), f"{len(t.configs)} ({t.ran})", str(len(t.hits))]
        for s in strategies:
            if s not in row:
                cells.append("-")
                continue
            m, misses = row[s]
            cells.append(f"{fmt(m)}{'*' if misses else ''}" + ("" if s == "random_sample" else f" ({base / m:.2f})"))
        if tunefleet:
            spec = t.spec.split(":float")[0]
            r = tunefleet.get((t.stem, t.spec)) or tunefleet.get((t.stem, spec))
            cells += [f"{fmt(r[1])} ({r[4]:.2f})", fmt(r[3])] if r else ["-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

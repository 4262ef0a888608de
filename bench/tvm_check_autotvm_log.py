#!/usr/bin/env python3
"""Reads a log written by `tunefleet export --format autotvm` with TVM's own AutoTVM decoder and applies it with
ApplyHistoryBest (run by hand; needs a TVM build that still has AutoTVM, i.e. before its removal, 0.19 or older).

    python3 bench/tvm_check_autotvm_log.py tune.log
"""
import sys


def main(path):
    try:
        from tvm import autotvm
    except ImportError as e:  # TVM missing, or a release without AutoTVM
        print(f"tvm.autotvm not available: {e}")
        return 2
    rows = 0
    with open(path) as f:
        for line in f:
            inp, res = autotvm.record.decode(line)
            if inp is None:
                print(f"line {rows + 1}: TVM could not decode it")
                return 1
            rows += 1
            print(f"{inp.task.name} {inp.target} config {inp.config.index} costs {res.costs} error {res.error_no}")
    with autotvm.apply_history_best(path) as best:
        print(f"ApplyHistoryBest loaded {rows} records; best entries: {len(best.best_by_targetkey)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/tvm_check_autotvm_log.py AUTOTVM_LOG")
    if not __import__("os").path.isfile(sys.argv[1]):
        sys.exit(f"tvm_check_autotvm_log: no file at {sys.argv[1]}")
    sys.exit(main(sys.argv[1]))

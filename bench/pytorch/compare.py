"""Compares two ddp_train.py CSVs: the losses must agree step by step
within a tolerance (the libraries may sum in different orders), and the step
times are printed side by side.

    python3 compare.py nccl.csv ringo.csv [--rtol 1e-3]
"""
import argparse
import csv
import statistics
import sys


def load(path):
    with open(path) as f:
        return [(int(r["step"]), float(r["loss"]), float(r["step_ms"])) for r in csv.DictReader(f)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float, default=1e-3)
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    if len(a) != len(b):
        sys.exit(f"{len(a)} steps against {len(b)}")
    worst = max(abs(x[1] - y[1]) / abs(x[1]) for x, y in zip(a, b))
    print(f"steps {len(a)}; largest relative loss difference {worst:.2e} (tolerance {args.rtol:g})")
    for i in (0, 1, 10, len(a) // 2, len(a) - 1):
        print(f"  step {a[i][0]:4d}: loss {a[i][1]:.6f} / {b[i][1]:.6f}")
    skip = min(10, len(a) // 2)  # warm-up steps
    ta, tb = statistics.median(x[2] for x in a[skip:]), statistics.median(x[2] for x in b[skip:])
    print(f"median step time: {args.a} {ta:.2f} ms, {args.b} {tb:.2f} ms (ratio {tb / ta:.3f})")
    if worst > args.rtol:
        sys.exit("losses differ beyond the tolerance")


if __name__ == "__main__":
    main()

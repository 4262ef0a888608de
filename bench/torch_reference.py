#!/usr/bin/env python3
"""Vendor-library ceiling for the benchmarks (run by hand on a CUDA machine): cuBLAS SGEMM and cuDNN conv2d
through PyTorch, TF32 off, float32. Prints one line per workload: name, milliseconds, GFLOPS."""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


def timed(fn, iters=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(3):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / iters)
    return best  # ms


def gemm(n):
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    ms = timed(lambda: a @ b)
    print(f"cublas gemm:{n},{n},{n} {ms:.4f} ms {2 * n ** 3 / ms / 1e6:.1f} GFLOPS")


def conv(spec):
    n, c, h, w, k, kh, kw, s, p = spec
    x = torch.rand(n, c, h, w, device="cuda")
    wt = torch.rand(k, c, kh, kw, device="cuda")
    ms = timed(lambda: torch.nn.functional.conv2d(x, wt, stride=s, padding=p))
    oh, ow = (h + 2 * p - kh) // s + 1, (w + 2 * p - kw) // s + 1
    flops = 2 * n * k * oh * ow * c * kh * kw
    name = "conv2d:" + ",".join(map(str, spec))
    print(f"cudnn {name} {ms:.4f} ms {flops / ms / 1e6:.1f} GFLOPS")


if __name__ == "__main__":
    for n in (2048, 4096):
        gemm(n)
    for arg in sys.argv[1:]:
        conv(tuple(int(v) for v in arg.split(",")))

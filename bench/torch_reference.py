#!/usr/bin/env python3
"""Vendor-library ceiling for the benchmarks (run by hand on a CUDA machine): cuBLAS SGEMM and cuDNN conv2d
through PyTorch, TF32 off, float32. Each workload is timed twice, eagerly (50 calls between two events) and as a
replayed CUDA graph of the same 50 calls (no launch overhead); the faster counts. Prints one line per workload:
name, milliseconds, GFLOPS, then both timings."""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


def timed_eager(fn, iters=50):
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


def timed_graph(fn, iters=50):
    """The same calls captured in a CUDA graph and replayed: no Python/launch overhead between kernels, which is
    what tunefleet's figure (OpenCL profiling events around the kernels alone) is compared with."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(5):  # cudnn.benchmark picks its algorithm here, outside the capture
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(iters):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(3):
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / iters)
    return best  # ms


def timed(fn):
    """(best ms, eager ms, graph ms): the vendor gets the faster of the two."""
    eager = timed_eager(fn)
    graph = timed_graph(fn)
    return min(eager, graph), eager, graph


def gemm(n):
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    ms, eager, graph = timed(lambda: a @ b)
    print(f"cublas gemm:{n},{n},{n} {ms:.4f} ms {2 * n ** 3 / ms / 1e6:.1f} GFLOPS "
          f"(eager {eager:.4f} ms, graph {graph:.4f} ms)")


def conv(spec):
    n, c, h, w, k, kh, kw, s, p = spec
    x = torch.rand(n, c, h, w, device="cuda")
    wt = torch.rand(k, c, kh, kw, device="cuda")
    ms, eager, graph = timed(lambda: torch.nn.functional.conv2d(x, wt, stride=s, padding=p))
    oh, ow = (h + 2 * p - kh) // s + 1, (w + 2 * p - kw) // s + 1
    flops = 2 * n * k * oh * ow * c * kh * kw
    name = "conv2d:" + ",".join(map(str, spec))
    print(f"cudnn {name} {ms:.4f} ms {flops / ms / 1e6:.1f} GFLOPS (eager {eager:.4f} ms, graph {graph:.4f} ms)")


if __name__ == "__main__":
    for n in (2048, 4096):
        gemm(n)
    for arg in sys.argv[1:]:
        conv(tuple(int(v) for v in arg.split(",")))

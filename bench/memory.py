#!/usr/bin/env python3
"""Peak RSS of full syncs on corpora that stress memory: `python3 bench/memory.py --binary BIN [...]`.

`make bench`'s corpus is 10,000 PNGs of 20-250 KiB in one IDAT chunk each; a
real library also has large covers (1,000-1,500 pixels, 1-4 MB) and PNGs
written by libpng, whose image data is split into 8 KiB IDAT chunks. The
corpora here (generated once and kept under .build-bench/, as bench.py's are):

  photo   bench.py's own corpus (10,000 PNGs, 20-250 KiB)
  mixed   10,000 PNGs: 60% 20-250 KiB, 25% 250 KiB-1 MiB, 12% 1-2.5 MiB,
          3% 2.5-4 MiB; one in six RGBA, half split into 8 KiB IDAT chunks
  large   1,500 PNGs of 1-4 MiB (RGB and RGBA, half split)
  jpeg    300 JPEGs of 500-1,200 pixels a side (cjpeg, quality 85), converted to PNG
  tiny    10,000 PNGs of 0.6-2 KiB: what 10,000 albums cost with next to no image bytes

Each run is a full sync (`coverd run` until every album is cached, as bench.py's
sync row) on a fresh filesystem: a loop-mounted ext4 with its journal (`ext4`) or
tmpfs (`tmpfs`). It prints the daemon's VmHWM, and, sampled every 5 ms, the
largest VmRSS seen and its anonymous and file-backed parts, the time and the
CPU. Every PNG is checked byte for byte, every converted JPEG for its size.
Needs root (mount, losetup). Figures are printed, never asserted.
"""
import argparse
import contextlib
import os
import random
import statistics
import struct
import subprocess
import sys
import threading
import time
import zlib

import bench
import conversion
import kept

STEPS = bench.STEPS


def png_bytes(width, height, channels, split):
    """A photo-like PNG (RGB or RGBA), deflated at level 1 (generation speed; it packs about as level 6
    does, 0.57 against 0.55 of the rows), in one IDAT chunk or in libpng's 8 KiB ones."""
    stride = width * channels
    noise = os.urandom(stride * height).translate(STEPS)
    rows = b"".join(b"\x01" + noise[y * stride:(y + 1) * stride] for y in range(height))
    compressed = zlib.compress(rows, 1)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    pieces = [compressed[i:i + 8192] for i in range(0, len(compressed), 8192)] if split else [compressed]
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + b"".join(chunk(b"IDAT", p) for p in pieces) + chunk(b"IEND", b"")


def write_png(job):
    path, side, channels, split = job
    with open(path, "wb") as handle:
        handle.write(png_bytes(side, side, channels, split))


def side_for(size, channels):
    return max(4, int((size / 0.57 / channels) ** 0.5))


def png_corpus(name, count, bands):
    """`count` PNGs whose compressed sizes fall in `bands`: [(share, low bytes, high bytes)]."""
    def jobs(directory):
        rng = random.Random(f"{name}-{count}")
        result = []
        for index in range(count):
            pick, total = rng.random(), 0.0
            for share, low, high in bands:
                total += share
                if pick < total:
                    break
            channels = 4 if rng.random() < 1 / 6 else 3
            side = side_for(rng.randrange(low, high), channels)
            result.append((os.path.join(directory, f"c{index:06d}.png"), side, channels, rng.random() < 0.5))
        return result
    return kept.kept_corpus(os.path.join(bench.WORK, f"corpus-{name}-{count}"), f"{name} cover PNGs", jobs, write_png, 8)


KIB, MIB = 1024, 1 << 20
CORPORA = {
    "mixed": lambda: png_corpus("mixed", 10_000, [(0.60, 20 * KIB, 250 * KIB), (0.25, 250 * KIB, MIB),
                                                 (0.12, MIB, 5 * MIB // 2), (0.03, 5 * MIB // 2, 4 * MIB)]),
    "large": lambda: png_corpus("large", 1_500, [(1.0, MIB, 4 * MIB)]),
    "photo": lambda: bench.corpus(10_000),
    "tiny": lambda: png_corpus("tiny", 10_000, [(1.0, 600, 2 * KIB)]),
}


def jpeg_corpus(count=300):
    def jobs(directory):
        rng = random.Random(f"jpeg-{count}")
        return [(os.path.join(directory, f"j{index:05d}.jpg"), rng.randrange(500, 1201), rng.randrange(500, 1201), index)
                for index in range(count)]
    return kept.kept_corpus(os.path.join(bench.WORK, f"corpus-jpeg-large-{count}"), "JPEG covers with cjpeg", jobs,
                            conversion.write_jpeg, 4)


class Sampler:
    """VmRSS, RssAnon and RssFile of `pid` every 5 ms; keeps the sample with the largest VmRSS."""

    def __init__(self, pid, trace=None):
        self.pid = pid
        self.trace = trace
        self.started = time.monotonic()
        self.peak = {"VmRSS": 0}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        path = f"/proc/{self.pid}/status"
        while not self.stopped.is_set():
            try:
                with open(path) as handle:
                    fields = {line.split(":")[0]: line.split()[1] for line in handle if line.startswith(("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"))}
            except (FileNotFoundError, ProcessLookupError, IndexError):
                return
            sample = {key: int(value) for key, value in fields.items()}
            if self.trace:
                self.trace.write(f"{time.monotonic() - self.started:.3f} {sample.get('VmRSS', 0)} {sample.get('RssAnon', 0)} "
                                 f"{sample.get('RssFile', 0)} {sample.get('Threads', 0)}\n")
            if sample.get("VmRSS", 0) > self.peak["VmRSS"]:
                self.peak = sample
            time.sleep(0.005)

    def stop(self):
        self.stopped.set()
        self.thread.join()
        return self.peak


def sync_once(binary, urls, ids, expected_check, parallel, trace=None):
    records = bench.fresh("albums")
    bench.write_records(records, urls, ids=ids)
    cache = bench.fresh("cache")
    subprocess.run(["sync"])
    expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
    with bench.running(binary, records, cache, ["--concurrency", str(parallel), "--per-host", str(parallel)]) as (daemon, notify):
        sampler = Sampler(daemon.pid, trace)
        try:
            done = notify.wait_for(lambda f: f.get("STATUS") == expected, 1800)
        finally:
            peak = sampler.stop()
        hwm = bench.status_kb(daemon.pid, "VmHWM")
        cpu = bench.cpu_seconds(daemon.pid)
    elapsed = done - daemon.started
    return elapsed, hwm, peak, cpu, daemon.status, expected_check(cache)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, action="append", help="NAME=BINARY or BINARY; repeat to alternate builds")
    parser.add_argument("--corpus", action="append", choices=[*CORPORA, "jpeg"], help="default: photo, mixed, large and jpeg")
    parser.add_argument("--fs", action="append", choices=["ext4", "tmpfs"], help="default: both")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--trace", help="append every sample (seconds, VmRSS, RssAnon, RssFile in KiB, threads) to this file")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("memory.py needs root: it mounts a filesystem for the runs")
    builds = [entry.partition("=")[::2] if "=" in entry else (os.path.basename(entry), entry) for entry in args.binary]
    os.makedirs(bench.WORK, exist_ok=True)
    corpora = args.corpus or ["photo", "mixed", "large", "jpeg"]
    directories = {name: (jpeg_corpus() if name == "jpeg" else CORPORA[name]()) for name in corpora}
    failed = []
    for filesystem in args.fs or ["ext4", "tmpfs"]:
        for name in corpora:
            directory = directories[name]
            suffix = ".jpg" if name == "jpeg" else ".png"
            names = sorted(n for n in os.listdir(directory) if n.endswith(suffix))
            size = sum(os.path.getsize(os.path.join(directory, n)) for n in names)
            if filesystem == "tmpfs":
                os.environ["BENCH_TMPFS"] = "1"
            else:
                os.environ.pop("BENCH_TMPFS", None)
            # Room for every run's covers; a converted JPEG is about five times its JPEG.
            per_run = size * (6 if name == "jpeg" else 1)
            scratch = bench.ScratchFilesystem(max(4, (3 * per_run * args.runs * len(builds)) >> 30) + 2)
            nginx = bench.Nginx(directory)
            try:
                urls = [f"{nginx.base}/{n}" for n in names]
                bench.warm_up(urls, directory)
                if name == "jpeg":
                    ids = [f"j{index:05d}" for index in range(len(urls))]
                    check = lambda cache: conversion.check_converted(cache, names, directory)
                else:
                    ids = None
                    check = lambda cache: bench.verify_cache(cache, urls, directory)
                results = {build: [] for build, _ in builds}
                for run in range(args.runs):
                    order = builds[run % len(builds):] + builds[:run % len(builds)]
                    for build, binary in order:
                        with open(args.trace, "a") if args.trace else contextlib.nullcontext() as trace:
                            if trace:
                                trace.write(f"# {build} {name} {filesystem} run {run + 1}\n")
                            elapsed, hwm, peak, cpu, status, bad = sync_once(binary, urls, ids, check, args.parallel, trace)
                        results[build].append((elapsed, hwm, cpu))
                        if bad or status != 0:
                            failed.append(f"{build} {name} {filesystem} run {run + 1}")
                        print(f"# {build} {name} ({len(names)} files, {size / 2**20:.0f} MiB) on {filesystem}, run {run + 1}: "
                              f"{elapsed:.2f} s, {cpu:.2f} s CPU, VmHWM {hwm / 1024:.1f} MiB; largest sampled VmRSS "
                              f"{peak['VmRSS'] / 1024:.1f} MiB (anon {peak.get('RssAnon', 0) / 1024:.1f}, file "
                              f"{peak.get('RssFile', 0) / 1024:.1f}, threads {peak.get('Threads', 0)}); {bad} bad, exit {status}",
                              flush=True)
                for build, rows in results.items():
                    print(f"{build} {name} {filesystem}: median {statistics.median(r[0] for r in rows):.2f} s, "
                          f"CPU {statistics.median(r[2] for r in rows):.2f} s, VmHWM max {max(r[1] for r in rows) / 1024:.1f} MiB "
                          f"(runs: {' / '.join(f'{r[1] / 1024:.1f}' for r in rows)})", flush=True)
            finally:
                nginx.stop()
                scratch.close()
    if failed:
        sys.exit(f"runs with a bad cover or a failed exit: {', '.join(failed)}")


if __name__ == "__main__":
    main()

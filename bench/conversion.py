"""The JPEG row of coverd's benchmark: conversion throughput.

A corpus of photo-like JPEG covers (written by cjpeg) is synced by coverd from
nginx, which decodes each with libjpeg-turbo and encodes a PNG with libpng on
its decode queues; the baseline is the same libraries' own tools,
`djpeg | pnmtopng`, run over the same files with `xargs -P <cores>`, in the
same run. coverd's time includes the download and the fsyncs; the tools' does
not include either, so the ratio is a ceiling on coverd's conversion cost.
"""
import math
import os
import random
import statistics
import struct
import subprocess
import time

import kept


def write_jpeg(job):
    """A smooth random-walk picture (photo-like: mostly low frequencies) as a quality-85 JPEG."""
    path, width, height, seed = job
    rng = random.Random(seed)
    walk = bytearray()
    value = [128, 128, 128]
    for _ in range(width + 1024):
        for channel in range(3):
            value[channel] = min(255, max(0, value[channel] + rng.randint(-6, 6)))
            walk.append(value[channel])
    rows = []
    for y in range(height):
        # Each row a slowly shifting window on the walk: neighbouring rows are alike.
        offset = int(512 + 400 * math.sin(y / (30 + seed % 40) + seed))
        rows.append(bytes(walk[offset * 3:(offset + width) * 3]))
    ppm = b"P6\n%d %d\n255\n" % (width, height) + b"".join(rows)
    with open(path, "wb") as handle:
        subprocess.run(["cjpeg", "-quality", "85"], input=ppm, stdout=handle, check=True)


def jpeg_corpus(work, count):
    """N JPEG covers between 300 and 1000 pixels a side, generated once and kept."""
    def jobs(directory):
        rng = random.Random(count)
        return [(os.path.join(directory, f"j{index:05d}.jpg"), rng.randrange(300, 1000), rng.randrange(300, 1000), index)
                for index in range(count)]
    return kept.kept_corpus(os.path.join(work, f"corpus-jpeg-{count}"), "JPEG covers with cjpeg", jobs, write_jpeg, 16)


def jpeg_size(path):
    """(width, height) from the first SOFn marker."""
    with open(path, "rb") as handle:
        data = handle.read()
    offset = 2
    while offset + 9 < len(data) and data[offset] == 0xFF:
        marker = data[offset + 1]
        length = struct.unpack(">H", data[offset + 2:offset + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[offset + 5:offset + 9])
            return width, height
        offset += 2 + length
    raise ValueError(f"{path}: no frame header")


def check_converted(cache, names, corpus_dir):
    """Covers whose PNG is missing or not the JPEG's size: each must be a PNG of the same dimensions."""
    bad = 0
    for index, name in enumerate(names):
        try:
            with open(os.path.join(cache, "covers", f"j{index:05d}.png"), "rb") as handle:
                head = handle.read(24)
        except FileNotFoundError:
            bad += 1
            continue
        if head[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", head[16:24]) != jpeg_size(os.path.join(corpus_dir, name)):
            bad += 1
    return bad


def run_tools(corpus_dir, names, out):
    """djpeg | pnmtopng over every file, one pipeline per core at a time, into `out` (made by the caller); wall-clock seconds."""
    listing = "\n".join(names) + "\n"
    started = time.monotonic()
    subprocess.run(["xargs", "-P", str(os.cpu_count() or 1), "-I{}", "sh", "-c", f"djpeg '{{}}' | pnmtopng -quiet > '{out}/{{}}.png'"],
                   input=listing.encode(), cwd=corpus_dir, check=True, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def conversion_rows(bench, binary, nginx, corpus_dir, runs):
    """Alternating coverd syncs and tool runs; the benchmark table's JPEG rows."""
    names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".jpg"))
    urls = [f"{nginx.base}/jpeg/{name}" for name in names]
    megabytes = sum(os.path.getsize(os.path.join(corpus_dir, n)) for n in names) / 2**20
    records = bench.fresh("jpeg-albums")
    bench.write_records(records, urls, files=10, ids=[f"j{index:05d}" for index in range(len(urls))])
    coverd_times, tool_times, cpu = [], [], []
    for run in range(runs):
        if run % 2:
            tool_times.append(run_tools(corpus_dir, names, bench.fresh("jpeg-tools")))
        cache = bench.fresh("jpeg-cache")
        expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
        with bench.running(binary, records, cache, ["--concurrency", "32", "--per-host", "32"]) as (daemon, notify):
            elapsed = notify.wait_for(lambda f: f.get("STATUS") == expected, 1200) - daemon.started
            cpu.append(bench.cpu_seconds(daemon.pid))
        bad = check_converted(cache, names, corpus_dir)
        coverd_times.append(elapsed)
        if run % 2 == 0:
            tool_times.append(run_tools(corpus_dir, names, bench.fresh("jpeg-tools")))
        print(f"# jpeg run {run + 1}: coverd {elapsed:.2f} s ({bad} bad, {cpu[-1]:.2f} s CPU), "
              f"djpeg | pnmtopng {tool_times[-1]:.2f} s", flush=True)
    coverd_time, tool_time = statistics.median(coverd_times), statistics.median(tool_times)
    count = len(names)
    return [
        (f"JPEG → PNG, {count} covers ({megabytes:.0f} MiB): download + convert + store (median of {runs})",
         f"{coverd_time:.2f} s", f"djpeg \\| pnmtopng ×{os.cpu_count()} {tool_time:.2f} s", f"{coverd_time / tool_time:.2f}", ""),
        ("JPEG → PNG throughput", f"{count / coverd_time:.0f} covers/s", f"{count / tool_time:.0f} covers/s",
         f"{tool_time / coverd_time:.2f}", ""),
    ]


def check(bench, binary, nginx, corpus_dir):
    """`make bench-check`: a few JPEGs synced; each must arrive as a PNG of its size. Returns the bad count."""
    names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".jpg"))
    urls = [f"{nginx.base}/jpeg/{name}" for name in names]
    records = bench.fresh("jpeg-albums")
    bench.write_records(records, urls, files=2, ids=[f"j{index:05d}" for index in range(len(urls))])
    cache = bench.fresh("jpeg-cache")
    expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
    with bench.running(binary, records, cache) as (daemon, notify):
        notify.wait_for(lambda f: f.get("STATUS") == expected, 120)
    return check_converted(cache, names, corpus_dir)

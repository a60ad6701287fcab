"""The JPEG row of coverd's benchmark: JPEG covers fetched and converted to PNG.

A corpus of photo-like JPEG covers (written by cjpeg) is synced by coverd from
nginx, which decodes each and encodes a PNG on its work pool; the baseline is
the pipeline a script would use, the same libraries' own tools: `curl -Z`
downloads every JPEG from the same nginx at coverd's parallelism, then
`djpeg | pnmtopng -compression 6` converts them, one pipeline per core
(`xargs -P <cores>`). The two are timed alike, from the start to the last PNG
written, and alternate run by run. coverd's time also includes making each
cover durable and indexing it; the tools write into the page cache and stop.
Every run's PNGs, coverd's and the tools', are checked in full
(bench/pngverify.py: every CRC, the whole image data inflated, each row
there) and must have the JPEG's size; one bad file fails the run. The row
prints the PNG bytes each side wrote, since a faster encoder may buy its
speed with larger files.
"""
import math
import os
import random
import shutil
import statistics
import struct
import subprocess
import time

import kept
import pngverify

# The corpus's shape (issue #27's: 300 covers of 500 to 1,200 pixels a side).
COUNT, LOW_SIDE, HIGH_SIDE = 300, 500, 1200
# The random walk's largest step per pixel, and the share of each row it fills (the rest a plain
# background): chosen so that at quality 85 the JPEGs and their PNGs come near the sizes of the
# issue's real covers (bench/README.md gives the corpus's).
STEP, PHOTO_SHARE = 10, (0.4, 0.7)


def write_jpeg(job):
    """A cover-like picture as a quality-85 JPEG: a smooth random walk (photo-like: mostly low
    frequencies) beside a plain background shading slowly down the cover, as many covers have."""
    path, width, height, seed = job
    rng = random.Random(seed)
    walk = bytearray()
    value = [128, 128, 128]
    for _ in range(width + 1024):
        for channel in range(3):
            value[channel] = min(255, max(0, value[channel] + rng.randint(-STEP, STEP)))
            walk.append(value[channel])
    photo = int(width * rng.uniform(*PHOTO_SHARE))
    background = [rng.randrange(256) for _ in range(3)]
    rows = []
    for y in range(height):
        # Each row a slowly shifting window on the walk: neighbouring rows are alike.
        offset = int(512 + 400 * math.sin(y / (30 + seed % 40) + seed))
        shade = bytes(min(255, max(0, level + (y * 64) // height - 32)) for level in background)
        rows.append(bytes(walk[offset * 3:(offset + photo) * 3]) + shade * (width - photo))
    ppm = b"P6\n%d %d\n255\n" % (width, height) + b"".join(rows)
    with open(path, "wb") as handle:
        subprocess.run(["cjpeg", "-quality", "85"], input=ppm, stdout=handle, check=True)


def jpeg_corpus(work, count=COUNT):
    """N JPEG covers between LOW_SIDE and HIGH_SIDE pixels a side, generated once and kept."""
    def jobs(directory):
        rng = random.Random(count)
        return [(os.path.join(directory, f"j{index:05d}.jpg"), rng.randint(LOW_SIDE, HIGH_SIDE),
                 rng.randint(LOW_SIDE, HIGH_SIDE), index) for index in range(count)]
    # Named by its shape and generator, so a corpus made by an earlier generator is never reused.
    name = f"corpus-jpeg-cover-{count}-{LOW_SIDE}-{HIGH_SIDE}-step{STEP}"
    return kept.kept_corpus(os.path.join(work, name), "JPEG covers with cjpeg", jobs, write_jpeg, 4)


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


def check_pngs(paths, sizes):
    """Problems with PNG files that must each be complete, valid and of the given size: [(path, what)]."""
    problems = []
    for path, size in zip(paths, sizes):
        try:
            what = pngverify.problem(path, size)
        except FileNotFoundError:
            what = "missing"
        if what:
            problems.append((path, what))
    return problems


def fail_on(problems, whose):
    if problems:
        path, what = problems[0]
        raise RuntimeError(f"{whose}: {len(problems)} bad PNGs, the first {os.path.basename(path)}: {what}")


class Corpus:
    """The JPEG corpus as served: names, URLs, each JPEG's size."""

    def __init__(self, nginx, corpus_dir):
        self.dir = corpus_dir
        self.names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".jpg"))
        self.urls = [f"{nginx.base}/jpeg/{name}" for name in self.names]
        self.ids = [f"j{index:05d}" for index in range(len(self.names))]
        self.sizes = [jpeg_size(os.path.join(corpus_dir, name)) for name in self.names]
        self.bytes = sum(os.path.getsize(os.path.join(corpus_dir, n)) for n in self.names)


def coverd_run(bench, binary, corpus, records, parallel, timeout=1200):
    """One coverd sync of the JPEG records into a fresh cache, every cover checked in full:
    (seconds, peak RSS in KiB, CPU seconds, PNG bytes written, the cache)."""
    cache = bench.fresh("jpeg-cache")
    count = len(corpus.urls)
    expected = f"{count} albums: {count} cached, 0 pending, 0 failed"
    subprocess.run(["sync"])  # as before every timed run: no other run's writeback in this one
    with bench.running(binary, records, cache, ["--concurrency", str(parallel), "--per-host", str(parallel)]) as (daemon, notify):
        elapsed = notify.wait_for(lambda f: f.get("STATUS") == expected, timeout) - daemon.started
        rss = bench.status_kb(daemon.pid, "VmHWM")
        cpu = bench.cpu_seconds(daemon.pid)
    if daemon.status != 0:
        raise RuntimeError(f"coverd's JPEG sync exited with status {daemon.status}")
    paths = [os.path.join(cache, "covers", f"{album}.png") for album in corpus.ids]
    fail_on(check_pngs(paths, corpus.sizes), "coverd's JPEG sync")
    return elapsed, rss, cpu, sum(os.path.getsize(path) for path in paths), cache


def tools_run(bench, corpus, parallel):
    """`curl -Z` of every JPEG, then `djpeg | pnmtopng -compression 6` over them, one pipeline per
    core; every JPEG compared with the corpus and every PNG checked in full, after the clock stops:
    (seconds in all, seconds of the download, PNG bytes written)."""
    out = {}

    def convert(directory):
        # The second stage, timed with the download: one `sh` per file, as a script would.
        subprocess.run(["xargs", "-P", str(os.cpu_count() or 1), "-I{}", "sh", "-c",
                        "djpeg '{}.jpg' | pnmtopng -quiet -compression 6 > '{}.png'"],
                       input="".join(f"{index:06d}\n" for index in range(len(corpus.urls))).encode(),
                       cwd=directory, check=True, stderr=subprocess.DEVNULL)
        out["dir"] = directory

    elapsed = bench.run_curl(corpus.urls, parallel, then=convert, suffix=".jpg")
    download = bench.LAST_CURL_DOWNLOAD
    directory = out["dir"]
    for index, name in enumerate(corpus.names):
        with open(os.path.join(corpus.dir, name), "rb") as source, open(os.path.join(directory, f"{index:06d}.jpg"), "rb") as fetched:
            if source.read() != fetched.read():
                raise RuntimeError(f"curl -Z: {name} differs from the corpus")
    paths = [os.path.join(directory, f"{index:06d}.png") for index in range(len(corpus.urls))]
    fail_on(check_pngs(paths, corpus.sizes), "djpeg | pnmtopng")
    return elapsed, download, sum(os.path.getsize(path) for path in paths)


def write_jpeg_records(bench, corpus, files=10):
    records = bench.fresh("jpeg-albums")
    bench.write_records(records, corpus.urls, files=files, ids=corpus.ids)
    return records


def conversion_rows(bench, binary, nginx, corpus_dir, runs, parallel):
    """Alternating coverd syncs and tool pipelines; the benchmark table's JPEG rows."""
    corpus = Corpus(nginx, corpus_dir)
    records = write_jpeg_records(bench, corpus)
    subprocess.run(["curl", "-s", "-o", "/dev/null", corpus.urls[0]])  # warm nginx
    coverd_times, tool_times, downloads, cpu, rss_values, coverd_bytes, tool_bytes = [], [], [], [], [], [], []
    cores = os.cpu_count() or 1

    def coverd(run):
        elapsed, rss, seconds, written, _ = coverd_run(bench, binary, corpus, records, parallel)
        coverd_times.append(elapsed)
        rss_values.append(rss)
        cpu.append(seconds)
        coverd_bytes.append(written)
        return f"coverd {elapsed:.2f} s ({seconds:.2f} s CPU, peak RSS {rss / 1024:.1f} MiB, {written / 1e6:.1f} MB of PNG)"

    def tools(run):
        elapsed, download, written = tools_run(bench, corpus, parallel)
        tool_times.append(elapsed)
        downloads.append(download)
        tool_bytes.append(written)
        return (f"curl -Z + djpeg | pnmtopng ×{cores} {elapsed:.2f} s ({download:.2f} + {elapsed - download:.2f} s, "
                f"{bench.LAST_CURL_CPU:.2f} s CPU, {written / 1e6:.1f} MB of PNG)")

    for run in range(runs):
        # Alternating order, so neither always runs on the fuller filesystem.
        said = [step(run) for step in ((tools, coverd) if run % 2 else (coverd, tools))]
        print(f"# jpeg run {run + 1}: " + ", ".join(said), flush=True)
    coverd_time, tool_time = statistics.median(coverd_times), statistics.median(tool_times)
    paired = statistics.median(a / b for a, b in zip(coverd_times, tool_times))
    download = statistics.median(downloads)
    mine, theirs = statistics.median(coverd_bytes), statistics.median(tool_bytes)
    count = len(corpus.names)
    sides = f"{min(min(s) for s in corpus.sizes)}–{max(max(s) for s in corpus.sizes)} px"
    return [
        (f"JPEG → PNG, {count} covers ({sides}, {corpus.bytes / 1e6:.0f} MB), parallel {parallel}: coverd's full sync "
         f"against curl -Z then djpeg \\| pnmtopng -compression 6 ×{cores} (median of {runs})",
         f"{coverd_time:.2f} s", f"{tool_time:.2f} s", f"{coverd_time / tool_time:.2f}", "≤ 0.40 (stretch 0.25)"),
        ("JPEG → PNG, median of the per-run ratios", "", "", f"{paired:.2f}", "≤ 0.40 (stretch 0.25)"),
        ("JPEG → PNG: the pipeline's download and conversion apart (medians)", "",
         f"curl -Z {download:.2f} s + {statistics.median(t - d for t, d in zip(tool_times, downloads)):.2f} s", "", ""),
        ("JPEG → PNG: PNG bytes written, in all", f"{mine / 1e6:.1f} MB", f"pnmtopng {theirs / 1e6:.1f} MB",
         f"{mine / theirs:.3f}", "≤ 1.05"),
        ("JPEG → PNG: coverd's CPU time (user + system, median)", f"{statistics.median(cpu):.2f} s", "", "", ""),
        (f"peak RSS during the JPEG sync (VmHWM, max; {bench.filesystem_label()})", f"{max(rss_values) / 1024:.1f} MiB",
         "", "", "≤ 64 MiB"),
    ]


def peak_rss(bench, binary, nginx, corpus_dir, runs, parallel):
    """Peak RSS (KiB, the largest of `runs` syncs) of coverd's JPEG sync on the filesystem in use, each
    cache deleted after its check (for tmpfs, where the covers are memory)."""
    corpus = Corpus(nginx, corpus_dir)
    records = write_jpeg_records(bench, corpus)
    peaks = []
    for run in range(runs):
        elapsed, rss, _, _, cache = coverd_run(bench, binary, corpus, records, parallel)
        shutil.rmtree(cache)
        peaks.append(rss)
        print(f"# jpeg on {bench.filesystem_label()}, run {run + 1}: coverd {elapsed:.2f} s, peak RSS {rss / 1024:.1f} MiB", flush=True)
    return max(peaks)


def check(bench, binary, nginx, corpus_dir, parallel):
    """`make bench-check`: the JPEGs synced by coverd and converted by the tools' pipeline once each;
    every PNG must be complete and of its JPEG's size (a bad one raises). Returns a line to print."""
    corpus = Corpus(nginx, corpus_dir)
    records = write_jpeg_records(bench, corpus, files=2)
    _, rss, _, mine, _ = coverd_run(bench, binary, corpus, records, parallel, timeout=120)
    _, _, theirs = tools_run(bench, corpus, parallel)
    return (f"bench check: {len(corpus.names)} JPEG covers converted by coverd ({mine / 1e6:.1f} MB of PNG, peak RSS "
            f"{rss / 1024:.1f} MiB) and by curl -Z + djpeg | pnmtopng ({theirs / 1e6:.1f} MB), every PNG complete and of its size")

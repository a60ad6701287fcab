#!/usr/bin/env python3
"""A/B of coverd builds on the full sync: `python3 bench/ab.py NAME=BINARY NAME=BINARY … [--rounds N] [--curl]`.

Each run gets a fresh ext4 filesystem on a loop device, thrown away after it (so no
run inherits another's deleted inodes or dirty pages). The builds, and curl -Z with
`--curl`, take turns: each round starts one place further along the list, so over a
number of rounds that is a multiple of the list's length each runs in every place
equally often. `--backing /dev/shm` puts the filesystem's image in memory:
every fsync and journal commit is still real, but the device is no longer the limit,
so what is left is the programs' own cost. `--disk` adds a third kind of run: the
corpus, already in memory, copied onto the fresh filesystem (not timed) and then
`sync -f` (timed): a loose lower bound on how long the device takes to store the
bytes and files a durable sync must store (loose: writeback the copy itself started,
if any, is not counted); each build is then also set against the slower of curl -Z
and that. `--rate 1gbit` shapes loopback with a token bucket for the timed runs
(bench/shaping.py), so both programs fetch as over a link of that rate rather than
at the speed of loopback's memory copies. Needs root (losetup, mount). Timings are
printed, never asserted; every run's covers are checked byte for byte, and a run
with a bad cover or a failed exit makes the script exit 1.
"""
import argparse
import contextlib
import os
import shutil
import statistics
import sys

import bench
import shaping

CURL = "curl"
DISK = "disk"


def parse_builds(parser, arguments):
    builds = {}
    for argument in arguments:
        name, separator, binary = argument.partition("=")
        if not separator or not name or not binary:
            parser.error(f"{argument!r}: expected NAME=BINARY")
        if name in builds or name in (CURL, DISK):
            parser.error(f"{name!r}: each build needs its own name (and not {CURL!r} or {DISK!r})")
        if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
            parser.error(f"{binary}: not an executable file")
        builds[name] = os.path.abspath(binary)
    return builds


def disk_run(corpus_dir):
    """Seconds `sync -f` takes to store a copy of the corpus made just before it from the
    page cache (`bench.copy_then_sync`): a loose lower bound on the device's share of a
    durable sync, with no network and no validation."""
    copied, synced = bench.copy_then_sync(corpus_dir, name="disk")
    return synced, True, f"the copy before it {copied:.2f} s"


def one_run(name, builds, urls, corpus_dir, parallel):
    """(seconds, whether the run was good, what to print about it)."""
    if name == DISK:
        return disk_run(corpus_dir)
    if name == CURL:
        elapsed = bench.run_curl(urls, parallel)
        bad = bench.verify_curl(bench.LAST_CURL_DIR, urls, corpus_dir)
        return elapsed, bad == 0, f"{bench.LAST_CURL_CPU:.2f} s CPU, machine {bench.LAST_MACHINE_BUSY:.2f} s busy, {bad} bad; {bench.LAST_CURL_SYNCED:.2f} s with sync"
    elapsed, rss, status, cache = bench.run_coverd_sync(builds[name], urls, parallel)
    bad = bench.verify_cache(cache, urls, corpus_dir)
    return elapsed, bad == 0 and status == 0, (f"{bench.LAST_CPU:.2f} s CPU, {bench.LAST_FAULTS} page faults, machine {bench.LAST_MACHINE_BUSY:.2f} s busy, peak RSS {rss / 1024:.1f} MiB, "
                                               f"{bad} bad, exit status {status}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+", help="NAME=BINARY (two or more, or one with --curl)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--backing", default=bench.WORK, help="where the filesystem image lives (default: on disk)")
    parser.add_argument("--curl", action="store_true", help="run curl -Z each round too")
    parser.add_argument("--rate", help="shape loopback to this rate for the timed runs (tc syntax: 1gbit, 500mbit)")
    parser.add_argument("--disk", action="store_true", help="time sync -f of a copy of the corpus each round too (with --curl)")
    args = parser.parse_args()
    for option in ("rounds", "count", "parallel"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1")
    builds = parse_builds(parser, args.builds)
    if args.disk and not args.curl:
        parser.error("--disk needs --curl: the disk's time is set beside curl -Z's")
    order = [*builds, *([CURL] if args.curl else []), *([DISK] if args.disk else [])]
    if len(order) < 2:
        parser.error("nothing to compare: give two builds, or one and --curl")
    if os.geteuid() != 0:
        sys.exit("ab.py needs root: it makes a loop-mounted filesystem per run")
    os.makedirs(bench.WORK, exist_ok=True)
    if not args.rate:
        shaping.check_unshaped()
    corpus_dir = bench.corpus(args.count)
    # Three times the corpus, and never under 4 GiB (the image is sparse, so room costs
    # nothing): ext4 starts writing back, and then allocating as it writes, once free space
    # falls under about twice the data not yet written, which on a tight filesystem stalls
    # curl (whose 1.5 GB stays dirty) and not coverd (which syncs as it goes). With 3 GiB for
    # this corpus, curl took 3.8-4.1 s instead of 2.1-2.5 s.
    corpus_bytes = sum(os.path.getsize(os.path.join(corpus_dir, name)) for name in os.listdir(corpus_dir))
    gigabytes = max(4, 3 * (corpus_bytes >> 30) + 3)
    nginx = bench.Nginx(corpus_dir)
    results = {name: [] for name in order}
    failed = []
    try:
        urls = [f"{nginx.base}/{name}" for name in sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))]
        bench.warm_up(urls, corpus_dir)
        with shaping.shaped_loopback(args.rate) if args.rate else contextlib.nullcontext():
            for round_ in range(args.rounds):
                for name in order[round_ % len(order):] + order[:round_ % len(order)]:
                    scratch = bench.ScratchFilesystem(gigabytes, image_directory=args.backing)
                    try:
                        elapsed, good, detail = one_run(name, builds, urls, corpus_dir, args.parallel)
                    finally:
                        if not scratch.close():
                            raise RuntimeError(f"{bench.RUNS} is still in use after {name}'s run")
                    results[name].append(elapsed)
                    if not good:
                        failed.append(f"round {round_ + 1}: {name}")
                    print(f"# round {round_ + 1}: {name} {elapsed:.2f} s ({detail})", flush=True)
    finally:
        nginx.stop()
        if not os.path.ismount(bench.RUNS):  # Never delete into a filesystem left mounted.
            shutil.rmtree(bench.RUNS, ignore_errors=True)
    for name, times in results.items():
        print(f"{name}: {' / '.join(f'{t:.3f}' for t in times)} s, median {statistics.median(times):.3f} s")
    if args.curl:
        for name in builds:
            ratios = [a / b for a, b in zip(results[name], results[CURL])]
            print(f"{name} / curl, per round {' / '.join(f'{r:.3f}' for r in ratios)}, median {statistics.median(ratios):.3f}")
            if args.disk:
                bounded = [a / max(b, d) for a, b, d in zip(results[name], results[CURL], results[DISK])]
                print(f"{name} / the slower of curl and disk, per round {' / '.join(f'{r:.3f}' for r in bounded)}, "
                      f"median {statistics.median(bounded):.3f}")
    if failed:
        sys.exit(f"runs with a bad cover or a failed exit: {', '.join(failed)}")


if __name__ == "__main__":
    try:
        main()
    except shaping.ShapingUnavailable as error:  # --rate that cannot be had: say why, no traceback.
        sys.exit(f"--rate: {error}")

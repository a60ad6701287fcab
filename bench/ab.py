#!/usr/bin/env python3
"""A/B of coverd builds on the full sync: `python3 bench/ab.py NAME=BINARY ... [--rounds N]`.

Each run gets a fresh ext4 filesystem on a loop device (so no run inherits another's
deleted inodes or dirty pages), the builds alternate round by round, and curl -Z runs
beside them with `--curl`. `--backing /dev/shm` puts the filesystem's image in memory:
every fsync and journal commit is still real, but the device is no longer the limit, so
what is left is the programs' own cost. Needs root (losetup, mount). Timings are printed,
never asserted.
"""
import argparse
import os
import statistics
import subprocess
import sys

import bench


def fresh_filesystem(backing, gigabytes=4):
    image = os.path.join(backing, f"ab-{os.getpid()}.img")
    with open(image, "wb") as handle:
        handle.truncate(gigabytes << 30)
    subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True)
    device = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", image],
                            capture_output=True, text=True, check=True).stdout.strip()
    os.makedirs(bench.RUNS, exist_ok=True)
    subprocess.run(["mount", device, bench.RUNS], check=True)
    return image, device


def drop_filesystem(image, device):
    subprocess.run(["umount", bench.RUNS], check=False)
    subprocess.run(["losetup", "-d", device], check=False)
    os.unlink(image)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+", help="NAME=BINARY, two or more")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--backing", default=bench.WORK, help="where the filesystem image lives (default: on disk)")
    parser.add_argument("--curl", action="store_true", help="run curl -Z each round too")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("ab.py needs root: it makes a loop-mounted filesystem per run")
    builds = dict(build.split("=", 1) for build in args.builds)
    os.makedirs(bench.WORK, exist_ok=True)
    corpus_dir = bench.corpus(args.count)
    nginx = bench.Nginx(corpus_dir)
    urls = [f"{nginx.base}/{name}" for name in sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))]
    results = {name: [] for name in [*builds, *(["curl -Z"] if args.curl else [])]}
    try:
        for round_ in range(args.rounds):
            for name in results:
                image, device = fresh_filesystem(args.backing)
                try:
                    if name == "curl -Z":
                        elapsed = bench.run_curl(urls, args.parallel)
                        detail = f"{bench.LAST_CURL_SYNCED:.2f} s with sync"
                    else:
                        elapsed, _, _, cache = bench.run_coverd_sync(builds[name], urls, args.parallel)
                        detail = f"{bench.LAST_CPU:.2f} s CPU, {bench.verify_cache(cache, urls, corpus_dir)} bad"
                finally:
                    drop_filesystem(image, device)
                results[name].append(elapsed)
                print(f"# round {round_ + 1}: {name} {elapsed:.2f} s ({detail})", flush=True)
    finally:
        nginx.stop()
        subprocess.run(["umount", bench.RUNS], stderr=subprocess.DEVNULL)
    for name, times in results.items():
        print(f"{name}: {' / '.join(f'{t:.2f}' for t in times)} s, median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()

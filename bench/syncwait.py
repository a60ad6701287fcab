"""Where a full sync waits for the disk: one 10,000-cover sync on a fresh loop-mounted ext4,
coverd under `strace -f -T` for its sync calls, then the time spent blocked in each.

    python3 bench/syncwait.py "$(swift build -c release --show-bin-path)/coverd"

Root only (loop device). strace slows coverd several times over: read the shares, not
the seconds. CPU profiles cannot show this time; see bench/HISTORY.md (2026-11-22, the disk as the limit).
"""
import collections
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench
if os.geteuid() != 0:
    sys.exit("syncwait: needs root (a loop-mounted ext4)")
binary = sys.argv[1]
corpus_dir = bench.corpus(10000)
img = os.path.join(bench.WORK, "syncwait.img")
mnt = os.path.join(bench.WORK, "syncwait")
trace = os.path.join(bench.WORK, "syncwait.trace")
os.makedirs(mnt, exist_ok=True)
subprocess.run(["truncate", "-s", "12G", img], check=True)
dev = None
try:
    subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["mount", dev, mnt], check=True)
    bench.RUNS = mnt
    nginx = bench.Nginx(corpus_dir)
    try:
        urls = [f"{nginx.base}/{n}" for n in sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))]
        records = os.path.join(mnt, "albums")
        bench.write_records(records, urls)
        cache = bench.fresh("cache")
        subprocess.run(["sync"])
        notify = bench.NotifySocket()
        env = dict(os.environ, NOTIFY_SOCKET=notify.path)
        config = os.path.join(bench.WORK, "empty.toml")
        open(config, "w").close()
        started = time.monotonic()
        with open(os.path.join(bench.WORK, "syncwait.log"), "wb") as log:
            proc = subprocess.Popen(["strace", "-f", "-tt", "-T", "-e", "trace=syncfs,fsync,fdatasync,sync_file_range", "-o", trace,
                                     binary, "run", "--records", records, "--cache", cache, "--config", config,
                                     "--log-target", "stderr", "--concurrency", "32", "--per-host", "32"],
                                    env=env, stdout=subprocess.DEVNULL, stderr=log)
            try:
                expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
                done = notify.wait_for(lambda f: f.get("STATUS") == expected, 600)
                print(f"sync took {done - started:.2f} s (under strace)")
            finally:
                # coverd, strace's child, is stopped cleanly; strace exits with it (a SIGTERM to
                # strace itself would only detach it and leave coverd running on the mount).
                try:
                    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as handle:
                        children = [int(pid) for pid in handle.read().split()]
                except OSError:
                    children = []
                for pid in children:
                    os.kill(pid, 15)
                if not children:
                    proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                notify.close()
    finally:
        nginx.stop()
finally:
    if dev:
        subprocess.run(["umount", mnt])
        subprocess.run(["losetup", "-d", dev])
    os.unlink(img)
calls = collections.defaultdict(list)
for line in open(trace):
    # Calls interrupted by another thread's are split: "name(… <unfinished ...>" then "<... name resumed>) = 0 <t>".
    m = re.match(r"(\d+)\s+(\d+):(\d+):([\d.]+) (?:<\.\.\. )?(\w+)(?:\(| resumed>).*<([\d.]+)>$", line.strip())
    if not m: continue
    t = int(m[2]) * 3600 + int(m[3]) * 60 + float(m[4])
    calls[m[5]].append((t, float(m[6]), int(m[1])))
for name, items in calls.items():
    total = sum(d for _, d, _ in items)
    print(f"{name}: {len(items)} calls, {total:.2f} s in all, longest {max(d for _, d, _ in items):.2f} s, threads {len(set(p for *_, p in items))}")
if calls.get("syncfs"):
    items = sorted(calls["syncfs"])
    span = items[-1][0] - items[0][0]
    print(f"syncfs: {span:.2f} s from the first to the last, {sum(d for _, d, _ in items):.2f} s of it inside syncfs")

"""Where a full sync waits for the disk: one 10,000-cover sync on a fresh loop-mounted ext4,
coverd under `strace -f -T` for its sync calls, then the time spent blocked in each.

    python3 bench/syncwait.py "$(swift build -c release --show-bin-path)/coverd"

Root only (loop device). strace slows coverd several times over: read the shares, not
the seconds. CPU profiles cannot show this time; see README, Performance.
"""
import collections
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench
binary = sys.argv[1]
corpus_dir = bench.corpus(10000)
img = os.path.join(bench.WORK, "syncwait.img")
mnt = os.path.join(bench.WORK, "syncwait")
os.makedirs(mnt, exist_ok=True)
subprocess.run(["truncate", "-s", "12G", img], check=True)
subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img], capture_output=True, text=True, check=True).stdout.strip()
subprocess.run(["mount", dev, mnt], check=True)
bench.RUNS = mnt
nginx = bench.Nginx(corpus_dir)
try:
    names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))
    urls = [f"{nginx.base}/{n}" for n in names]
    records = os.path.join(mnt, "albums"); bench.write_records(records, urls)
    cache = bench.fresh("cache")
    subprocess.run(["sync"])
    notify = bench.NotifySocket()
    env = dict(os.environ); env["NOTIFY_SOCKET"] = notify.path
    open(os.path.join(bench.WORK, "empty.toml"), "w").close()
    started = time.monotonic()
    proc = subprocess.Popen(["strace", "-f", "-tt", "-T", "-e", "trace=syncfs,fsync,fdatasync,sync_file_range", "-o", "/tmp/sync.trace",
                             binary, "run", "--records", records, "--cache", cache, "--config", os.path.join(bench.WORK, "empty.toml"),
                             "--log-target", "stderr", "--concurrency", "32", "--per-host", "32"], env=env,
                            stdout=subprocess.DEVNULL, stderr=open("/tmp/syncwait.log", "wb"))
    expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
    done = notify.wait_for(lambda f: f.get("STATUS") == expected, 600)
    print(f"sync took {done - started:.2f} s (under strace)")
    child = int(open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()[0])
    os.kill(child, 15); proc.wait()
finally:
    nginx.stop()
    subprocess.run(["umount", mnt]); subprocess.run(["losetup", "-d", dev]); os.unlink(img)
calls = collections.defaultdict(list)
first = last = None
for line in open("/tmp/sync.trace"):
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

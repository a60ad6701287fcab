"""The revalidation row of coverd's benchmark (contract §8): a pass over a
cached library whose server says every cover is current.

The corpus is synced once through nginx, which sends an ETag and a
Last-Modified with each cover and answers a conditional request for an
unchanged file with 304. The daemon is stopped, every index row is marked
for revalidation (as `coverd refresh --all` does while no daemon runs, and
as an outdated row is marked), and coverd is started again over the same
cache. Printed: the time from start until nginx has answered the last 304,
coverd's CPU time over that pass, the requests nginx saw (and how many were
304s), and the covers in `covers/` whose inode, size or modification time
changed, which must be none: a confirmed cover is not written.
"""
import contextlib
import os
import sqlite3
import statistics
import time


def covers_state(cache):
    """(inode, size, mtime in ns) of every cover, by name."""
    covers = os.path.join(cache, "covers")
    state = {}
    for name in os.listdir(covers):
        info = os.stat(os.path.join(covers, name))
        state[name] = (info.st_ino, info.st_size, info.st_mtime_ns)
    return state


def access_log_lines(nginx):
    with open(nginx.access_log, "rb") as handle:
        return handle.read().splitlines()


def rows(bench, binary, nginx, urls, runs):
    count = len(urls)
    records = os.path.join(bench.RUNS, "revalidation-albums")
    bench.write_records(records, urls)
    cache = bench.fresh("revalidation-cache")
    expected = f"{count} albums: {count} cached, 0 pending, 0 failed"
    with bench.running(binary, records, cache) as (_, notify):
        notify.wait_for(lambda fields: fields.get("STATUS", "").startswith(expected), 900)
    times, cpu, requests, not_modified, changed = [], [], [], [], []
    for run in range(runs):
        before = covers_state(cache)
        # Closed here, not when collected: an open file keeps the scratch filesystem from unmounting.
        with contextlib.closing(sqlite3.connect(os.path.join(cache, "index.sqlite3"))) as db:
            db.execute("UPDATE albums SET refresh = 'revalidate' WHERE state = 'cached'")
            db.commit()
        seen = len(access_log_lines(nginx))
        with bench.running(binary, records, cache) as (daemon, _):
            deadline = time.monotonic() + 900
            while True:
                lines = access_log_lines(nginx)[seen:]
                answered = sum(1 for line in lines if b'" 304 ' in line)
                if answered >= count or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            times.append(time.monotonic() - daemon.started)
            cpu.append(bench.process_cpu_seconds(daemon.pid))
        requests.append(len(lines))
        not_modified.append(answered)
        changed.append(sum(1 for name, state in covers_state(cache).items() if before.get(name) != state))
        print(f"# revalidation run {run + 1}: {times[-1]:.2f} s, {cpu[-1]:.2f} s CPU, {requests[-1]} requests "
              f"({not_modified[-1]} answered 304), {changed[-1]} covers changed", flush=True)
    return [
        (f"revalidation pass over {count:,} cached covers, every one answered 304: start to the last 304",
         f"{statistics.median(times):.2f} s", "", "", ""),
        ("the same: coverd's CPU time; requests (304s); covers written", f"{statistics.median(cpu):.2f} s; "
         f"{max(requests)} ({min(not_modified)}); {max(changed)}", "", "", f"{count} ({count}); 0"),
    ]

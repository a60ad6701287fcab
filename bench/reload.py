#!/usr/bin/env python3
"""How long a record dropped just after a reload waits, when every cached cover was touched.

`python3 bench/reload.py BINARY [--count N]` syncs N covers of the benchmark's corpus
(served by nginx on 127.0.0.1), gives every cached cover a new modification time (as a
copy without its times would), sends SIGHUP, and as soon as the reload's READY=1 comes
drops one record naming a cover not yet cached. It prints how long after SIGHUP READY=1
came, and how long the dropped record's PNG took to appear: a reload that reads and inflates the touched
covers on the coordinator's queue holds that record up for as long. Timings are
printed, never asserted.
"""
import argparse
import json
import os
import shutil
import signal
import sys
import time

import bench


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--count", type=int, default=3000)
    args = parser.parse_args()
    if not 1 <= args.count < 10_000:
        parser.error("--count must be 1 to 9,999: one more cover of the corpus is the dropped record's")
    os.makedirs(bench.WORK, exist_ok=True)
    corpus = bench.corpus(10_000)
    nginx = bench.Nginx(corpus)
    root = os.path.join(bench.WORK, "reload")
    try:
        shutil.rmtree(root, ignore_errors=True)
        records, cache = os.path.join(root, "albums"), os.path.join(root, "cache")
        names = sorted(n for n in os.listdir(corpus) if n.endswith(".png"))
        bench.write_records(records, [f"{nginx.base}/{name}" for name in names[:args.count]], files=10)
        with bench.running(os.path.abspath(args.binary), records, cache, ["--concurrency", "32", "--per-host", "32"]) as (daemon, notify):
            expected = f"{args.count} albums: {args.count} cached, 0 pending, 0 failed"
            notify.wait_for(lambda fields: fields.get("STATUS") == expected, 600)
            covers = os.path.join(cache, "covers")
            for name in os.listdir(covers):
                os.utime(os.path.join(covers, name), None)
            watcher = bench.Inotify(covers)
            try:
                sent = time.monotonic()
                os.kill(daemon.pid, signal.SIGHUP)
                # The reload's own READY=1, not a late one from the start.
                notify.wait_for(lambda fields: fields.get("RELOADING") == "1", 120)
                ready = notify.wait_for(lambda fields: fields.get("READY") == "1", 120) - sent
                with open(os.path.join(records, "dropped.json"), "w") as handle:
                    json.dump({"id": "dropped", "title": "Dropped", "artist": "Bench",
                               "cover_url": f"{nginx.base}/{names[args.count]}"}, handle)
                dropped = time.monotonic()
                landed = watcher.wait_for("dropped.png", 600) - dropped
            finally:
                watcher.close()
        print(f"{args.count} touched covers: READY=1 {ready * 1000:.1f} ms after SIGHUP; "
              f"a record dropped then was cached {landed * 1000:.1f} ms later; exit status {daemon.status}")
    finally:
        nginx.stop()
        shutil.rmtree(root, ignore_errors=True)
    if daemon.status != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()

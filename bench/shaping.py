"""Loopback shaped to a link's rate with a token bucket (`tc qdisc … tbf`), for the
timed runs only: both programs then fetch at most that many bits a second, as they
would from a real server, instead of at the speed of the kernel's memory copies.

The bucket is the root queueing discipline of `lo`, so it shapes every loopback
connection while it is there: nothing else should run meanwhile, and it must go
whatever happens. `shaped_loopback` removes it on any exception and on SIGTERM
(turned into SystemExit for the while); only SIGKILL leaves it, and the next
use says so rather than replace a queueing discipline it did not put there.
"""
import contextlib
import signal
import subprocess
import sys


class ShapingUnavailable(Exception):
    """tc is missing, not root, or the kernel has no tbf: the shaped rows are not measured."""


def _show():
    try:
        shown = subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True)
    except FileNotFoundError:
        raise ShapingUnavailable("tc is not installed (iproute2)")
    if shown.returncode != 0:
        raise ShapingUnavailable(f"tc qdisc show failed: {shown.stderr.strip()}")
    return shown.stdout.strip()


@contextlib.contextmanager
def shaped_loopback(rate):
    """Within the block, lo passes at most `rate` (tc syntax: 1gbit, 500mbit). A burst of
    1 MB (above lo's 64 KiB segments) and 100 ms of queue, so the bucket sets the pace and
    nothing is dropped for want of room."""
    shown = _show()
    if not shown.startswith("qdisc noqueue"):
        raise ShapingUnavailable(f"lo already has a queueing discipline, left alone: {shown}"
                                 " (if a killed bench left it: tc qdisc del dev lo root)")
    added = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "1mb", "latency", "100ms"],
                           capture_output=True, text=True)
    if added.returncode != 0:
        raise ShapingUnavailable(f"tc qdisc add … tbf failed: {added.stderr.strip()}")
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"]).returncode != 0:
            print("# could not take the token bucket off lo: remove it with `tc qdisc del dev lo root`", flush=True)

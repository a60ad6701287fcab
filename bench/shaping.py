"""Loopback shaped to a link's rate with a token bucket (`tc qdisc … tbf`), for the
timed runs only: both programs then get at most that many bits a second through
`lo`, instead of the speed of the kernel's memory copies. It is not the Internet:
the round trips stay loopback's (well under a millisecond), and the bucket carries
the requests and acknowledgements as well as the covers.

The bucket is the root queueing discipline of `lo`, so it shapes every loopback
connection while it is there: nothing else should run meanwhile, and it must go
whatever happens. SIGTERM, SIGHUP (unless ignored, as under nohup) and SIGINT
are blocked while it is added and taken off, and raise SystemExit (or
KeyboardInterrupt) in between, so that only SIGKILL (or the death of the
machine) can leave it; `check_unshaped`, called as
the benchmarks start, then refuses to time anything through it.
"""
import contextlib
import signal
import subprocess
import sys

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class ShapingUnavailable(Exception):
    """The rows cannot be measured: tc is missing or fails (not root, no tbf in the
    kernel, a rate tc does not understand), or lo already has a queueing discipline."""


def _show(statistics=False):
    """`tc qdisc show dev lo`, or None without tc."""
    try:
        shown = subprocess.run(["tc", *(["-s"] if statistics else []), "qdisc", "show", "dev", "lo"],
                               capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if shown.returncode != 0:
        raise ShapingUnavailable(f"tc qdisc show failed: {shown.stderr.strip()}")
    return shown.stdout.strip()


def check_unshaped():
    """Exits if lo has a root queueing discipline (one a killed benchmark left, say): every
    loopback figure would be timed through it. Nothing to check without tc."""
    try:
        shown = _show()
    except ShapingUnavailable as error:
        print(f"# cannot tell whether lo is shaped: {error}", flush=True)
        return
    if shown is not None and not shown.startswith("qdisc noqueue"):
        sys.exit(f"lo has a queueing discipline, so loopback would not run at its own speed: {shown!r}\n"
                 "if a killed benchmark left it: tc qdisc del dev lo root")


def _exit_on(signum, frame):
    sys.exit(128 + signum)


@contextlib.contextmanager
def shaped_loopback(rate):
    """Within the block, lo passes at most `rate` (tc syntax: 1gbit, 500mbit). A burst of
    1 MiB (above lo's 64 KiB segments) and up to 100 ms of queue; the packets the bucket
    dropped, if any, are printed when it is taken off.

    The signals that would stop the script are blocked from before the bucket is added
    until it is off again, but for the block itself, where they raise SystemExit (or
    KeyboardInterrupt). The mask is the main thread's only, and a signal can reach Python
    through another thread, so safety does not rest on it: the `tc qdisc add` itself runs
    inside the `try` whose `finally` takes the bucket off."""
    shown = _show()
    if shown is None:
        raise ShapingUnavailable("tc is not installed (Debian: iproute2)")
    if not shown.startswith("qdisc noqueue"):
        raise ShapingUnavailable(f"lo already has a queueing discipline, left alone: {shown!r}")
    blocked = {*SIGNALS, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    previous = {}
    try:
        for signum in SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:  # SIGHUP under nohup stays ignored.
                previous[signum] = signal.signal(signum, _exit_on)
        try:
            added = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "1mb", "latency", "100ms"],
                                   capture_output=True, text=True)
            if added.returncode != 0:
                raise ShapingUnavailable(f"tc qdisc add … tbf rate {rate} failed: {added.stderr.strip()}")
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
            try:
                yield
            finally:
                signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        finally:
            _take_off()
    finally:
        try:
            # A signal that came while blocked is delivered here, to our handler: SystemExit.
            # With several pending, the next may interrupt the loop below and leave a handler
            # of ours in place; the script is exiting then anyway.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def _take_off():
    """Removes the bucket, if it is there (the caller has the stopping signals blocked). If it
    cannot, every later row would be timed through it: SystemExit, which the rows' `except
    Exception` lets through, rather than measure them."""
    try:
        stats = _show(statistics=True) or ""
    except ShapingUnavailable as error:
        stats = f"no statistics ({error})"
    if stats.startswith("qdisc noqueue"):
        return  # Never added (tc add failed), or taken off by someone else meanwhile.
    dropped = next((line.strip() for line in stats.splitlines() if "dropped" in line), stats)
    print(f"# token bucket on lo: {dropped}", flush=True)
    removed = subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True, text=True)
    if removed.returncode == 0:
        return
    try:
        gone = (_show() or "").startswith("qdisc noqueue")
    except ShapingUnavailable:
        gone = False
    if not gone:
        sys.exit(f"could not take the token bucket off lo ({removed.stderr.strip()}): "
                 "remove it with `tc qdisc del dev lo root`")

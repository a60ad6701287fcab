#!/usr/bin/env python3
"""coverd's benchmark: `make bench` (or `python3 bench/bench.py --help`).

In one run, on loopback, against nginx serving a generated corpus of PNG covers:
  1. full sync: coverd from process start to all N cached, against
     `curl -Z --parallel-max 32` fetching the same URLs, and against `curl -Z`
     followed by `pngcheck` of every file on every core (the same work: each PNG
     checked in full); programs alternate run by run, medians and ratios; then the
     same over loopback shaped to a 1 Gbit/s link (bench/linkrate.py);
  2. peak RSS of coverd during that sync;
  3. the full sync over HTTPS: nginx with TLS and HTTP/2 and a test CA, against
     `curl -Z --cacert` at the same parallelism (bench/https.py);
  4. drop-to-PNG latency: records dropped one at a time into an idle daemon;
  5. idle cost: CPU used by an idle daemon over 30 s;
  6. scale: 100,000 cached albums in 100 files: start to READY=1, RSS,
     requests made, and `coverd status --json` time; then the same library
     with 128-character ids (bench/longids.py);
  7. JPEG conversion: a JPEG corpus synced and converted to PNG, against
     `curl -Z` then `djpeg | pnmtopng -compression 6` on every core, with the
     PNG bytes each wrote (bench/conversion.py);
  8. lookups and revalidation (bench/lookup.py, bench/revalidation.py);
  9. peak RSS of the PNG and JPEG syncs again with the runs on tmpfs.
Timings are printed, never asserted; every run's outputs are checked, and a bad
one fails its row and the bench's exit status. `--check` runs each kind of run
small and only verifies its outputs (used by `make test`).
"""
import argparse
import contextlib
import ctypes
import json
import os
import random
import resource
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import zlib

import conversion
import https
import kept
import linkrate
import longids
import lookup
import revalidation
import shaping

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(TOP, ".build-bench")


# -- corpus --------------------------------------------------------------------

# Photo-like statistics: each byte a small step from its left neighbour (PNG's Sub
# filter), deflated at zlib's default level. Like real cover photos this packs to
# about half the raw size, so inflating it during validation costs what it would
# for real covers (stored noise would make validation look free).
STEPS = bytes(((value % 15) - 7) & 0xFF for value in range(256))
COMPRESSED_FRACTION = 0.5


def png_bytes(width, height):
    """An RGB PNG with photo-like entropy, deflated at level 6."""
    noise = os.urandom(width * height * 3).translate(STEPS)
    stride = width * 3
    rows = b"".join(b"\x01" + noise[y * stride:(y + 1) * stride] for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")


def write_cover(job):
    path, side = job
    with open(path, "wb") as handle:
        handle.write(png_bytes(side, side))


def corpus(count, low_kb=20, high_kb=250, name=None):
    """N distinct PNGs between roughly low and high KB, generated once and kept."""
    def jobs(directory):
        rng = random.Random(count)
        sides = (max(4, int((rng.randrange(low_kb * 1024, high_kb * 1024) / COMPRESSED_FRACTION / 3) ** 0.5)) for _ in range(count))
        return [(os.path.join(directory, f"c{index:06d}.png"), side) for index, side in enumerate(sides)]
    directory = os.path.join(WORK, name or f"corpus-photo-{count}-{low_kb}-{high_kb}")
    return kept.kept_corpus(directory, "cover PNGs", jobs, write_cover, 64)


# -- servers and processes ----------------------------------------------------------

def nginx_version():
    """nginx's version as a tuple, from `nginx -v` (which prints on stderr)."""
    text = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr
    return tuple(int(part) for part in text.strip().rsplit("/", 1)[1].split(".")[:3])


class Nginx:
    """nginx on a port of its own serving `root`; with `tls` (certificate, key), over TLS with HTTP/2,
    each request logged with its protocol and connection number so a run can tell how it was served."""

    def __init__(self, root, jpeg_root=None, tls=None, name="nginx"):
        self.prefix = os.path.join(WORK, name)
        os.makedirs(os.path.join(self.prefix, "logs"), exist_ok=True)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.access_log = os.path.join(self.prefix, "logs", "access.log")
        config = os.path.join(self.prefix, "nginx.conf")
        user = "user root;" if os.geteuid() == 0 else ""
        with open(config, "w") as handle:
            handle.write(f"""{user}
worker_processes 1;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    {self._log(tls)}
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 120;
    types {{ image/png png; image/jpeg jpg; }}
    server {{
        {self._listen(tls)}
        root {root};
        {f"location /jpeg/ {{ alias {jpeg_root}/; }}" if jpeg_root else ""}
    }}
}}
""")
        subprocess.run(["nginx", "-c", config, "-p", self.prefix], check=True)
        self.base = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        wait_until(lambda: self._up(), 10, "nginx")

    def _log(self, tls):
        # The TLS server's lines name each request's protocol and connection; the plain server
        # keeps the combined format, whose status field revalidation.py reads.
        if not tls:
            return f"access_log {self.access_log};"
        return f"log_format bench '$status $server_protocol $ssl_protocol $connection';\n    access_log {self.access_log} bench;"

    def _listen(self, tls):
        if not tls:
            return f"listen 127.0.0.1:{self.port};"
        certificate, key = tls
        # nginx 1.25.1 replaced `listen … http2` with the `http2` directive.
        http2 = f"listen 127.0.0.1:{self.port} ssl;\n        http2 on;" if nginx_version() >= (1, 25, 1) \
            else f"listen 127.0.0.1:{self.port} ssl http2;"
        # TLS 1.3 named, since nginx before 1.23.4 leaves it out of its default protocols.
        return (f"{http2}\n        ssl_certificate {certificate};\n        ssl_certificate_key {key};\n"
                f"        ssl_protocols TLSv1.2 TLSv1.3;")

    def log_lines(self, start=0):
        """The access log's lines from byte `start` on, and the offset after them."""
        try:
            with open(self.access_log, "rb") as handle:
                handle.seek(start)
                data = handle.read()
        except FileNotFoundError:
            return [], start
        return data.decode().splitlines(), start + len(data)

    def _up(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def requests(self):
        try:
            with open(self.access_log, "rb") as handle:
                return sum(1 for _ in handle)
        except FileNotFoundError:
            return 0

    def stop(self):
        subprocess.run(["nginx", "-c", os.path.join(self.prefix, "nginx.conf"), "-p", self.prefix, "-s", "stop"],
                       stderr=subprocess.DEVNULL)


def wait_until(predicate, timeout, what, interval=0.01):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class NotifySocket:
    """A NOTIFY_SOCKET for coverd: READY=1 and STATUS= arrive here, as with systemd.

    A thread reads every datagram as it arrives, as systemd does: an unread
    socket fills after a few messages and then blocks the sender's sd_notify."""

    def __init__(self):
        self.path = os.path.join(WORK, f"notify-{os.getpid()}.sock")
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages = []  # (arrival time, fields)
        self.last_fields = {}
        self.seen = 0
        # The daemon whose messages these are (set by Coverd): waits give up when it exits.
        self.process = None
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                data = self.sock.recv(65536).decode()
            except OSError:
                return
            now = time.monotonic()
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            with self.changed:
                self.messages.append((now, fields))
                self.changed.notify_all()

    def wait_for(self, predicate, timeout):
        """Waits until a message not yet looked at satisfies `predicate(fields)`; returns its arrival time.
        Gives up within a second of `self.process` exiting."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                while self.seen < len(self.messages):
                    arrived, fields = self.messages[self.seen]
                    self.seen += 1
                    if predicate(fields):
                        self.last_fields = fields
                        return arrived
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"coverd exited with status {self.process.returncode} before the expected sd_notify message")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("no matching sd_notify message")
                self.changed.wait(min(remaining, 1.0))

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.reader.join(timeout=5)
        os.unlink(self.path)


class Inotify:
    """IN_MOVED_TO events for one directory, to time covers being renamed into place."""
    IN_MOVED_TO = 0x80

    def __init__(self, directory):
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(0)
        if self.fd < 0 or self.libc.inotify_add_watch(self.fd, directory.encode(), self.IN_MOVED_TO) < 0:
            error = ctypes.get_errno()
            if self.fd >= 0:
                os.close(self.fd)
            raise OSError(error, f"inotify on {directory}: {os.strerror(error)}")

    def wait_for(self, name, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # Wait no longer than the deadline: a cover that never arrives is an error, not a hang.
            if not select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                break
            count = os.read(self.fd, 65536)
            now = time.monotonic()
            offset = 0
            while offset < len(count):
                _, _, _, length = struct.unpack_from("iIII", count, offset)
                entry = count[offset + 16:offset + 16 + length].rstrip(b"\0").decode()
                offset += 16 + length
                if entry == name:
                    return now
        raise TimeoutError(name)

    def close(self):
        os.close(self.fd)


def cpu_seconds(pid):
    """User + system CPU time of `pid`, threads that have exited included (clock-tick resolution, 10 ms)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 of proc(5) (utime, stime); the split dropped the first two.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minor_faults(pid):
    """Minor page faults `pid` has taken (field 10 of proc(5)'s stat)."""
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[7])


def process_cpu_seconds(pid):
    """CPU time of `pid` from its process CPU-time clock: nanosecond resolution, and, unlike per-thread
    schedstat, it keeps the time of threads that have ended (Dispatch ends idle workers after a few
    seconds). The clock id is the kernel's encoding of clock_getcpuclockid(3): (~pid << 3) | CPUCLOCK_SCHED."""
    return time.clock_gettime(((~pid) << 3) | 2)


def idle_cpu(pid, seconds):
    """CPU used by `pid` over `seconds`. Not the tick counts of /proc/<pid>/stat (1/CLK_TCK s each, user and
    system rounded down apart), where a few microseconds that cross a tick boundary read as a whole tick."""
    before = process_cpu_seconds(pid)
    time.sleep(seconds)
    return process_cpu_seconds(pid) - before


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Coverd:
    def __init__(self, binary, records, cache, extra=(), notify=None, profiled_run=None, config=None):
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        env.pop("WATCHDOG_USEC", None)
        if notify:
            env["NOTIFY_SOCKET"] = notify.path
        if config is None:
            config = os.path.join(WORK, "empty.toml")
            open(config, "w").close()
        self.log_path = os.path.join(WORK, "coverd.log")
        self.log = open(self.log_path, "ab")
        self.log_start = self.log.tell()
        self.started = time.monotonic()
        command = [binary, "run", "--records", records, "--cache", cache, "--config", config, "--log-target", "stderr",
                   *extra, *EXTRA_ARGS]
        # BENCH_PERF=<file>: record the full sync's CPU profile (for bench/README.md's profile
        # section), one file per run (<file>.<n>). perf cannot attach to a running process
        # here, so it starts coverd itself.
        profile = None
        if os.environ.get("BENCH_PERF") and profiled_run is not None:
            profile = f"{os.environ['BENCH_PERF']}.{profiled_run}"
        if profile:
            command = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-g", "-o", profile, "--", *command]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        if notify:
            notify.process = self.process  # its waits give up when this daemon exits
        self.profiled = bool(profile)
        self.status = None

    @property
    def pid(self):
        if not self.profiled:
            return self.process.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as handle:
                children = handle.read().split()
            if children:
                return int(children[0])
            time.sleep(0.01)
        raise RuntimeError("perf did not start coverd")

    def wait_for_log(self, text, timeout):
        """Seconds from the start until this run's log has a line containing `text`; None if it
        did not within `timeout` (or the daemon exited first)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            with open(self.log_path, "rb") as handle:
                handle.seek(self.log_start)
                if text.encode() in handle.read():
                    return time.monotonic() - self.started
            time.sleep(0.01)
        return None

    def stop(self):
        """SIGTERM, then the exit status; a daemon that does not stop within 60 s is killed and
        reported. Safe to call twice."""
        if self.status is not None:
            return self.status
        try:
            if self.process.poll() is None:
                os.kill(self.pid, signal.SIGTERM)
            try:
                self.status = self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, RuntimeError):
                    os.kill(self.pid, signal.SIGKILL)  # coverd itself, also under perf
                self.process.kill()
                self.status = self.process.wait()
                raise RuntimeError("coverd did not stop within 60 s of SIGTERM; killed")
        finally:
            self.log.close()
        return self.status


@contextlib.contextmanager
def running(binary, records, cache, extra=(), profiled_run=None, config=None):
    """coverd on a NOTIFY_SOCKET of its own, as (daemon, notify); however the block ends, the
    daemon is stopped (its status in `daemon.status`) and the socket closed."""
    notify = NotifySocket()
    try:
        daemon = Coverd(binary, records, cache, extra, notify, profiled_run=profiled_run, config=config)
        try:
            yield daemon, notify
        finally:
            daemon.stop()
    finally:
        notify.close()


def write_records(directory, urls, files=100, ids=None):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    per_file = (len(urls) + files - 1) // files
    for file in range(files):
        chunk = urls[file * per_file:(file + 1) * per_file]
        if not chunk:
            break
        albums = [{"id": ids[file * per_file + i] if ids else f"a{file * per_file + i:06d}",
                   "title": f"Album {file * per_file + i}", "artist": "Bench", "cover_url": url}
                  for i, url in enumerate(chunk)]
        with open(os.path.join(directory, f"r{file:03d}.json"), "w") as handle:
            json.dump(albums, handle)


# -- measurements ----------------------------------------------------------------

# Every run writes into directories of its own on a fresh ext4 filesystem
# (a loop-mounted image, when run as root), and nothing is deleted until the
# end: on a filesystem that just lost thousands of files, ext4's inode
# allocator crawls past "recently deleted" inodes for a while, which would
# time the filesystem's history instead of the programs.
RUNS = os.path.join(WORK, f"runs-{os.getpid()}")
EXTRA_ARGS = os.environ.get("COVERD_BENCH_ARGS", "").split()


class ScratchFilesystem:
    """A fresh filesystem mounted at RUNS: ext4 on a loop device whose image lives in
    `image_directory` (tmpfs with BENCH_TMPFS), or, where that cannot be had, nothing
    (runs then write to the working directory's filesystem, as printed)."""

    def __init__(self, gigabytes, use=True, image_directory=WORK, in_memory=None):
        self.image = os.path.join(image_directory, "scratch.img")
        self.mounted = False
        self.in_memory = False
        self.device = None
        self.label = f"the working directory's filesystem ({filesystem_type(WORK)})"
        if not use:
            return
        if os.geteuid() != 0 or os.environ.get("BENCH_NO_SCRATCH"):
            print("# runs write to the working directory's filesystem (less repeatable)", flush=True)
            return
        subprocess.run(["umount", RUNS], stderr=subprocess.DEVNULL)
        if os.path.exists(self.image):
            os.unlink(self.image)
        with open(self.image, "wb") as handle:
            handle.truncate(gigabytes << 30)
        os.makedirs(RUNS, exist_ok=True)
        if os.environ.get("BENCH_TMPFS") if in_memory is None else in_memory:
            # Memory only: syncs cost nothing, so this measures the programs without the disk.
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={gigabytes}g", "tmpfs", RUNS], check=True)
            self.mounted = True
            self.in_memory = True
            self.label = "tmpfs"
            return
        try:
            subprocess.run(["mkfs.ext4", "-q", "-F", self.image], check=True)
            # Direct I/O on the loop device: the image's pages are not cached twice.
            attached = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", self.image], capture_output=True, text=True)
            if attached.returncode != 0:
                # No loop devices (a container, say): measure on the working directory's filesystem instead.
                print(f"# no loop device ({attached.stderr.strip()}); runs write to the working directory's filesystem", flush=True)
                os.unlink(self.image)
                return
            self.device = attached.stdout.strip()
            subprocess.run(["mount", self.device, RUNS], check=True)
            self.label = "ext4 with its journal, loop device"
        except BaseException:
            # Undo what was made, so a failed start leaves no image or loop device behind.
            if self.device:
                subprocess.run(["losetup", "-d", self.device], check=False)
            if os.path.exists(self.image):
                os.unlink(self.image)
            raise
        self.mounted = True

    def close(self):
        """Unmounts and deletes everything; False (and all left in place) when it is still in use."""
        if self.mounted and subprocess.run(["umount", RUNS]).returncode != 0:
            # Something still uses it: leave everything in place rather than delete files under it.
            print(f"# cannot unmount {RUNS}; it and {self.image} are left in place", flush=True)
            return False
        if self.mounted and self.device:
            subprocess.run(["losetup", "-d", self.device], check=False)
        if os.path.exists(self.image):
            os.unlink(self.image)
        shutil.rmtree(RUNS, ignore_errors=True)
        return True


def filesystem_type(path):
    return subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True).stdout.strip()


# What the runs write on, for the rows' labels (set by main, changed by the tmpfs pass).
FILESYSTEM = "the working directory's filesystem"


def filesystem_label():
    return FILESYSTEM


def fresh(name):
    path = os.path.join(RUNS, f"{name}-{time.monotonic_ns()}")
    os.makedirs(path)
    return path


def page_cache_mib():
    """The page cache's size now (Cached in /proc/meminfo), in MiB."""
    with open("/proc/meminfo") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("Cached:")) / 1024


def machine_cpu():
    """Seconds all cores have spent busy so far, from /proc/stat (iowait counts as idle)."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


LAST_MACHINE_BUSY = 0.0
LAST_FAULTS = 0


def run_coverd_sync(binary, urls, parallel, run=None, config=None, records_name="albums"):
    records = os.path.join(RUNS, records_name)
    cache = fresh("cache")
    if not os.path.exists(records):
        write_records(records, urls)
    subprocess.run(["sync"])
    expected = f"{len(urls)} albums: {len(urls)} cached, 0 pending, 0 failed"
    global LAST_CPU, LAST_CACHE_GROWTH
    cached_before = page_cache_mib()
    global LAST_MACHINE_BUSY
    busy_before = machine_cpu()
    # Stopped however the wait ends: a daemon left running would keep the scratch filesystem busy.
    with running(binary, records, cache, ["--concurrency", str(parallel), "--per-host", str(parallel)], run, config) as (daemon, notify):
        done = notify.wait_for(lambda f: f.get("STATUS") == expected, 600)
        LAST_MACHINE_BUSY = machine_cpu() - busy_before
        elapsed = done - daemon.started
        rss = status_kb(daemon.pid, "VmHWM")
        LAST_CPU = cpu_seconds(daemon.pid)
        global LAST_FAULTS
        LAST_FAULTS = minor_faults(daemon.pid)
        LAST_CACHE_GROWTH = page_cache_mib() - cached_before
    return elapsed, rss, daemon.status, cache


def run_curl(urls, parallel, extra=(), then=None, suffix=".png"):
    """curl -Z over `urls` into a fresh directory (<index>.<suffix> each); seconds until it exits, or,
    with `then`, until `then(directory)` has also returned (a second stage of the same pipeline, timed with it)."""
    out = fresh("curl")
    config = os.path.join(out, ".curl.cfg")
    with open(config, "w") as handle:
        for index, url in enumerate(urls):
            handle.write(f'url = "{url}"\noutput = "{out}/{index:06d}{suffix}"\n')
    subprocess.run(["sync"])
    cached_before = page_cache_mib()
    started = time.monotonic()
    busy_before = machine_cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["curl", "-Z", "--parallel-max", str(parallel), "--fail", "-s", "--no-progress-meter", *extra, "-K", config],
                   check=True, stdout=subprocess.DEVNULL)
    global LAST_CURL_DOWNLOAD
    LAST_CURL_DOWNLOAD = time.monotonic() - started
    if then is not None:
        then(out)
    elapsed = time.monotonic() - started
    global LAST_MACHINE_BUSY
    LAST_MACHINE_BUSY = machine_cpu() - busy_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    global LAST_CURL_CACHE_GROWTH
    LAST_CURL_CACHE_GROWTH = page_cache_mib() - cached_before
    # What curl leaves in the page cache, made durable: the floor coverd's fsyncs pay on a real disk.
    subprocess.run(["sync", "-f", out], check=True)
    global LAST_CURL_CPU, LAST_CURL_SYNCED, LAST_CURL_DIR
    LAST_CURL_DIR = out
    LAST_CURL_SYNCED = time.monotonic() - started
    LAST_CURL_CPU = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return elapsed


def warm_up(urls, corpus_dir):
    """nginx's first connection made and the corpus read into the page cache, so that no
    timed run pays for either."""
    subprocess.run(["curl", "--fail", "-s", "-o", "/dev/null", urls[0]], check=True)
    for name in os.listdir(corpus_dir):
        with open(os.path.join(corpus_dir, name), "rb") as handle:
            while handle.read(1 << 20):
                pass


def copy_then_sync(corpus_dir, name="floor"):
    """(seconds to copy the corpus, already in memory, onto the runs' filesystem, seconds the
    `sync -f` after it takes): with no network, what the disk alone needs for the bytes coverd
    must make durable. `make bench` counts both; `ab.py --disk` only the sync."""
    copy = os.path.join(fresh(name), "covers")
    for entry in os.listdir(corpus_dir):  # In memory, as nginx serves it.
        with open(os.path.join(corpus_dir, entry), "rb") as handle:
            while handle.read(1 << 20):
                pass
    subprocess.run(["sync"])
    started = time.monotonic()
    subprocess.run(["cp", "-r", corpus_dir, copy], check=True)
    copied = time.monotonic()
    subprocess.run(["sync", "-f", copy], check=True)
    # Kept, like every run's covers, until the scratch filesystem goes: a mass deletion
    # would slow the next run.
    return copied - started, time.monotonic() - copied


def disk_floor(corpus_dir):
    """Seconds to copy the corpus from memory onto the runs' filesystem and make it durable."""
    return sum(copy_then_sync(corpus_dir))


LAST_CPU = 0.0
LAST_CURL_CPU = 0.0
LAST_CURL_DOWNLOAD = 0.0
LAST_CURL_SYNCED = 0.0
LAST_CURL_DIR = None
LAST_CACHE_GROWTH = 0.0
LAST_CURL_CACHE_GROWTH = 0.0


def verify_curl(out, urls, corpus_dir):
    """Files curl wrote that are missing or differ from the corpus: the baseline must really fetch the covers."""
    bad = 0
    for index, url in enumerate(urls):
        with open(os.path.join(corpus_dir, url.rsplit("/", 1)[1]), "rb") as source:
            expected = source.read()
        try:
            with open(os.path.join(out, f"{index:06d}.png"), "rb") as fetched:
                bad += fetched.read() != expected
        except FileNotFoundError:
            bad += 1
    return bad


def pngcheck_all(directory):
    """`pngcheck -q` over every PNG in `directory`, one process per core at a time, in batches so both
    cores stay busy to the end. pngcheck inflates every image in full, the check coverd makes of
    each PNG it stores. Any file it finds fault with fails the run."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(".png"))
    result = subprocess.run(["xargs", "-0", "-P", str(os.cpu_count() or 1), "-n", "50", "pngcheck", "-q"],
                            input="\0".join(names).encode(), cwd=directory, capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"pngcheck found fault with the covers in {directory} (xargs status {result.returncode}): "
                           f"{(result.stdout + result.stderr).decode(errors='replace')[:500]}")


def verify_cache(cache, urls, corpus_dir):
    bad = 0
    for index, url in enumerate(urls):
        name = url.rsplit("/", 1)[1].split("?")[0]
        with open(os.path.join(corpus_dir, name), "rb") as source:
            expected = source.read()
        try:
            with open(os.path.join(cache, "covers", f"a{index:06d}.png"), "rb") as stored:
                bad += stored.read() != expected
        except FileNotFoundError:
            bad += 1
    return bad


def latency(binary, nginx, corpus_dir, count=200):
    records = os.path.join(WORK, "latency", "albums")
    cache = os.path.join(WORK, "latency", "cache")
    shutil.rmtree(os.path.join(WORK, "latency"), ignore_errors=True)
    os.makedirs(records)
    with running(binary, records, cache) as (daemon, notify):
        notify.wait_for(lambda f: f.get("READY") == "1", 60)
        watcher = Inotify(os.path.join(cache, "covers"))
        try:
            names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))[:count]
            samples = []
            for index, name in enumerate(names):
                path = os.path.join(records, f"l{index:04d}.json")
                with open(path, "w") as handle:
                    json.dump({"id": f"lat{index:04d}", "title": f"Latency {index}", "artist": "Bench",
                               "cover_url": f"{nginx.base}/{name}?latency"}, handle)
                closed = time.monotonic()  # right after close(): the record is complete now
                samples.append(watcher.wait_for(f"lat{index:04d}.png", 30) - closed)
        finally:
            watcher.close()
        # Idle: nothing to do for 30 s; no watchdog (no WATCHDOG_USEC).
        time.sleep(1)
        idle = idle_cpu(daemon.pid, 30)
    samples.sort()
    return samples[len(samples) // 2], samples[int(len(samples) * 0.99) - 1], idle


def drop_page_cache(what):
    """As after a boot: nothing of coverd, its libraries, the records or the index in memory.
    False (and a note) where the page cache cannot be dropped (not root)."""
    subprocess.run(["sync"])
    try:
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("3\n")
        return True
    except OSError as error:
        print(f"# {what}: cannot drop the page cache ({error.strerror}); no cold-start row", flush=True)
        return False


def scale(binary, nginx, corpus_dir, albums=100_000, files=100):
    base = os.path.join(WORK, "scale")
    records = os.path.join(base, "albums")
    cache = os.path.join(base, "cache")
    names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))
    marker = os.path.join(base, f".cached-{albums}")
    urls = [f"{nginx.base}/{names[i % len(names)]}?scale={i}" for i in range(albums)]
    if not os.path.exists(marker):
        print(f"# scale: first sync of {albums} albums (setup, not measured)", flush=True)
        shutil.rmtree(base, ignore_errors=True)
        write_records(records, urls, files)
        with running(binary, records, cache, ["--concurrency", "32", "--per-host", "32"]) as (daemon, notify):
            notify.wait_for(lambda f: f.get("STATUS") == f"{albums} albums: {albums} cached, 0 pending, 0 failed", 3600)
        open(marker, "w").close()
    before = nginx.requests()
    cold = None
    if drop_page_cache("scale"):
        cold = cached_start(binary, records, cache, albums, settle=False)

    def status_seconds():
        started = time.monotonic()
        output = subprocess.run([binary, "status", "--json", "--cache", cache], capture_output=True, check=True)
        elapsed = time.monotonic() - started
        json.loads(output.stdout)
        return elapsed

    # A restart (systemctl restart, an upgrade): the page cache holds what the last run read.
    ready, rss, status_time, checked = cached_start(binary, records, cache, albums, while_running=status_seconds)
    return ready, checked, cold, rss, nginx.requests() - before, status_time


def seconds_or_none(value):
    return "never logged" if value is None else f"{value:.2f} s"


# The line coverd logs once it has looked at every cover the index lists as cached (the check starts as the first scan ends).
CHECKED_LINE = "covers the index lists as cached in"


def cached_start(binary, records, cache, albums, settle=True, while_running=None):
    """One start over a library of `albums` cached albums: seconds to READY=1, peak RSS (KiB)
    until READY (or until every album is reported cached, with `settle`) and the check of the
    cached covers after it, what `while_running` returned, called with the daemon still up,
    and seconds from the start until that check ended (None if it never did)."""
    with running(binary, records, cache) as (daemon, notify):
        ready = notify.wait_for(lambda f: f.get("READY") == "1", 120) - daemon.started
        if settle:
            settled = f"{albums} albums: {albums} cached, 0 pending, 0 failed"
            if notify.last_fields.get("STATUS") != settled:
                notify.wait_for(lambda f: f.get("STATUS") == settled, 120)
        # Logged once the check is over; a library with no cover cached has no check and no line.
        checked = daemon.wait_for_log(CHECKED_LINE, 30)
        rss = status_kb(daemon.pid, "VmHWM")
        extra = while_running() if while_running else None
    return ready, rss, extra, checked


# -- main -----------------------------------------------------------------------------

def release_binary():
    # Built by `make release`, so that its flags (RELEASE_FLAGS: statically linked) are written in one place.
    subprocess.run(["make", "-C", TOP, "release"], check=True, stdout=subprocess.DEVNULL)
    path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=TOP, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "coverd")


def sync_rows(binary, urls, corpus_dir, parallel, runs, scratch, with_pngcheck):
    """The full sync's rows: coverd against curl -Z alone and, with `with_pngcheck`, against curl -Z
    followed by pngcheck of every file on every core (the same work: each PNG checked in full)."""
    count = len(urls)
    cores = os.cpu_count() or 1
    subprocess.run(["curl", "-s", "-o", "/dev/null", urls[0]])  # warm nginx
    coverd_times, curl_times, rss_values, coverd_cpu, curl_cpu, curl_synced, floors = [], [], [], [], [], [], []
    coverd_cached, curl_cached = [], []
    checked_times, checked_downloads, checked_cpu = [], [], []

    def coverd(run):
        elapsed, rss, status, cache = run_coverd_sync(binary, urls, parallel, run=run)
        coverd_cached.append(LAST_CACHE_GROWTH)  # before the check below reads the covers back
        bad = verify_cache(cache, urls, corpus_dir)
        if bad or status != 0:
            raise RuntimeError(f"coverd's sync, run {run + 1}: {bad} covers missing or different, exit status {status}")
        coverd_times.append(elapsed)
        rss_values.append(rss)
        coverd_cpu.append(LAST_CPU)
        return f"coverd {elapsed:.2f} s ({LAST_CPU:.2f} s CPU, peak RSS {rss / 1024:.1f} MiB)"

    def curl(run):
        elapsed = run_curl(urls, parallel)
        bad = verify_curl(LAST_CURL_DIR, urls, corpus_dir)
        if bad:
            raise RuntimeError(f"curl -Z, run {run + 1}: {bad} covers missing or different")
        curl_times.append(elapsed)
        curl_cpu.append(LAST_CURL_CPU)
        curl_synced.append(LAST_CURL_SYNCED)
        curl_cached.append(LAST_CURL_CACHE_GROWTH)
        return f"curl -Z {elapsed:.2f} s ({LAST_CURL_CPU:.2f} s CPU; {LAST_CURL_SYNCED:.2f} s with sync)"

    def checked(run):
        elapsed = run_curl(urls, parallel, then=pngcheck_all)  # pngcheck_all raises on any fault
        bad = verify_curl(LAST_CURL_DIR, urls, corpus_dir)
        if bad:
            raise RuntimeError(f"curl -Z before pngcheck, run {run + 1}: {bad} covers missing or different")
        checked_times.append(elapsed)
        checked_downloads.append(LAST_CURL_DOWNLOAD)
        checked_cpu.append(LAST_CURL_CPU)
        return (f"curl -Z + pngcheck ×{cores} {elapsed:.2f} s ({LAST_CURL_DOWNLOAD:.2f} + {elapsed - LAST_CURL_DOWNLOAD:.2f} s, "
                f"{LAST_CURL_CPU:.2f} s CPU)")

    programs = [coverd, curl] + ([checked] if with_pngcheck else [])
    for run in range(runs):
        # Each program takes each place in turn, so none always runs on the fuller filesystem.
        turn = run % len(programs)
        said = [program(run) for program in programs[turn:] + programs[:turn]]
        # In memory there is no disk to wait for, and cp's own CPU would pass for one.
        floors.append(None if scratch.in_memory else disk_floor(corpus_dir))
        print(f"# run {run + 1}: " + ", ".join(said) + (f", disk alone {floors[-1]:.2f} s" if floors[-1] is not None else ""),
              flush=True)
    rows = []
    coverd_median, curl_median = statistics.median(coverd_times), statistics.median(curl_times)
    rows.append((f"full sync, {count} covers, parallel {parallel} (median of {runs})",
                 f"{coverd_median:.2f} s", f"curl -Z {curl_median:.2f} s", f"{coverd_median / curl_median:.2f}", "≤ 1.00"))
    # The machine's speed drifts between runs; each coverd run against the curl run beside it cancels that.
    paired = statistics.median(a / b for a, b in zip(coverd_times, curl_times))
    rows.append(("full sync, median of the per-run ratios (each against the curl run beside it)", "", "", f"{paired:.2f}", "≤ 1.00"))
    if with_pngcheck:
        checked_median = statistics.median(checked_times)
        rows.append((f"full sync against curl -Z then pngcheck ×{cores} of every file (the same work: each PNG checked in full; "
                     f"median of {runs})", f"{coverd_median:.2f} s", f"curl -Z + pngcheck {checked_median:.2f} s",
                     f"{coverd_median / checked_median:.2f}", "≤ 0.80 (stretch 0.60)"))
        rows.append(("full sync against curl -Z then pngcheck, median of the per-run ratios", "", "",
                     f"{statistics.median(a / b for a, b in zip(coverd_times, checked_times)):.2f}", "≤ 0.80 (stretch 0.60)"))
        checks = statistics.median(t - d for t, d in zip(checked_times, checked_downloads))
        rows.append(("curl -Z then pngcheck: the download and the check apart, and its CPU time (medians)", "",
                     f"{statistics.median(checked_downloads):.2f} s + {checks:.2f} s; {statistics.median(checked_cpu):.2f} s CPU", "", ""))
    synced_median = statistics.median(curl_synced)
    rows.append(("full sync against curl -Z followed by sync (both durable)", f"{coverd_median:.2f} s",
                 f"curl -Z + sync {synced_median:.2f} s", f"{coverd_median / synced_median:.2f}", ""))
    rows.append(("CPU time for the full sync (user + system, median)", f"{statistics.median(coverd_cpu):.2f} s",
                 f"curl -Z {statistics.median(curl_cpu):.2f} s", f"{statistics.median(coverd_cpu) / statistics.median(curl_cpu):.2f}", ""))
    rows.append((f"peak RSS during the sync (VmHWM, max; {filesystem_label()})", f"{max(rss_values) / 1024:.1f} MiB", "", "", "≤ 64 MiB"))
    # What the sync leaves in memory for the rest of the system: covers nobody reads yet. The
    # whole system's Cached, so other programs move it by a few MiB either way; on tmpfs
    # the files themselves are page cache, so there is nothing to tell.
    if filesystem_type(RUNS) != "tmpfs":
        rows.append(("page cache the sync leaves behind (Cached in /proc/meminfo, after - before, median)",
                     f"{statistics.median(coverd_cached):.0f} MiB", f"curl -Z {statistics.median(curl_cached):.0f} MiB", "", ""))
    # No download can finish durably before the disk has taken its bytes. `cp` is one
    # more program's estimate of what the disk needs (it spends CPU of its own), not a
    # proof; each coverd run is set against the slower of its curl run and its disk run.
    if None not in floors:
        rows.append(("the disk alone, estimated: the corpus copied from memory onto the same filesystem, then synced", "",
                     f"cp + sync {statistics.median(floors):.2f} s", "", ""))
        bounded = statistics.median(c / max(b, f) for c, b, f in zip(coverd_times, curl_times, floors))
        bound = statistics.median(max(b, f) for b, f in zip(curl_times, floors))
        rows.append(("full sync against the slower of curl -Z and that estimate (median of per-run ratios)",
                     f"{coverd_median:.2f} s", f"{bound:.2f} s", f"{bounded:.2f}", ""))
    return rows


def tmpfs_rows(binary, nginx, urls, corpus_dir, jpeg_dir, parallel, runs):
    """Peak RSS of the PNG sync (unless `urls` is None) and the JPEG sync (unless `jpeg_dir` is None)
    with the runs on tmpfs, which the caller has mounted; each cache is deleted once checked (on
    tmpfs the covers are memory, and there is no inode allocator to upset)."""
    rows = []
    if urls is not None:
        peaks = []
        for run in range(runs):
            elapsed, rss, status, cache = run_coverd_sync(binary, urls, parallel)
            bad = verify_cache(cache, urls, corpus_dir)
            if bad or status != 0:
                raise RuntimeError(f"coverd's sync on tmpfs, run {run + 1}: {bad} covers missing or different, exit status {status}")
            shutil.rmtree(cache)
            peaks.append(rss)
            print(f"# sync on tmpfs, run {run + 1}: coverd {elapsed:.2f} s ({LAST_CPU:.2f} s CPU), peak RSS {rss / 1024:.1f} MiB",
                  flush=True)
        rows.append((f"peak RSS during the sync (VmHWM, max of {runs}; tmpfs)", f"{max(peaks) / 1024:.1f} MiB", "", "", "≤ 64 MiB"))
    if jpeg_dir is not None:
        peak = conversion.peak_rss(sys.modules[__name__], binary, nginx, jpeg_dir, runs, parallel)
        rows.append((f"peak RSS during the JPEG sync (VmHWM, max of {runs}; tmpfs)", f"{peak / 1024:.1f} MiB", "", "", "≤ 64 MiB"))
    return rows


FAILED = []


def guarded(what, measure):
    """`measure()`'s rows; if it raises (a bad cover, a timeout), one row saying so, and the bench's
    exit status becomes 1, while the other rows are still measured and printed."""
    try:
        return measure()
    except Exception as error:
        print(f"# {what}: failed: {error!r}", flush=True)
        FAILED.append(what)
        return [(what, f"failed: {error}".replace("|", "\\|"), "", "", "")]


def check(binary, nginx, urls, corpus_dir, jpeg_dir, parallel):
    """`--check` (`make bench-check`): every kind of run the table makes, small, each output checked;
    the exit status."""
    _, rss, status, cache = run_coverd_sync(binary, urls, parallel)
    bad = verify_cache(cache, urls, corpus_dir)
    print(f"bench check: {len(urls)} covers synced through nginx, {bad} missing or different, exit status {status}, "
          f"peak RSS {rss / 1024:.1f} MiB")
    run_curl(urls, parallel)
    bad_curl = verify_curl(LAST_CURL_DIR, urls, corpus_dir)
    print(f"bench check: curl -Z baseline fetched {len(urls)} covers, {bad_curl} missing or different")
    run_curl(urls, parallel, then=pngcheck_all)
    bad_checked = verify_curl(LAST_CURL_DIR, urls, corpus_dir)
    print(f"bench check: curl -Z then pngcheck ×{os.cpu_count() or 1}: {bad_checked} missing or different, pngcheck found no fault")
    lines, https_problems = https.check(sys.modules[__name__], binary, corpus_dir, parallel)
    print(*lines, sep="\n")
    bad += bad_curl + bad_checked + https_problems + (rss <= 0)
    if jpeg_dir:
        print(conversion.check(sys.modules[__name__], binary, nginx, jpeg_dir, parallel))
    return 1 if bad or status != 0 else 0


def main():
    global FILESYSTEM
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--count", type=int, default=int(os.environ.get("BENCH_N", 10_000)))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--binary", help="coverd to measure (default: a release build)")
    parser.add_argument("--check", action="store_true", help="a small run of every kind; verify only, print no timings")
    parser.add_argument("--jpeg-count", type=int, default=conversion.COUNT, help="JPEG covers for the conversion row")
    parser.add_argument("--skip", action="append", default=[],
                        choices=["sync", "pngcheck", "link", "https", "latency", "scale", "jpeg", "lookup", "revalidation", "tmpfs"])
    args = parser.parse_args()
    os.makedirs(WORK, exist_ok=True)
    if not args.check:
        shaping.check_unshaped()
    binary = args.binary or release_binary()
    count = 200 if args.check else args.count
    corpus_dir = corpus(count)
    jpeg_count = 8 if args.check else args.jpeg_count
    jpeg_dir = conversion.jpeg_corpus(WORK, jpeg_count) if "jpeg" not in args.skip else None
    names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))
    size = sum(os.path.getsize(os.path.join(corpus_dir, n)) for n in names)
    # The check only verifies, so it needs no filesystem of its own (and no loop device in CI).
    # Room for every run's covers, nothing being deleted until the end: per run, copies of the
    # corpus by coverd, curl -Z, curl -Z before pngcheck and the disk estimate, two more over
    # the shaped link and two over HTTPS; and the JPEG row's PNGs (a few MiB a cover at most,
    # coverd's and the tools') with the downloaded JPEGs.
    copies = 8 * args.runs + 1
    room = int(size * copies * 1.1) + jpeg_count * (8 << 20) * args.runs
    gigabytes = max(4, room >> 30) + 2
    scratch = ScratchFilesystem(gigabytes, use=not args.check)
    FILESYSTEM = scratch.label
    nginx = Nginx(corpus_dir, jpeg_dir)
    try:
        urls = [f"{nginx.base}/{name}" for name in names]
        if args.check:
            return check(binary, nginx, urls, corpus_dir, jpeg_dir, args.parallel)
        print(f"# corpus: {count} PNGs, {size / count / 1024:.0f} KB on average, {size / 2**20:.0f} MiB; nginx on {nginx.base}; "
              f"runs on {FILESYSTEM}; load average {os.getloadavg()[0]:.2f}", flush=True)
        rows = []
        if "sync" not in args.skip:
            rows += guarded("full sync", lambda: sync_rows(binary, urls, corpus_dir, args.parallel, args.runs, scratch,
                                                           "pngcheck" not in args.skip))
        if "link" not in args.skip:
            try:
                rows += linkrate.rows(sys.modules[__name__], binary, urls, corpus_dir, args.parallel, args.runs)
            except Exception as error:  # A bad cover, a timeout: said in the table, the rest still measured.
                print(f"# link: {error}", flush=True)
                rows.append(("full sync over a link", f"failed: {error}", "", "", ""))
        if "https" not in args.skip:
            rows += guarded("full sync over HTTPS", lambda: https.rows(sys.modules[__name__], binary, corpus_dir, args.parallel, args.runs))
        if "latency" not in args.skip:
            p50, p99, idle = latency(binary, nginx, corpus_dir)
            rows.append(("drop-to-PNG latency p50 (200 records, idle daemon)", f"{p50 * 1000:.1f} ms", "", "", "≤ 15 ms"))
            rows.append(("drop-to-PNG latency p99", f"{p99 * 1000:.1f} ms", "", "", "≤ 50 ms"))
            rows.append(("idle CPU over 30 s, no watchdog (the process CPU-time clock)", f"{idle * 1000:.2f} ms", "", "", "≤ 20 ms"))
        if "scale" not in args.skip:
            ready, checked, cold, rss, requests, status_time = scale(binary, nginx, corpus_dir)
            rows.append(("100,000 cached albums: start to READY=1, a restart", f"{ready:.2f} s", "", "", "≤ 2 s"))
            rows.append(("100,000 cached albums: start to every cached cover looked at (after the first scan), a restart",
                         seconds_or_none(checked), "", "", ""))
            if cold is not None:
                cold_ready, cold_rss, _, cold_checked = cold
                rows.append(("100,000 cached albums: start to READY=1, page cache dropped first (as after boot)",
                             f"{cold_ready:.2f} s", "", "", "≤ 2 s"))
                rows.append(("100,000 cached albums: start to every cached cover looked at, page cache dropped first",
                             seconds_or_none(cold_checked), "", "", ""))
                rows.append(("100,000 cached albums: peak RSS, page cache dropped first", f"{cold_rss / 1024:.1f} MiB", "", "", "≤ 128 MiB"))
            rows.append(("100,000 cached albums: peak RSS, a restart", f"{rss / 1024:.1f} MiB", "", "", "≤ 128 MiB"))
            rows.append(("100,000 cached albums: requests made", f"{requests}", "", "", "0"))
            rows.append(("100,000 cached albums: coverd status --json", f"{status_time:.2f} s", "", "", "≤ 1 s"))
            try:
                rows += longids.rows(sys.modules[__name__], binary, nginx)
            except Exception as error:  # The rows measured so far are still printed.
                print(f"# scale, long ids: not measured: {error!r}", flush=True)
                rows.append(("100,000 cached albums, 128-character ids", "not measured (see above)", "", "", ""))
        if "jpeg" not in args.skip:
            rows += guarded("JPEG → PNG", lambda: conversion.conversion_rows(sys.modules[__name__], binary, nginx, jpeg_dir,
                                                                             args.runs, args.parallel))
        if "lookup" not in args.skip:
            try:
                rows += lookup.rows(sys.modules[__name__], binary, args.runs)
            except Exception as error:  # The rows measured so far are still printed.
                print(f"# lookup: not measured: {error!r}", flush=True)
                rows.append(("1,000 albums found by release id", "not measured (see above)", "", "", ""))
        if "revalidation" not in args.skip:
            try:
                rows += revalidation.rows(sys.modules[__name__], binary, nginx, urls, args.runs)
            except Exception as error:  # The rows measured so far are still printed.
                print(f"# revalidation: not measured: {error!r}", flush=True)
                rows.append(("revalidation pass over the cached corpus", "not measured (see above)", "", "", ""))
        # Peak RSS again with the runs on tmpfs, where the covers' pages are the daemon's
        # filesystem's own: the ext4 scratch filesystem makes way for a tmpfs at the same place.
        png_rss, jpeg_rss = "sync" not in args.skip, "jpeg" not in args.skip
        if "tmpfs" not in args.skip and (png_rss or jpeg_rss):
            if scratch.in_memory:
                print("# tmpfs: the runs above were on tmpfs already", flush=True)
            elif not scratch.mounted:
                print("# tmpfs: not measured: a tmpfs needs root (and BENCH_NO_SCRATCH unset)", flush=True)
                rows.append(("peak RSS with the runs on tmpfs", "not measured (needs root)", "", "", "≤ 64 MiB"))
            elif scratch.close():
                scratch = ScratchFilesystem(gigabytes, in_memory=True)
                FILESYSTEM = scratch.label
                rows += guarded("peak RSS on tmpfs", lambda: tmpfs_rows(binary, nginx, urls if png_rss else None, corpus_dir,
                                                                        jpeg_dir if jpeg_rss else None, args.parallel, args.runs))
        print()
        print(f"# load average at the end: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
        print("| measure | coverd | baseline | ratio | goal |")
        print("|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    finally:
        nginx.stop()
        scratch.close()
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

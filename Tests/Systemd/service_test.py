#!/usr/bin/python3
"""coverd as a systemd user service, under a real `systemd --user` and journald.

Run by scripts/test-systemd.sh as root inside a private mount namespace
(`unshare --mount`): /run/systemd, /run/log and /run/user become tmpfs, a fresh
directory is bind-mounted over root's home (the checkout, if it lives there,
is mounted back at its own path: private_home.py), journald and the user
manager are started, and `make install` puts coverd into that home. Covers come
from Tests/Support/cover_server.py on loopback, and lookups (albums without
cover_url) from Tests/Support/musicbrainz_server.py, the stand-in for
MusicBrainz and the Cover Art Archive, named in the service's [sources]. Each
check prints "ok - ..." or "FAIL - ..."; the exit status is the number of failures.
"""
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from private_home import cover_home, is_within, uncover_home

TOP = sys.argv[1]
FAILURES = []
PROCESSES = []


def check(name, condition, detail=""):
    print(("ok" if condition else "FAIL") + " - " + name + ("" if condition or not detail else f"\n    {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)
    return condition


def wait_until(what, predicate, timeout=60, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def run(args, env=None, check_status=True, **kwargs):
    result = subprocess.run(args, env=env or ENV, capture_output=True, text=True, **kwargs)
    if check_status and result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def systemctl(*args, check_status=True):
    return run(["systemctl", "--user", *args], check_status=check_status)


def show(*properties):
    out = systemctl("show", "coverd.service", *[f"-p{p}" for p in properties]).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


# By SYSLOG_IDENTIFIER, not `journalctl --user -u coverd`: started by hand, outside user@0.service's cgroup,
# this user manager's units reach journald as _SYSTEMD_UNIT=coverd.service, with no _SYSTEMD_USER_UNIT to match.
def journal():
    out = run(["journalctl", "--no-pager", "-o", "json", "SYSLOG_IDENTIFIER=coverd"], check_status=False).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def coverd(*args):
    return run([os.path.join(HOME, ".local/bin/coverd"), *args], check_status=False)


def read_ports(process, what, count, timeout=30):
    """The "PORT <origin> <n>" lines a stand-in prints once it listens, as {origin: n}. A thread reads
    its stdout to the end, so whatever it prints later cannot fill the pipe and stall it."""
    lines = []

    def drain():
        for line in process.stdout:
            lines.append(line)
    threading.Thread(target=drain, daemon=True).start()
    wait_until(f"{what} to print {count} ports", lambda: len(lines) >= count or process.poll() is not None, timeout=timeout)
    ports = {fields[1]: int(fields[2]) for fields in (line.split() for line in lines[:count])
             if len(fields) == 3 and fields[0] == "PORT"}
    if len(ports) != count:
        raise RuntimeError(f"{what} printed {lines!r} (exit status {process.poll()})")
    return ports


def set_keys(text, **values):
    """The configuration text with each key's line (the installed file has each once) set to the string value."""
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^{key} = .*$", lambda _: f'{key} = "{value}"', text)
        if count != 1:
            raise RuntimeError(f"{key} is in the configuration {count} times, not once")
    return text


# -- the private world ------------------------------------------------------

HOME = pwd.getpwuid(0).pw_dir
# The private world (the fresh home, the covers served) must stay visible once the home is covered.
work = tempfile.mkdtemp(prefix="coverd-systemd-", dir="/tmp" if is_within(tempfile.gettempdir(), HOME) else None)
fresh_home = os.path.join(work, "home")
os.makedirs(fresh_home)
ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": fresh_home,
    "LANG": "C.UTF-8",
}

print(f"# installing coverd into a private home ({fresh_home})", flush=True)
run(["make", "-C", TOP, "install", "BUILD=debug"], env=ENV)
fresh_config = os.path.join(fresh_home, ".config/coverd/coverd.toml")
installed_once = os.path.exists(fresh_config)
with open(fresh_config, "a") as handle:
    handle.write("\n# edited by the user\n")
run(["make", "-C", TOP, "install", "BUILD=debug"], env=ENV)
with open(fresh_config) as handle:
    config_kept = installed_once and handle.read().endswith("# edited by the user\n")

for path in ("/run/systemd", "/run/log", "/run/user"):
    os.makedirs(path, exist_ok=True)
    run(["mount", "-t", "tmpfs", "tmpfs", path])
os.makedirs("/run/systemd/system")
os.makedirs("/run/systemd/journal")
os.makedirs("/run/user/0", mode=0o700)
# After this, the scripts, the cover server and `make uninstall` are still read from TOP.
home_mounts = cover_home(HOME, fresh_home, keep=[TOP])
ENV = {"PATH": ENV["PATH"], "HOME": HOME, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": "/run/user/0"}

unit = os.path.join(HOME, ".config/systemd/user/coverd.service")
records = os.path.join(HOME, ".local/share/coverd/albums")
config = os.path.join(HOME, ".config/coverd/coverd.toml")
covers = os.path.join(HOME, ".cache/coverd/covers")
main_pids = set()

try:
    PROCESSES.append(subprocess.Popen(["/lib/systemd/systemd-journald"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_until("journald's socket", lambda: os.path.exists("/run/systemd/journal/socket"))
    # A user manager started by PID 1 logs to the journal through the stream it is given; this one has
    # no such stream, and its default target would send its own messages (the watchdog's) to stderr.
    PROCESSES.append(subprocess.Popen(["/lib/systemd/systemd", "--user", "--log-target=journal"], env=ENV,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_until("systemd --user", lambda: systemctl("is-system-running", check_status=False).stdout.strip() in ("running", "degraded"))

    # Covers on loopback.
    www = os.path.join(work, "www")
    os.makedirs(www)
    run(["/usr/bin/python3", os.path.join(TOP, "scripts/make_sample_covers.py"), www, "5", "120", "160"])
    server = subprocess.Popen(
        ["/usr/bin/python3", "-u", os.path.join(TOP, "Tests/Support/cover_server.py"), "--root", www],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    PROCESSES.append(server)
    port = int(server.stdout.readline().split()[1])
    base = f"http://127.0.0.1:{port}"

    # -- the shipped unit ---------------------------------------------------
    verify = run(["systemd-analyze", "--user", "verify", unit], check_status=False)
    check("Given the shipped unit, when systemd-analyze verifies it, then it prints nothing",
          verify.returncode == 0 and verify.stdout.strip() == "" and verify.stderr.strip() == "",
          verify.stdout + verify.stderr)
    security = run(["systemd-analyze", "--user", "security", "--offline=true", unit], check_status=False)
    match = re.search(r"Overall exposure level for coverd\.service: (\d+\.\d+)", security.stdout)
    exposure = float(match.group(1)) if match else 99.0
    print(f"# exposure level: {exposure}", flush=True)
    check("Given the shipped unit, when its sandboxing is scored, then the exposure is at most 2.0",
          exposure <= 2.0, security.stdout[-400:])
    check("Given make install twice, when a config exists, then it is installed once and never overwritten",
          config_kept and os.path.exists(os.path.join(HOME, ".local/bin/coverd")))
    docs = [os.path.join(HOME, ".local/share", path) for path in (
        "man/man1/coverd.1", "bash-completion/completions/coverd", "zsh/site-functions/_coverd",
        "fish/vendor_completions.d/coverd.fish")]
    check("Given make install, then the man page and the bash, zsh and fish completions are in place",
          all(os.path.getsize(path) > 0 for path in docs if os.path.exists(path)) and all(map(os.path.exists, docs)),
          str([path for path in docs if not os.path.exists(path)]))

    # This sandbox cannot grant these two (226/NAMESPACE); the notes allow relaxing exactly them.
    dropin = unit + ".d"
    os.makedirs(dropin, exist_ok=True)
    with open(os.path.join(dropin, "test-sandbox.conf"), "w") as handle:
        handle.write("[Service]\nProtectKernelTunables=no\nProtectKernelLogs=no\n")

    # -- enable --now ---------------------------------------------------------
    systemctl("daemon-reload")
    started = systemctl("enable", "--now", "coverd", check_status=False)
    state = show("ActiveState", "SubState", "MainPID", "StatusText")
    check("Given make install, when enabled with --now, then the service is active once READY=1 arrived",
          started.returncode == 0 and state["ActiveState"] == "active" and state["SubState"] == "running",
          f"{started.stderr} {state}")

    albums = [
        {"title": "Best of Bowie", "artist": "David Bowie", "cover_url": f"{base}/cover-00000.png"},
        {"title": "It's My Life", "artist": "No Doubt", "cover_url": f"{base}/cover-00001.png"},
        {"title": "Nothing Like The Sun", "artist": "Sting", "cover_url": f"{base}/cover-00002.png"},
    ]
    more = {"albums": [
        {"title": "Staring at the Sun", "artist": "U2", "cover_url": f"{base}/cover-00003.png"},
        {"title": "American Pie", "artist": "Madonna", "cover_url": f"{base}/cover-00004.png"},
        {"title": "Lost", "artist": "Nobody", "cover_url": f"{base}/missing.png"},
    ]}
    for name, content in (("classics.json", albums), ("more.json", more)):
        temporary = os.path.join(records, "." + name + ".tmp")
        with open(temporary, "w") as handle:
            json.dump(content, handle)
        os.rename(temporary, os.path.join(records, name))
    expected = "6 albums: 5 cached, 0 pending, 1 failed"
    status_text = wait_until("StatusText to say all cached",
                             lambda: show("StatusText")["StatusText"] == expected and expected, timeout=60)
    check("Given six albums dropped in (one a 404), when synced, then StatusText reports five cached and one failed",
          status_text == expected)
    main_pids.add(show("MainPID")["MainPID"])

    # -- the shell agrees -----------------------------------------------------
    status = coverd("status", "--json")
    snapshot = json.loads(status.stdout) if status.returncode == 0 else {"summary": {}, "albums": []}
    ids = [album["id"] for album in snapshot["albums"] if album["state"] == "cached"]
    check("Given the service's cache, when coverd status runs from the shell, then it agrees",
          snapshot["summary"] == {"albums": 6, "cached": 5, "pending": 0, "failed": 1, "outdated": 0}
          and all(album["path"] and os.path.isfile(album["path"]) for album in snapshot["albums"] if album["state"] == "cached"),
          status.stdout + status.stderr)
    human = coverd("status")
    check("Given the shell, when coverd status prints the table, then its first line is StatusText",
          human.stdout.splitlines()[:1] == [expected], human.stdout)

    # -- the control socket (coverd refresh, status --follow) --------------------
    runtime = os.path.join(ENV["XDG_RUNTIME_DIR"], "coverd")
    sockets = [name for name in os.listdir(runtime)] if os.path.isdir(runtime) else []
    modes = {name: oct(os.lstat(os.path.join(runtime, name)).st_mode & 0o777) for name in sockets}
    check("Given the running service, then its control socket is alone in $XDG_RUNTIME_DIR/coverd, 0600 in a 0700 directory",
          len(sockets) == 1 and sockets[0].endswith(".sock") and modes[sockets[0]] == "0o600"
          and os.stat(runtime).st_mode & 0o777 == 0o700, f"{sockets} {modes}")
    refreshed = coverd("refresh", ids[0]) if ids else None
    check("Given the running service, when coverd refresh names a cached album from the shell, then the service answers",
          refreshed is not None and refreshed.returncode == 0 and refreshed.stdout.startswith("refreshing 1 cover"),
          refreshed and refreshed.stdout + refreshed.stderr)
    try:
        confirmed = wait_until("the refreshed cover asked again and answered 304", lambda: sum(
            json.loads(run(["curl", "-s", f"{base}/__requests"]).stdout).get("not_modified", {}).values()) >= 1, timeout=10)
    except TimeoutError:
        confirmed = False
    check("Given the refresh, then the service asks the server again with the cover's validators, and it answers 304",
          bool(confirmed), "no conditional request answered 304")
    unknown = coverd("refresh", "no-such-album")
    check("Given the running service, when coverd refresh names an unknown id, then it exits 1 naming it",
          unknown.returncode == 1 and "no-such-album" in unknown.stderr, unknown.stdout + unknown.stderr)
    follower = subprocess.Popen([os.path.join(HOME, ".local/bin/coverd"), "status", "--follow"], env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    PROCESSES.append(follower)
    first = follower.stdout.readline().strip()
    follower.send_signal(2)
    check("Given the running service, when coverd status --follow runs, then its first line is StatusText, and SIGINT ends it with 0",
          first.startswith(expected) and follower.wait(timeout=10) == 0, first)

    # -- the journal ------------------------------------------------------------
    entries = journal()
    structured = [e for e in entries if e.get("_TRANSPORT") == "journal"]
    cached = {e.get("COVERD_ALBUM_ID") for e in structured if e.get("COVERD_EVENT") == "cover_cached"}
    check("Given the journal, when read as JSON, then each album has a cover_cached entry with its COVERD_ALBUM_ID",
          set(ids) <= cached and len(ids) == 5, f"ids={ids} cached={cached}")
    events = {e.get("COVERD_EVENT") for e in structured}
    check("Given the journal, when read, then started and ready entries are there",
          {"started", "ready", "album_added", "cover_cached"} <= events, str(events))
    check("Given the journal, when read, then every entry has a valid PRIORITY and CODE_FILE/CODE_LINE/CODE_FUNC",
          structured and all(e.get("PRIORITY") in list("01234567") and e.get("CODE_FILE") and e.get("CODE_LINE") and e.get("CODE_FUNC")
                             for e in structured))
    failed_entry = next((e for e in structured if e.get("COVERD_EVENT") == "cover_failed"), {})
    check("Given the 404, when logged, then its entry is an error with the status and reason",
          failed_entry.get("PRIORITY") == "3" and failed_entry.get("COVERD_HTTP_STATUS") == "404" and "404" in failed_entry.get("COVERD_ERROR", ""),
          json.dumps(failed_entry)[:600])
    cached_entry = next((e for e in structured if e.get("COVERD_EVENT") == "cover_cached"), {})
    check("Given a cover_cached entry, when read, then it carries URL, bytes, duration, status and record fields",
          all(cached_entry.get(k) for k in ("COVERD_URL", "COVERD_BYTES", "COVERD_DURATION_MS", "COVERD_HTTP_STATUS", "COVERD_RECORD")),
          json.dumps(cached_entry)[:600])
    messages = [e.get("MESSAGE") for e in structured]
    duplicates = sorted({m for m in messages if messages.count(m) > 1})
    check("Given the journal, when read, then no line is logged twice", not duplicates, str(duplicates[:5]))
    plain = [e for e in entries if e.get("_TRANSPORT") in ("stdout", "stderr") and e.get("_PID") in main_pids]
    check("Given the journal target, when the service logs, then the daemon writes nothing to stdout or stderr", not plain,
          str(plain[:2]))

    # -- reload ---------------------------------------------------------------------
    before = show("MainPID")["MainPID"]
    requests_before = json.loads(run(["curl", "-s", f"{base}/__requests"]).stdout)["paths"].get("/missing.png", 0)
    reloaded = systemctl("reload", "coverd", check_status=False)
    wait_until("the reload to be logged",
               lambda: any(e.get("COVERD_EVENT") == "reloading" for e in journal()), timeout=30)
    state = wait_until("active after reload", lambda: (s := show("ActiveState", "MainPID", "StatusText"))["ActiveState"] == "active"
                       and s["StatusText"] == expected and s, timeout=30)
    check("Given a running service, when systemctl --user reload, then it stays active with the same process",
          reloaded.returncode == 0 and state["MainPID"] == before, reloaded.stderr)
    retried = wait_until("the failed cover retried", lambda: json.loads(run(["curl", "-s", f"{base}/__requests"]).stdout)["paths"]
                         .get("/missing.png", 0) > requests_before, timeout=30)
    check("Given a failed cover, when the service reloads, then it is tried again", bool(retried))

    # -- watchdog ---------------------------------------------------------------------
    restarts = int(show("NRestarts")["NRestarts"])
    frozen = int(before)
    os.kill(frozen, 19)  # SIGSTOP: every work loop stops, so the pings stop.
    print("# SIGSTOP sent; waiting for the watchdog (WatchdogSec=30) to restart the service", flush=True)
    state = wait_until("a watchdog restart",
                       lambda: (s := show("NRestarts", "ActiveState", "MainPID"))["ActiveState"] == "active"
                       and int(s["NRestarts"]) > restarts and s["MainPID"] not in ("0", before) and s, timeout=150, interval=0.5)
    check("Given a stopped main process, when the watchdog expires, then systemd restarts the service",
          int(state["NRestarts"]) == restarts + 1)
    # The manager's own message about the unit (not any line that says "watchdog": the kernel's boot
    # messages may), which reaches the journal on its own schedule.
    def watchdog_in_journal():
        out = run(["journalctl", "--no-pager", "-o", "json", "_COMM=systemd"], check_status=False).stdout
        messages = [json.loads(line).get("MESSAGE") for line in out.splitlines() if line.strip()]
        return any(isinstance(m, str) and "coverd.service" in m and "watchdog" in m.lower() for m in messages)
    try:
        watchdog_logged = wait_until("systemd's watchdog message in the journal", watchdog_in_journal, timeout=30, interval=0.5)
    except TimeoutError:
        watchdog_logged = False
    check("Given the restart, when the journal is read, then systemd names the watchdog", watchdog_logged)
    wait_until("StatusText all cached after the restart", lambda: show("StatusText")["StatusText"] == expected, timeout=60)
    main_pids.add(show("MainPID")["MainPID"])

    # -- broken configuration --------------------------------------------------------------
    with open(config) as handle:
        good_config = handle.read()
    with open(config, "a") as handle:
        handle.write('\n[images]\nmax_side = "huge"\n')
    failed_reload = systemctl("reload", "coverd", check_status=False)
    check("Given a broken configuration, when reloaded, then ExecReload's check fails and the service stays active",
          failed_reload.returncode != 0 and show("ActiveState")["ActiveState"] == "active")
    systemctl("restart", "coverd", check_status=False)
    state = wait_until("the failed state", lambda: (s := show("ActiveState", "ExecMainStatus", "NRestarts", "Result"))["ActiveState"] == "failed" and s,
                       timeout=30)
    # A manual restart resets NRestarts; "failed" (not "auto-restart") means no restart is scheduled.
    check("Given a broken configuration, when restarted, then it exits 78 and is not restarted in a loop",
          state["ExecMainStatus"] == "78" and state["NRestarts"] == "0" and state["Result"] == "exit-code", str(state))
    with open(config, "w") as handle:
        handle.write(good_config)
    systemctl("reset-failed", "coverd")
    systemctl("start", "coverd")
    wait_until("StatusText all cached after the fix", lambda: show("StatusText")["StatusText"] == expected, timeout=60)

    # -- finding covers by themselves ----------------------------------------------------
    # MusicBrainz, the Cover Art Archive and its image host on loopback (Tests/Support/musicbrainz_server.py):
    # one album by its release id, one by search, one that nothing knows.
    def mbid(number):
        return f"0000005d-0000-4000-8000-{number:012x}"
    by_release, searched_release, searched_group, unknown = mbid(1), mbid(2), mbid(3), mbid(4)
    fixtures = os.path.join(work, "musicbrainz-fixtures.json")
    with open(fixtures, "w") as handle:
        json.dump({"releases": [
            {"id": by_release, "title": "Heroes", "artist_credit": "David Bowie", "image": {"generate": [300, 300]}},
            {"id": searched_release, "title": "Parallel Lines", "artist_credit": "Blondie", "release_group": searched_group,
             "image": {"generate": [200, 200]}},
        ], "release_groups": [{"id": searched_group, "title": "Parallel Lines"}]}, handle)
    lookup_server = subprocess.Popen(
        ["/usr/bin/python3", "-u", os.path.join(TOP, "Tests/Support/musicbrainz_server.py"), "--fixtures", fixtures],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    PROCESSES.append(lookup_server)
    ports = read_ports(lookup_server, "musicbrainz_server.py", 3)
    musicbrainz, archive = f"http://127.0.0.1:{ports['mb']}", f"http://127.0.0.1:{ports['caa']}"
    contact = "coverd-systemd-test@example.org"

    # The service asks the stand-in once a reload has applied the new [sources] (its READY=1 after the rescan).
    readies = sum(e.get("COVERD_EVENT") == "ready" for e in journal())
    with open(config, "w") as handle:
        handle.write(set_keys(good_config, musicbrainz_url=musicbrainz, coverartarchive_url=archive, contact=contact))
    reloaded = systemctl("reload", "coverd", check_status=False)
    if reloaded.returncode != 0:
        raise RuntimeError(f"reload with the stand-in's [sources] failed: {reloaded.stderr}")
    wait_until("the reload with the stand-in's [sources] to be ready",
               lambda: sum(e.get("COVERD_EVENT") == "ready" for e in journal()) > readies, timeout=30)
    lookups = [
        {"title": "Heroes", "artist": "David Bowie", "mbid": by_release, "id": "heroes"},
        {"title": "Parallel Lines", "artist": "Blondie", "id": "parallel-lines"},
        {"title": "Nowhere To Be Found", "artist": "The Unknowns", "mbid": unknown, "id": "nowhere"},
    ]
    temporary = os.path.join(records, ".lookups.json.tmp")
    with open(temporary, "w") as handle:
        json.dump(lookups, handle)
    os.rename(temporary, os.path.join(records, "lookups.json"))
    expected = "9 albums: 7 cached, 0 pending, 2 failed"
    status_text = wait_until("StatusText to count the looked-up albums",
                             lambda: show("StatusText")["StatusText"] == expected and expected, timeout=60)
    status = coverd("status", "--json")
    found = {album["id"]: album for album in json.loads(status.stdout)["albums"]} if status.returncode == 0 else {}
    heroes = found.get("heroes", {})
    check("Given an album with a release id and no cover_url, when the service looks it up, then the archive's front is cached",
          status_text == expected and heroes.get("state") == "cached" and heroes.get("source") == "release"
          and (heroes.get("resolved_url") or "").startswith(f"{archive}/release/{by_release}/")
          and bool(heroes.get("path")) and os.path.isfile(heroes["path"]),
          json.dumps(heroes) + status.stderr)

    def entry(event, album):
        matching = [e for e in journal() if e.get("_TRANSPORT") == "journal"
                    and e.get("COVERD_EVENT") == event and e.get("COVERD_ALBUM_ID") == album]
        return matching[-1] if matching else None
    # The journal takes the lines on its own schedule: StatusText may be there first.
    cached_by_release = wait_until("heroes' cover_cached entry", lambda: entry("cover_cached", "heroes"), timeout=30)
    check("Given a cover found by its release id, when its cover_cached entry is read, then COVERD_SOURCE=release and COVERD_MBID is the id",
          cached_by_release.get("COVERD_SOURCE") == "release" and cached_by_release.get("COVERD_MBID") == by_release
          and cached_by_release.get("COVERD_URL", "").startswith(f"{archive}/release/{by_release}/"),
          json.dumps(cached_by_release)[:800])
    cached_by_search = wait_until("parallel-lines' cover_cached entry", lambda: entry("cover_cached", "parallel-lines"), timeout=30)
    check("Given a cover found by search, when its cover_cached entry is read, then COVERD_SOURCE=search and COVERD_RELEASE_GROUP_MBID is the group",
          cached_by_search.get("COVERD_SOURCE") == "search" and cached_by_search.get("COVERD_RELEASE_GROUP_MBID") == searched_group,
          json.dumps(cached_by_search)[:800])
    not_found = wait_until("nowhere's cover_failed entry", lambda: entry("cover_failed", "nowhere"), timeout=30)
    check("Given an album found nowhere, when its cover_failed entry is read, then COVERD_LOOKUP=not_found and COVERD_ERROR begins 'no cover found'",
          not_found.get("COVERD_LOOKUP") == "not_found" and not_found.get("COVERD_ERROR", "").startswith("no cover found")
          and found.get("nowhere", {}).get("state") == "failed",
          json.dumps(not_found)[:800])
    seen = json.loads(run(["curl", "-s", f"{musicbrainz}/__requests"]).stdout)
    check("Given the sandboxed service, when it asks the stand-in, then every request names coverd and the contact and none is over MusicBrainz's rate",
          seen["total"] > 0 and all(agent.startswith("coverd/") and agent.endswith(f"( {contact} )") for agent in seen["user_agents"])
          and seen["mb"]["over_rate"] == 0,
          json.dumps({k: seen[k] for k in ("total", "user_agents", "mb")})[:800])
    lookup_server.kill()
    lookup_server.wait()
    PROCESSES.remove(lookup_server)

    # -- stop -------------------------------------------------------------------------------
    stopped = systemctl("stop", "coverd", check_status=False)
    state = show("ActiveState", "Result", "ExecMainStatus")
    incoming = os.path.join(os.path.dirname(covers), "incoming")
    leftovers = [n for n in os.listdir(covers) if not n.endswith(".png") or n.startswith(".")]
    leftovers += os.listdir(incoming) if os.path.isdir(incoming) else []
    check("Given a running service, when systemctl --user stop, then Result=success and no temporary file remains",
          stopped.returncode == 0 and state["ActiveState"] == "inactive" and state["Result"] == "success" and not leftovers,
          f"{state} {leftovers}")
    # The directory stays (RuntimeDirectoryPreserve: a daemon run by hand on another cache may listen there too).
    check("Given the stopped service, then its control socket is gone",
          not any(name.endswith(".sock") for name in (os.listdir(runtime) if os.path.isdir(runtime) else [])))
    # The process the watchdog killed may leave the Swift runtime's crash report on stderr: that is wanted.
    plain = [e for e in journal() if e.get("_TRANSPORT") in ("stdout", "stderr") and e.get("_PID") in main_pids - {str(frozen)}]
    check("Given the whole run, when the journal is read, then the daemon never wrote plain stdout or stderr lines", not plain, str(plain[:2]))

    # -- uninstall ----------------------------------------------------------------------------
    removed = run(["make", "-C", TOP, "uninstall"], check_status=False)
    check("Given make uninstall, when run, then the binary and unit are gone, the service disabled and the config kept",
          removed.returncode == 0 and not os.path.exists(unit) and not os.path.exists(os.path.join(HOME, ".local/bin/coverd"))
          and os.path.exists(config) and systemctl("is-enabled", "coverd", check_status=False).stdout.strip() != "enabled",
          removed.stdout + removed.stderr)
    check("Given make uninstall, then the man page and the completions are gone", not any(map(os.path.exists, docs)),
          str([path for path in docs if os.path.exists(path)]))
except Exception as error:  # A step that could not run is a failure, reported with its reason.
    check("the systemd scenario ran to the end", False, repr(error))
    print(systemctl("status", "coverd", "--no-pager", check_status=False).stdout)
    print(run(["journalctl", "--no-pager", "-n", "40"], check_status=False).stdout)
finally:
    systemctl("stop", "coverd", check_status=False)
    for process in reversed(PROCESSES):
        process.kill()
        process.wait()
    stayed = uncover_home(home_mounts)
    if stayed:
        print(f"# still mounted: {' '.join(stayed)}", flush=True)
    shutil.rmtree(work, ignore_errors=True)

print(f"# {len(FAILURES)} failure(s)" + (": " + "; ".join(FAILURES) if FAILURES else ""), flush=True)
sys.exit(min(len(FAILURES), 100))

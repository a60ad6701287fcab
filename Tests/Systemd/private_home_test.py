#!/usr/bin/python3
"""The systemd test's private home, with the checkout living inside the home it covers (issue #25).

Run by scripts/test-systemd.sh as root inside a private mount namespace. It
places the checkout under a temporary home (a bind mount of the real one at
HOME/src/coverd), covers that home with cover_home exactly as service_test.py
covers root's, and checks that what service_test.py reads from the checkout
afterwards is still there at the same path, and that the real home stays
untouched. Each check prints "ok - ..." or "FAIL - ..."; the exit status is the
number of failures.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from private_home import cover_home, mount_points_within, uncover_home

TOP = os.path.realpath(sys.argv[1])
FAILURES = []


def check(name, condition, detail=""):
    print(("ok" if condition else "FAIL") + " - " + name + ("" if condition or not detail else f"\n    {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)
    return condition


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


# Mounting in the caller's namespace would change the host for every process (unshare execs this script).
if os.readlink("/proc/self/ns/mnt") == os.readlink(f"/proc/{os.getppid()}/ns/mnt"):
    sys.exit("private_home_test.py: run me inside a private mount namespace (unshare --mount --propagation private)")

scratch = os.path.realpath(tempfile.mkdtemp(prefix="coverd-private-home-"))
home = os.path.join(scratch, "home")
fresh = os.path.join(scratch, "fresh")
checkout = os.path.join(home, "src", "coverd")
binary = os.path.join(checkout, ".build", "debug", "coverd")
os.makedirs(checkout)
os.makedirs(fresh)
with open(os.path.join(home, ".profile"), "w") as handle:
    handle.write("# the user's own\n")
subprocess.run(["mount", "--bind", TOP, checkout], check=True)
mounts = []

try:
    if not os.access(binary, os.X_OK):
        raise FileNotFoundError(f"no debug build at {binary}: run make build first")
    mounts = cover_home(home, fresh, keep=[checkout])

    check("Given the home covered, when listed, then it is the fresh one and the user's files are hidden",
          os.path.samefile(home, fresh) and not os.path.exists(os.path.join(home, ".profile")), str(os.listdir(home)))
    www = os.path.join(scratch, "www")
    os.makedirs(www)
    covers = run(["/usr/bin/python3", os.path.join(checkout, "scripts/make_sample_covers.py"), www, "1", "16", "16"])
    check("Given the home covered, when the checkout's make_sample_covers.py runs, then it writes a cover",
          covers.returncode == 0 and os.path.isfile(os.path.join(www, "cover-00000.png")), covers.stderr)
    check("Given the home covered, when the cover server is looked for, then it is in the checkout",
          os.path.isfile(os.path.join(checkout, "Tests/Support/cover_server.py")))
    version = run([binary, "--version"]) if os.access(binary, os.X_OK) else None
    check("Given the home covered, when the built binary runs from .build at its own path, then it answers",
          version is not None and version.returncode == 0 and version.stdout.startswith("coverd "),
          f"no {binary}" if version is None else version.stdout + version.stderr)
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8"}
    uninstall = run(["make", "-n", "-C", checkout, "uninstall"], env=environment)
    check("Given the home covered, when make reads the checkout's Makefile, then uninstall aims at the covered home",
          uninstall.returncode == 0 and f"rm -f \"{home}/.local/bin/coverd\"" in uninstall.stdout,
          uninstall.stdout + uninstall.stderr)
    check("Given the home covered, when the checkout is compared with the original, then it is the same directory",
          os.path.exists(os.path.join(checkout, "Makefile")) and os.path.samefile(os.path.join(checkout, "Makefile"), os.path.join(TOP, "Makefile")))
    os.makedirs(os.path.join(home, ".local/bin"))
    with open(os.path.join(home, ".local/bin/coverd"), "w") as handle:
        handle.write("installed into the private home\n")

    stayed = uncover_home(mounts)
    mounts = []
    check("Given the home covered, when uncovered, then nothing of it stays mounted",
          not stayed and mount_points_within(home) == [checkout], f"{stayed} {mount_points_within(home)}")
    check("Given the home uncovered, when listed, then it holds the user's files and nothing the test wrote",
          sorted(os.listdir(home)) == [".profile", "src"] and os.listdir(os.path.join(home, "src")) == ["coverd"],
          str(os.listdir(home)))
    check("Given the home uncovered, when the fresh one is listed, then what the test wrote is there",
          os.path.isfile(os.path.join(fresh, ".local/bin/coverd")))

    try:
        cover_home(home, fresh, keep=[home])
        refused = False
    except ValueError:
        refused = True
    check("Given the home itself to keep, when covering, then cover_home refuses and mounts nothing",
          refused and mount_points_within(home) == [checkout], str(mount_points_within(home)))
except Exception as error:  # A step that could not run is a failure, reported with its reason.
    check("the private home scenario ran to the end", False, repr(error))
finally:
    uncover_home(mounts)
    subprocess.run(["umount", checkout])
    # rmtree would walk into a directory still mounted there, the real checkout among them.
    leftover = mount_points_within(scratch)
    if leftover:
        print(f"# left {scratch} in place: still mounted: {' '.join(leftover)}", flush=True)
    else:
        shutil.rmtree(scratch)

print(f"# {len(FAILURES)} failure(s)" + (": " + "; ".join(FAILURES) if FAILURES else ""), flush=True)
sys.exit(min(len(FAILURES), 100))

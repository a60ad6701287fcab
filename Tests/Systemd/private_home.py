"""A private home for a test that runs as root in a private mount namespace.

cover_home bind-mounts a fresh directory over the real home, so whatever the
test installs or writes under ~ stays out of the real one. Covering the home
also hides everything below it, and a checkout may well live there (a clone
in ~/src): each path the test still needs is mounted back at its own path,
inside the fresh home, so absolute paths (the scripts, the Makefile, SwiftPM's
.build) keep working.
"""
import ctypes
import os
import re
import subprocess

MS_BIND = 0x1000
MS_REC = 0x4000


def is_within(path, directory):
    """Whether path is directory or lies below it, after resolving symbolic links."""
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def mount_points_within(directory):
    """The mount points of this namespace at or below directory (from /proc/self/mountinfo)."""
    directory = os.path.realpath(directory)
    points = []
    with open("/proc/self/mountinfo", "rb") as handle:
        for line in handle:
            # mountinfo escapes blanks, tabs, newlines and backslashes in paths as octal.
            point = os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), line.split()[4]))
            if point == directory or point.startswith(directory.rstrip("/") + "/"):
                points.append(point)
    return points


def _bind_from_descriptor(descriptor, target):
    # mount(8) would resolve the source by name, and once the home is covered that name leads into
    # the fresh home; the kernel follows /proc/self/fd/N to the directory the descriptor was opened on.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    source = f"/proc/self/fd/{descriptor}".encode()
    if libc.mount(source, os.fsencode(target), None, MS_BIND | MS_REC, None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"bind-mounting {target} back: {os.strerror(error)}")


def cover_home(home, fresh_home, keep):
    """Bind-mounts fresh_home over home, keeping each directory of keep that lies within home
    reachable at its own path. Returns the mount points for uncover_home, the home first."""
    home = os.path.realpath(home)
    if home == "/":
        raise ValueError("the home is /: covering it would hide the whole system")
    if is_within(fresh_home, home):
        raise ValueError(f"the fresh home {fresh_home} would be hidden by the home it covers ({home})")
    kept = []
    for path in sorted({os.path.realpath(path) for path in keep if is_within(path, home)}):
        if path == home:
            raise ValueError(f"{path} is the home itself: keeping it would undo the private home")
        if not os.path.isdir(path):
            raise ValueError(f"{path} is not a directory")
        # A path within one already kept comes back with it.
        if not any(is_within(path, outer) for outer in kept):
            kept.append(path)
    # Opened before the home is covered: afterwards these names lead into the fresh home.
    descriptors = [os.open(path, os.O_PATH | os.O_DIRECTORY) for path in kept]
    mounts = []
    try:
        subprocess.run(["mount", "--bind", fresh_home, home], check=True)
        mounts.append(home)
        for path, descriptor in zip(kept, descriptors):
            os.makedirs(path, exist_ok=True)  # The mount point, in the fresh home.
            _bind_from_descriptor(descriptor, path)
            mounts.append(path)
    except BaseException:
        uncover_home(mounts)
        raise
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
    return mounts


def uncover_home(mounts):
    """Unmounts what cover_home mounted, innermost first. Returns the mount points that stayed."""
    stayed = []
    for point in reversed(mounts):
        if subprocess.run(["umount", "--recursive", point]).returncode != 0:
            stayed.append(point)
    return stayed

#!/bin/sh
# Runs Tests/Systemd/private_home_test.py (the private home keeps a checkout
# that lives under it reachable), then Tests/Systemd/service_test.py: coverd as
# a real systemd user service, with journald and `systemd --user` in a private
# mount namespace.
# It needs root (for the namespace). Under CI it must run; elsewhere it skips loudly.
set -eu
top="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
    if [ "${CI:-}" = "true" ]; then
        echo "systemd-test: CI must run as root" >&2
        exit 1
    fi
    echo "##########################################################################" >&2
    echo "## SKIPPED: the systemd --user and journald test needs root (unshare -m) ##" >&2
    echo "##########################################################################" >&2
    exit 0
fi
# Both run, so one failing does not hide the other's results.
status=0
unshare --mount --propagation private /usr/bin/python3 "$top/Tests/Systemd/private_home_test.py" "$top" || status=$?
unshare --mount --propagation private /usr/bin/python3 "$top/Tests/Systemd/service_test.py" "$top" || status=$?
exit "$status"

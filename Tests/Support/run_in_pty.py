#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal, for the end-to-end tests of output meant for a person.

  run_in_pty.py --columns N --timeout S -- COMMAND [ARG ...]

The command's standard input, output and error are the terminal's slave side,
sized N columns by 24 rows before the command starts. Everything it writes
(carriage returns and escape sequences included; the terminal's own output
processing turns each "\\n" into "\\r\\n") is copied byte for byte to this
script's standard output. The exit status is the command's (128 + the signal
when a signal ended it); after S seconds the command is killed and the status
is 124, as timeout(1) has it.
"""
import argparse
import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs="+")
    options = parser.parse_args()

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, options.columns, 0, 0))
    child = subprocess.Popen(options.command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + options.timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            child.kill()
            break
        ready, _, _ = select.select([master], [], [], min(left, 0.5))
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError as error:  # EIO: every slave descriptor is closed, the command is gone
            if error.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        output += chunk
    status = child.wait()
    os.close(master)
    sys.stdout.buffer.write(bytes(output))
    sys.stdout.flush()
    if timed_out:
        return 124
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())

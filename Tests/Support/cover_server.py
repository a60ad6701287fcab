#!/usr/bin/env python3
"""A local HTTP(S) server for coverd's end-to-end tests.

Serves files from --root, counts every request, and answers /fault/... paths
with the hostile behaviours the tests need. Prints "PORT <n>" on stdout once
it listens on 127.0.0.1. With --tls-cert and --tls-key it speaks HTTPS (ALPN
http/1.1, each handshake in its connection's thread); --stall-handshakes N
leaves the first N connections' handshakes unanswered.

  GET /__requests          {"total": N, "paths": {"/a.png": 2, ...}, "times": {"/a.png": [t1, t2]},
                            "max_in_flight": M, "in_flight": K, "user_agents": [...]}   (times: monotonic seconds)
  GET /__reset             forget the counts
  GET /__fail?path=P&status=S   answer every request for plain file P with status S (0: serve it again)
  /<file>                  served with an ETag (its bytes' digest) and a Last-Modified (its mtime);
                           If-None-Match / If-Modified-Since as RFC 9110 says: 304 when they match
                           ("conditional" and "not_modified" in /__requests count them per path)
  /<file>[?delay_ms=N]     a file from --root, optionally after a delay
  /fault/status/<code>[?retry_after=V]        that status, with Retry-After V
  /fault/flaky/<n>/<file>                      500 for the first n requests, then the file
  /fault/retry-after/<s>/<file>                503 + Retry-After: <s> once, then the file
  /fault/retry-date/<s>/<file>                 503 + Retry-After: <HTTP-date now+s> once, then the file
  /fault/throttle/<s>/<file>                   429 + Retry-After: <s> once, then the file
  /fault/silent                                accept, read the request, never answer
  /fault/barrier/<n>/<file>                    hold each request until n such requests are in flight
                                               together, then serve the file (503 after 30 s without them)
  /fault/slow/<bytes per second>/<file>        trickle the file
  /fault/short/<file>                          announce the full length, send half, close
  /fault/reset/<file>                          send half, then reset the connection
  /fault/html                                  200 with an HTML page
  /fault/huge?bytes=N&length=0|1               N bytes of zeros, with or without Content-Length
  /fault/lying-length?announce=N&bytes=M       200, Content-Length N, but M bytes sent chunked (libcurl takes them)
  /fault/redirect-loop/<n>                     302 to /fault/redirect-loop/<n+1>, forever
  /fault/redirect/<n>/<file>                   a chain of n redirects ending at the file
  /fault/redirect-to?url=<u>                   302 to an arbitrary URL
"""
import argparse
import email.utils
import hashlib
import json
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS = {}
TIMES = {}
SEEN = {}
AGENTS = set()
CONDITIONAL = {}
NOT_MODIFIED = {}
FAILING = {}
IN_FLIGHT = {"now": 0, "max": 0}
LOCK = threading.Lock()
BARRIER = threading.Condition(LOCK)
ARRIVED = {}


def count(path):
    with LOCK:
        COUNTS[path] = COUNTS.get(path, 0) + 1
        TIMES.setdefault(path, []).append(time.monotonic())
        return COUNTS[path]


def first_time(key):
    """True the first time `key` is asked about (per server run)."""
    with LOCK:
        SEEN[key] = SEEN.get(key, 0) + 1
        return SEEN[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cover-server/1"

    def log_message(self, fmt, *args):  # Quiet: tests read /__requests instead.
        pass

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        if self.path.startswith("/__"):
            return self.control()
        with LOCK:
            IN_FLIGHT["now"] += 1
            IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
            AGENTS.add(self.headers.get("User-Agent", ""))
        try:
            self.serve()
        finally:
            with LOCK:
                IN_FLIGHT["now"] -= 1

    def control(self):
        if self.path == "/__requests":
            with LOCK:
                body = json.dumps({
                    "total": sum(COUNTS.values()), "paths": COUNTS,
                    "max_in_flight": IN_FLIGHT["max"], "in_flight": IN_FLIGHT["now"], "user_agents": sorted(AGENTS),
                    "times": TIMES, "conditional": CONDITIONAL, "not_modified": NOT_MODIFIED,
                }).encode()
            return self.respond(200, body, "application/json")
        if self.path == "/__reset":
            with LOCK:
                COUNTS.clear()
                TIMES.clear()
                SEEN.clear()
                AGENTS.clear()
                CONDITIONAL.clear()
                NOT_MODIFIED.clear()
                ARRIVED.clear()
                IN_FLIGHT["max"] = IN_FLIGHT["now"]
            return self.respond(200, b"ok\n", "text/plain")
        if self.path.startswith("/__fail?"):
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            with LOCK:
                if int(query.get("status", "0")) == 0:
                    FAILING.pop(query["path"], None)
                else:
                    FAILING[query["path"]] = int(query["status"])
            return self.respond(200, b"ok\n", "text/plain")
        return self.respond(404, b"unknown control path\n", "text/plain")

    def serve(self):
        head = self.command == "HEAD"
        parsed = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parsed.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        count(path)
        if path.startswith("/fault/"):
            return self.fault(path[len("/fault/"):], query)
        if "delay_ms" in query:
            time.sleep(int(query["delay_ms"]) / 1000)
        return self.serve_file(path, head=head)

    # -- plain files -------------------------------------------------------

    def read_file(self, name):
        root = os.path.realpath(self.server.root)
        full = os.path.realpath(os.path.join(root, name.lstrip("/")))
        if not full.startswith(root + os.sep) or not os.path.isfile(full):
            return None
        with open(full, "rb") as handle:
            return handle.read()

    def serve_file(self, name, head=False):
        with LOCK:
            failing = FAILING.get(name)
        if failing:
            return self.respond(failing, b"failing on purpose\n", "text/plain")
        data = self.read_file(name)
        if data is None:
            return self.respond(404, b"not found\n", "text/plain")
        root = os.path.realpath(self.server.root)
        mtime = os.stat(os.path.join(root, name.lstrip("/"))).st_mtime
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        validators = {"ETag": etag, "Last-Modified": email.utils.formatdate(mtime, usegmt=True)}
        if self.not_modified(etag, mtime, name):
            self.send_response(304)
            for key, value in validators.items():
                self.send_header(key, value)
            self.end_headers()
            return None
        return self.respond(200, data, "image/png", validators, head=head)

    def not_modified(self, etag, mtime, name):
        """RFC 9110 13.2.2: If-None-Match decides when present; else If-Modified-Since."""
        match = self.headers.get("If-None-Match")
        since = self.headers.get("If-Modified-Since")
        if match is None and since is None:
            return False
        with LOCK:
            CONDITIONAL[name] = CONDITIONAL.get(name, 0) + 1
        if match is not None:
            tags = [tag.strip().removeprefix("W/") for tag in match.split(",")]
            fresh = "*" in tags or etag in tags
        else:
            try:
                fresh = int(mtime) <= email.utils.parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError):
                fresh = False
        if fresh:
            with LOCK:
                NOT_MODIFIED[name] = NOT_MODIFIED.get(name, 0) + 1
        return fresh

    def respond(self, status, body, content_type, headers=None, head=False):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    # -- faults ------------------------------------------------------------

    def fault(self, spec, query):
        parts = spec.split("/")
        kind = parts[0]
        rest = "/".join(parts[2:]) if len(parts) > 2 else ""
        if kind == "status":
            headers = {"Retry-After": query["retry_after"]} if "retry_after" in query else {}
            return self.respond(int(parts[1]), b"fault\n", "text/plain", headers)
        if kind == "flaky":
            if first_time(spec) <= int(parts[1]):
                return self.respond(500, b"try again\n", "text/plain")
            return self.serve_file(rest)
        if kind in ("retry-after", "retry-date", "throttle"):
            if first_time(spec) == 1:
                seconds = int(parts[1])
                value = str(seconds) if kind != "retry-date" else email.utils.formatdate(time.time() + seconds, usegmt=True)
                return self.respond(429 if kind == "throttle" else 503, b"later\n", "text/plain", {"Retry-After": value})
            return self.serve_file(rest)
        if kind == "silent":
            time.sleep(3600)
            return None
        if kind == "barrier":
            # Only requests on connections of their own can be in flight together over HTTP/1.1.
            wanted = int(parts[1])
            with BARRIER:
                ARRIVED[wanted] = ARRIVED.get(wanted, 0) + 1
                BARRIER.notify_all()
                met = BARRIER.wait_for(lambda: ARRIVED[wanted] >= wanted, timeout=30)
            if not met:
                return self.respond(503, b"barrier not reached\n", "text/plain")
            return self.serve_file(rest)
        if kind == "slow":
            data = self.read_file(rest) or b""
            rate = max(1, int(parts[1]))
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for offset in range(0, len(data), rate):
                self.wfile.write(data[offset:offset + rate])
                self.wfile.flush()
                time.sleep(1)
            return None
        if kind in ("short", "reset"):
            data = self.read_file("/".join(parts[1:])) or b"x" * 1000
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if kind == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return None
        if kind == "html":
            return self.respond(200, b"<!DOCTYPE html><html><body>Not a cover</body></html>\n", "text/html")
        if kind == "huge":
            total = int(query.get("bytes", str(1 << 30)))
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            if query.get("length", "1") == "1":
                self.send_header("Content-Length", str(total))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            chunk = b"\x89PNG\r\n\x1a\n" + b"\0" * (64 * 1024 - 8)
            sent = 0
            try:
                while sent < total:
                    piece = chunk[: min(len(chunk), total - sent)]
                    self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        if kind == "lying-length":
            data = (b"\x89PNG\r\n\x1a\n" + b"\0" * int(query["bytes"]))[: int(query["bytes"])]
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", query["announce"])
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
            return None
        if kind == "redirect-loop":
            return self.respond(302, b"", "text/plain", {"Location": f"/fault/redirect-loop/{int(parts[1]) + 1}"})
        if kind == "redirect":
            remaining = int(parts[1])
            target = f"/fault/redirect/{remaining - 1}/{rest}" if remaining > 1 else f"/{rest}"
            return self.respond(302, b"", "text/plain", {"Location": target})
        if kind == "redirect-to":
            return self.respond(302, b"", "text/plain", {"Location": query["url"]})
        return self.respond(404, b"unknown fault\n", "text/plain")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    tls = None
    stall_handshakes = 0
    stalled = []

    def process_request_thread(self, request, client_address):
        """Over TLS, each connection's handshake in its own thread, so one that stalls holds up no other;
        the first --stall-handshakes connections are kept open and never answered."""
        if self.tls is not None:
            with LOCK:
                stall = len(self.stalled) < self.stall_handshakes
                if stall:
                    self.stalled.append(request)
            if stall:
                return
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                self.shutdown_request(request)
                return
        super().process_request_thread(request, client_address)


def main():
    # A parent that blocks signals (a libdispatch worker) passes that mask on: undo it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--stall-handshakes", type=int, default=0,
                        help="TLS: accept this many first connections and never answer their handshakes")
    args = parser.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.root = args.root
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        # What an HTTP/1.1 server says in its handshake (ALPN), so clients know at once it does not multiplex.
        context.set_alpn_protocols(["http/1.1"])
        server.tls = context
        server.stall_handshakes = args.stall_handshakes
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

"""The HTTPS row of coverd's benchmark: the full sync over TLS with HTTP/2.

A second nginx serves the same PNG corpus over TLS with HTTP/2, with a
certificate for 127.0.0.1 and localhost signed by a test CA that openssl
makes at bench time under .build-bench/tls/. coverd trusts that CA through
its `fetch.ca_file` setting (a --config file of the bench's own); the baseline
is `curl -Z --cacert` at the same parallelism. Runs alternate as in the
loopback rows, and every cover of both is checked byte for byte. nginx logs
each request's protocol and connection, so the table can say what each
program really used (both set PIPEWAIT over https, so both should multiplex
on one connection).
"""
import collections
import os
import shutil
import statistics
import subprocess


def make_ca(directory):
    """A fresh test CA and a server certificate for 127.0.0.1 and localhost signed by it:
    (CA certificate, server certificate, server key), all PEM files in `directory`."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    ca_key, ca_cert = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, request, cert = (os.path.join(directory, name) for name in ("server.key", "server.csr", "server.pem"))
    extensions = os.path.join(directory, "server.ext")
    with open(extensions, "w") as handle:
        handle.write("basicConstraints = CA:FALSE\nkeyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n"
                     "subjectAltName = IP:127.0.0.1, DNS:localhost\n")

    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    # P-256 keys: what a current server would present, and quick to make.
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", ca_key,
            "-out", ca_cert, "-days", "2", "-subj", "/CN=coverd bench test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-out", request, "-subj", "/CN=127.0.0.1")
    openssl("x509", "-req", "-in", request, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
            "-days", "2", "-extfile", extensions)
    return ca_cert, cert, key


class Server:
    """The TLS nginx over `corpus_dir`, its CA, and a coverd configuration that trusts that CA."""

    def __init__(self, bench, corpus_dir):
        directory = os.path.join(bench.WORK, "tls")
        self.ca, cert, key = make_ca(directory)
        self.config = os.path.join(directory, "coverd.toml")
        with open(self.config, "w") as handle:
            handle.write(f'[fetch]\nca_file = "{self.ca}"\n')
        self.nginx = bench.Nginx(corpus_dir, tls=(cert, key), name="nginx-tls")
        self.offset = self.nginx.log_lines()[1]
        names = sorted(n for n in os.listdir(corpus_dir) if n.endswith(".png"))
        self.urls = [f"{self.nginx.base}/{name}" for name in names]

    def served(self):
        """What nginx logged since the last call: (Counter of 'status protocol TLS-version' strings, connections)."""
        lines, self.offset = self.nginx.log_lines(self.offset)
        kinds = collections.Counter(" ".join(line.split()[:3]) for line in lines)
        return kinds, len({line.split()[3] for line in lines})

    def stop(self):
        self.nginx.stop()


def describe(served):
    kinds, connections = served
    return f"{', '.join(f'{count} × {kind}' for kind, count in kinds.most_common())} on {connections} connection(s)"


def coverd_run(bench, server, binary, parallel, corpus_dir, run=None):
    """One coverd sync over TLS, checked; (seconds, peak RSS in KiB, CPU seconds, what nginx served)."""
    elapsed, rss, status, cache = bench.run_coverd_sync(binary, server.urls, parallel, run=run, config=server.config,
                                                       records_name="https-albums")
    served = server.served()
    bad = bench.verify_cache(cache, server.urls, corpus_dir)
    if bad or status != 0:
        raise RuntimeError(f"coverd over HTTPS: {bad} covers missing or different, exit status {status}")
    return elapsed, rss, bench.LAST_CPU, served


def curl_run(bench, server, parallel, corpus_dir):
    """One `curl -Z --cacert` over TLS, checked; (seconds, CPU seconds, what nginx served)."""
    elapsed = bench.run_curl(server.urls, parallel, extra=["--cacert", server.ca])
    served = server.served()
    bad = bench.verify_curl(bench.LAST_CURL_DIR, server.urls, corpus_dir)
    if bad:
        raise RuntimeError(f"curl -Z over HTTPS: {bad} covers missing or different")
    return elapsed, bench.LAST_CURL_CPU, served


def rows(bench, binary, corpus_dir, parallel, runs):
    """The table's HTTPS rows: `runs` alternating syncs of coverd and curl -Z over TLS and HTTP/2."""
    server = Server(bench, corpus_dir)
    try:
        # The first handshake and nginx's first files are not timed.
        subprocess.run(["curl", "--fail", "-s", "-o", "/dev/null", "--cacert", server.ca, server.urls[0]], check=True)
        server.served()
        coverd_times, curl_times, rss_values, coverd_cpu, curl_cpu = [], [], [], [], []
        for run in range(runs):
            def coverd():
                elapsed, rss, cpu, served = coverd_run(bench, server, binary, parallel, corpus_dir)
                coverd_times.append(elapsed)
                rss_values.append(rss)
                coverd_cpu.append(cpu)
                return f"coverd {elapsed:.2f} s ({cpu:.2f} s CPU, peak RSS {rss / 1024:.1f} MiB; {describe(served)})"

            def curl():
                elapsed, cpu, served = curl_run(bench, server, parallel, corpus_dir)
                curl_times.append(elapsed)
                curl_cpu.append(cpu)
                return f"curl -Z {elapsed:.2f} s ({cpu:.2f} s CPU; {describe(served)})"

            # Alternating order, as in the loopback rows.
            said = [step() for step in ((curl, coverd) if run % 2 else (coverd, curl))]
            print(f"# https run {run + 1}: " + ", ".join(said), flush=True)
    finally:
        server.stop()
    coverd_median, curl_median = statistics.median(coverd_times), statistics.median(curl_times)
    paired = statistics.median(a / b for a, b in zip(coverd_times, curl_times))
    count = len(server.urls)
    return [
        (f"full sync over HTTPS (TLS, HTTP/2, test CA), {count} covers, parallel {parallel} (median of {runs})",
         f"{coverd_median:.2f} s", f"curl -Z --cacert {curl_median:.2f} s", f"{coverd_median / curl_median:.2f}", ""),
        ("full sync over HTTPS, median of the per-run ratios", "", "", f"{paired:.2f}", ""),
        ("CPU time for the HTTPS sync (user + system, median)", f"{statistics.median(coverd_cpu):.2f} s",
         f"curl -Z {statistics.median(curl_cpu):.2f} s", f"{statistics.median(coverd_cpu) / statistics.median(curl_cpu):.2f}", ""),
        (f"peak RSS during the HTTPS sync (VmHWM, max; {bench.filesystem_label()})", f"{max(rss_values) / 1024:.1f} MiB", "", "", "≤ 64 MiB"),
    ]


def check(bench, binary, corpus_dir, parallel):
    """`make bench-check`: a sync of coverd and one of curl -Z over TLS, every cover checked, both
    served over HTTP/2; the lines to print, and how many problems there were."""
    server = Server(bench, corpus_dir)
    try:
        _, rss, _, coverd_served = coverd_run(bench, server, binary, parallel, corpus_dir)
        _, _, curl_served = curl_run(bench, server, parallel, corpus_dir)
    finally:
        server.stop()
    problems = sum(1 for kinds, _ in (coverd_served, curl_served) for kind in kinds if not kind.startswith("200 HTTP/2.0"))
    return [f"bench check: {len(server.urls)} covers over HTTPS, coverd: {describe(coverd_served)}; curl -Z: {describe(curl_served)}"], problems

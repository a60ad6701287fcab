"""The full sync again over a link of a real network's rate: loopback shaped to
1 Gbit/s (bench/shaping.py), coverd and curl -Z alternating as in the main rows.

On bare loopback a cover arrives in a fraction of a millisecond, so what is
timed there is the CPU each program spends per cover, and coverd spends more
than curl -Z: it inflates every PNG to check it (the contract's "complete,
valid PNG"), which curl does not. Over a link slower than that, the bytes set
the pace; these rows show whether coverd keeps up with curl -Z there. It is not
the Internet: the round trips stay loopback's (bench/shaping.py).
"""
import statistics

import shaping

RATE, RATE_LABEL = "1gbit", "1 Gbit/s"


def rows(bench, binary, urls, corpus_dir, parallel, runs, rate=RATE, label=RATE_LABEL):
    """The table's rows for `runs` alternating syncs of each over lo shaped to `rate`.
    `bench` is the running bench.py module (`__main__`), whose LAST_* globals the runs set."""
    bench.warm_up(urls, corpus_dir)  # With --skip sync nothing has yet; coverd's run comes first.
    coverd_times, curl_times = [], []
    try:
        with shaping.shaped_loopback(rate):
            for run in range(runs):
                # Alternating order, as in the loopback rows.
                if run % 2:
                    curl_times.append(timed_curl(bench, urls, corpus_dir, parallel))
                elapsed, rss, status, cache = bench.run_coverd_sync(binary, urls, parallel)
                bad = bench.verify_cache(cache, urls, corpus_dir)
                if bad or status != 0:
                    raise RuntimeError(f"coverd over the shaped link: {bad} covers missing or different, exit status {status}")
                coverd_times.append(elapsed)
                if run % 2 == 0:
                    curl_times.append(timed_curl(bench, urls, corpus_dir, parallel))
                print(f"# link {label}, run {run + 1}: coverd {elapsed:.2f} s ({bench.LAST_CPU:.2f} s CPU, peak RSS {rss / 1024:.1f} MiB), "
                      f"curl -Z {curl_times[-1]:.2f} s ({bench.LAST_CURL_CPU:.2f} s CPU)", flush=True)
    except shaping.ShapingUnavailable as error:
        print(f"# link {label}: not measured: {error}", flush=True)
        return [(f"full sync over a {label} link", f"not measured ({error})", "", "", "")]
    coverd_median, curl_median = statistics.median(coverd_times), statistics.median(curl_times)
    paired = statistics.median(a / b for a, b in zip(coverd_times, curl_times))
    return [
        (f"full sync over a {label} link (loopback shaped with tc tbf; median of {runs})",
         f"{coverd_median:.2f} s", f"curl -Z {curl_median:.2f} s", f"{coverd_median / curl_median:.2f}", ""),
        (f"full sync over a {label} link, median of the per-run ratios", "", "", f"{paired:.2f}", ""),
    ]


def timed_curl(bench, urls, corpus_dir, parallel):
    elapsed = bench.run_curl(urls, parallel)
    bad = bench.verify_curl(bench.LAST_CURL_DIR, urls, corpus_dir)
    if bad:
        raise RuntimeError(f"curl -Z over the shaped link: {bad} covers missing or different")
    return elapsed

"""Corpora the benchmark generates once and keeps between runs."""
import multiprocessing
import os
import shutil


def kept_corpus(directory, what, make_jobs, write, chunksize):
    """`directory`, filled once by `write` over `make_jobs(directory)` in parallel; a `.complete`
    marker makes later runs reuse it, and a half-written one (no marker) is started over."""
    marker = os.path.join(directory, ".complete")
    if os.path.exists(marker):
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    jobs = make_jobs(directory)
    print(f"# generating {len(jobs)} {what} (once; kept in {directory})", flush=True)
    with multiprocessing.Pool() as pool:
        pool.map(write, jobs, chunksize=chunksize)
    open(marker, "w").close()
    return directory

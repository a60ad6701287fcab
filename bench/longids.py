"""The scale rows again with every album id 128 characters long.

Ids are strings the daemon holds in several tables at once, so its memory at
100,000 albums depends on their length: the scale rows' ids have 7
characters, the contract allows 128, and ids derived from an artist and a
title (records without an `id`) often have 30 to 90. This copies the scale
run's library with each id lengthened to 128 characters (the covers
hard-linked under their new names, so their size and time stay those the
index remembers; the index copied through SQLite's backup and its ids
rewritten), then measures a start after a page-cache drop and a restart.
Nothing is downloaded: the requests made are counted, and must be 0.
"""
import json
import os
import shutil

LENGTH = 128


def longer(album_id):
    assert len(album_id) < LENGTH - 1, album_id  # The scale run's ids have 7 characters.
    return album_id + "-" + "x" * (LENGTH - len(album_id) - 1)


def prepare(scale_base, base, albums):
    """`base`/albums and `base`/cache: the scale library (already synced) with long ids."""
    import sqlite3  # Here, not at the top: `make test`'s bench check never comes this far.
    marker = os.path.join(base, ".ready")
    scale_marker = os.path.join(scale_base, f".cached-{albums}")  # Written by bench.scale once synced.
    if os.path.exists(marker) and os.path.getmtime(marker) >= os.path.getmtime(scale_marker):
        return  # Made from the scale library as it is now.
    shutil.rmtree(base, ignore_errors=True)
    covers_from = os.path.join(scale_base, "cache", "covers")
    covers = os.path.join(base, "cache", "covers")
    os.makedirs(covers)
    for name in os.listdir(covers_from):
        if name.endswith(".png"):
            os.link(os.path.join(covers_from, name), os.path.join(covers, longer(name[:-4]) + ".png"))
    source = sqlite3.connect(os.path.join(scale_base, "cache", "index.sqlite3"))
    index = sqlite3.connect(os.path.join(base, "cache", "index.sqlite3"))
    source.backup(index)
    source.close()
    records_from = os.path.join(scale_base, "albums") + "/"
    records = os.path.join(base, "albums") + "/"
    index.create_function("longer", 1, longer)
    index.execute("UPDATE albums SET id = longer(id), record = replace(record, ?, ?)", (records_from, records))
    index.commit()
    index.close()
    os.makedirs(records)
    for name in os.listdir(records_from):
        with open(os.path.join(records_from, name)) as handle:
            albums = json.load(handle)
        for album in albums:
            album["id"] = longer(album["id"])
        with open(os.path.join(records, name), "w") as handle:
            json.dump(albums, handle)
    open(marker, "w").close()


def rows(bench, binary, nginx, albums=100_000):
    """The long-id rows: READY after a page-cache drop and on a restart, the end of the check of
    the cached covers after the drop, the peak RSS of each, requests."""
    base = os.path.join(bench.WORK, "scale-long-ids")
    prepare(os.path.join(bench.WORK, "scale"), base, albums)
    records, cache = os.path.join(base, "albums"), os.path.join(base, "cache")
    label = f"{albums:,} cached albums, {LENGTH}-character ids"
    before = nginx.requests()
    out = []
    if bench.drop_page_cache("scale, long ids"):
        cold, cold_rss, _, cold_checked = bench.cached_start(binary, records, cache, albums, settle=False)
        out.append((f"{label}: start to READY=1, page cache dropped first", f"{cold:.2f} s", "", "", "≤ 2 s"))
        out.append((f"{label}: start to every cached cover looked at, page cache dropped first",
                    bench.seconds_or_none(cold_checked), "", "", ""))
        out.append((f"{label}: peak RSS, page cache dropped first", f"{cold_rss / 1024:.1f} MiB", "", "", "≤ 128 MiB"))
    ready, rss, _, _ = bench.cached_start(binary, records, cache, albums)
    out.append((f"{label}: start to READY=1, a restart", f"{ready:.2f} s", "", "", "≤ 2 s"))
    out.append((f"{label}: peak RSS, a restart", f"{rss / 1024:.1f} MiB", "", "", "≤ 128 MiB"))
    out.append((f"{label}: requests made", f"{nginx.requests() - before}", "", "", "0"))
    return out

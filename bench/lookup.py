"""The lookup row of coverd's benchmark: covers found by themselves.

1,000 albums whose records carry a MusicBrainz release id and no cover URL
are synced against the tests' stand-in for MusicBrainz and the Cover Art
Archive (Tests/Support/musicbrainz_server.py, on loopback): each cover is
the archive's front image of its release, reached through a 307 to the
image host. Printed: the time from start to all cached, the requests per
album (archive and image host), and that MusicBrainz was not asked. The
search path has no row of its own: MusicBrainz allows about one request a
second from a whole client, so a library without ids is looked up at about
one album a second, whatever the machine.
"""
import json
import os
import statistics
import subprocess
import sys
import urllib.request

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Support", "musicbrainz_server.py")
COUNT = 1000


def release_id(index):
    return f"{index:08x}-0000-4000-8000-{index:012x}"


class Services:
    """The stand-in on three loopback ports, counting requests."""

    def __init__(self, fixtures_path):
        self.process = subprocess.Popen([sys.executable, SERVER, "--fixtures", fixtures_path], stdout=subprocess.PIPE, text=True)
        self.ports = {}
        while len(self.ports) < 3:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("musicbrainz_server.py exited before printing its ports")
            words = line.split()
            if len(words) == 3 and words[0] == "PORT":
                self.ports[words[1]] = int(words[2])

    def url(self, origin):
        return f"http://127.0.0.1:{self.ports[origin]}"

    def requests(self):
        with urllib.request.urlopen(self.url("mb") + "/__requests", timeout=10) as answer:
            return json.load(answer)

    def reset(self):
        urllib.request.urlopen(self.url("mb") + "/__reset", timeout=10).close()

    def stop(self):
        self.process.kill()
        self.process.wait()


def rows(bench, binary, runs):
    work = os.path.join(bench.RUNS, "lookup")
    os.makedirs(work, exist_ok=True)
    fixtures = os.path.join(work, "fixtures.json")
    releases = [{"id": release_id(index), "title": f"Album {index}", "artist_credit": f"Artist {index}",
                 "image": {"generate": [300, 300], "color": [index % 256, (index * 7) % 256, (index * 13) % 256]}}
                for index in range(1, COUNT + 1)]
    with open(fixtures, "w") as handle:
        json.dump({"options": {"rate_limit": None}, "releases": releases}, handle)
    services = Services(fixtures)
    try:
        config = os.path.join(work, "coverd.toml")
        with open(config, "w") as handle:
            handle.write(f'[sources]\nmusicbrainz_url = "{services.url("mb")}"\ncoverartarchive_url = "{services.url("caa")}"\n')
        records = os.path.join(work, "albums")
        os.makedirs(records, exist_ok=True)
        for file in range(10):
            albums = [{"title": f"Album {index}", "artist": f"Artist {index}", "mbid": release_id(index)}
                      for index in range(file * 100 + 1, file * 100 + 101)]
            with open(os.path.join(records, f"r{file}.json"), "w") as handle:
                json.dump(albums, handle)
        expected = f"{COUNT} albums: {COUNT} cached, 0 pending, 0 failed"
        times, per_album, musicbrainz = [], [], []
        for run in range(runs):
            services.reset()
            cache = bench.fresh("lookup-cache")
            with bench.running(binary, records, cache, config=config) as (daemon, notify):
                done = notify.wait_for(lambda fields: fields.get("STATUS") == expected, 600)
                times.append(done - daemon.started)
            seen = services.requests()
            per_album.append(seen["total"] / COUNT)
            musicbrainz.append(seen["origins"]["mb"]["total"])
            print(f"# lookup run {run + 1}: {times[-1]:.2f} s, {per_album[-1]:.2f} requests an album, "
                  f"{musicbrainz[-1]} to MusicBrainz", flush=True)
    finally:
        services.stop()
    return [
        (f"{COUNT:,} albums found by release id (archive front, 307 to the image host): start to all cached",
         f"{statistics.median(times):.2f} s", "", "", ""),
        ("requests an album (archive and image host); to MusicBrainz", f"{statistics.median(per_album):.2f}; {max(musicbrainz)}", "", "", "2; 0"),
        ("albums found by search (MusicBrainz's rule: about one request a second)", "about 1 a second", "", "", ""),
    ]

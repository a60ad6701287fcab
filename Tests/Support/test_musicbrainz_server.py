#!/usr/bin/env python3
"""Self-test of musicbrainz_server.py: starts it on loopback and checks each
behaviour its docstring promises, with urllib (http.client where a response must
be read raw). Standard library only; a few seconds. `make test` runs it.

No fixed sleeps and no timing assertions: the tests wait on conditions with
deadlines (wait_until), read times from the server's own clock (/__requests),
and shrink or stretch options.rate_limit.window so that what the rate rule
must do does not depend on how fast this machine is.

  python3 Tests/Support/test_musicbrainz_server.py [-v]
"""
import base64
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in a SwiftPM target's directory
import musicbrainz_server as stand_in  # noqa: E402  (for derived ids only; the server runs as a process)
SCRIPT = os.path.join(HERE, "musicbrainz_server.py")
AGENT = "coverd-selftest/1.0 ( selftest@example.invalid )"

R_INNUENDO = "11111111-1111-4111-8111-111111111111"     # Queen, 1400 px original: every thumbnail
G_INNUENDO = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
R_INNUENDO_2 = "11111111-1111-4111-8111-111111111112"   # the same group, no front image
R_SMALL = "22222222-2222-4222-8222-222222222222"        # 600 px original: no 1200 thumbnail
R_BACK_ONLY = "33333333-3333-4333-8333-333333333333"
R_SPECIAL = "44444444-4444-4444-8444-444444444444"      # a title with every special character
R_JPEG = "55555555-5555-4555-8555-555555555555"         # a JPEG original from a file
R_NO_CAA = "66666666-6666-4666-8666-666666666666"
R_LEGACY = "77777777-7777-4777-8777-777777777777"
R_FLAKY = "99999999-9999-4999-8999-999999999991"        # times: MusicBrainz 503s twice, then recovers
R_FLAKY_ALL = "99999999-9999-4999-8999-999999999992"    # times: once on each origin, a different mode each
R_IN_FLAKY_GROUP = "99999999-9999-4999-8999-999999999993"
G_FLAKY = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"        # times: the group fails once on MusicBrainz and the archive
G_EMPTY = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"        # a group with no art at all
DECOY_GROUP = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
SPECIAL_TITLE = 'a+b-c&&d||e!f(g)h{i}j[k]l^m"n~o*p?q:r\\s/t'
MODES = ["html", "huge", "huge-nolength", "huge-chunked", "deep", "wrong-types", "wrong-container", "empty",
         "truncated", "bad-id", "redirect-file", "redirect-ftp", "503", "silent", "status:429", "status:503",
         "status:500"]
START_TIMEOUT = 30  # seconds for the server to print its ports


def hostile_id(mode):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "hostile:" + mode))


def tiny_jpeg(width, height):
    """Not a decodable JPEG, but its markers say what it is and how big (enough for the server)."""
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + sof + b"\xff\xd9"


def fixtures(rate_limit=None, **options):
    return {
        "options": dict({"rate_limit": rate_limit, "huge_bytes": 50 * 1024 * 1024}, **options),
        "release_groups": [
            {"id": G_INNUENDO, "title": "Innuendo", "primary_type": "Album", "artist_credit": "Queen"},
            {"id": G_EMPTY, "title": "Silence", "artist_credit": "Nobody"},
        ],
        "releases": [
            {"id": R_INNUENDO_2, "title": "Innuendo", "artist_credit": "Queen", "release_group": G_INNUENDO,
             "front": False, "date": "1991-02-04"},
            {"id": R_INNUENDO, "title": "Innuendo", "artist_credit": "Queen", "release_group": G_INNUENDO,
             "date": "1991-02-05", "country": "GB", "image": {"generate": [1400, 1400]}},
            {"id": R_SMALL, "title": "Bookends",
             "artist_credit": [{"name": "Simon", "joinphrase": " & "}, "Garfunkel"]},
            {"id": R_BACK_ONLY, "title": "Backside", "artist_credit": "Rear", "front": False, "back": True},
            {"id": R_SPECIAL, "title": SPECIAL_TITLE, "artist_credit": "AC/DC"},
            {"id": R_JPEG, "title": "Jpeg Days", "artist_credit": "Joint Photographic", "image": "cover.jpg"},
            {"id": R_NO_CAA, "title": "Nothing Archived", "artist_credit": "Nobody", "caa": False,
             "release_group": G_EMPTY},
            {"id": R_LEGACY, "title": "Old Keys", "artist_credit": "Legacy", "legacy_thumbnail_keys": True},
        ] + [{"id": hostile_id(mode), "title": f"Hostile {mode}", "artist_credit": "Hostile", "hostile": mode,
              "search": False} for mode in MODES],
        "search_extra": [
            {"entity": "release-group", "id": DECOY_GROUP, "title": "Innuendo", "artist_credit": "Queen Latifah"},
            {"entity": "release", "title": "Innuendo", "artist_credit": "Queen Latifah",
             "release_group": {"id": DECOY_GROUP, "title": "Innuendo"}},
            {"entity": "release-group", "title": "Always There", "artist_credit": "Spam", "score": 42,
             "always": True},
        ],
        "hostile_searches": [
            {"match": "Evil Twin", "mode": "deep", "entity": "release-group"},
            {"match": "Wrong Types", "mode": "wrong-types"},
            {"match": "Nothing Here", "mode": "empty"},
            {"match": "Bad Ids", "mode": "bad-id"},
        ],
    }


def flaky_fixtures(**options):
    """The fixtures plus hostile specs with `times`."""
    data = fixtures(**options)
    data["release_groups"].append({"id": G_FLAKY, "title": "Flaky Group", "artist_credit": "Flaky",
                                   "hostile": {"mb": "status:503", "caa": "503", "times": 1}})
    data["releases"] += [
        {"id": R_FLAKY, "title": "Flaky", "artist_credit": "Flaky", "hostile": {"mb": "503", "times": 2}},
        {"id": R_FLAKY_ALL, "title": "Flaky Everywhere", "artist_credit": "Flaky",
         "hostile": {"mb": "status:429", "caa": "status:500", "images": "html", "times": 1}},
        {"id": R_IN_FLAKY_GROUP, "title": "Flaky Group", "artist_credit": "Flaky", "release_group": G_FLAKY},
    ]
    data["hostile_searches"] += [
        # Two rules with one match: the first while it has times left, then the second, then none.
        {"match": "Flaky Search", "mode": "status:503", "entity": "release-group", "times": 1},
        {"match": "Flaky Search", "mode": "html", "entity": "release-group", "times": 1},
        {"match": "Never Hostile", "mode": "html", "times": 0},
    ]
    return data


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)
FOLLOW = urllib.request.build_opener()
OPENER.addheaders = FOLLOW.addheaders = []  # no default "Python-urllib/x" User-Agent: the tests choose


class Server:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        with open(os.path.join(self.dir.name, "cover.jpg"), "wb") as handle:
            handle.write(tiny_jpeg(800, 700))
        path = os.path.join(self.dir.name, "fixtures.json")
        with open(path, "w") as handle:
            json.dump(fixtures(), handle)
        self.process = subprocess.Popen([sys.executable, SCRIPT, "--fixtures", path], stdout=subprocess.PIPE,
                                        text=True)
        # The three port lines, read on a thread so that a server that hangs or dies cannot hang the test.
        lines = []

        def read_ports():
            for _ in range(3):
                line = self.process.stdout.readline()
                if not line:
                    return
                lines.append(line)

        reader = threading.Thread(target=read_ports, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        if len(lines) < 3:
            code = self.process.poll()
            self.process.kill()
            self.process.wait()
            self.dir.cleanup()
            raise RuntimeError(f"musicbrainz_server.py exited with status {code} before printing its ports"
                               if code is not None else
                               f"musicbrainz_server.py printed {len(lines)} of its 3 port lines in {START_TIMEOUT} s")
        self.ports = {}
        for expected, line in zip(("mb", "caa", "images"), lines):
            word, name, port = line.split()
            assert word == "PORT" and name == expected, (word, name)
            self.ports[name] = int(port)

    def url(self, origin, path):
        return f"http://127.0.0.1:{self.ports[origin]}{path}"

    def stop(self, timeout=20):
        """SIGTERM, then its exit status; a deadline, not a measurement: fails only if it never exits."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"musicbrainz_server.py did not exit within {timeout} s of SIGTERM")
        finally:
            self.dir.cleanup()


SERVER = None


def setUpModule():
    global SERVER
    SERVER = Server()


def tearDownModule():
    if SERVER is not None and SERVER.process.poll() is None:
        SERVER.stop()


def wait_until(what, condition, timeout=20, interval=0.01):
    """Re-checks `condition` until it returns something true, and returns that; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def request(origin, path, agent=AGENT, method="GET", headers=None, follow=False, data=None, timeout=10):
    """(status, headers, body) without following redirects unless asked."""
    all_headers = dict(headers or {})
    if agent is not None:
        all_headers["User-Agent"] = agent
    req = urllib.request.Request(SERVER.url(origin, path), method=method, headers=all_headers, data=data)
    if agent is None:
        req.remove_header("User-agent")
    opener = FOLLOW if follow else OPENER
    try:
        with opener.open(req, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def mb(path, **kwargs):
    return request("mb", path, **kwargs)


def mb_json(path, **kwargs):
    status, headers, body = mb(path, **kwargs)
    return status, json.loads(body)


def search(entity, query, **params):
    params = dict({"query": query, "fmt": "json"}, **params)
    return mb_json(f"/ws/2/{entity}/?" + urllib.parse.urlencode(params))


def control(path, data=None):
    status, _, body = request("mb", path, method="POST" if data is not None else "GET",
                              data=json.dumps(data).encode() if data is not None else None)
    return status, json.loads(body) if body.startswith(b"{") else body


def reload(**kwargs):
    load(fixtures(**kwargs))


def load(data):
    status, answer = control("/__fixtures", data)
    assert status == 200, answer


def report():
    return control("/__requests")[1]


def wait_for_server_clock(when):
    """Until the server's monotonic clock reads `when` or later (no request is counted meanwhile)."""
    wait_until(f"the server's clock to reach {when}", lambda: report()["now"] >= when)


def raw_request(origin, path, timeout=5):
    """An http.client connection left open, for answers that must be read by hand."""
    connection = http.client.HTTPConnection("127.0.0.1", SERVER.ports[origin], timeout=timeout)
    connection.request("GET", path, headers={"User-Agent": AGENT})
    return connection, connection.getresponse()


class MusicBrainzLookups(unittest.TestCase):
    def test_release_with_release_groups(self):
        status, body = mb_json(f"/ws/2/release/{R_INNUENDO}?inc=release-groups&fmt=json")
        self.assertEqual(status, 200)
        self.assertEqual((body["id"], body["title"]), (R_INNUENDO, "Innuendo"))
        self.assertEqual(body["release-group"]["id"], G_INNUENDO)
        self.assertEqual(body["release-group"]["primary-type"], "Album")
        self.assertEqual(body["cover-art-archive"],
                         {"artwork": True, "count": 1, "front": True, "back": False, "darkened": False})
        # As on the real service: no artist credit without inc=artist-credits (or artists).
        self.assertNotIn("artist-credit", body)

    def test_release_with_artist_credits(self):
        status, body = mb_json(f"/ws/2/release/{R_SMALL}?inc=artist-credits+release-groups&fmt=json")
        self.assertEqual(status, 200)
        credit = body["artist-credit"]
        self.assertEqual([(c["name"], c["joinphrase"]) for c in credit], [("Simon", " & "), ("Garfunkel", "")])
        self.assertEqual(set(credit[0]["artist"]), {"id", "name", "sort-name"})
        self.assertIn("release-group", body)

    def test_release_without_inc_has_no_group(self):
        status, body = mb_json(f"/ws/2/release/{R_INNUENDO}?fmt=json")
        self.assertEqual(status, 200)
        self.assertNotIn("release-group", body)

    def test_case_is_ignored(self):
        status, body = mb_json(f"/ws/2/release-group/{G_INNUENDO.upper()}?fmt=json")
        self.assertEqual((status, body["id"]), (200, G_INNUENDO))

    def test_release_group(self):
        status, body = mb_json(f"/ws/2/release-group/{G_INNUENDO}?fmt=json&inc=artist-credits+releases")
        self.assertEqual(status, 200)
        self.assertEqual((body["id"], body["title"], body["primary-type"]), (G_INNUENDO, "Innuendo", "Album"))
        self.assertEqual(body["artist-credit"][0]["name"], "Queen")
        self.assertEqual([r["id"] for r in body["releases"]], [R_INNUENDO_2, R_INNUENDO])

    def test_unknown_and_malformed(self):
        status, body = mb_json(f"/ws/2/release/{uuid.uuid4()}?inc=release-groups&fmt=json")
        self.assertEqual((status, body["error"]), (404, "Not Found"))
        status, body = mb_json("/ws/2/release/not-a-uuid?fmt=json")
        self.assertEqual(status, 400)
        status, _ = mb_json("/ws/2/release/00000000-0000-0000-0000-000000000000?fmt=json")
        self.assertEqual(status, 400)
        status, body = mb_json(f"/ws/2/release/{R_INNUENDO}?inc=nonsense&fmt=json")
        self.assertEqual(status, 400)
        self.assertIn("not a valid inc", body["error"])
        status, _ = mb_json(f"/ws/2/release-group/{R_INNUENDO}?fmt=json")  # a release id is no group
        self.assertEqual(status, 404)

    def test_formats(self):
        status, headers, body = mb(f"/ws/2/release/{R_INNUENDO}")
        self.assertEqual(status, 200)
        self.assertIn("xml", headers["Content-Type"])
        self.assertTrue(body.startswith(b"<?xml"))
        status, headers, body = mb(f"/ws/2/release/{R_INNUENDO}", headers={"Accept": "application/json"})
        self.assertEqual((status, json.loads(body)["id"]), (200, R_INNUENDO))
        status, headers, body = mb(f"/ws/2/release/{R_INNUENDO}?fmt=json", headers={"Accept": "application/xml"})
        self.assertEqual(json.loads(body)["id"], R_INNUENDO)  # fmt= wins
        status, _, _ = mb(f"/ws/2/release/{R_INNUENDO}", headers={"Accept": "image/png"})
        self.assertEqual(status, 406)
        status, _, _ = mb(f"/ws/2/release/{R_INNUENDO}?fmt=json", method="POST", data=b"")
        self.assertEqual(status, 405)


class UserAgents(unittest.TestCase):
    def test_refused_and_accepted(self):
        path = f"/ws/2/release/{R_INNUENDO}?fmt=json"
        refused = [None, "", "coverd", "coverd/", "coverd/1.0 ( )", "Python-urllib/3.11", "curl/8.5.0",
                   "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0"]
        for agent in refused:
            status, _, body = mb(path, agent=agent)
            self.assertEqual(status, 403, agent)
            self.assertIn("User-Agent", json.loads(body)["error"])
        for agent in ("coverd/1.0", "coverd/1.0 ( me@example.com )", "coverd/0.1.0-dev (https://x.example)"):
            status, _, _ = mb(path, agent=agent)
            self.assertEqual(status, 200, agent)
        _, report = control("/__requests")
        self.assertIn("coverd/1.0 ( me@example.com )", report["user_agents"])
        self.assertIn("", report["user_agents"])  # none sent
        self.assertGreaterEqual(report["mb"]["refused_user_agent"], len(refused))

    def test_archive_does_not_check(self):
        status, _, _ = request("caa", f"/release/{R_INNUENDO}/front", agent=None)
        self.assertEqual(status, 307)


class Search(unittest.TestCase):
    def test_decoy_scores_as_high_and_comes_first(self):
        status, body = search("release-group", 'artist:"Queen" AND releasegroup:"Innuendo"')
        self.assertEqual(status, 200)
        self.assertEqual(set(body), {"created", "count", "offset", "release-groups"})
        hits = body["release-groups"]
        top = hits[0]
        self.assertEqual((top["id"], top["score"], top["artist-credit"][0]["name"]),
                         (DECOY_GROUP, 100, "Queen Latifah"))
        real = next(h for h in hits if h["id"] == G_INNUENDO)
        self.assertEqual(real["score"], 100)
        self.assertEqual({r["id"] for r in real["releases"]}, {R_INNUENDO, R_INNUENDO_2})
        self.assertEqual([h["score"] for h in hits], sorted((h["score"] for h in hits), reverse=True))
        self.assertEqual(hits[-1]["score"], 42)  # the "always" decoy, fixed score

    def test_release_search_carries_group(self):
        status, body = search("release", 'artist:"queen" AND release:"innuendo"')
        self.assertEqual(status, 200)
        ids = [r["id"] for r in body["releases"]]
        self.assertEqual(body["releases"][0]["artist-credit"][0]["name"], "Queen Latifah")
        self.assertIn(R_INNUENDO, ids)
        mine = next(r for r in body["releases"] if r["id"] == R_INNUENDO)
        self.assertEqual(mine["release-group"]["id"], G_INNUENDO)
        self.assertEqual(mine["release-group"]["primary-type"], "Album")
        self.assertTrue(all(0 <= r["score"] <= 100 for r in body["releases"]))

    def test_partial_matches_rank_lower(self):
        status, body = search("release", 'artist:"Simon" release:"Bookends" OR release:"Innuendo"')
        self.assertEqual(status, 200)
        scores = {(r["title"], r["artist-credit"][0]["name"]): r["score"] for r in body["releases"]}
        self.assertEqual(scores[("Bookends", "Simon")], 100)  # two clauses
        self.assertEqual(scores[("Innuendo", "Queen")], 50)   # one of two
        status, body = search("release", 'artist:"Queen" AND (release:"Innuendo" OR release:"Bookends")')
        self.assertTrue(all(r["title"] == "Innuendo" for r in body["releases"]))
        status, body = search("release", 'artist:"Queen" -artist:"Latifah" AND release:"Innuendo"')
        self.assertEqual({r["id"] for r in body["releases"]}, {R_INNUENDO, R_INNUENDO_2})

    def test_limit_offset_count(self):
        status, body = search("release", "artist:queen", limit=1)
        self.assertEqual(len(body["releases"]), 1)
        self.assertGreaterEqual(body["count"], 2)
        status, second = search("release", "artist:queen", limit=1, offset=1)
        self.assertEqual(second["offset"], 1)
        self.assertNotEqual(second["releases"][0]["id"], body["releases"][0]["id"])
        status, body = search("release", "artist:queen", limit=1000)
        self.assertEqual(status, 200)
        status, _ = search("release", "artist:queen", limit="many")
        self.assertEqual(status, 400)

    def test_accents_case_and_unfielded(self):
        status, body = search("release", 'ärtist:"QUEEN"')  # an unknown field matches nothing
        self.assertEqual((status, body["count"]), (200, 0))
        status, body = search("release", '"bóokends"')  # the default field is the title
        self.assertEqual([r["id"] for r in body["releases"]], [R_SMALL])
        status, body = search("release", 'artist:"Simon & Garfunkel"')  # the whole credit, join phrase included
        self.assertEqual([r["id"] for r in body["releases"]], [R_SMALL])
        status, body = search("release", "artistname:garfunkel AND release:book*")
        self.assertEqual([r["id"] for r in body["releases"]], [R_SMALL])

    def test_every_special_character_escaped(self):
        specials = '+-&|!(){}[]^"~*?:\\/'
        escaped = "".join("\\" + c if c in specials else c for c in SPECIAL_TITLE)
        for query in (f'release:"{escaped}" AND artist:"AC\\/DC"', f"release:{escaped} AND artist:AC\\/DC"):
            status, body = search("release", query)
            self.assertEqual(status, 200, (query, body))
            self.assertEqual(body["releases"][0]["id"], R_SPECIAL, query)
            self.assertEqual(body["releases"][0]["score"], 100)
        # Inside a phrase only " and \ must be escaped, as in Lucene.
        status, body = search("release", 'release:"a+b-c&&d||e!f(g)h{i}j[k]l^m\\"n~o*p?q:r\\\\s/t"')
        self.assertEqual((status, body["releases"][0]["id"]), (200, R_SPECIAL))

    def test_unparseable_queries(self):
        for query in ('artist:"Guns N" Roses"', 'artist:"Queen', 'artist:"Guns N" Roses" AND release:"x"',
                      "release:AC/DC", "artist:Queen\\", "(artist:Queen", "artist:Queen)", "AND artist:Queen",
                      "artist:Queen AND", "artist:", "release:[x", "artist:Queen^", "Hello!", ""):
            status, body = search("release", query)
            self.assertEqual(status, 400, query)
            self.assertIn("error", body)

    def test_xml_without_fmt(self):
        status, headers, body = mb("/ws/2/release-group/?query=" + urllib.parse.quote('releasegroup:"Innuendo"'))
        self.assertEqual(status, 200)
        self.assertTrue(body.startswith(b"<?xml"))

    def test_hostile_searches(self):
        status, headers, body = mb("/ws/2/release-group/?fmt=json&query=" + urllib.parse.quote('artist:"Evil Twin"'))
        self.assertEqual(status, 200)
        self.assertGreaterEqual(body.count(b"["), 10000)
        status, body = search("release", 'release:"wrong types"')
        self.assertEqual(body["releases"][0]["score"], "high")
        status, body = search("release-group", 'release:"wrong types"')
        self.assertEqual(body["release-groups"][0]["releases"], {})
        status, body = search("release", 'release:"Nothing here"')
        self.assertEqual((status, body["count"], body["releases"]), (200, 0, []))
        status, body = search("release", 'artist:"Queen" AND release:"bad ids"')
        self.assertEqual(status, 200)
        status, body = search("release", 'release:"Innuendo" OR artist:"Bad Ids"')
        self.assertTrue(body["releases"])
        self.assertTrue(all(r["id"] == "not-a-uuid/../../etc/passwd" for r in body["releases"]))


class RateRule(unittest.TestCase):
    PATH = f"/ws/2/release/{R_INNUENDO}?inc=release-groups&fmt=json"

    def tearDown(self):
        reload()

    def test_three_quick_requests(self):
        # A minute-long window: three requests in a row fall in it however slow this machine is.
        reload(rate_limit={"requests": 2, "window": 60})
        control("/__reset")
        statuses = [mb(self.PATH) for _ in range(3)]
        self.assertEqual([s[0] for s in statuses[:2]], [200, 200])
        status, headers, body = statuses[2]
        self.assertEqual(status, 503)
        self.assertEqual(headers["Retry-After"], "1")
        self.assertIn("rate limit", json.loads(body)["error"])
        # The archive and the image host have no such rule.
        for _ in range(5):
            self.assertEqual(request("caa", f"/release/{R_INNUENDO}/front")[0], 307)
        answer = report()["mb"]
        self.assertEqual(answer["over_rate"], 1)
        self.assertEqual(answer["accepted"], 2)
        self.assertEqual(answer["max_accepted_in_window"], 2)
        self.assertEqual(answer["max_attempted_in_window"], 3)
        self.assertEqual(answer["window"], 60.0)
        self.assertEqual(len(answer["accepted_times"]), 2)
        self.assertEqual(len(answer["over_rate_times"]), 1)
        self.assertGreaterEqual(answer["over_rate_times"][0], answer["accepted_times"][1])
        self.assertEqual(answer["hostile_times"], [])

    def test_the_window_frees_and_refusals_do_not_count(self):
        # A fifth of a second: ask until a third request is let through. Were the refused ones counted,
        # asking this often would never get through (the loop would time out).
        window = 0.2
        reload(rate_limit={"requests": 2, "window": window})
        control("/__reset")
        statuses = []

        def third_accepted():
            statuses.append(mb(self.PATH)[0])
            return statuses.count(200) == 3

        wait_until("a third request let through once the window moved on", third_accepted, interval=0.005)
        self.assertEqual(statuses[:2], [200, 200])
        self.assertEqual(statuses[-1], 200)
        self.assertTrue(all(s == 503 for s in statuses[2:-1]), statuses)
        answer = report()["mb"]
        first, _, third = answer["accepted_times"]
        refused = answer["over_rate_times"]
        self.assertEqual((answer["over_rate"], len(refused)), (len(statuses) - 3, len(statuses) - 3))
        # The rule on the server's own clock: refused while the first two lie within the window, let
        # through once the first has left it.
        for t in refused:
            self.assertLess(t - first, window)
        self.assertGreaterEqual(third - first, window)
        self.assertEqual(answer["max_accepted_in_window"], 2)


class CoverArtArchive(unittest.TestCase):
    def test_index(self):
        status, headers, body = request("caa", f"/release/{R_INNUENDO}/")
        self.assertEqual(status, 200)
        index = json.loads(body)
        self.assertEqual(index["release"], f"https://musicbrainz.org/release/{R_INNUENDO}")
        (image,) = index["images"]
        self.assertEqual(set(image), {"id", "types", "front", "back", "approved", "edit", "comment", "image",
                                      "thumbnails"})
        self.assertEqual((image["types"], image["front"], image["back"]), (["Front"], True, False))
        self.assertEqual(set(image["thumbnails"]), {"250", "500", "1200", "small", "large"})
        self.assertEqual(request("caa", f"/release/{R_INNUENDO}")[0], 200)  # no trailing slash
        # The index's URLs point at the archive (as documented), which redirects to the image host.
        self.assertTrue(image["image"].startswith(SERVER.url("caa", f"/release/{R_INNUENDO}/")))
        status, _, data = request("caa", urllib.parse.urlsplit(image["thumbnails"]["500"]).path, follow=True)
        self.assertEqual((status, struct.unpack(">II", data[16:24])), (200, (500, 500)))

    def test_index_lists_a_missing_1200(self):
        index = json.loads(request("caa", f"/release/{R_SMALL}/")[2])
        url = index["images"][0]["thumbnails"]["1200"]
        status, _, _ = request("caa", urllib.parse.urlsplit(url).path, follow=True)
        self.assertEqual(status, 404)

    def test_legacy_keys_and_back_only(self):
        index = json.loads(request("caa", f"/release/{R_LEGACY}/")[2])
        self.assertEqual(set(index["images"][0]["thumbnails"]), {"small", "large"})
        index = json.loads(request("caa", f"/release/{R_BACK_ONLY}/")[2])
        self.assertEqual([(i["front"], i["back"], i["types"]) for i in index["images"]], [(False, True, ["Back"])])
        self.assertEqual(request("caa", f"/release/{R_BACK_ONLY}/front")[0], 404)
        self.assertEqual(request("caa", f"/release/{R_BACK_ONLY}/back")[0], 307)

    def test_front_redirects_to_the_image_host(self):
        images = f"http://127.0.0.1:{SERVER.ports['images']}/download/mbid-{R_INNUENDO}/mbid-{R_INNUENDO}-"
        for method in ("GET", "HEAD"):
            for suffix, expected in (("front", ".png"), ("front-250", "_thumb250.jpg"),
                                     ("front-500", "_thumb500.jpg"), ("front-1200", "_thumb1200.jpg"),
                                     ("front-500.jpg", "_thumb500.jpg")):
                status, headers, _ = request("caa", f"/release/{R_INNUENDO}/{suffix}", method=method)
                self.assertEqual(status, 307, suffix)
                location = headers["Location"]
                self.assertTrue(location.startswith(images), location)
                self.assertTrue(location.endswith(expected), location)
        status, headers, data = request("caa", f"/release/{R_INNUENDO}/front", follow=True)
        self.assertEqual((status, headers["Content-Type"]), (200, "image/png"))
        self.assertEqual(struct.unpack(">II", data[16:24]), (1400, 1400))
        status, headers, data = request("caa", f"/release/{R_INNUENDO}/front-1200", follow=True)
        self.assertEqual(struct.unpack(">II", data[16:24]), (1200, 1200))

    def test_missing_1200_thumbnail(self):
        # Default, like the real service: the archive redirects, the image host has no such file.
        status, headers, _ = request("caa", f"/release/{R_SMALL}/front-1200")
        self.assertEqual(status, 307)
        self.assertEqual(request("caa", f"/release/{R_SMALL}/front-1200", follow=True)[0], 404)
        for path in ("front", "front-250", "front-500"):
            self.assertEqual(request("caa", f"/release/{R_SMALL}/{path}", follow=True)[0], 200, path)
        reload(missing_thumbnail_404_at="archive")
        try:
            self.assertEqual(request("caa", f"/release/{R_SMALL}/front-1200")[0], 404)
            self.assertEqual(request("caa", f"/release/{R_SMALL}/front-500")[0], 307)
        finally:
            reload()

    def test_release_group_front(self):
        status, headers, _ = request("caa", f"/release-group/{G_INNUENDO}/front-250")
        self.assertEqual(status, 307)
        self.assertIn(f"/download/mbid-{R_INNUENDO}/mbid-{R_INNUENDO}-", headers["Location"])  # the release's id
        index = json.loads(request("caa", f"/release-group/{G_INNUENDO}/")[2])
        self.assertTrue(index["release"].endswith(R_INNUENDO))
        self.assertEqual(request("caa", f"/release-group/{G_INNUENDO}/back")[0], 400)
        self.assertEqual(request("caa", f"/release-group/{G_EMPTY}/front")[0], 404)

    def test_jpeg_from_a_file(self):
        status, headers, _ = request("caa", f"/release/{R_JPEG}/front")
        self.assertTrue(headers["Location"].endswith(".jpg"))
        status, headers, data = request("caa", f"/release/{R_JPEG}/front", follow=True)
        self.assertEqual((status, headers["Content-Type"], data[:3]), (200, "image/jpeg", b"\xff\xd8\xff"))
        # An 800 px original: no 1200 thumbnail by default.
        self.assertEqual(request("caa", f"/release/{R_JPEG}/front-1200", follow=True)[0], 404)

    def test_errors(self):
        missing = str(uuid.uuid4())
        self.assertEqual(request("caa", f"/release/{missing}/")[0], 404)
        self.assertEqual(request("caa", f"/release/{missing}/front")[0], 404)
        self.assertEqual(request("caa", f"/release/{R_NO_CAA}/front")[0], 404)
        self.assertEqual(request("caa", f"/release/{R_NO_CAA}/")[0], 404)
        self.assertEqual(request("caa", f"/release/{R_INNUENDO_2}/front")[0], 404)  # no front image
        self.assertEqual(request("caa", "/release/not-a-uuid/front")[0], 400)
        # Upper-case hex: the real redirect service's check is case-sensitive (MusicBrainz's is not).
        self.assertEqual(request("caa", f"/release-group/{G_INNUENDO.upper()}/front")[0], 400)
        self.assertEqual(request("caa", f"/artist/{R_INNUENDO}/front")[0], 400)
        self.assertEqual(request("caa", f"/release/{R_INNUENDO}/front", method="POST", data=b"")[0], 405)
        self.assertEqual(request("caa", f"/release/{R_INNUENDO}/front", method="DELETE")[0], 405)
        status, headers, _ = request("caa", f"/release/{R_INNUENDO}/front", method="OPTIONS")
        self.assertEqual((status, headers["Allow"]), (200, "GET, HEAD, OPTIONS"))

    def test_index_by_redirect(self):
        reload(caa_index="redirect", index_urls="images")
        try:
            status, headers, _ = request("caa", f"/release/{R_INNUENDO}/")
            self.assertEqual(status, 307)
            self.assertEqual(headers["Location"],
                             f"http://127.0.0.1:{SERVER.ports['images']}/download/mbid-{R_INNUENDO}/index.json")
            index = json.loads(request("caa", f"/release/{R_INNUENDO}/", follow=True)[2])
            self.assertTrue(index["images"][0]["image"].startswith(SERVER.url("images", "/download/")))
        finally:
            reload()

    def test_image_host(self):
        self.assertEqual(request("images", f"/download/mbid-{R_INNUENDO}/mbid-{R_INNUENDO}-1.png")[0], 404)
        self.assertEqual(request("images", "/nothing")[0], 404)
        self.assertEqual(request("images", "/nothing", method="POST", data=b"")[0], 405)
        location = request("caa", f"/release/{R_INNUENDO}/front")[1]["Location"]
        status, headers, body = request("images", urllib.parse.urlsplit(location).path, method="HEAD")
        self.assertEqual((status, body), (200, b""))
        self.assertGreater(int(headers["Content-Length"]), 0)


class Hostile(unittest.TestCase):
    def test_html(self):
        status, headers, body = mb(f"/ws/2/release/{hostile_id('html')}?fmt=json")
        self.assertEqual((status, headers["Content-Type"].split(";")[0]), (200, "text/html"))

    def test_huge_with_length(self):
        rid = hostile_id("huge")
        image = f"/download/mbid-{rid}/mbid-{rid}-{stand_in.derived_number(rid)}.png"
        for origin, path, start in (("mb", f"/ws/2/release/{rid}?fmt=json", b'{"created"'),
                                    ("caa", f"/release/{rid}/front", b"\x89PNG"),
                                    ("images", image, b"\x89PNG")):
            connection, response = raw_request(origin, path)
            self.assertEqual(response.status, 200, origin)
            self.assertEqual(response.getheader("Content-Length"), str(50 * 1024 * 1024), origin)
            self.assertTrue(response.read(1024).startswith(start), origin)
            connection.close()  # hang up early: the server must not mind
        status, _, body = request("mb", f"/ws/2/release/{rid}?fmt=json")  # read whole, it is valid JSON
        self.assertEqual((status, len(body)), (200, 50 * 1024 * 1024))
        self.assertEqual(json.loads(body)["media"], [])

    def test_huge_streamed_without_length(self):
        for mode in ("huge-nolength", "huge-chunked"):
            connection, response = raw_request("mb", f"/ws/2/release/{hostile_id(mode)}?fmt=json", timeout=20)
            self.assertIsNone(response.getheader("Content-Length"), mode)
            total = 0
            while True:
                piece = response.read(1 << 20)
                if not piece:
                    break
                total += len(piece)
            self.assertEqual(total, 50 * 1024 * 1024, mode)
            connection.close()

    def test_deep(self):
        status, _, body = mb(f"/ws/2/release/{hostile_id('deep')}?fmt=json")
        self.assertEqual(status, 200)
        self.assertIn(b"[" * 10000, body)
        with self.assertRaises(RecursionError):
            json.loads(body)

    def test_wrong_types_and_containers(self):
        status, body = mb_json(f"/ws/2/release/{hostile_id('wrong-types')}?fmt=json")
        self.assertEqual((status, body["release-group"]), (200, "x"))
        index = json.loads(request("caa", f"/release/{hostile_id('wrong-types')}/")[2])
        self.assertEqual(index["images"][0]["front"], "yes")
        index = json.loads(request("caa", f"/release/{hostile_id('wrong-container')}/")[2])
        self.assertEqual(index["images"], {"0": {"id": "x"}})

    def test_empty_and_truncated(self):
        status, body = mb_json(f"/ws/2/release/{hostile_id('empty')}?fmt=json")
        self.assertEqual((status, body), (200, {}))
        self.assertEqual(json.loads(request("caa", f"/release/{hostile_id('empty')}/")[2])["images"], [])
        status, _, body = mb(f"/ws/2/release/{hostile_id('truncated')}?fmt=json")
        with self.assertRaises(ValueError):
            json.loads(body)

    def test_bad_ids(self):
        status, body = mb_json(f"/ws/2/release/{hostile_id('bad-id')}?inc=release-groups&fmt=json")
        self.assertEqual((status, body["release-group"]["id"]), (200, "0000"))
        index = json.loads(request("caa", f"/release/{hostile_id('bad-id')}/")[2])
        self.assertEqual(index["images"][0]["id"], "../../../etc/passwd")
        self.assertIn("mbid-not-a-uuid", request("caa", f"/release/{hostile_id('bad-id')}/front")[1]["Location"])

    def test_odd_redirects(self):
        status, headers, _ = request("caa", f"/release/{hostile_id('redirect-file')}/front")
        self.assertEqual((status, headers["Location"]), (307, "file:///etc/passwd"))
        status, headers, _ = request("caa", f"/release/{hostile_id('redirect-ftp')}/front-500")
        self.assertEqual(status, 307)
        self.assertTrue(headers["Location"].startswith("ftp://"))

    def test_always_503_and_statuses(self):
        control("/__reset")
        for _ in range(2):
            status, headers, _ = mb(f"/ws/2/release/{hostile_id('503')}?fmt=json")
            self.assertEqual((status, headers["Retry-After"]), (503, "1"))
        self.assertEqual(request("caa", f"/release/{hostile_id('503')}/front")[0], 503)
        self.assertEqual(mb(f"/ws/2/release/{hostile_id('status:429')}?fmt=json")[0], 429)
        _, report = control("/__requests")
        self.assertEqual(report["mb"]["over_rate"], 0)  # hostile 503s are not the rate rule's
        self.assertEqual(report["hostile"]["mb:503"], 2)

    def test_silent(self):
        with socket.create_connection(("127.0.0.1", SERVER.ports["caa"]), timeout=0.3) as sock:
            sock.sendall(f"GET /release/{hostile_id('silent')}/front HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            with self.assertRaises(socket.timeout):
                sock.recv(1)


class Control(unittest.TestCase):
    def test_counts(self):
        control("/__reset")
        mb(f"/ws/2/release/{R_INNUENDO}?inc=release-groups&fmt=json")
        mb(f"/ws/2/release/{R_INNUENDO}?fmt=json")
        request("caa", f"/release/{R_INNUENDO}/front", follow=True)
        for origin in ("mb", "caa", "images"):
            status, _, body = request(origin, "/__requests")
            report = json.loads(body)
            self.assertEqual(report["origin"], origin)
            self.assertEqual(report["total"], 4)
            self.assertEqual(report["paths"][f"/ws/2/release/{R_INNUENDO}"], 2)
            self.assertEqual(report["paths_with_query"][f"/ws/2/release/{R_INNUENDO}?inc=release-groups&fmt=json"], 1)
            self.assertEqual({o: v["total"] for o, v in report["origins"].items()}, {"mb": 2, "caa": 1, "images": 1})
            self.assertEqual(report["user_agents"], [AGENT])
            self.assertEqual(report["mb"]["accepted"], 2)
        control("/__reset")
        self.assertEqual(control("/__requests")[1]["total"], 0)

    def test_bad_fixtures_keep_the_old(self):
        for bad in ({"releases": [{"id": "nope", "title": "x"}]}, {"options": {"nonsense": 1}},
                    {"releases": [{"id": str(uuid.uuid4()), "title": "x", "hostile": "explode"}]}):
            status, answer = control("/__fixtures", bad)
            self.assertEqual(status, 400, bad)
            self.assertIn("error", answer)
        status, _, body = request("caa", "/__fixtures", method="POST", data=b"{not json")
        self.assertEqual(status, 400)
        self.assertEqual(request("caa", f"/release/{R_INNUENDO}/front")[0], 307)

    def test_base64_images(self):
        data = fixtures()
        data["releases"].append({"id": "88888888-8888-4888-8888-888888888888", "title": "B64", "image":
                                 {"base64": base64.b64encode(tiny_jpeg(1300, 1300)).decode()}})
        status, _, body = request("images", "/__fixtures", method="POST", data=json.dumps(data).encode())
        self.assertEqual(status, 200, body)
        try:
            status, _, got = request("caa", "/release/88888888-8888-4888-8888-888888888888/front", follow=True)
            self.assertEqual(got, tiny_jpeg(1300, 1300))
            # 1300 px: a 1200 thumbnail exists.
            self.assertEqual(request("caa", "/release/88888888-8888-4888-8888-888888888888/front-1200",
                                     follow=True)[0], 200)
        finally:
            reload()


class RetryAfter(unittest.TestCase):
    def tearDown(self):
        reload()

    def test_default_is_one_second(self):
        for mode in ("503", "status:503", "status:429"):
            status, headers, _ = mb(f"/ws/2/release/{hostile_id(mode)}?fmt=json")
            self.assertEqual((status, headers["Retry-After"]), (int(mode[-3:]), "1"), mode)

    def test_every_503_and_429_sends_the_option(self):
        reload(retry_after=7)
        for mode in ("503", "status:503", "status:429"):
            for origin, path in (("mb", f"/ws/2/release/{hostile_id(mode)}?fmt=json"),
                                 ("caa", f"/release/{hostile_id(mode)}/front")):
                status, headers, _ = request(origin, path)
                self.assertEqual((status, headers["Retry-After"]), (int(mode[-3:]), "7"), (origin, mode))
        status, headers, _ = mb(f"/ws/2/release/{hostile_id('status:500')}?fmt=json")
        self.assertEqual((status, headers["Retry-After"]), (500, None))  # only 429 and 503 carry it
        reload(retry_after=0)
        self.assertEqual(mb(f"/ws/2/release/{hostile_id('503')}?fmt=json")[1]["Retry-After"], "0")

    def test_the_rate_rule_sends_it_too(self):
        reload(rate_limit={"requests": 1, "window": 60}, retry_after=5)
        control("/__reset")
        path = f"/ws/2/release/{R_INNUENDO}?fmt=json"
        self.assertEqual(mb(path)[0], 200)
        status, headers, body = mb(path)
        self.assertEqual((status, headers["Retry-After"]), (503, "5"))
        self.assertIn("rate limit", json.loads(body)["error"])

    def test_bad_values_are_refused(self):
        for bad in (-1, 1.5, "7", True, None):
            status, answer = control("/__fixtures", fixtures(retry_after=bad))
            self.assertEqual(status, 400, bad)
            self.assertIn("retry_after", answer["error"])


class Times(unittest.TestCase):
    """A hostile spec with `times` plays its mode to the first N matching requests, then answers normally."""

    def setUp(self):
        load(flaky_fixtures())
        control("/__reset")

    def tearDown(self):
        reload()

    def test_a_release_fails_twice_then_recovers(self):
        path = f"/ws/2/release/{R_FLAKY}?fmt=json"
        answers = [mb(path) for _ in range(4)]
        self.assertEqual([a[0] for a in answers], [503, 503, 200, 200])
        self.assertEqual([a[1]["Retry-After"] for a in answers[:2]], ["1", "1"])
        self.assertEqual(json.loads(answers[2][2])["id"], R_FLAKY)
        self.assertEqual(request("caa", f"/release/{R_FLAKY}/front")[0], 307)  # no mode for the archive
        self.assertEqual(report()["hostile"], {"mb:503": 2})

    def test_each_origin_counts_on_its_own(self):
        path = f"/ws/2/release/{R_FLAKY_ALL}?fmt=json"
        self.assertEqual([mb(path)[0] for _ in range(3)], [429, 200, 200])
        self.assertEqual([request("caa", f"/release/{R_FLAKY_ALL}/front")[0] for _ in range(2)], [500, 307])
        location = urllib.parse.urlsplit(request("caa", f"/release/{R_FLAKY_ALL}/front")[1]["Location"]).path
        first, second = request("images", location), request("images", location)
        self.assertEqual((first[0], first[1]["Content-Type"].split(";")[0]), (200, "text/html"))
        self.assertEqual((second[0], second[1]["Content-Type"]), (200, "image/png"))
        self.assertEqual(report()["hostile"], {"mb:status:429": 1, "caa:status:500": 1, "images:html": 1})

    def test_a_release_group(self):
        path = f"/ws/2/release-group/{G_FLAKY}?fmt=json"
        self.assertEqual([mb(path)[0] for _ in range(2)], [503, 200])
        self.assertEqual([request("caa", f"/release-group/{G_FLAKY}/front")[0] for _ in range(2)], [503, 307])
        # The group's release counts apart: it has no mode of its own.
        self.assertEqual(mb(f"/ws/2/release/{R_IN_FLAKY_GROUP}?fmt=json")[0], 200)
        self.assertEqual(request("caa", f"/release/{R_IN_FLAKY_GROUP}/front")[0], 307)

    def test_searches(self):
        query = "/ws/2/release-group/?fmt=json&query=" + urllib.parse.quote('releasegroup:"Flaky Search"')
        answers = [mb(query) for _ in range(3)]
        self.assertEqual([a[0] for a in answers], [503, 200, 200])
        self.assertEqual(answers[1][1]["Content-Type"].split(";")[0], "text/html")  # the second rule, once
        # Then the normal answer: no match but the "always" decoy.
        self.assertEqual([g["title"] for g in json.loads(answers[2][2])["release-groups"]], ["Always There"])
        # A rule for release groups only: release searches neither get it nor use it up.
        status, body = search("release", 'release:"Flaky Search"')
        self.assertEqual((status, body["count"]), (200, 0))
        status, body = search("release", 'release:"Never Hostile"')  # times 0: never
        self.assertEqual((status, body["count"]), (200, 0))
        self.assertEqual(report()["hostile"], {"mb:status:503": 1, "mb:html": 1})

    def test_requests_that_would_not_get_the_mode_use_up_nothing(self):
        path = f"/ws/2/release/{R_FLAKY}?fmt=json"
        self.assertEqual(mb(path, agent=None)[0], 403)  # refused for its User-Agent
        self.assertEqual(mb(f"/ws/2/release/{R_FLAKY}?inc=nonsense&fmt=json")[0], 400)
        self.assertEqual([mb(path)[0] for _ in range(3)], [503, 503, 200])

    def test_refused_by_the_rate_rule_uses_up_nothing(self):
        # One request per fifth of a second: ask until the normal answer comes. However many the rate
        # rule refuses on the way (it depends on this machine's speed), exactly two hostile 503s come first.
        load(flaky_fixtures(rate_limit={"requests": 1, "window": 0.2}))
        control("/__reset")
        answers = []

        def recovered():
            answers.append(mb(f"/ws/2/release/{R_FLAKY}?fmt=json"))
            return answers[-1][0] == 200

        wait_until("the normal answer", recovered, interval=0.005)
        kinds = ["rate" if a[0] == 503 and "rate limit" in json.loads(a[2])["error"] else a[0] for a in answers]
        self.assertEqual([k for k in kinds if k != "rate"], [503, 503, 200])
        answer = report()
        self.assertEqual(answer["hostile"], {"mb:503": 2})
        self.assertEqual(answer["mb"]["over_rate"], kinds.count("rate"))

    def test_reset_and_new_fixtures_re_arm(self):
        path = f"/ws/2/release/{R_FLAKY}?fmt=json"
        self.assertEqual([mb(path)[0] for _ in range(3)], [503, 503, 200])
        control("/__reset")
        self.assertEqual([mb(path)[0] for _ in range(3)], [503, 503, 200])
        load(flaky_fixtures())
        self.assertEqual([mb(path)[0] for _ in range(3)], [503, 503, 200])

    def test_bad_times_are_refused(self):
        bad_specs = [{"mb": "503", "times": -1}, {"mb": "503", "times": "2"}, {"mb": "503", "times": True},
                     {"mb": "503", "times": 1.5}, {"times": 1}]
        for spec in bad_specs:
            data = fixtures()
            data["releases"].append({"id": str(uuid.uuid4()), "title": "x", "hostile": spec})
            status, answer = control("/__fixtures", data)
            self.assertEqual(status, 400, spec)
        for rule in ({"match": "x", "mode": "503", "times": -2}, {"match": "x", "mode": "503", "time": 1}):
            data = fixtures()
            data["hostile_searches"].append(rule)
            self.assertEqual(control("/__fixtures", data)[0], 400, rule)


class HostileTimes(unittest.TestCase):
    """/__requests' mb.accepted_times, mb.hostile_times and mb.over_rate_times."""

    def tearDown(self):
        reload()

    def test_what_each_list_holds(self):
        load(flaky_fixtures())
        control("/__reset")
        statuses = [mb(f"/ws/2/release/{R_FLAKY}?fmt=json")[0] for _ in range(3)]
        statuses.append(mb(f"/ws/2/release/{uuid.uuid4()}?fmt=json")[0])  # a normal answer: 404
        statuses.append(mb(f"/ws/2/release/{R_FLAKY}?fmt=json", agent="curl/8.5.0")[0])  # refused: in neither
        request("caa", f"/release/{R_FLAKY_ALL}/front")  # hostile, but not MusicBrainz
        self.assertEqual(statuses, [503, 503, 200, 404, 403])
        answer = report()
        accepted, hostile = answer["mb"]["accepted_times"], answer["mb"]["hostile_times"]
        self.assertEqual(len(accepted), 4)
        self.assertEqual(hostile, accepted[:2])  # the same values: hostile answers are accepted requests
        self.assertEqual(answer["mb"]["over_rate_times"], [])
        self.assertEqual(accepted, sorted(accepted))
        self.assertEqual(len(answer["origins"]["mb"]["times"][f"/ws/2/release/{R_FLAKY}"]), 4)  # the 403 too
        self.assertEqual(answer["hostile"]["caa:status:500"], 1)

    def test_a_client_that_ignores_retry_after_shows(self):
        # Retry-After: 30 s, and the test retries at once: the retry lies within it.
        load(flaky_fixtures(retry_after=30))
        control("/__reset")
        self.assertEqual([mb(f"/ws/2/release/{R_FLAKY}?fmt=json")[0] for _ in range(2)], [503, 503])
        answer = report()["mb"]
        first = answer["hostile_times"][0]
        too_soon = [t for t in answer["accepted_times"] + answer["over_rate_times"] if first < t < first + 30]
        self.assertEqual(too_soon, [answer["hostile_times"][1]])

    def test_a_client_that_honours_retry_after_shows(self):
        # Retry-After: 1 s; the test waits, on the server's clock, until it has passed before each retry.
        load(flaky_fixtures(retry_after=1))
        control("/__reset")
        statuses = [mb(f"/ws/2/release/{R_FLAKY}?fmt=json")[0]]
        while statuses[-1] == 503 and len(statuses) < 3:
            wait_for_server_clock(report()["mb"]["accepted_times"][-1] + 1)
            statuses.append(mb(f"/ws/2/release/{R_FLAKY}?fmt=json")[0])
        self.assertEqual(statuses, [503, 503, 200])
        answer = report()["mb"]
        everything = answer["accepted_times"] + answer["over_rate_times"]
        for t in answer["hostile_times"]:
            self.assertEqual([u for u in everything if t < u < t + 1], [], t)


class ZShutdown(unittest.TestCase):
    """Runs last (alphabetical): SIGTERM ends it cleanly, even with a silent answer pending."""

    def test_sigterm(self):
        before = report()["hostile"].get("mb:silent", 0)
        sock = socket.create_connection(("127.0.0.1", SERVER.ports["mb"]))
        sock.sendall(f"GET /ws/2/release/{hostile_id('silent')}?fmt=json HTTP/1.1\r\nHost: x\r\n"
                     f"User-Agent: {AGENT}\r\n\r\n".encode())
        # The silent answer is under way (its handler waits) before the signal goes.
        wait_until("the silent request to be taken in", lambda: report()["hostile"].get("mb:silent", 0) > before)
        self.assertEqual(SERVER.stop(timeout=20), 0)  # exits cleanly; the timeout is a deadline, not a measure
        sock.close()


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""A stand-in for MusicBrainz, the Cover Art Archive and its image host, for
coverd's end-to-end tests (contract section 7).

Built from the services' public documentation (musicbrainz.org/doc/MusicBrainz_API,
.../MusicBrainz_API/Search, .../MusicBrainz_API/Rate_Limiting,
.../Cover_Art_Archive/API) and, where the documentation is silent, from the
public source of the services themselves -- never from coverd's code. Python 3
standard library only.

One process, three origins, because coverd must treat the archive and the host
it redirects to as different hosts. Each listens on 127.0.0.1; once all three
listen the process prints exactly three lines on stdout, in this order:

  PORT mb <n>          MusicBrainz web service          (/ws/2/...)
  PORT caa <n>         Cover Art Archive                (/release/..., /release-group/...)
  PORT images <n>      the image host (archive.org)     (/download/...)

usage: musicbrainz_server.py [--fixtures FILE] [--mb-port N] [--caa-port N] [--images-port N]

SIGTERM/SIGINT stop it (exit 0); it keeps nothing on disk, so SIGKILL is fine too.

Control endpoints, on every port (they are not counted and not rate limited):
  GET  /__requests     JSON, the same on every port:
        {"total": N,                                  every request, all origins
         "paths": {"/ws/2/release/<id>": 2, ...},     per path without the query string
         "paths_with_query": {"/ws/2/release/<id>?inc=release-groups&fmt=json": 1, ...},
         "times": {"<path>": [t, ...]},               monotonic seconds (time.monotonic)
         "origins": {"mb"|"caa"|"images": {"total", "paths", "paths_with_query", "times"}},
         "mb": {"accepted": N,                        MusicBrainz requests let through
                "over_rate": N,                       503s by the rate rule (hostile 503s are not counted here)
                "refused_user_agent": N,              403s for a missing or anonymous User-Agent
                "max_accepted_in_window": N,          most accepted in any rolling window (1 s unless
                                                      options.rate_limit.window says otherwise)
                "max_attempted_in_window": N,         the same over every MusicBrainz request
                "window": 1.0,
                "accepted_times": [t, ...],           one per request the rate rule let through (the
                                                      `accepted` ones), its arrival time, whatever it was
                                                      answered: the normal answer (a 400 or 404 included)
                                                      or a hostile mode
                "hostile_times": [t, ...],            the accepted requests answered with a hostile mode
                                                      (bad-id and silent included), the same t as in
                                                      accepted_times; a spec whose `times` are used up
                                                      adds none
                "over_rate_times": [t, ...]},         the rate rule's 503s (`over_rate`), arrival times
         "user_agents": ["coverd/1.0 ( x )", ...],    every User-Agent seen, all origins ("" = none sent)
         "user_agent_counts": {"<ua>": N},
         "hostile": {"<origin>:<mode>": N},           hostile answers given
         "max_in_flight": N, "in_flight": N, "now": t, "origin": "<this port's origin>"}
       The three mb time lists are monotonic seconds, ascending, each request's arrival. The requests
       answered normally are accepted_times less hostile_times; every MusicBrainz request is in
       accepted_times or over_rate_times, except those refused for their User-Agent (only in
       origins.mb.times). So "nothing went to MusicBrainz within Retry-After of the 503 at t" (t from
       hostile_times or over_rate_times) reads: no accepted or over-rate time in (t, t + retry_after).
  GET|POST /__reset    forget every count, the seen User-Agents and the rate window, and re-arm every
                       hostile `times` (the next matching requests get the hostile answers again)
  POST /__fixtures     replace the fixtures with the JSON body (the format below); 400 with the
                       reason when it is not valid, the old fixtures kept. New fixtures start every
                       `times` afresh; the counts and the rate window are kept (use /__reset)
  GET  /__fixtures     the ids loaded: {"releases": [...], "release_groups": [...]}

MusicBrainz origin (all answers JSON with fmt=json or Accept: application/json; fmt= wins; without
either the real service answers XML, and so does this one, minimally; another Accept gets 406):
  GET /ws/2/release/<mbid>?inc=...&fmt=json          the release. As on the real service (its JSON
      serializer), "artist-credit" is there only with inc=artist-credits or inc=artists, and
      "release-group" only with inc=release-groups. Always: id, title, status, date, country,
      "cover-art-archive" {artwork, count, front, back, darkened}.
  GET /ws/2/release-group/<mbid>?inc=...&fmt=json    the group: id, title, primary-type,
      secondary-types, first-release-date; "artist-credit" with inc=artist-credits|artists,
      "releases" with inc=releases.
      Lookups: malformed id (case is ignored, the nil UUID is refused) -> 400 {"error": "Invalid mbid."};
      unknown -> 404 {"error": "Not Found"}; an inc the resource does not know -> 400.
  GET /ws/2/release/?query=<lucene>&fmt=json[&limit=N][&offset=N]         search releases
  GET /ws/2/release-group/?query=<lucene>&fmt=json[&limit=N][&offset=N]   search release groups
      {"created", "count", "offset", "releases"|"release-groups": [...]}, each result with id, score
      (0-100), title, artist-credit; releases carry "release-group" {id, title, primary-type}; groups
      carry "releases" [{id, title, status}]. limit 1-100 (clamped), default 25.
      The query language: fielded terms and phrases (field:"a phrase", field:word, field:(a b)),
      unfielded ones (the default field is "release" for releases, "releasegroup" for groups),
      AND/&&, OR/||, NOT/!, +/- prefixes, parentheses, ~N and ^N suffixes (accepted, ignored), * and ?
      wildcards in words, backslash escapes of + - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /.
      Fields: release, releaseaccent, releasegroup, releasegroupaccent, artist (the whole credit,
      join phrases included), artistname, creditname, reid, rgid, arid, primarytype (alias type),
      status, country, date. An unknown field matches nothing (as in Lucene).
      400 {"error": "Invalid query: ..."} for what does not parse: an unbalanced quote or
      parenthesis, a trailing backslash, an operator with nothing on one side, an unescaped [ ] { } /
      outside a phrase, or a phrase that runs straight into a word ("Guns N" Roses": a quote that
      should have been escaped). Inside a phrase only " and \\ must be escaped, as in Lucene.
      Scoring is relevance, deliberately not identity, like the real service: text is folded (case,
      accents) and split into words; a phrase matches when its words appear contiguously anywhere in
      the field, so "Queen" matches "Queen Latifah" exactly as well as "Queen"; each matching clause
      adds its weight; scores are scaled so the best hit gets 100. Ties: decoys (search_extra) come
      first, then fixture order -- a client that takes the top hit blindly gets the decoy.
  The rate rule (option rate_limit, default {"requests": 2, "window": 1.0}): a MusicBrainz request
      arriving while `requests` accepted ones lie within the last `window` seconds is answered
      503 {"error": "Your requests are exceeding the allowable rate limit. ..."} with Retry-After:
      options.retry_after (default 1) and is not itself accepted. So at most 2 in any rolling
      second; "at most once a second on average" with a little jitter passes, a burst of 3 does not.
  User-Agent: 403 {"error": ...} unless it reads "Application/version" or
      "Application/version ( contact )" (the contact non-empty), and Application is not a generic
      library's name (python-urllib, python-requests, curl, wget, java, go-http-client, libcurl, ...).
      The check comes before the rate rule; refused requests are not accepted.
  Other methods: 405.

Cover Art Archive origin (no rate limit; GET and HEAD; OPTIONS answers Allow; others 405):
  GET /release/<mbid>/            the JSON index (trailing slash optional):
      {"images": [{"id": "<n>", "types": ["Front"], "front": true, "back": false, "approved": true,
                   "edit": <n>, "comment": "", "image": URL,
                   "thumbnails": {"250": URL, "500": URL, "1200": URL, "small": URL, "large": URL}}],
       "release": "https://musicbrainz.org/release/<mbid>"}
      As on the real service the index lists a "1200" thumbnail even where none exists (beets #3638).
      404 when the release is unknown or has no images.
  GET /release-group/<mbid>/      the index of the release whose front represents the group.
  GET /release/<mbid>/front[-250|-500|-1200][.jpg]   (and back...)   307, Location on the image host:
      http://127.0.0.1:<images>/download/mbid-<release>/mbid-<release>-<image id>.<jpg|png>
      http://127.0.0.1:<images>/download/mbid-<release>/mbid-<release>-<image id>_thumb<250|500|1200>.jpg
      404 when there is no such release or no such image.
  GET /release-group/<mbid>/front[-size]   the same for the group's representative release (the
      Location names the release); anything but front* under a group: 400.
  GET /release/<mbid>/<image id>[-size].<ext>   307 to that image (the index's URLs point here).
  An invalid MBID: 400. Like the real redirect service (its regex), upper-case hex is refused there
  too (option caa_uppercase: "reject" (default) or "accept"); MusicBrainz itself ignores case.
  A missing thumbnail: as on the real service the archive redirects anyway and the image host
  answers 404 (option missing_thumbnail_404_at: "images", the default); "archive" makes the archive
  itself answer 404 on /front-1200. Either way /front and the other sizes work.

Image host origin (no rate limit; GET and HEAD):
  GET /download/mbid-<mbid>/mbid-<mbid>-<id>.<ext>, ..._thumb<size>.jpg   the bytes the fixture gives
      (Content-Type from the bytes); 404 (HTML) for anything else, a missing thumbnail included.
  GET /download/mbid-<mbid>/index.json   the JSON index (used when options.caa_index is "redirect").
  With options.images_redirect, /download/... first answers 302 to /0/items/... on the same port,
  like archive.org's hop to a data node.

Fixtures (--fixtures FILE, or POST /__fixtures), JSON; every key optional:
  {"options": {
     "rate_limit": {"requests": 2, "window": 1.0},   null: no rate rule
     "caa_index": "direct",          "direct": /release/<id>/ answers 200 with the index (the API
                                     documentation); "redirect": 307 to the image host's
                                     /download/mbid-<id>/index.json (what the real service does)
     "index_urls": "archive",        "archive": the index's image/thumbnail URLs point at the archive
                                     (/release/<id>/<image id>.jpg, then 307), as documented;
                                     "images": straight at the image host
     "missing_thumbnail_404_at": "images",   or "archive" (see above)
     "caa_uppercase": "reject",      or "accept"
     "images_redirect": false,
     "huge_bytes": 52428800,         size of the "huge" hostile bodies
     "deep_depth": 10000,            nesting of the "deep" hostile bodies
     "retry_after": 1},              the Retry-After (whole seconds, 0 or more) sent with every 503 and
                                     429: the rate rule's, the "503" mode's and status:429/status:503's
   "releases": [{
     "id": "<uuid>",                           required, lower-case
     "title": "A Night at the Opera",         required
     "artist_credit": "Queen",                a name, or a list of names / {"name", "joinphrase",
                                              "artist": {"id", "name", "sort-name"}} (ids derived
                                              from names when left out)
     "release_group": "<uuid>",               a group in release_groups (or a new one of that id);
                                              left out: a group of its own (id derived, same title)
     "status": "Official", "date": "1975-11-21", "country": "GB",
     "caa": true,                             false: the archive knows no images for it
     "front": true, "back": false,            which images the archive has
     "image": {"path": "a.jpg"} | {"base64": "..."} | {"generate": [600, 600], "color": [r, g, b]}
                                              the front original; a bare string is a path (relative
                                              to the fixture file); default: a generated 600x600 PNG
     "image_id": 1234567890,                  default derived from the id
     "thumbnails": ["250", "500"]             which thumbnails exist, or {"250": true|false|<image>};
                                              default 250 and 500 always, 1200 when the original's
                                              larger side is at least 1200 (or unknown). Generated
                                              thumbnails are PNGs of that size (named .jpg, as the
                                              archive names them).
     "legacy_thumbnail_keys": false,          true: the index has only "small" and "large" (beets #6870)
     "list_missing_thumbnails": true,         false: the index leaves out thumbnails that do not exist
     "cover_art_archive": {...},              overrides MusicBrainz's view of the archive (it may disagree)
     "search": true,                          false: left out of search results
     "hostile": <mode> | {"mb": <mode>, "caa": <mode>, "images": <mode>, "times": N}}],
                                              a bare mode applies on all three origins, always; in
                                              the object any origin may be left out (it answers
                                              normally), and "times" (see below) counts per origin
   "release_groups": [{"id", "title", "primary_type": "Album", "secondary_types": [],
     "artist_credit": (default: its first release's), "first_release_date",
     "front_release": "<release id>" (default: its first release, in fixture order, with a front image),
     "search": true, "hostile": ...}],
   "search_extra": [{                          decoys: extra search hits
     "entity": "release-group" | "release",   required
     "id", "title", "artist_credit", "primary_type", "status",
     "release_group": {"id", "title", "primary_type"}   (releases only),
     "releases": [{"id", "title", "status"}]            (groups only),
     "score": 100,                            fixed score when it matches (default: computed)
     "always": false}],                       true: in every search of its entity, matching or not
   "hostile_searches": [{"match": "Evil", "mode": "<mode>", "entity": "release"|"release-group",
                         "times": N}]}
                                              a search whose words contain `match` (folded) gets the
                                              mode; entity left out: both; "times" (see below) counts
                                              per rule. The first rule that matches and has times
                                              left applies, so two rules with the same match play
                                              one mode, then the other (503 once, then html once).

Hostile modes (per origin for an id, or for a search; "<origin>:<mode>" counted in /__requests):
  html            200 text/html page
  huge            200, options.huge_bytes bytes streamed, with Content-Length (JSON-ish or PNG-ish)
  huge-nolength   the same without Content-Length, the end marked by closing the connection
  huge-chunked    the same with Transfer-Encoding: chunked
  deep            200 JSON nested options.deep_depth deep
  wrong-types     200 JSON of the right shape with wrong types ("score": "high", "releases": {}, ...)
  wrong-container 200 JSON whose list is an object ("releases": {}, "images": {})
  empty           200 with no results ({"count": 0, ...: []}, {"images": []}, {} or an empty body)
  truncated       200 JSON cut in half (Content-Length says the half)
  bad-id          the normal answer with invalid UUIDs as ids (and a 307 to such a path on the archive)
  redirect-file   307 to file:///etc/passwd
  redirect-ftp    307 to ftp://127.0.0.1:<images port>/cover.jpg
  503             503 {"error": "Service Temporarily Unavailable"} with Retry-After (options.retry_after)
  status:<code>   that status, {"error": "status <code>"} (with Retry-After, options.retry_after, for
                  429 and 503)
  silent          read the request, never answer

"times": N (a whole number, 0 or more; left out: always) on a hostile spec gives its mode to the
first N requests that match it, then the normal answer to every later one -- a service that fails
N times, then recovers. Only requests that would have got the mode count: on MusicBrainz that is
after the User-Agent check and the rate rule (a refused request uses up nothing), and for a lookup
after the id is known to exist; on the archive and the image host, where the mode would play. For
an id, each origin counts on its own: {"mb": "503", "caa": "html", "times": 1} plays one 503 on
MusicBrainz and one html page on the archive (a release and its group count apart, too); for a
search, each rule counts its own. The counts start afresh at /__reset and with new fixtures.
Examples: {"id": ..., "hostile": {"mb": "503", "times": 2}} -- two 503s to that release's lookups,
then the release; {"match": "Evil", "mode": "status:503", "entity": "release-group", "times": 1}.
"""
import argparse
import base64
import fnmatch
import functools
import hashlib
import json
import os
import re
import signal
import struct
import sys
import threading
import time
import traceback
import unicodedata
import urllib.parse
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape as xml_escape, quoteattr

MB_HELP = "For usage, please see: https://musicbrainz.org/development/mmd"
RATE_MESSAGE = ("Your requests are exceeding the allowable rate limit. Please see "
                "https://wiki.musicbrainz.org/XMLWebService for more information.")
NAMESPACE = uuid.UUID("6f1d1c55-9b7e-4c43-9a39-7c1b1b0c0a11")  # derives stable ids from names
UUID_LOWER = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
THUMB_SIZES = ("250", "500", "1200")
HOSTILE_MODES = {"html", "huge", "huge-nolength", "huge-chunked", "deep", "wrong-types", "wrong-container",
                 "empty", "truncated", "bad-id", "redirect-file", "redirect-ftp", "503", "silent"}
# Generic library names the real service treats as anonymous and blocks (Rate_Limiting page).
ANONYMOUS_AGENTS = {"python-urllib", "python-requests", "python-httpx", "aiohttp", "curl", "libcurl", "wget",
                    "java", "go-http-client", "okhttp", "axios", "node-fetch", "undici", "apache-httpclient",
                    "mozilla", "php", "ruby", "perl", "lwp", "libwww-perl", "dart", "reqwest", "urllib3"}
USER_AGENT = re.compile(r"(?P<app>[^\s/()]+)/(?P<version>[^\s/()]+)(?:\s+\((?P<contact>[^()]*)\))?")
RELEASE_INCS = {"artists", "artist-credits", "labels", "recordings", "release-groups", "media", "discids",
                "isrcs", "aliases", "annotation", "tags", "user-tags", "genres", "user-genres", "ratings",
                "user-ratings", "collections", "user-collections", "recording-level-rels", "work-level-rels"}
GROUP_INCS = {"artists", "artist-credits", "releases", "media", "discids", "aliases", "annotation", "tags",
              "user-tags", "genres", "user-genres", "ratings", "user-ratings"}
STOP = threading.Event()  # set at shutdown: releases the "silent" handlers
PORTS = {}


class FixtureError(Exception):
    pass


class QueryError(Exception):
    pass


# -- images -------------------------------------------------------------------

@functools.lru_cache(maxsize=512)
def _png(width, height, rgb):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height, 6)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def make_png(width, height, rgb):
    """A solid-colour RGB PNG (zlib compresses it to almost nothing). Cached: fixtures are reloaded often."""
    return _png(width, height, tuple(rgb))


def sniff(data):
    """(Content-Type, file extension) decided by the bytes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png", "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg", "jpg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif", "gif"
    if data.startswith(b"%PDF"):
        return "application/pdf", "pdf"
    return "application/octet-stream", "jpg"


def dimensions(data):
    """(width, height) of a PNG or JPEG, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data.startswith(b"\xff\xd8"):
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker = data[i + 1]
            length = struct.unpack(">H", data[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                height, width = struct.unpack(">HH", data[i + 5:i + 9])
                return width, height
            i += 2 + length
    return None


def colour_of(key):
    digest = hashlib.sha1(key.encode()).digest()
    return [digest[0], digest[1], digest[2]]


def load_image(spec, base_dir, key, default_size=(600, 600)):
    """Bytes for an image spec: a path, {"path"}, {"base64"} or {"generate": [w, h]}."""
    if spec is None:
        spec = {"generate": list(default_size)}
    if isinstance(spec, str):
        spec = {"path": spec}
    if not isinstance(spec, dict):
        raise FixtureError(f"{key}: an image is a path, {{\"path\"}}, {{\"base64\"}} or {{\"generate\"}}")
    if "path" in spec:
        path = spec["path"] if os.path.isabs(spec["path"]) else os.path.join(base_dir, spec["path"])
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as error:
            raise FixtureError(f"{key}: cannot read {path}: {error.strerror}")
    if "base64" in spec:
        try:
            return base64.b64decode(spec["base64"], validate=True)
        except ValueError:
            raise FixtureError(f"{key}: base64 does not decode")
    if "generate" in spec:
        size = spec["generate"]
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and 0 < v <= 10000 for v in size)):
            raise FixtureError(f"{key}: generate takes [width, height]")
        return make_png(size[0], size[1], spec.get("color") or colour_of(key))
    raise FixtureError(f"{key}: an image needs path, base64 or generate")


# -- the catalogue ---------------------------------------------------------------

def derived_uuid(kind, name):
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def derived_number(key, digits=10):
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % (9 * 10 ** (digits - 1)) + 10 ** (digits - 1)


def artist_credit(spec, where):
    if spec is None:
        return []
    if isinstance(spec, str):
        spec = [spec]
    if not isinstance(spec, list):
        raise FixtureError(f"{where}: artist_credit is a name or a list")
    credit = []
    for part in spec:
        if isinstance(part, str):
            part = {"name": part}
        if not isinstance(part, dict) or not isinstance(part.get("name"), str):
            raise FixtureError(f"{where}: each artist credit has a name")
        artist = part.get("artist") or {}
        name = artist.get("name", part["name"])
        credit.append({
            "name": part["name"],
            "joinphrase": part.get("joinphrase", ""),
            "artist": {"id": artist.get("id", derived_uuid("artist", name)), "name": name,
                       "sort-name": artist.get("sort-name", name)},
        })
    return credit


def credit_string(credit):
    return "".join(part["name"] + part["joinphrase"] for part in credit)


def hostile_spec(value, where):
    """{origin: mode, ..., "times": N or None}: a bare mode applies on all three origins, always."""
    if value is None:
        return {"times": None}
    spec = {"mb": value, "caa": value, "images": value} if isinstance(value, str) else value
    if not isinstance(spec, dict):
        raise FixtureError(f"{where}: hostile is a mode or {{origin: mode, ..., \"times\": N}}")
    spec = dict(spec)
    times = check_times(spec.pop("times", None), f"{where}.hostile")
    for origin, mode in spec.items():
        if origin not in ("mb", "caa", "images"):
            raise FixtureError(f"{where}: hostile origin {origin!r} is not mb, caa or images")
        check_mode(mode, where)
    if times is not None and not spec:
        raise FixtureError(f"{where}: hostile has times but no origin's mode")
    spec["times"] = times
    return spec


def check_times(times, where):
    """None (always) or how many matching requests get the hostile answer."""
    if times is None or (isinstance(times, int) and not isinstance(times, bool) and times >= 0):
        return times
    raise FixtureError(f"{where}: times is a whole number of requests, 0 or more (left out: always)")


def check_mode(mode, where):
    if mode in HOSTILE_MODES or (isinstance(mode, str) and re.fullmatch(r"status:[1-5][0-9][0-9]", mode)):
        return
    raise FixtureError(f"{where}: unknown hostile mode {mode!r}")


class Catalogue:
    """The fixtures, checked and indexed."""

    def __init__(self, data, base_dir):
        if not isinstance(data, dict):
            raise FixtureError("the fixtures are a JSON object")
        options = {"rate_limit": {"requests": 2, "window": 1.0}, "caa_index": "direct", "index_urls": "archive",
                   "missing_thumbnail_404_at": "images", "caa_uppercase": "reject", "images_redirect": False,
                   "huge_bytes": 50 * 1024 * 1024, "deep_depth": 10000, "retry_after": 1}
        given = data.get("options") or {}
        unknown = set(given) - set(options)
        if unknown:
            raise FixtureError(f"unknown options: {sorted(unknown)}")
        options.update(given)
        rate = options["rate_limit"]
        if rate is not None and not (isinstance(rate, dict) and isinstance(rate.get("requests"), int)
                                     and isinstance(rate.get("window"), (int, float))):
            raise FixtureError("rate_limit is null or {\"requests\": N, \"window\": seconds}")
        retry_after = options["retry_after"]
        if not (isinstance(retry_after, int) and not isinstance(retry_after, bool) and retry_after >= 0):
            raise FixtureError("retry_after is a whole number of seconds, 0 or more")
        for key, allowed in (("caa_index", ("direct", "redirect")), ("index_urls", ("archive", "images")),
                             ("missing_thumbnail_404_at", ("images", "archive")),
                             ("caa_uppercase", ("reject", "accept"))):
            if options[key] not in allowed:
                raise FixtureError(f"{key} is one of {allowed}")
        self.options = options
        self.groups = {}
        self.group_order = []
        self.releases = {}
        self.release_order = []
        for position, raw in enumerate(data.get("release_groups") or []):
            self.add_group(raw, f"release_groups[{position}]")
        for position, raw in enumerate(data.get("releases") or []):
            self.add_release(raw, f"releases[{position}]", base_dir)
        for group in self.groups.values():
            members = [self.releases[r] for r in self.release_order if self.releases[r]["group"] == group["id"]]
            group["releases"] = [r["id"] for r in members]
            if group["credit"] is None:
                group["credit"] = members[0]["credit"] if members else []
            if group["first_release_date"] is None:
                dates = sorted(r["date"] for r in members if r["date"])
                group["first_release_date"] = dates[0] if dates else ""
            if group["front_release"] is None:
                fronts = [r["id"] for r in members if r["caa"] and r["front"]]
                group["front_release"] = fronts[0] if fronts else None
            elif group["front_release"] not in self.releases:
                raise FixtureError(f"group {group['id']}: front_release {group['front_release']} is not a release")
        self.decoys = []
        for position, raw in enumerate(data.get("search_extra") or []):
            self.add_decoy(raw, f"search_extra[{position}]")
        self.hostile_searches = []
        for position, raw in enumerate(data.get("hostile_searches") or []):
            where = f"hostile_searches[{position}]"
            if not isinstance(raw, dict) or not isinstance(raw.get("match"), str):
                raise FixtureError(f"{where}: needs match and mode")
            check_mode(raw.get("mode"), where)
            if raw.get("entity") not in (None, "release", "release-group"):
                raise FixtureError(f"{where}: entity is release or release-group")
            unknown = set(raw) - {"match", "mode", "entity", "times"}
            if unknown:
                raise FixtureError(f"{where}: unknown keys {sorted(unknown)}")
            self.hostile_searches.append({"match": " ".join(analyze(raw["match"])), "mode": raw["mode"],
                                          "entity": raw.get("entity"), "times": check_times(raw.get("times"), where),
                                          "key": ("search", position)})
        self.docs = {"release": self.release_docs(), "release-group": self.group_docs()}

    @staticmethod
    def need_id(raw, where):
        value = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(value, str) or not UUID_LOWER.fullmatch(value):
            raise FixtureError(f"{where}: id must be a lower-case UUID")
        return value

    def add_group(self, raw, where):
        gid = self.need_id(raw, where)
        if not isinstance(raw.get("title"), str):
            raise FixtureError(f"{where}: title is required")
        self.groups[gid] = {
            "id": gid, "title": raw["title"], "primary_type": raw.get("primary_type", "Album"),
            "secondary_types": raw.get("secondary_types", []),
            "credit": artist_credit(raw["artist_credit"], where) if "artist_credit" in raw else None,
            "first_release_date": raw.get("first_release_date"), "front_release": raw.get("front_release"),
            "search": raw.get("search", True), "hostile": hostile_spec(raw.get("hostile"), where),
        }
        self.group_order.append(gid)

    def add_release(self, raw, where, base_dir):
        rid = self.need_id(raw, where)
        if not isinstance(raw.get("title"), str):
            raise FixtureError(f"{where}: title is required")
        credit = artist_credit(raw.get("artist_credit"), where)
        gid = raw.get("release_group") or derived_uuid("release-group", rid)
        if not isinstance(gid, str) or not UUID_LOWER.fullmatch(gid):
            raise FixtureError(f"{where}: release_group must be a lower-case UUID")
        if gid not in self.groups:
            self.groups[gid] = {"id": gid, "title": raw["title"], "primary_type": "Album", "secondary_types": [],
                                "credit": credit, "first_release_date": None, "front_release": None,
                                "search": True, "hostile": {"times": None}}
            self.group_order.append(gid)
        front = raw.get("front", True)
        back = raw.get("back", False)
        image = load_image(raw.get("image"), base_dir, f"{where}.image") if front else None
        size = dimensions(image) if image else None
        thumbs = {}
        if front:
            spec = raw.get("thumbnails")
            if spec is None:
                spec = {"250": True, "500": True, "1200": size is None or max(size) >= 1200}
            elif isinstance(spec, list):
                spec = {s: (s in [str(v) for v in spec]) for s in THUMB_SIZES}
            if not isinstance(spec, dict):
                raise FixtureError(f"{where}: thumbnails is a list of sizes or {{size: bool|image}}")
            for key in THUMB_SIZES:
                value = spec.get(key, False)
                if value is False or value is None:
                    continue
                if value is True:
                    thumbs[key] = make_png(*thumb_size(size, int(key)), colour_of(rid + key))
                else:
                    thumbs[key] = load_image(value, base_dir, f"{where}.thumbnails.{key}")
        image_id = raw.get("image_id", derived_number(rid))
        if not isinstance(image_id, int) or image_id <= 0:
            raise FixtureError(f"{where}: image_id is a positive integer")
        self.releases[rid] = {
            "id": rid, "title": raw["title"], "credit": credit, "group": gid,
            "status": raw.get("status", "Official"), "date": raw.get("date", ""), "country": raw.get("country", "XW"),
            "caa": raw.get("caa", True), "front": bool(front), "back": bool(back),
            "image": image, "image_id": image_id, "thumbs": thumbs,
            "back_image": make_png(300, 300, colour_of(rid + "back")) if back else None,
            "legacy_keys": raw.get("legacy_thumbnail_keys", False),
            "list_missing": raw.get("list_missing_thumbnails", True),
            "caa_override": raw.get("cover_art_archive") or {},
            "search": raw.get("search", True), "hostile": hostile_spec(raw.get("hostile"), where),
        }
        self.release_order.append(rid)

    def add_decoy(self, raw, where):
        if not isinstance(raw, dict) or raw.get("entity") not in ("release", "release-group"):
            raise FixtureError(f"{where}: entity is release or release-group")
        if not isinstance(raw.get("title"), str):
            raise FixtureError(f"{where}: title is required")
        if "score" in raw and not (isinstance(raw["score"], int) and 0 <= raw["score"] <= 100):
            raise FixtureError(f"{where}: score is 0-100")
        if not isinstance(raw.get("release_group"), (dict, type(None))) or \
                not isinstance(raw.get("releases"), (list, type(None))):
            raise FixtureError(f"{where}: release_group is an object, releases a list")
        # A decoy's id is not checked: a malformed one is a hostile fixture in itself.
        decoy_id = raw.get("id") or derived_uuid("decoy", where + raw["title"])
        self.decoys.append({
            "entity": raw["entity"], "id": decoy_id, "title": raw["title"],
            "credit": artist_credit(raw.get("artist_credit"), where), "primary_type": raw.get("primary_type", "Album"),
            "status": raw.get("status", "Official"), "release_group": raw.get("release_group"),
            "releases": raw.get("releases"), "score": raw.get("score"), "always": raw.get("always", False),
        })

    # Searchable documents: fields -> list of analysed values.

    def release_docs(self):
        docs = []
        for rid in self.release_order:
            release = self.releases[rid]
            if not release["search"]:
                continue
            group = self.groups[release["group"]]
            docs.append(self.doc("release", release["title"], release["credit"], release["id"], group["id"],
                                 [release["id"]], group["primary_type"], release["status"], release["country"],
                                 release["date"], result=("release", rid), decoy=None))
        for decoy in self.decoys:
            if decoy["entity"] == "release":
                group = decoy["release_group"] or {}
                docs.append(self.doc("release", decoy["title"], decoy["credit"], decoy["id"], group.get("id", ""),
                                     [decoy["id"]], group.get("primary_type", "Album"), decoy["status"], "", "",
                                     result=None, decoy=decoy))
        return docs

    def group_docs(self):
        docs = []
        for gid in self.group_order:
            group = self.groups[gid]
            if not group["search"]:
                continue
            titles = [self.releases[r]["title"] for r in group["releases"]]
            doc = self.doc("release-group", group["title"], group["credit"], group["id"], group["id"],
                           group["releases"], group["primary_type"], "", "", group["first_release_date"],
                           result=("release-group", gid), decoy=None)
            doc["fields"]["release"] = [analyze(t) for t in titles]
            docs.append(doc)
        for decoy in self.decoys:
            if decoy["entity"] == "release-group":
                releases = decoy["releases"] or []
                doc = self.doc("release-group", decoy["title"], decoy["credit"], decoy["id"], decoy["id"],
                               [r.get("id", "") for r in releases], decoy["primary_type"], "", "", "",
                               result=None, decoy=decoy)
                doc["fields"]["release"] = [analyze(r.get("title", "")) for r in releases]
                docs.append(doc)
        return docs

    @staticmethod
    def doc(entity, title, credit, own_id, group_id, release_ids, primary_type, status, country, date, result, decoy):
        title_field = "release" if entity == "release" else "releasegroup"
        fields = {
            title_field: [analyze(title)], title_field + "accent": [analyze(title)],
            "artist": [analyze(credit_string(credit))],
            "artistname": [analyze(part["artist"]["name"]) for part in credit],
            "creditname": [analyze(part["name"]) for part in credit],
            "arid": [analyze(part["artist"]["id"]) for part in credit],
            "reid": [analyze(r) for r in release_ids], "rgid": [analyze(group_id)],
            "primarytype": [analyze(primary_type or "")], "type": [analyze(primary_type or "")],
            "status": [analyze(status)], "country": [analyze(country)], "date": [analyze(date)],
        }
        return {"fields": fields, "result": result, "decoy": decoy}


def thumb_size(size, box):
    """A thumbnail's size: the original scaled to fit `box`, never enlarged."""
    if size is None:
        return box, box
    width, height = size
    scale = min(1.0, box / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


# -- text analysis and the query language --------------------------------------

WORD = re.compile(r"[^\W_]+")


def fold(text):
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).casefold()


def analyze(text):
    """Lower-case, accent-free words: roughly what the search server's analyser does. A name made
    of punctuation only ("!!!", "( )") is one word as written, spaces aside: MusicBrainz finds
    such names, where a plain word analyser would keep nothing of them."""
    words = WORD.findall(fold(text))
    if not words and fold(text).strip():
        return ["".join(fold(text).split())]
    return words


class Token:
    def __init__(self, kind, pos, text="", pattern=None, number=None):
        self.kind, self.pos, self.text, self.pattern, self.number = kind, pos, text, pattern, number

    def describe(self):
        return f"{self.kind.lower()} {self.text!r}" if self.text else self.kind.lower()


def lex(query):
    tokens = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
        elif c in "()":
            tokens.append(Token("LPAREN" if c == "(" else "RPAREN", i))
            i += 1
        elif query.startswith("&&", i) or query.startswith("||", i):
            tokens.append(Token("AND" if c == "&" else "OR", i, c * 2))
            i += 2
        elif c in "+-!":
            tokens.append(Token({"+": "PLUS", "-": "MINUS", "!": "NOT"}[c], i, c))
            i += 1
        elif c == ":":
            tokens.append(Token("COLON", i, ":"))
            i += 1
        elif c == '"':
            text, j = [], i + 1
            while True:
                if j >= n:
                    raise QueryError(f"unbalanced quote: the phrase opened at {i} never closes")
                if query[j] == "\\":
                    if j + 1 >= n:
                        raise QueryError("the query ends in a lone backslash")
                    text.append(query[j + 1])
                    j += 2
                    continue
                if query[j] == '"':
                    break
                text.append(query[j])
                j += 1
            j += 1
            # Stricter than Lucene on purpose: "Guns N" Roses" parses there as three clauses; a quote
            # that runs into a word is almost always one that should have been escaped.
            if j < n and not (query[j].isspace() or query[j] in ")~^"):
                raise QueryError(f"the phrase closed at {j - 1} runs into {query[j]!r} (an unescaped quote?)")
            tokens.append(Token("PHRASE", i, "".join(text)))
            i = j
        elif c in "~^":
            match = re.match(r"[0-9]+(\.[0-9]+)?", query[i + 1:])
            if c == "^" and not match:
                raise QueryError(f"'^' at {i} needs a number (escape it to search for it)")
            tokens.append(Token("TILDE" if c == "~" else "BOOST", i, c, number=float(match.group()) if match else None))
            i += 1 + (len(match.group()) if match else 0)
        elif c in "[]{}/":
            raise QueryError(f"unescaped special character {c!r} at {i}")
        else:
            text, pattern, escaped, j = [], [], False, i
            while j < n:
                ch = query[j]
                if ch == "\\":
                    if j + 1 >= n:
                        raise QueryError("the query ends in a lone backslash")
                    text.append(query[j + 1])
                    pattern.append("[" + query[j + 1] + "]" if query[j + 1] in "*?[" else query[j + 1])
                    escaped = True
                    j += 2
                    continue
                if ch.isspace() or ch in '()":^~[]{}/!':
                    break
                text.append(ch)
                pattern.append(ch)
                j += 1
            word = "".join(text)
            wildcard = any(ch in "*?" for ch in "".join(pattern).replace("[*]", "").replace("[?]", ""))
            if not escaped and word in ("AND", "OR", "NOT"):
                tokens.append(Token(word, i, word))
            else:
                tokens.append(Token("TERM", i, word, pattern="".join(pattern) if wildcard else None))
            i = j
    return tokens


class Parser:
    """Lucene's classic grammar, as much of it as a client sends. Nodes:
    {"bool": [[occur, node], ...]}, {"term"|"phrase": text, "field": f, "pattern": p}, each with "boost"."""

    def __init__(self, query):
        self.tokens = lex(query)
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def next(self):
        token = self.peek()
        self.at += token is not None
        return token

    def parse(self):
        node = self.query(None)
        if self.peek() is not None:
            raise QueryError(f"unbalanced ')' at {self.peek().pos}")
        return node

    def query(self, field):
        clauses = []
        while self.peek() is not None and self.peek().kind != "RPAREN":
            conjunction = None
            if self.peek().kind in ("AND", "OR"):
                token = self.next()
                if not clauses:
                    raise QueryError(f"{token.text} at {token.pos} has nothing before it")
                conjunction = token.kind
            modifier = None
            if self.peek() is not None and self.peek().kind in ("PLUS", "MINUS", "NOT"):
                modifier = self.next().kind
            node = self.clause(field)
            occur = {"PLUS": "MUST", "MINUS": "MUST_NOT", "NOT": "MUST_NOT"}.get(modifier)
            if conjunction == "AND":
                if clauses[-1][0] == "SHOULD":
                    clauses[-1][0] = "MUST"
                occur = occur or "MUST"
            clauses.append([occur or "SHOULD", node])
        if not clauses:
            raise QueryError("an empty query or group")
        return {"bool": clauses, "boost": 1.0}

    def clause(self, field):
        token = self.next()
        if token is None:
            raise QueryError("the query ends where a term was expected")
        if token.kind == "TERM" and self.peek() is not None and self.peek().kind == "COLON":
            self.next()
            field = token.text
            token = self.next()
            if token is None:
                raise QueryError(f"nothing after '{field}:'")
        if token.kind == "LPAREN":
            node = self.query(field)
            closing = self.next()
            if closing is None or closing.kind != "RPAREN":
                raise QueryError(f"unbalanced '(' at {token.pos}")
        elif token.kind in ("TERM", "PHRASE"):
            node = {token.kind.lower(): token.text, "field": field, "pattern": token.pattern, "boost": 1.0}
        else:
            raise QueryError(f"unexpected {token.describe()} at {token.pos}")
        while self.peek() is not None and self.peek().kind in ("TILDE", "BOOST"):
            suffix = self.next()
            if suffix.kind == "BOOST":
                node["boost"] = suffix.number
        return node


def query_words(node):
    """Every word the query searches for, for matching hostile_searches."""
    if "bool" in node:
        return [w for _, child in node["bool"] for w in query_words(child)]
    return analyze(node.get("term") or node.get("phrase") or "")


def contains_run(haystack, needle):
    return any(haystack[k:k + len(needle)] == needle for k in range(len(haystack) - len(needle) + 1))


def evaluate(node, fields, default_field):
    """(matched, raw score) of a document."""
    if "bool" in node:
        total, should_hit, must_seen, positive = 0.0, False, False, False
        for occur, child in node["bool"]:
            hit, raw = evaluate(child, fields, default_field)
            if occur == "MUST_NOT":
                if hit:
                    return False, 0.0
                continue
            positive = True
            if occur == "MUST":
                must_seen = True
                if not hit:
                    return False, 0.0
                total += raw
            elif hit:
                should_hit = True
                total += raw
        if not positive or not (must_seen or should_hit):
            return False, 0.0
        return True, total * node["boost"]
    values = fields.get((node["field"] or default_field).lower(), [])
    if node.get("pattern"):
        pattern = fold(node["pattern"])
        hit = any(fnmatch.fnmatchcase(word, pattern) for value in values for word in value)
    else:
        words = analyze(node.get("term") or node.get("phrase") or "")
        # A phrase is a run of words anywhere in the value: no length normalisation, so the
        # shorter, exact name gains nothing over a longer one that contains it.
        hit = bool(words) and any(contains_run(value, words) for value in values)
    return hit, (node["boost"] if hit else 0.0)


# -- the shared state -------------------------------------------------------------

class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.catalogue = None
        self.base_dir = os.getcwd()
        self.clear()

    def reset(self):
        with self.lock:
            self.clear()

    def clear(self):
        self.counts = {"mb": {}, "caa": {}, "images": {}}
        self.counts_query = {"mb": {}, "caa": {}, "images": {}}
        self.times = {"mb": {}, "caa": {}, "images": {}}
        self.agents = {}
        self.hostile = {}
        self.accepted = []
        self.attempted = []
        self.hostile_times = []
        self.over_rate_times = []
        self.hostile_used = {}
        self.over_rate = 0
        self.refused_agent = 0
        self.max_accepted = 0
        self.max_attempted = 0
        self.max_in_flight = self.in_flight = getattr(self, "in_flight", 0)

    def count(self, origin, path, full, agent):
        with self.lock:
            self.counts[origin][path] = self.counts[origin].get(path, 0) + 1
            self.counts_query[origin][full] = self.counts_query[origin].get(full, 0) + 1
            self.times[origin].setdefault(path, []).append(time.monotonic())
            self.agents[agent] = self.agents.get(agent, 0) + 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def done(self):
        with self.lock:
            self.in_flight -= 1

    def window(self):
        rate = self.catalogue.options["rate_limit"]
        return float(rate["window"]) if rate else 1.0

    def admit(self):
        """The rate rule: the request's time (in accepted_times) when it is accepted, else None."""
        with self.lock:
            now = time.monotonic()
            window = self.window()
            self.attempted.append(now)
            self.max_attempted = max(self.max_attempted, sum(1 for t in self.attempted if now - t < window))
            rate = self.catalogue.options["rate_limit"]
            if rate and sum(1 for t in self.accepted if now - t < window) >= rate["requests"]:
                self.over_rate += 1
                self.over_rate_times.append(now)
                return None
            self.accepted.append(now)
            self.max_accepted = max(self.max_accepted, sum(1 for t in self.accepted if now - t < window))
            return now

    def take_hostile(self, key, times):
        """Whether a request that matches a hostile spec gets its mode: always when times is None,
        else only the first `times` (counted per key, until /__reset or new fixtures)."""
        if times is None:
            return True
        with self.lock:
            used = self.hostile_used.get(key, 0)
            if used >= times:
                return False
            self.hostile_used[key] = used + 1
            return True

    def refuse_agent(self):
        with self.lock:
            self.refused_agent += 1

    def note_hostile(self, origin, mode, accepted_at=None):
        with self.lock:
            key = f"{origin}:{mode}"
            self.hostile[key] = self.hostile.get(key, 0) + 1
            if origin == "mb" and accepted_at is not None:
                self.hostile_times.append(accepted_at)

    def report(self, origin):
        with self.lock:
            def merged(tables):
                out = {}
                for table in tables.values():
                    for key, value in table.items():
                        out[key] = out.get(key, 0) + value if isinstance(value, int) else out.get(key, []) + value
                return out
            return {
                "origin": origin,
                "total": sum(sum(t.values()) for t in self.counts.values()),
                "paths": merged(self.counts), "paths_with_query": merged(self.counts_query),
                "times": merged(self.times),
                "origins": {o: {"total": sum(self.counts[o].values()), "paths": dict(self.counts[o]),
                                "paths_with_query": dict(self.counts_query[o]), "times": dict(self.times[o])}
                            for o in self.counts},
                "mb": {"accepted": len(self.accepted), "over_rate": self.over_rate,
                       "refused_user_agent": self.refused_agent, "max_accepted_in_window": self.max_accepted,
                       "max_attempted_in_window": self.max_attempted, "window": self.window(),
                       "accepted_times": list(self.accepted), "hostile_times": sorted(self.hostile_times),
                       "over_rate_times": list(self.over_rate_times)},
                "user_agents": sorted(self.agents), "user_agent_counts": dict(self.agents),
                "hostile": dict(self.hostile), "max_in_flight": self.max_in_flight, "in_flight": self.in_flight,
                "now": time.monotonic(),
            }


STATE = State()


def load_fixtures(data, base_dir):
    catalogue = Catalogue(data, base_dir)
    with STATE.lock:
        STATE.catalogue = catalogue
        STATE.hostile_used = {}  # new fixtures: every `times` starts afresh
    return catalogue


# -- HTTP -------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "musicbrainz-stand-in/1"
    origin = None

    def log_message(self, fmt, *args):  # Quiet: tests read /__requests instead.
        pass

    def do_GET(self):
        self.dispatch()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def dispatch(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        split = urllib.parse.urlsplit(self.path)
        self.head = self.command == "HEAD"
        if split.path.startswith("/__"):
            return self.control(split.path, body)
        agent = self.headers.get("User-Agent", "")
        self.accepted_at = None  # set by the rate rule (MusicBrainz only)
        STATE.count(self.origin, split.path, self.path, agent)
        try:
            self.catalogue = STATE.catalogue
            self.serve(split, agent)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception:
            # A bug here must not look like a hostile answer: say so loudly, on stderr and in a 500.
            traceback.print_exc()
            self.close_connection = True
            try:
                self.send_text(500, "musicbrainz_server.py failed: " + traceback.format_exc())
            except OSError:
                pass
        finally:
            STATE.done()

    # -- answers

    def send(self, status, body, content_type, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not self.head:
            self.wfile.write(body)

    def send_json(self, status, value, headers=None):
        self.send(status, json.dumps(value).encode(), "application/json; charset=utf-8", headers)

    def send_text(self, status, text, headers=None):
        self.send(status, text.encode(), "text/plain; charset=utf-8", headers)

    def redirect(self, location, status=307):
        self.send(status, b"", "text/plain", {"Location": location})

    # -- control

    def control(self, path, body):
        if path == "/__requests" and self.command == "GET":
            return self.send_json(200, STATE.report(self.origin))
        if path == "/__reset" and self.command in ("GET", "POST"):
            STATE.reset()
            return self.send_text(200, "ok\n")
        if path == "/__fixtures" and self.command == "POST":
            try:
                data = json.loads(body.decode("utf-8"))
            except ValueError as error:
                return self.send_json(400, {"error": f"not JSON: {error}"})
            try:
                catalogue = load_fixtures(data, STATE.base_dir)
            except FixtureError as error:
                return self.send_json(400, {"error": str(error)})
            except Exception as error:  # a malformed value the checks missed: still the fixture's fault
                return self.send_json(400, {"error": f"bad fixtures: {error!r}"})
            return self.send_json(200, {"ok": True, "releases": len(catalogue.releases),
                                        "release_groups": len(catalogue.groups)})
        if path == "/__fixtures" and self.command == "GET":
            catalogue = STATE.catalogue
            return self.send_json(200, {"releases": list(catalogue.release_order),
                                        "release_groups": list(catalogue.group_order)})
        return self.send_text(404, "unknown control path\n")

    # -- hostile answers

    def hostile(self, mode, kind):
        """Plays a hostile mode; returns False for "bad-id", which the normal answer carries out."""
        STATE.note_hostile(self.origin, mode, self.accepted_at)
        if mode == "bad-id":
            return False
        options = self.catalogue.options
        if mode == "html":
            self.send(200, b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
                           b"<body><h1>We'll be back soon</h1></body></html>\n", "text/html; charset=utf-8")
        elif mode in ("huge", "huge-nolength", "huge-chunked"):
            self.stream_huge(mode, kind, options["huge_bytes"])
        elif mode == "deep":
            depth = options["deep_depth"]
            body = '{"created":"2024-01-01T00:00:00.000Z","count":1,"offset":0,"' + list_key(kind) + '":' \
                + "[" * depth + "]" * depth + "}"
            self.send(200, body.encode(), "application/json; charset=utf-8")
        elif mode == "wrong-types":
            self.send_json(200, wrong_types(kind))
        elif mode == "wrong-container":
            self.send_json(200, {"created": created(), "count": 1, "offset": 0, list_key(kind): {"0": {"id": "x"}}})
        elif mode == "empty":
            if kind in ("image", "caa-front"):
                self.send(200, b"", "image/jpeg")
            else:
                self.send_json(200, empty_answer(kind))
        elif mode == "truncated":
            whole = json.dumps(empty_answer(kind) | {"padding": "x" * 200}).encode()
            self.send(200, whole[: len(whole) // 2], "application/json; charset=utf-8")
        elif mode == "redirect-file":
            self.redirect("file:///etc/passwd")
        elif mode == "redirect-ftp":
            self.redirect(f"ftp://127.0.0.1:{PORTS['images']}/cover.jpg")
        elif mode == "503":
            self.send_json(503, {"error": "Service Temporarily Unavailable"}, self.retry_after())
        elif mode.startswith("status:"):
            code = int(mode.split(":")[1])
            self.send_json(code, {"error": f"status {code}"}, self.retry_after() if code in (429, 503) else None)
        elif mode == "silent":
            STOP.wait(3600)
            self.close_connection = True
        return True

    def retry_after(self):
        return {"Retry-After": str(self.catalogue.options["retry_after"])}

    def hostile_mode(self, owner, entity):
        """The mode `owner` (a release or group, or None) plays on this origin for this request, or
        None: none set, or its `times` used up. Call it only where the hostile answer would be given."""
        if owner is None:
            return None
        mode = owner["hostile"].get(self.origin)
        if mode and STATE.take_hostile((entity, owner["id"], self.origin), owner["hostile"]["times"]):
            return mode
        return None

    def stream_huge(self, mode, kind, total):
        if kind in ("image", "caa-front"):
            head, tail, fill = b"\x89PNG\r\n\x1a\n", b"", b"\0"
        else:
            # Valid JSON all the way: the padding is whitespace inside the list.
            head = ('{"created":"2024-01-01T00:00:00.000Z","count":0,"offset":0,"' + list_key(kind) + '":[').encode()
            tail, fill = b"]}", b" "
        self.send_response(200)
        self.send_header("Content-Type", "image/png" if kind in ("image", "caa-front")
                         else "application/json; charset=utf-8")
        if mode == "huge":
            self.send_header("Content-Length", str(total))
        elif mode == "huge-chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.head:
            return
        block = fill * (64 * 1024)
        middle = total - len(head) - len(tail)
        sent = 0

        def write(data):
            if mode == "huge-chunked":
                self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
            else:
                self.wfile.write(data)

        try:
            write(head)
            while sent < middle:
                piece = block[: min(len(block), middle - sent)]
                write(piece)
                sent += len(piece)
            if tail:
                write(tail)
            if mode == "huge-chunked":
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def method_not_allowed(self):
        self.send_text(405, "Method not allowed\n", {"Allow": "GET, HEAD, OPTIONS"})


def list_key(kind):
    return {"search-release": "releases", "search-release-group": "release-groups", "caa-index": "images",
            "release": "media", "release-group": "releases"}.get(kind, "releases")


def created():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def empty_answer(kind):
    if kind.startswith("search-"):
        return {"created": created(), "count": 0, "offset": 0, list_key(kind): []}
    if kind == "caa-index":
        return {"images": [], "release": "https://musicbrainz.org/release/"}
    return {}


def wrong_types(kind):
    if kind == "search-release":
        return {"created": 20240101, "count": "1", "offset": None,
                "releases": [{"id": 7, "score": "high", "title": 42, "artist-credit": {"name": "Queen"},
                              "release-group": "a release group"}]}
    if kind == "search-release-group":
        return {"created": 20240101, "count": "1", "offset": None,
                "release-groups": [{"id": ["x"], "score": "high", "title": None, "artist-credit": [{"name": 5}],
                                    "releases": {}}]}
    if kind == "caa-index":
        return {"images": [{"id": [], "front": "yes", "types": "Front", "image": 5, "thumbnails": ["250"]}],
                "release": 12}
    if kind == "release":
        return {"id": 5, "title": None, "artist-credit": {}, "release-group": "x",
                "cover-art-archive": {"front": "yes", "count": "one"}}
    return {"id": 5, "title": [], "primary-type": 1, "artist-credit": "Queen", "releases": {}}


BAD_ID = "not-a-uuid/../../etc/passwd"


class MusicBrainzHandler(Handler):
    origin = "mb"

    def serve(self, split, agent):
        if self.command not in ("GET", "HEAD"):
            return self.send_json(405, {"error": "Method not allowed", "help": MB_HELP})
        if not agent_acceptable(agent):
            STATE.refuse_agent()
            return self.send_json(403, {"error": "A meaningful User-Agent is required: "
                                                 "Application/version ( contact-url-or-email )", "help": MB_HELP})
        self.accepted_at = STATE.admit()
        if self.accepted_at is None:
            return self.send_json(503, {"error": RATE_MESSAGE}, self.retry_after())
        params = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        self.xml = self.wants_xml(params)
        if self.xml is None:
            return None
        search = re.fullmatch(r"/ws/2/(release|release-group)/?", split.path)
        lookup = re.fullmatch(r"/ws/2/(release|release-group)/([^/]+)/?", split.path)
        if search:
            return self.search(search.group(1), params)
        if lookup:
            return self.lookup(lookup.group(1), urllib.parse.unquote(lookup.group(2)), params)
        return self.error(404, "Not Found")

    def wants_xml(self, params):
        """True for XML, False for JSON, None when it answered (400 or 406). fmt= wins over Accept."""
        fmt = params.get("fmt", [None])[0]
        if fmt == "json":
            return False
        if fmt == "xml":
            return True
        if fmt is not None:
            self.send_json(400, {"error": f"Invalid format: {fmt}", "help": MB_HELP})
            return None
        accept = self.headers.get("Accept", "")
        if not accept or "xml" in accept or "*/*" in accept:
            return "application/json" not in accept
        if "application/json" in accept:
            return False
        self.send_text(406, "Not Acceptable\n")
        return None

    def error(self, status, message):
        if self.xml:
            body = f'<?xml version="1.0" encoding="UTF-8"?>\n<error><text>{xml_escape(message)}</text>' \
                   f'<text>{xml_escape(MB_HELP)}</text></error>\n'
            return self.send(status, body.encode(), "application/xml; charset=utf-8")
        return self.send_json(status, {"error": message, "help": MB_HELP})

    def answer(self, value, root):
        if self.xml:
            return self.send(200, to_xml(root, value).encode(), "application/xml; charset=utf-8")
        return self.send_json(200, value)

    def lookup(self, entity, raw_id, params):
        if not is_mb_mbid(raw_id):
            return self.error(400, "Invalid mbid.")
        mbid = raw_id.lower()
        incs = set()
        for value in params.get("inc", []):
            incs.update(part for part in re.split(r"[ +]", value) if part)
        allowed = RELEASE_INCS if entity == "release" else GROUP_INCS
        for inc in sorted(incs):
            if inc not in allowed and not inc.endswith("-rels"):
                return self.error(400, f"{inc} is not a valid inc parameter for the {entity} resource.")
        table = self.catalogue.releases if entity == "release" else self.catalogue.groups
        item = table.get(mbid)
        if item is None:
            return self.error(404, "Not Found")
        mode = self.hostile_mode(item, entity)
        bad = False
        if mode:
            if self.hostile(mode, entity):
                return None
            bad = True
        if entity == "release":
            return self.answer(release_json(self.catalogue, item, incs, bad), "release")
        return self.answer(group_json(self.catalogue, item, incs, bad), "release-group")

    def search(self, entity, params):
        query = params.get("query", [""])[0]
        if not query.strip():
            return self.error(400, "a search needs a query (or a browse needs a linked entity)")
        try:
            limit = int(params.get("limit", ["25"])[0])
            offset = int(params.get("offset", ["0"])[0])
        except ValueError:
            return self.error(400, "limit and offset are integers")
        limit = min(100, max(1, limit))
        offset = max(0, offset)
        try:
            node = Parser(query).parse()
        except QueryError as error:
            return self.error(400, f"Invalid query: {error}")
        kind = "search-" + entity
        words = " ".join(query_words(node))
        for rule in self.catalogue.hostile_searches:
            if rule["entity"] in (None, entity) and rule["match"] and rule["match"] in words \
                    and STATE.take_hostile(rule["key"], rule["times"]):
                if self.hostile(rule["mode"], kind):
                    return None
                return self.search_answer(entity, node, limit, offset, bad=True)
        return self.search_answer(entity, node, limit, offset, bad=False)

    def search_answer(self, entity, node, limit, offset, bad):
        catalogue = self.catalogue
        default_field = "release" if entity == "release" else "releasegroup"
        hits = []
        for position, doc in enumerate(catalogue.docs[entity]):
            hit, raw = evaluate(node, doc["fields"], default_field)
            decoy = doc["decoy"]
            if hit or (decoy and decoy["always"]):
                hits.append({"doc": doc, "raw": raw, "position": position})
        best = max([h["raw"] for h in hits if not (h["doc"]["decoy"] and h["doc"]["decoy"]["score"] is not None)],
                   default=0.0)
        for h in hits:
            decoy = h["doc"]["decoy"]
            if decoy and decoy["score"] is not None:
                h["score"] = decoy["score"]
            else:
                h["score"] = round(100 * h["raw"] / best) if best > 0 else 100
        hits.sort(key=lambda h: (-h["score"], 0 if h["doc"]["decoy"] else 1, h["position"]))
        page = hits[offset: offset + limit]
        items = []
        for h in page:
            doc = h["doc"]
            if doc["decoy"]:
                item = decoy_json(doc["decoy"])
            elif entity == "release":
                item = release_json(catalogue, catalogue.releases[doc["result"][1]], {"artist-credits"}, False,
                                    search=True)
            else:
                item = group_json(catalogue, catalogue.groups[doc["result"][1]], {"artist-credits"}, False, search=True)
            item = {"id": item["id"], "score": h["score"], **{k: v for k, v in item.items() if k != "id"}}
            if bad:
                item["id"] = BAD_ID
                if "release-group" in item:
                    item["release-group"] = dict(item["release-group"], id="0000")
            items.append(item)
        key = "releases" if entity == "release" else "release-groups"
        return self.answer({"created": created(), "count": len(hits), "offset": offset, key: items}, "metadata")


def is_mb_mbid(value):
    """MusicBrainz's own check: 36 characters, case ignored, not all zeros."""
    return len(value) == 36 and re.search(r"[^0-]", value) is not None \
        and UUID_LOWER.fullmatch(value.lower()) is not None


def agent_acceptable(agent):
    match = USER_AGENT.fullmatch(agent.strip()) if agent else None
    if match is None:
        return False
    if match.group("contact") is not None and not match.group("contact").strip():
        return False
    return match.group("app").lower() not in ANONYMOUS_AGENTS


def release_json(catalogue, release, incs, bad, search=False):
    group = catalogue.groups[release["group"]]
    has_images = release["caa"] and (release["front"] or release["back"])
    caa = {"artwork": bool(has_images), "count": (release["front"] + release["back"]) if release["caa"] else 0,
           "front": bool(release["caa"] and release["front"]), "back": bool(release["caa"] and release["back"]),
           "darkened": False}
    caa.update(release["caa_override"])
    body = {"id": BAD_ID if bad else release["id"], "title": release["title"], "status": release["status"],
            "quality": "normal", "packaging": None, "disambiguation": "",
            "text-representation": {"language": "eng", "script": "Latn"},
            "date": release["date"], "country": release["country"], "barcode": None, "asin": None,
            "cover-art-archive": caa}
    if search:
        body = {"id": body["id"], "title": body["title"], "status": body["status"], "date": body["date"],
                "country": body["country"]}
    if "artist-credits" in incs or "artists" in incs:
        body["artist-credit"] = release["credit"]
    if "release-groups" in incs or search:
        nested = {"id": "0000" if bad else group["id"], "title": group["title"],
                  "primary-type": group["primary_type"], "secondary-types": group["secondary_types"],
                  "first-release-date": group["first_release_date"], "disambiguation": ""}
        if "artist-credits" in incs and not search:
            nested["artist-credit"] = group["credit"]
        body["release-group"] = nested
    return body


def group_json(catalogue, group, incs, bad, search=False):
    body = {"id": BAD_ID if bad else group["id"], "title": group["title"], "primary-type": group["primary_type"],
            "secondary-types": group["secondary_types"], "first-release-date": group["first_release_date"],
            "disambiguation": ""}
    if search:
        body["count"] = len(group["releases"])
    if "artist-credits" in incs or "artists" in incs:
        body["artist-credit"] = group["credit"]
    if "releases" in incs or search:
        body["releases"] = [{"id": r, "title": catalogue.releases[r]["title"],
                             "status": catalogue.releases[r]["status"]} for r in group["releases"]]
    return body


def decoy_json(decoy):
    body = {"id": decoy["id"], "title": decoy["title"], "artist-credit": decoy["credit"]}
    if decoy["entity"] == "release":
        group = decoy["release_group"] or {}
        body["status"] = decoy["status"]
        body["release-group"] = {"id": group.get("id", derived_uuid("decoy-group", decoy["id"])),
                                 "title": group.get("title", decoy["title"]),
                                 "primary-type": group.get("primary_type", "Album")}
    else:
        body["primary-type"] = decoy["primary_type"]
        body["releases"] = decoy["releases"] or []
        body["count"] = len(body["releases"])
    return body


XML_ATTRIBUTES = ("id", "score", "count", "offset", "created")


def to_xml(root, value):
    """Just enough XML to be unmistakably XML (the mmd-2.0 schema is not reproduced)."""
    def element(name, item):
        if isinstance(item, dict):
            attrs = "".join(f" {k}={quoteattr(str(item[k]))}" for k in XML_ATTRIBUTES
                            if k in item and not isinstance(item[k], (dict, list)))
            inner = "".join(element(k, v) for k, v in item.items() if k not in XML_ATTRIBUTES)
            return f"<{name}{attrs}>{inner}</{name}>"
        if isinstance(item, list):
            singular = name[:-1] if name.endswith("s") else name
            return f'<{singular}-list count="{len(item)}">' + "".join(element(singular, v) for v in item) \
                + f"</{singular}-list>"
        if item is None:
            return ""
        return f"<{name}>{xml_escape(str(item))}</{name}>"
    inner = element(root, value) if root != "metadata" else "".join(element(k, v) for k, v in value.items()
                                                                      if isinstance(v, list))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' \
        f'<metadata xmlns="http://musicbrainz.org/ns/mmd-2.0#">{inner}</metadata>\n'


def image_location(release_id, image_id, suffix):
    return f"http://127.0.0.1:{PORTS['images']}/download/mbid-{release_id}/mbid-{release_id}-{image_id}{suffix}"


def thumbnail_of(filename):
    """The real redirect service's rule: after the last '-', a size 250, 500 or 1200, else the original."""
    if "-" not in filename:
        return None
    size = filename.rsplit("-", 1)[1]
    for candidate in ("250", "500", "1200"):
        if size.startswith(candidate):
            return candidate
    return None


def caa_index(catalogue, release, bad):
    options = catalogue.options
    rid = release["id"]
    images = []
    for which in ("front", "back"):
        if not release[which]:
            continue
        image_id = release["image_id"] + (1 if which == "back" else 0)
        data = release["image"] if which == "front" else release["back_image"]
        ext = sniff(data)[1]
        if options["index_urls"] == "archive":
            base = f"http://127.0.0.1:{PORTS['caa']}/release/{rid}/{image_id}"
            original, thumb = f"{base}.{ext}", (lambda size: f"{base}-{size}.jpg")
        else:
            original = image_location(rid, image_id, f".{ext}")
            thumb = (lambda size, image_id=image_id: image_location(rid, image_id, f"_thumb{size}.jpg"))
        existing = release["thumbs"] if which == "front" else {"250": True, "500": True}
        sizes = [s for s in THUMB_SIZES if release["list_missing"] or s in existing]
        thumbnails = {s: thumb(s) for s in sizes}
        if "250" in thumbnails:
            thumbnails["small"] = thumbnails["250"]
        if "500" in thumbnails:
            thumbnails["large"] = thumbnails["500"]
        if release["legacy_keys"]:
            thumbnails = {k: v for k, v in thumbnails.items() if k in ("small", "large")}
        images.append({"approved": True, "back": which == "back", "comment": "",
                       "edit": derived_number(rid + which, 8), "front": which == "front",
                       "id": "../../../etc/passwd" if bad else str(image_id),
                       "image": original, "thumbnails": thumbnails, "types": ["Front" if which == "front" else "Back"]})
    return {"images": images, "release": f"https://musicbrainz.org/release/{BAD_ID if bad else rid}"}


class ArchiveHandler(Handler):
    origin = "caa"

    def serve(self, split, agent):
        if self.command == "OPTIONS":
            return self.send(200, b"", "text/plain", {"Allow": "GET, HEAD, OPTIONS"})
        if self.command not in ("GET", "HEAD"):
            return self.method_not_allowed()
        parts = [urllib.parse.unquote(p) for p in split.path.split("/")[1:]]
        if parts and parts[-1] == "":
            parts = parts[:-1]
        if not parts:
            return self.send(200, b"<html><body>Cover Art Archive stand-in</body></html>\n", "text/html")
        entity = parts[0]
        if entity not in ("release", "release-group"):
            return self.send_text(400, "Only the following entities are supported: release, release-group\n")
        if len(parts) < 2 or not parts[1]:
            return self.send_text(400, "no MBID specified\n")
        if len(parts) > 3:
            return self.send_text(404, "Not Found\n")
        mbid = parts[1]
        if self.catalogue.options["caa_uppercase"] == "accept":
            mbid = mbid.lower()
        if not UUID_LOWER.fullmatch(mbid):
            return self.send_text(400, "invalid MBID specified\n")
        filename = parts[2] if len(parts) == 3 else ""
        if entity == "release-group":
            group = self.catalogue.groups.get(mbid)
            release = self.catalogue.releases.get(group["front_release"]) if group and group["front_release"] else None
            if group is None or release is None or not release["caa"]:
                return self.send_text(404, f"No cover art found for release group {mbid}\n")
            owner, owner_entity = group, "release-group"
            if filename and not filename.startswith("front"):
                return self.send_text(400, f"{filename} not supported for release groups.\n")
        else:
            release = self.catalogue.releases.get(mbid)
            owner, owner_entity = release, "release"
        mode = self.hostile_mode(owner, owner_entity)
        bad = False
        if mode:
            if self.hostile(mode, "caa-index" if not filename else "caa-front"):
                return None
            bad = True
        if not filename:
            if release is None or not release["caa"] or not (release["front"] or release["back"]):
                return self.send_text(404, f"No cover art found for release {mbid}\n")
            if self.catalogue.options["caa_index"] == "redirect":
                return self.redirect(f"http://127.0.0.1:{PORTS['images']}/download/mbid-{release['id']}/index.json")
            return self.send_json(200, caa_index(self.catalogue, release, bad))
        size = thumbnail_of(filename)
        if filename.startswith("front") or filename.startswith("back"):
            which = "front" if filename.startswith("front") else "back"
        else:
            digits = re.match(r"[0-9]+", filename)
            if not digits:
                return self.send_text(400, f"{filename} does not contain a valid cover image id\n")
            which = None
            if release is not None and int(digits.group()) == release["image_id"] and release["front"]:
                which = "front"
            elif release is not None and int(digits.group()) == release["image_id"] + 1 and release["back"]:
                which = "back"
            if which is None:
                return self.send_text(404, f"cover image with id {digits.group()} not found\n")
        if release is None or not release["caa"] or not release[which]:
            return self.send_text(404, f"No {which} cover image found for release with identifier {mbid}\n")
        image_id = release["image_id"] + (1 if which == "back" else 0)
        if size and which == "front" and size not in release["thumbs"] \
                and self.catalogue.options["missing_thumbnail_404_at"] == "archive":
            return self.send_text(404, f"No {which}-{size} thumbnail for release with identifier {mbid}\n")
        data = release["image"] if which == "front" else release["back_image"]
        suffix = f"_thumb{size}.jpg" if size else f".{sniff(data)[1]}"
        rid = "not-a-uuid" if bad else release["id"]
        return self.redirect(image_location(rid, image_id, suffix))


class ImageHostHandler(Handler):
    origin = "images"

    def serve(self, split, agent):
        if self.command not in ("GET", "HEAD"):
            return self.method_not_allowed()
        path = urllib.parse.unquote(split.path)
        options = self.catalogue.options
        match = re.fullmatch(r"/(download|0/items)/mbid-([^/]+)/([^/]+)", path)
        if not match:
            return self.not_found()
        if match.group(1) == "download" and options["images_redirect"]:
            return self.redirect(f"/0/items/mbid-{match.group(2)}/{match.group(3)}", status=302)
        release = self.catalogue.releases.get(match.group(2))
        if release is None or not release["caa"]:
            return self.not_found()
        filename = match.group(3)
        if filename == "index.json":
            mode = self.hostile_mode(release, "release")
            if mode and self.hostile(mode, "caa-index"):
                return None
            return self.send_json(200, caa_index(self.catalogue, release, bool(mode)))
        file = re.fullmatch(re.escape(f"mbid-{release['id']}-") + r"([0-9]+)(?:_thumb(250|500|1200))?\.([a-z]+)",
                            filename)
        if not file:
            return self.not_found()
        image_id, size = int(file.group(1)), file.group(2)
        if image_id == release["image_id"] and release["front"]:
            data = release["thumbs"].get(size) if size else release["image"]
        elif image_id == release["image_id"] + 1 and release["back"]:
            data = release["back_image"] if not size else make_png(int(size), int(size), colour_of("back" + size))
        else:
            data = None
        if data is None:
            return self.not_found()
        mode = self.hostile_mode(release, "release")
        if mode and self.hostile(mode, "image"):
            return None
        return self.send(200, data, sniff(data)[0])

    def not_found(self):
        self.send(404, b"<html><body><h1>Item not found</h1></body></html>\n", "text/html; charset=utf-8")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def main():
    # A parent that blocks signals (a libdispatch worker) passes that mask on: undo it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description="MusicBrainz + Cover Art Archive stand-in")
    parser.add_argument("--fixtures")
    parser.add_argument("--mb-port", type=int, default=0)
    parser.add_argument("--caa-port", type=int, default=0)
    parser.add_argument("--images-port", type=int, default=0)
    args = parser.parse_args()
    data = {}
    if args.fixtures:
        STATE.base_dir = os.path.dirname(os.path.abspath(args.fixtures))
    try:
        if args.fixtures:
            with open(args.fixtures, encoding="utf-8") as handle:
                data = json.load(handle)
        load_fixtures(data, STATE.base_dir)
    except Exception as error:
        print(f"musicbrainz_server.py: bad fixtures: {error}", file=sys.stderr)
        return 2
    servers = []
    for name, handler, port in (("mb", MusicBrainzHandler, args.mb_port), ("caa", ArchiveHandler, args.caa_port),
                                ("images", ImageHostHandler, args.images_port)):
        server = Server(("127.0.0.1", port), handler)
        PORTS[name] = server.server_address[1]
        servers.append(server)
    for server in servers:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"PORT mb {PORTS['mb']}\nPORT caa {PORTS['caa']}\nPORT images {PORTS['images']}", flush=True)
    while not stop.wait(0.2):
        pass
    STOP.set()
    for server in servers:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

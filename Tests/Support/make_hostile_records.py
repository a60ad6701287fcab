#!/usr/bin/env python3
"""Writes a corpus of hostile album records mixed with valid ones.

usage: make_hostile_records.py RECORDS_DIR BASE_URL COVER_COUNT

Prints a JSON manifest on stdout:
  {"valid": {"<id>": "<cover file name>"},       albums that must end cached
   "bad_files": [["<path>", ["<reason>", ...]], ...],            files that must be reported whole
   "bad_albums": [["<path>", <position>, ["<reason>", ...]], ...]}  albums rejected inside good files
Each reason list holds the alternatives one of which the log line must contain.
"""
import json
import os
import plistlib
import random
import sys

records, base, cover_count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(7)
manifest = {"valid": {}, "bad_files": [], "bad_albums": []}
counter = [0]


def name(prefix, ext=".json"):
    counter[0] += 1
    return os.path.join(records, f"{prefix}-{counter[0]:04d}{ext}")


def write(path, data):
    with open(path, "wb") as handle:
        handle.write(data if isinstance(data, bytes) else data.encode())


def valid_album():
    counter[0] += 1
    album_id = f"valid-{counter[0]:04d}"
    cover = f"cover-{rng.randrange(cover_count):05d}.png"
    manifest["valid"][album_id] = cover
    return {"id": album_id, "title": f"Title {counter[0]}", "artist": "Valid Artist", "cover_url": f"{base}/{cover}"}


def bad_file(data, prefix, ext=".json", reasons=("not valid JSON",)):
    path = name(prefix, ext)
    write(path, data)
    manifest["bad_files"].append([path, list(reasons)])


def mixed(bad_albums, prefix):
    """A file with valid albums around each bad one: only the bad ones are rejected."""
    path = name(prefix)
    albums = []
    for bad, reasons in bad_albums:
        albums.append(valid_album())
        albums.append(bad)
        manifest["bad_albums"].append([path, len(albums), list(reasons)])
    albums.append(valid_album())
    write(path, json.dumps(albums))


good = json.dumps([valid_album() for _ in range(3)])
write(name("good"), good)
# Invalid JSON: every truncation point of a record, and garbage.
for cut in range(1, len(good) - 1, max(1, len(good) // 120)):
    bad_file(good[:cut], "truncated")
for _ in range(150):
    # Random bytes are rarely JSON; when they are ("7"), they are not albums.
    bad_file(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))), "garbage",
             reasons=("not valid JSON", "expected an album object"))
for text in ["{", "}", "[", "]", "[1,]", "{\"a\":}", "{'title': 'x'}", "nul", "tru", "[01]", "\"\\x\"", "{\"a\" 1}", "// comment\n{}",
             "{\"title\": \"x\",}", "[{}]]", "NaN", "Infinity", "-", "1e", "\"unterminated"]:
    bad_file(text, "syntax", reasons=("not valid JSON", "expected an album object"))
# Nesting 100,000 deep, arrays and objects.
for text in ["[" * 100_000 + "]" * 100_000, "{\"a\":" * 100_000 + "1" + "}" * 100_000, "[" * 100_000]:
    bad_file(text, "deep", reasons=("nesting deeper than",))
# Invalid UTF-8 and NUL bytes.
for sequence in [b"\xc3\x28", b"\xa0\xa1", b"\xe2\x28\xa1", b"\xe2\x82\x28", b"\xf0\x28\x8c\xbc", b"\xf8\xa1\xa1\xa1\xa1",
                 b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xfe"] * 5:
    bad_file(b'[{"title": "bad ' + sequence + b'", "artist": "x", "cover_url": "http://h/c.png"}]', "utf8",
             reasons=("invalid UTF-8",))
for place in range(40):
    data = bytearray(good.encode())
    data.insert(rng.randrange(len(data)), 0)
    bad_file(bytes(data), "nul", reasons=("not valid JSON",))
# A record file over the size limit (16 MiB).
bad_file(b"[" + b" " * (17 * 1024 * 1024) + b"]", "huge", reasons=("file is too large",))

# Albums rejected alone: wrong types, missing fields, empty and huge strings, NULs, bad ids, bad URLs.
fields = {"title": "T", "artist": "A", "cover_url": f"{base}/cover-00000.png"}
wrong_types = [1, 1.5, True, [], {}, ["x"], {"a": "b"}]
bad_albums = []
for field in ("title", "artist", "cover_url"):
    for value in wrong_types:
        bad_albums.append(({**fields, field: value}, [f"'{field}' must be a string"]))
    bad_albums.append(({**fields, field: None}, ["missing required field"]))
    bad_albums.append(({key: value for key, value in fields.items() if key != field}, ["missing required field"]))
    bad_albums.append(({**fields, field: ""}, ["is empty"]))
    bad_albums.append(({**fields, field: "   "}, ["is empty", "contains a space", "is not an absolute URL"]))
    bad_albums.append(({**fields, field: "x" * (1024 * 1024)}, ["characters long"]))
    bad_albums.append(({**fields, field: "nul\u0000inside"}, ["control characters"]))
for value in [True, 1.5, [], {}, -1, 10**12]:
    bad_albums.append(({**fields, "year": value}, ["'year' must be"]))
for value in [1, True, [], {}]:
    bad_albums.append(({**fields, "genre": value}, ["'genre' must be a string"]))
for album_id in ["../../x", ".", "..", "/abs", "a/b", "-x", "_x", "", " ", "x" * 129, "é", "a b", "x\u0000y"]:
    bad_albums.append(({**fields, "id": album_id}, ["is not a valid id"]))
for album_id in [5, True]:
    bad_albums.append(({**fields, "id": album_id}, ["'id' must be a string"]))
url_reasons = {
    "file:///etc/passwd": "only http and https", "javascript:alert(1)": "only http and https",
    "ftp://example.com/c.png": "only http and https", "data:image/png;base64,iVBORw0KGgo=": "only http and https",
    "http://": "has no host", "https:///c.png": "has no host", "http:c.png": "has no host",
    "//example.com/c.png": "is not an absolute URL", "/c.png": "is not an absolute URL", "c.png": "is not an absolute URL",
    "http://exa mple.com/c.png": "contains a space", "http://example.com/a b.png": "contains a space",
    "http://example.com/" + "x" * 100_000: "characters long", "mailto:a@b.c": "only http and https",
    "gopher://x/y": "only http and https", "http://:80/c.png": "has no host", "http://example.com:99999/c.png": "invalid port",
    "http://example.com:abc/c.png": "invalid port", "HTTP ://x/c.png": "contains a space",
    "http://example.com/\u00e9.png": "non-ASCII", "\thttp://example.com/c.png": "control characters",
    "http://[::1/c.png": "malformed", "ws://example.com/c.png": "only http and https",
}
for url, reason in url_reasons.items():
    bad_albums.append(({**fields, "cover_url": url}, [reason]))
for value in ["just a string", 42, [fields], None]:
    bad_albums.append((value, ["expected an album object"]))
for bad in bad_albums:
    mixed([bad], "mixed")

# albums.bin archives: one valid (as plistlib writes NSKeyedArchiver's format), broken ones.
def archive(albums):
    objects = ["$null", {"NS.objects": [], "$class": plistlib.UID(2)}, {"$classname": "NSArray", "$classes": ["NSArray", "NSObject"]},
               {"$classname": "Album", "$classes": ["Album", "NSObject"]}]
    for album in albums:
        entry = {"$class": plistlib.UID(3)}
        for key, value in album.items():
            objects.append(value)
            entry[key] = plistlib.UID(len(objects) - 1)
        objects.append(entry)
        objects[1]["NS.objects"].append(plistlib.UID(len(objects) - 1))
    return plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(1)}, "$objects": objects},
                          fmt=plistlib.FMT_BINARY)


archived = []
for _ in range(3):
    album = valid_album()
    archived.append({"album": album["title"] + " (archived)", "artist": album["artist"], "year": "2001", "genre": "Pop",
                     "cover_url": album["cover_url"]})
    manifest["valid"].pop(album["id"])
valid_archive = archive(archived)
write(name("library", ".bin"), valid_archive)
manifest["archived_titles"] = [a["album"] for a in archived]
for cut in range(8, len(valid_archive) - 1, max(1, len(valid_archive) // 25)):
    bad_file(valid_archive[:cut], "truncated", ".bin", reasons=("not a valid album archive",))
trailer = len(valid_archive) - 32
for offset, value in [(6, 0), (6, 9), (7, 0), (7, 9)]:  # offset and reference sizes
    data = bytearray(valid_archive)
    data[trailer + offset] = value
    bad_file(bytes(data), "corrupt", ".bin", reasons=("not a valid album archive",))
for offset in (8, 16, 24):  # object count, top object, offset table position: far out of range
    data = bytearray(valid_archive)
    data[trailer + offset:trailer + offset + 8] = (2**60).to_bytes(8, "big")
    bad_file(bytes(data), "corrupt", ".bin", reasons=("not a valid album archive",))
data = bytearray(valid_archive)
data[0:8] = b"bplist99"
bad_file(bytes(data), "corrupt", ".bin", reasons=("not a valid album archive",))
bad_file(b"not a property list at all", "text", ".bin", reasons=("not a valid album archive",))
bad_file(plistlib.dumps({"$top": {"root": plistlib.UID(9)}, "$objects": ["$null"]}, fmt=plistlib.FMT_BINARY), "dangling", ".bin",
         reasons=("not a valid album archive",))

# A symbolic link loop, a dangling link, a FIFO, and a name that is not UTF-8.
loop = name("loop")
os.symlink(loop, loop)
manifest["bad_files"].append([loop, ["Too many levels of symbolic links"]])
dangling = name("dangling")
os.symlink(os.path.join(records, "nowhere.json"), dangling)
manifest["bad_files"].append([dangling, ["No such file or directory"]])
fifo = name("fifo")
os.mkfifo(fifo)
manifest["bad_files"].append([fifo, ["not a regular file (a FIFO)"]])
latin1 = os.path.join(records.encode(), b"caf\xe9.json")
with open(latin1, "wb") as handle:
    handle.write(good.encode())
manifest["bad_files"].append([os.path.join(records, "caf\ufffd.json"), ["not valid UTF-8"]])

json.dump(manifest, sys.stdout)

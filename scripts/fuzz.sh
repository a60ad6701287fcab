#!/bin/sh
# Builds the libFuzzer targets in Fuzz/ with the sources they exercise and runs
# each for FUZZ_SECONDS (default 60). Exit status is non-zero if any run finds a
# crash; the crashing input is kept in fuzz-artifacts/.
set -eu
top="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${FUZZ_SECONDS:-60}"
out="$top/.build-fuzz"
artifacts="$top/fuzz-artifacts"
mkdir -p "$out" "$artifacts"
core="$top/Sources/CoverdCore"

records_sources="$core/Records/JSONParser.swift $core/Records/JSONValue.swift $core/Records/AlbumValidator.swift
    $core/Records/Album.swift $core/Records/AlbumID.swift $core/Records/AlbumID+ASCII.swift $core/Records/RecordErrors.swift $core/Records/RecordContents.swift $core/Records/RecordPosition.swift
    $core/Records/BinaryPropertyList.swift $core/Records/ArchiveRecordDecoder.swift $core/Support/SystemError.swift"
http_sources="$core/Fetch/RetryAfter.swift $core/Records/Album.swift $core/Records/RecordPosition.swift $core/Records/AlbumID.swift $core/Records/AlbumID+ASCII.swift $core/Records/RecordErrors.swift $core/Records/JSONValue.swift
    $core/Support/SystemError.swift"
image_sources="$(ls "$core"/Images/*.swift | tr '\n' ' ')"

# Every C system-library target's module map (each names the library it links), and pixman's headers.
c_modules="-Xcc -I/usr/include/pixman-1"
for dir in "$top"/Sources/C*/; do c_modules="$c_modules -I $dir"; done

build() {
    name="$1"; shift
    # The gold linker warns about every ASan helper symbol; the log keeps that out of sight.
    # shellcheck disable=SC2086
    if ! swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name "$name" $c_modules "$@" -o "$out/$name" > "$out/$name.build.log" 2>&1; then
        grep -v "Cannot export local symbol" "$out/$name.build.log" | tail -30
        exit 1
    fi
}
echo "fuzz: building (swiftc -sanitize=fuzzer,address)"
# shellcheck disable=SC2086
build RecordsFuzzer $records_sources "$top/Fuzz/RecordsFuzzer.swift"
# shellcheck disable=SC2086
build ImageFuzzer $image_sources "$top/Fuzz/ImageFuzzer.swift"
# shellcheck disable=SC2086
build HTTPFuzzer $http_sources "$top/Fuzz/HTTPFuzzer.swift"

# Seed corpora: valid records of every form, and real images of every format.
seeds="$out/seeds"
rm -rf "$seeds"
mkdir -p "$seeds/records" "$seeds/images" "$seeds/http"
printf '120' > "$seeds/http/seconds"
printf 'Sun, 06 Nov 1994 08:49:37 GMT' > "$seeds/http/imf"
printf 'Sunday, 06-Nov-94 08:49:37 GMT' > "$seeds/http/rfc850"
printf 'Sun Nov  6 08:49:37 1994' > "$seeds/http/asctime"
printf 'https://user@[::1]:8443/a/b.png?x=1#f' > "$seeds/http/url"
printf '{"title": "T", "artist": "A", "cover_url": "http://h/c.png", "year": 1999, "id": "x-1"}' > "$seeds/records/single.json"
printf '[{"album": "T", "artist": "A", "coverUrl": "https://h:8080/c.png", "genre": "Pop"}, {"title": "U", "artist": "B", "cover_url": "http://h/d.png"}]' > "$seeds/records/array.json"
printf '{"albums": [{"title": "T\\u00e9", "artist": "A", "cover_url": "http://[::1]/c.png"}]}' > "$seeds/records/wrapped.json"
python3 - "$seeds/records/albums.bin" <<'PY'
import plistlib, sys
objects = ["$null", {"NS.objects": [plistlib.UID(4)], "$class": plistlib.UID(2)}, {"$classname": "NSArray", "$classes": ["NSArray"]},
           {"$classname": "Album", "$classes": ["Album"]}, {"$class": plistlib.UID(3), "album": plistlib.UID(5), "artist": plistlib.UID(6),
           "cover_url": plistlib.UID(7), "year": 1999}, "Title", "Artist", "http://h/c.png"]
open(sys.argv[1], "wb").write(plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(1)},
                                              "$objects": objects}, fmt=plistlib.FMT_BINARY))
PY
python3 "$top/scripts/make_sample_covers.py" "$seeds/images" 4 1 24
# Small pictures in the converted formats, written by their reference tools.
python3 - "$seeds/images" <<'PY'
import sys
w, h = 24, 16
rgb = bytearray(); rgba = bytearray(); pal = bytearray()
for y in range(h):
    for x in range(w):
        rgb += bytes([x * 10, y * 15, (x * y) % 256])
        rgba += bytes([x * 10, y * 15, (x * y) % 256, (x + y) * 6])
        pal += bytes([(x % 6) * 51, (y % 6) * 51, ((x + y) % 6) * 51])
open(sys.argv[1] + "/in.ppm", "wb").write(b"P6\n%d %d\n255\n" % (w, h) + rgb)
open(sys.argv[1] + "/in.pam", "wb").write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % (w, h) + rgba)
open(sys.argv[1] + "/palette.ppm", "wb").write(b"P6\n%d %d\n255\n" % (w, h) + pal)
PY
(
    cd "$seeds/images"
    cjpeg -quality 80 in.ppm > baseline.jpg
    cjpeg -progressive -grayscale in.ppm > progressive-gray.jpg
    cwebp -quiet -q 70 in.pam -o lossy-alpha.webp
    cwebp -quiet -lossless in.ppm -o lossless.webp
    pamtogif palette.ppm > palette.gif 2>/dev/null
    pamtogif -interlace palette.ppm > interlaced.gif 2>/dev/null
    rm -f in.ppm in.pam palette.ppm
)

status=0
for name in RecordsFuzzer ImageFuzzer HTTPFuzzer; do
    corpus="$out/corpus-$name"
    mkdir -p "$corpus"
    case "$name" in RecordsFuzzer) seed="$seeds/records" ;; ImageFuzzer) seed="$seeds/images" ;; *) seed="$seeds/http" ;; esac
    echo "fuzz: $name for ${seconds}s"
    # -timeout: an input that takes more than 10 s is a hang, reported like a crash.
    if ! "$out/$name" -max_total_time="$seconds" -timeout=10 -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$name-" "$corpus" "$seed" > "$out/$name.log" 2>&1; then
        echo "fuzz: $name FOUND A CRASH (see $artifacts and $out/$name.log)"
        tail -40 "$out/$name.log"
        status=1
    else
        grep -E "^Done|stat::new_units_added" "$out/$name.log" | sed "s/^/fuzz: $name: /"
    fi
done
exit $status

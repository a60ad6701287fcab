#!/bin/sh
# `make run`: a working demo without internet access. Sample covers are
# generated and served on 127.0.0.1; album records pointing at them are
# written; coverd runs in the foreground and logs "cached cover ..." for each.
set -eu
coverd="$1"
top="$(cd "$(dirname "$0")/.." && pwd)"
demo="${COVERD_DEMO_DIR:-$top/.demo}"
rm -rf "$demo/albums" "$demo/cache" "$demo/www"
mkdir -p "$demo/albums/more" "$demo/cache" "$demo/www"

python3 "$top/scripts/make_sample_covers.py" "$demo/www" 8 160 240
python3 -u "$top/Tests/Support/cover_server.py" --root "$demo/www" > "$demo/server.out" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
    grep -q '^PORT ' "$demo/server.out" 2>/dev/null && break
    sleep 0.05
done
port=$(sed -n 's/^PORT //p' "$demo/server.out")
base="http://127.0.0.1:$port"

# Every record form: an array, {"albums": [...]}, a single object (with the aliases), a nested directory.
cat > "$demo/albums/classics.json" <<JSON
[
  {"title": "Best of Bowie", "artist": "David Bowie", "year": 1992, "genre": "Pop", "cover_url": "$base/cover-00000.png"},
  {"title": "It's My Life", "artist": "No Doubt", "year": "2003", "genre": "Pop", "cover_url": "$base/cover-00001.png"},
  {"title": "Nothing Like The Sun", "artist": "Sting", "year": 1999, "cover_url": "$base/cover-00002.png"}
]
JSON
cat > "$demo/albums/library.json" <<JSON
{"albums": [
  {"title": "Staring at the Sun", "artist": "U2", "year": 2000, "cover_url": "$base/cover-00003.png"},
  {"title": "American Pie", "artist": "Madonna", "year": 2000, "cover_url": "$base/cover-00004.png"}
]}
JSON
cat > "$demo/albums/more/single.json" <<JSON
{"album": "Homogenic", "artist": "Björk", "year": 1997, "coverUrl": "$base/cover-00005.png"}
JSON
cat > "$demo/albums/more/broken.json" <<JSON
[{"title": "No cover here", "artist": "Nobody", "cover_url": "ftp://example.com/x.png"},
 {"title": "Missing", "artist": "Gone", "cover_url": "$base/no-such-cover.png"}]
JSON

cat <<TEXT
coverd demo
  covers served at  $base/ (from $demo/www)
  album records     $demo/albums   (drop more *.json here while it runs)
  cache             $demo/cache/covers
  status            $coverd status --cache $demo/cache
  add an album      $coverd add --records $demo/albums --title T --artist A --cover-url $base/cover-00006.png
Press Ctrl-C to stop.

TEXT
: > "$demo/coverd.toml"  # The demo ignores ~/.config/coverd: defaults plus these flags.
"$coverd" run --records "$demo/albums" --cache "$demo/cache" --config "$demo/coverd.toml" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true; kill $server 2>/dev/null || true' EXIT INT TERM
wait $daemon

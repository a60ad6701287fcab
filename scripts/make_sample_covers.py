#!/usr/bin/env python3
"""Writes sample cover PNGs (gradients with a simple pattern) for the demo and the benchmark.

usage: make_sample_covers.py DIR COUNT [MIN_SIDE MAX_SIDE]
"""
import random
import struct
import sys
import zlib


def png(width, height, seed):
    rng = random.Random(seed)
    base = [rng.randrange(256) for _ in range(3)]
    accent = [rng.randrange(256) for _ in range(3)]
    stripe = rng.randrange(8, 40)
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            on = ((x + y) // stripe) % 2 == 0
            color = accent if on else base
            shade = (x * 255 // max(1, width - 1) + y * 255 // max(1, height - 1)) // 2
            row += bytes(((c + shade + rng.randrange(4)) % 256) for c in color)
        rows.append(bytes(row))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b"")


def main():
    directory, count = sys.argv[1], int(sys.argv[2])
    low = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    high = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    rng = random.Random(42)
    for index in range(count):
        side = rng.randrange(low, high + 1)
        with open(f"{directory}/cover-{index:05d}.png", "wb") as handle:
            handle.write(png(side, side, index))


if __name__ == "__main__":
    main()

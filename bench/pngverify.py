"""A full check of one PNG file, for the benchmark's converted covers.

A header that looks right proves little about an encoder: this reads every
chunk, checks every CRC, inflates the whole image data, and checks that it
holds exactly the rows IHDR promises, each with a known filter type, so that
a cover with a broken stream or missing rows fails its run.
"""
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Samples per pixel for each colour type (PNG's table 11.1).
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# Adam7's passes: (x start, y start, x step, y step).
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _rows(width, height, bits_per_pixel, interlaced):
    """(row count, bytes per row without its filter byte) of each pass."""
    passes = ADAM7 if interlaced else ((0, 0, 1, 1),)
    shapes = []
    for x0, y0, dx, dy in passes:
        columns = (width - x0 + dx - 1) // dx if width > x0 else 0
        rows = (height - y0 + dy - 1) // dy if height > y0 else 0
        if columns and rows:
            shapes.append((rows, (columns * bits_per_pixel + 7) // 8))
    return shapes


def problem(path, size=None):
    """None if `path` is a complete, valid PNG (of `size`, (width, height), when given); else what is wrong."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data.startswith(SIGNATURE):
        return "no PNG signature"
    offset = len(SIGNATURE)
    header = None
    idat = []
    last = None
    while True:
        if offset + 12 > len(data):
            return "truncated before IEND"
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if len(body) != length or offset + 12 + length > len(data):
            return f"chunk {kind!r} truncated"
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            return f"bad CRC in {kind!r}"
        offset += 12 + length
        if header is None:
            if kind != b"IHDR" or length != 13:
                return "IHDR is not the first chunk"
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            if idat and last != b"IDAT":
                return "IDAT chunks not consecutive"
            idat.append(body)
        elif kind == b"IEND":
            break
        last = kind
    if offset != len(data):
        return "bytes after IEND"
    width, height, depth, colour, compression, filtering, interlace = header
    if colour not in CHANNELS or compression or filtering or interlace > 1 or not width or not height:
        return f"bad IHDR {header}"
    if size is not None and (width, height) != tuple(size):
        return f"{width}x{height}, expected {size[0]}x{size[1]}"
    if not idat:
        return "no IDAT"
    inflater = zlib.decompressobj()
    try:
        pixels = inflater.decompress(b"".join(idat)) + inflater.flush()
    except zlib.error as error:
        return f"image data does not inflate: {error}"
    if not inflater.eof or inflater.unused_data:
        return "image data's zlib stream incomplete or followed by junk"
    at = 0
    for rows, stride in _rows(width, height, depth * CHANNELS[colour], interlace):
        chunk = pixels[at:at + rows * (stride + 1)]
        if len(chunk) != rows * (stride + 1):
            return "image data shorter than its rows"
        # Every row's first byte is its filter type, 0 to 4.
        if max(chunk[::stride + 1]) > 4:
            return "unknown row filter"
        at += rows * (stride + 1)
    if at != len(pixels):
        return "image data longer than its rows"
    return None

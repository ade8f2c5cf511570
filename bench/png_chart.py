"""A grouped bar chart written as a PNG with the standard library only (zlib + struct), so the
benchmark needs no plotting package: bars, axis, grid lines and labels in a built-in 5x7 pixel
font (upper-case letters, digits and a few signs; other characters draw as blanks)."""

import struct
import zlib

# 5x7 glyphs, one string of 5 bits per row, top to bottom.
_FONT = {
    "A": "01110 10001 10001 11111 10001 10001 10001",
    "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110",
    "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110",
    "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010",
    "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 01010 00100 00100 00100 00100",
    "Z": "11111 00001 00010 00100 01000 10000 11111",
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    "_": "00000 00000 00000 00000 00000 00000 11111",
    "/": "00001 00010 00010 00100 01000 01000 10000",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "=": "00000 00000 11111 00000 11111 00000 00000",
    "+": "00000 00100 00100 11111 00100 00100 00000",
}


class Canvas:
    def __init__(self, width, height, background=(255, 255, 255)):
        self.w, self.h = width, height
        self.px = [bytearray(bytes(background) * width) for _ in range(height)]

    def rect(self, x0, y0, x1, y1, color):
        for y in range(max(0, y0), min(self.h, y1)):
            row = self.px[y]
            for x in range(max(0, x0), min(self.w, x1)):
                row[3 * x:3 * x + 3] = bytes(color)

    def text(self, x, y, s, color=(0, 0, 0), scale=1):
        for ch in s.upper():
            glyph = _FONT.get(ch)
            if glyph:
                for r, bits in enumerate(glyph.split()):
                    for c, bit in enumerate(bits):
                        if bit == "1":
                            self.rect(x + c * scale, y + r * scale, x + (c + 1) * scale,
                                      y + (r + 1) * scale, color)
            x += 6 * scale

    def png(self):
        raw = b"".join(b"\x00" + bytes(row) for row in self.px)

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def text_width(s, scale=1):
    return 6 * scale * len(s)


def grouped_bars(path, title, groups, series, colors, y_label, reference=None):
    """groups: [(label, [value per series or None])]; series: names; a horizontal line at
    `reference` (e.g. 1.0 for a ratio to a baseline) when given."""
    bar_w, gap, pad_l, pad_b, pad_t = 22, 26, 70, 60, 50
    width = pad_l + len(groups) * (len(series) * bar_w + gap) + 20
    legend_w = pad_l + sum(16 + text_width(n) + 20 for n in series)
    width = max(width, text_width(title, 2) + 20, legend_w)
    height = 380
    top = max(v for _, vals in groups for v in vals if v is not None)
    top = max(top, reference or 0) * 1.15
    c = Canvas(width, height)
    plot_h = height - pad_b - pad_t
    y_of = lambda v: height - pad_b - int(plot_h * v / top)
    # Grid and axis labels.
    steps = 5
    for i in range(steps + 1):
        v = top * i / steps
        y = y_of(v)
        c.rect(pad_l, y, width - 10, y + 1, (220, 220, 220))
        c.text(pad_l - text_width(f"{v:.2f}") - 6, y - 3, f"{v:.2f}")
    if reference is not None:
        y = y_of(reference)
        c.rect(pad_l, y, width - 10, y + 2, (200, 0, 0))
    c.rect(pad_l, height - pad_b, width - 10, height - pad_b + 1, (0, 0, 0))
    c.text(10, 12, title, scale=2)
    c.text(10, 34, y_label)
    x = pad_l + gap // 2
    for label, vals in groups:
        for s, v in enumerate(vals):
            if v is not None:
                c.rect(x + s * bar_w, y_of(v), x + (s + 1) * bar_w - 3, height - pad_b, colors[s])
        group_w = len(series) * bar_w
        c.text(x + group_w // 2 - text_width(label) // 2, height - pad_b + 8, label)
        x += group_w + gap
    # Legend.
    lx = pad_l
    for s, name in enumerate(series):
        c.rect(lx, height - 22, lx + 12, height - 10, colors[s])
        c.text(lx + 16, height - 19, name)
        lx += 16 + text_width(name) + 20
    with open(path, "wb") as f:
        f.write(c.png())

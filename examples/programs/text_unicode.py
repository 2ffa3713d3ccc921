"""String work: split/join, slicing, %-, format- and f-string formatting, str methods and non-ASCII text."""

WORDS = ["naïve", "café", "Straße", "smörgåsbord", "日本語", "ΑΒΓ", "plain", "jalapeño", "Ürün", "x"]


def lcg(s):
    return (s * 69069 + 1) & 0xFFFFFFFF


def make_lines(n, seed):
    s = seed
    lines = []
    for i in range(n):
        parts = []
        for k in range(6):
            s = lcg(s)
            parts.append(WORDS[(s >> 16) % len(WORDS)])
        lines.append(" ".join(parts) + ";%d" % i)
    return lines


def digest(line):
    body, _, num = line.rpartition(";")
    words = body.split(" ")
    h = int(num)
    for w in words:
        u = w.upper()
        l = w.lower()
        h = (h * 33 + len(u) + ord(l[0]) + ord(w[-1])) & 0xFFFFFFFF
        if w.startswith("sm") or w.endswith("é"):
            h ^= 0x5A5A
        if "ß" in w:
            h = (h + w.find("ß")) & 0xFFFFFFFF
    rev = body[::-1]
    mid = body[len(body) // 3: 2 * len(body) // 3]
    h = (h + ord(rev[0]) * 7 + len(mid)) & 0xFFFFFFFF
    return h


def render(i, h):
    a = "{:>6}|{:08x}|{:.3f}".format(i, h, h / 4096.0)
    b = f"<{i % 97:03d}:{h & 0xFF:02X}>"
    c = "%-5s%5d%%" % (str(i)[-3:], h % 100)
    return a + b + c.replace(" ", "_").strip("_")


def main():
    lines = make_lines(30000, 12345)
    checksum = 0
    for rnd in range(4):
        for i, line in enumerate(lines):
            h = digest(line)
            out = render(i + rnd, h)
            checksum = (checksum * 7 + len(out) + ord(out[-1]) + h) & 0xFFFFFFFF
    joined = "\n".join(lines[:500])
    checksum ^= len(joined.encode("utf-8")) + joined.count("日")
    checksum ^= sum(1 for ch in joined if ch.isalpha() and not ch.isascii())
    print("checksum", checksum)


main()

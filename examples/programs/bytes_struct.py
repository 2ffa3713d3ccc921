"""Binary data: bytes and bytearray building and slicing, struct pack/unpack, array('i'/'d') arithmetic, hex round trips."""

import struct
from array import array

REC = struct.Struct("<iHdB")


def make_blob(n, seed):
    buf = bytearray()
    s = seed
    for i in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        buf += REC.pack(s - (1 << 31), s & 0xFFFF, (s >> 8) / 65536.0, i & 0xFF)
    return bytes(buf)


def scan_blob(blob):
    size = REC.size
    acc = 0
    facc = 0.0
    for off in range(0, len(blob), size):
        a, b, d, c = REC.unpack_from(blob, off)
        acc = (acc + a * 3 + b ^ c) & 0xFFFFFFFF
        facc += d
    head = blob[:16]
    acc ^= int.from_bytes(head, "little") & 0xFFFFFFFF
    return acc, facc


def rolling(data):
    out = bytearray(len(data))
    prev = 0
    for i in range(len(data)):
        v = (data[i] + prev * 5) & 0xFF
        out[i] = v
        prev = v
    return out


def array_work(n):
    ia = array("i", range(n))
    da = array("d", [0.0]) * n
    for i in range(1, n):
        ia[i] = (ia[i - 1] * 7 + ia[i]) % 100003
        da[i] = da[i - 1] * 0.5 + ia[i] * 0.25
    return sum(ia) & 0xFFFFFFFF, da[n - 1]


def main():
    checksum = 0
    ftotal = 0.0
    for r in range(600):
        blob = make_blob(8000, r + 11)
        acc, f = scan_blob(blob)
        rolled = rolling(blob)
        h = rolled[-64:].hex()
        back = bytes.fromhex(h)
        checksum = (checksum * 31 + acc + back[3] + rolled.count(b"\x00")) & 0xFFFFFFFF
        isum, dl = array_work(20000 + r)
        checksum = (checksum ^ isum) & 0xFFFFFFFF
        ftotal += f + dl
    tag = b"crc:" + str(checksum).encode("ascii")
    checksum ^= sum(tag) + tag.find(b":")
    print("ftotal %.6e" % ftotal)
    print("checksum", checksum)


main()

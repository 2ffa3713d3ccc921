"""Big integers past 64 bits (overflow from machine ints to longs) and floats: math functions, special values and formatting."""

import math

M61 = (1 << 61) - 1


def mix_small(n):
    # starts in machine ints and overflows into longs partway
    x = 1
    acc = 0
    for i in range(1, n):
        x = x * 3 + i
        acc ^= x & 0xFFFF
        if x.bit_length() > 200:
            x = x % M61 + (x >> 190)
    return acc, x


def bignum_round(k):
    f = 1
    for i in range(2, k):
        f *= i
    p = pow(7, 300, (1 << 127) - 1)
    q, r = divmod(f, (1 << 89) + 5)
    g = math.gcd(f, (1 << 100) - 3)
    return (q ^ r ^ p ^ g ^ (-f >> 70)) & 0xFFFFFFFFFFFFFFFF


NAN = float("nan")


def special(v):
    # float constants the JIT keeps in traces: huge, infinite, negative zero, tiny, nan
    huge = v * 1e300
    capped = min(huge * 1e300, 1e309)
    neg0 = v * -0.0
    tiny = v * 5e-324 + 2.5e-310
    odd = v + NAN
    return (capped < 1e309) + (neg0 == 0.0) * 2 + (tiny > 0.0) * 4 + (odd != odd) * 8


def float_round(n, seed):
    s = seed
    acc = 0.0
    lo = math.inf
    hi = -math.inf
    zeros = 0
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        u = (s >> 11) * (1.0 / 9007199254740992.0)
        v = math.sqrt(u) * math.sin(u * 6.283185307179586) + math.log1p(u) - math.exp(-u)
        w = math.atan2(v, u + 1e-300) + math.hypot(u, v) - math.floor(v * 3.5) * 0.25
        if w < lo:
            lo = w
        if w > hi:
            hi = w
        if math.copysign(1.0, -0.0 * v) < 0.0:
            zeros += 1
        acc += w * 1e-3 + (0.0 if math.isfinite(w) else 1.0) + special(u) * 1.5
    return acc, lo, hi, zeros


def main():
    checksum = 0
    for r in range(120):
        acc, x = mix_small(3000 + r)
        checksum = (checksum * 31 + acc + (x & 0xFFFFFF)) & 0xFFFFFFFF
        checksum ^= bignum_round(120 + r) & 0xFFFFFFFF
        facc, lo, hi, zeros = float_round(20000, r + 1)
        text = "%.9f %.4e %r %s" % (facc, lo, hi, repr(float(zeros)))
        checksum = (checksum + sum(map(ord, text))) & 0xFFFFFFFF
    special = [float("inf"), -float("inf"), float("nan"), -0.0, 1e300 * 10, 2.0 ** -1074]
    checksum ^= len(" ".join(format(v, ".17g") for v in special))
    print("last", text)
    print("checksum", checksum)


main()

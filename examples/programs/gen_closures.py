"""Generators, generator expressions, closures with nonlocal state, and calls through *args/**kwargs."""


def counter_gen(seed, n):
    s = seed
    for _ in range(n):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        yield s >> 8


def window_pairs(it):
    prev = next(it)
    for x in it:
        yield prev, x
        prev = x


def take_while_small(it, limit):
    for x in it:
        if x > limit:
            return
        yield x


def make_accumulator(scale):
    total = 0

    def add(x):
        nonlocal total
        total += x * scale
        return total

    return add


def combine(*args, **kwargs):
    acc = kwargs.get("start", 0)
    for a in args:
        acc = (acc * 3 + a) & 0xFFFFFFFF
    if kwargs.get("negate"):
        acc = (-acc) & 0xFFFFFFFF
    return acc


def forward(f, *args, **kwargs):
    return f(*args, **kwargs)


def main():
    checksum = 0
    for r in range(600):
        add = make_accumulator(r + 1)
        for a, b in window_pairs(counter_gen(r + 1, 20000)):
            add((a ^ b) & 0xFF)
        s = sum(x & 0xF for x in counter_gen(r + 7, 20000) if x % 3)
        small = take_while_small(counter_gen(r + 9, 5000), (1 << 23) - 2048)
        m = max(((x % 1000, -x) for x in small), default=(0, 0))
        c = 0
        for i in range(5000):
            c = forward(combine, c, i, r, start=i & 7, negate=(i % 5 == 0))
        squares = list(i * i for i in range(r, 2000))
        checksum = (checksum * 31 + add(0) + s + m[0] + c + squares[-1]) & 0xFFFFFFFF
    print("checksum", checksum)


main()

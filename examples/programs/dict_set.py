"""Dicts and sets: int and str keys, comprehensions, .get/.items/.popitem, del, set algebra."""


def lcg(s):
    return (s * 1103515245 + 12345) & 0x7FFFFFFF


def inventory_round(n, seed):
    stock = {}
    names = {}
    s = seed
    for i in range(n):
        s = lcg(s)
        key = s % 997
        stock[key] = stock.get(key, 0) + (s >> 20) % 9 + 1
        label = "item%d" % (key % 61)
        names[label] = names.get(label, 0) ^ key
        if i % 5 == 4:
            s = lcg(s)
            victim = s % 997
            if victim in stock:
                del stock[victim]
    doubled = {k: v * 2 for k, v in stock.items() if v & 1}
    total = 0
    for k, v in doubled.items():
        total = (total * 31 + k * v) & 0xFFFFFFFF
    for label, x in names.items():
        total = (total + len(label) * x) & 0xFFFFFFFF
    while stock:
        k, v = stock.popitem()
        total = (total + k - v) & 0xFFFFFFFF
    return total


def set_round(n, seed):
    s = seed
    evens = set()
    odds = set()
    for i in range(n):
        s = lcg(s)
        x = s % 4093
        if x & 1:
            odds.add(x)
        else:
            evens.add(x)
        if x % 7 == 0:
            evens.discard(x - 1)
            odds.discard(x + 1)
    small = {x for x in range(0, 4093, 3)}
    union = evens | odds
    both = small & union
    rest = union - small
    sym = small ^ odds
    acc = len(both) * 7 + len(rest) * 3 + len(sym)
    for x in both:
        acc = (acc * 17 + x) & 0xFFFFFFFF
    return acc, 4 in evens, 3 in odds


def main():
    checksum = 0
    for r in range(600):
        checksum = (checksum * 131 + inventory_round(6000, r + 1)) & 0xFFFFFFFF
        acc, a, b = set_round(5000, r * 7 + 3)
        checksum = (checksum ^ acc ^ (a << 3) ^ (b << 5)) & 0xFFFFFFFF
    print("checksum", checksum)


main()

"""Exceptions in hot loops: custom exception hierarchy, raise/catch, try/except/else/finally, re-raise and builtin errors."""


class ParseError(Exception):
    def __init__(self, pos, code):
        Exception.__init__(self, pos, code)
        self.pos, self.code = pos, code


class SoftError(ParseError):
    pass


def parse_token(tok, pos):
    if not tok or tok[0] == "-":
        raise SoftError(pos, 2) if tok else ParseError(pos, 1)
    return int(tok, 16)


def process(tokens, budget):
    total = soft = hard = other = 0
    for pos, tok in enumerate(tokens):
        budget[0] += 1
        try:
            v = parse_token(tok, pos)
            total += 10 // (v % 7)
        except SoftError as e:
            soft += e.code + (e.pos & 3)
        except ParseError as e:
            hard += e.code
        except (ValueError, ZeroDivisionError):
            other += 1
        else:
            total += 1
        finally:
            budget[1] += 1
    return total, soft, hard, other


def lookup(table, k):
    try:
        return table[k]
    except KeyError:
        if k & 1:
            raise
        return -1


def checked_lookup(table, keys):
    hits = misses = 0
    for k in keys:
        try:
            hits += lookup(table, k)
        except KeyError:
            misses += 1
    return hits, misses


def make_tokens(n, s):
    toks = []
    for i in range(n):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        toks.append(("", "-x", "zz")[s % 23] if s % 23 < 3 else "%x" % (s >> 9))
    return toks


def main():
    budget = [0, 0]  # try blocks entered, finally blocks run
    table = {i * 3: i for i in range(500)}
    checksum = 0
    for r in range(700):
        t, s, h, o = process(make_tokens(8000, r + 5), budget)
        hits, misses = checked_lookup(table, range(r, 1500 + r))
        checksum = (checksum * 33 + t + s * 3 + h * 5 + o * 7 + hits + misses) & 0xFFFFFFFF
    assert budget[0] == budget[1]
    print("checksum", checksum, budget[1])


main()

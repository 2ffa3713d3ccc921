"""Recursion: a recursive-descent expression evaluator, tree building and folding, mutual recursion and N-queens backtracking."""


def tokenize(src):
    return src.replace("(", " ( ").replace(")", " ) ").split()


def parse_expr(toks, pos):
    val, pos = parse_term(toks, pos)
    while pos < len(toks) and toks[pos] in ("+", "-"):
        op = toks[pos]
        rhs, pos = parse_term(toks, pos + 1)
        val = val + rhs if op == "+" else val - rhs
    return val, pos


def parse_term(toks, pos):
    val, pos = parse_atom(toks, pos)
    while pos < len(toks) and toks[pos] == "*":
        rhs, pos = parse_atom(toks, pos + 1)
        val = (val * rhs) % 1000003
    return val, pos


def parse_atom(toks, pos):
    if toks[pos] == "(":
        val, pos = parse_expr(toks, pos + 1)
        return val, pos + 1
    return int(toks[pos]), pos + 1


def gen_expr(depth, s):
    s = (s * 1103515245 + 12345) & 0x7FFFFFFF
    if depth == 0 or s % 5 == 0:
        return str(s % 100), s
    left, s = gen_expr(depth - 1, s)
    right, s = gen_expr(depth - 1, s)
    return "(%s %s %s)" % (left, "+-*"[s % 3], right), s


def build(depth, key):
    return key if depth == 0 else (build(depth - 1, key * 2), build(depth - 1, key * 2 + 1))


def fold(t):
    return t if isinstance(t, int) else (fold(t[0]) * 3 + fold(t[1])) & 0xFFFFFFFF


def is_even(n):
    return n == 0 or is_odd(n - 1)


def is_odd(n):
    return n != 0 and is_even(n - 1)


def queens(n, row, cols, d1, d2):
    if row == n:
        return 1
    count = 0
    for c in range(n):
        if c not in cols and row + c not in d1 and row - c not in d2:
            count += queens(n, row + 1, cols | {c}, d1 | {row + c}, d2 | {row - c})
    return count


def main():
    checksum = 0
    s = 7
    for r in range(1000):
        src, s = gen_expr(9, s)
        val, _ = parse_expr(tokenize(src), 0)
        checksum = (checksum * 31 + val + fold(build(8, r))) & 0xFFFFFFFF
        checksum += is_even(r * 3 + 200)
    checksum ^= queens(8, 0, frozenset(), frozenset(), frozenset())
    print("checksum", checksum & 0xFFFFFFFF)


main()

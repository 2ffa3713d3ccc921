"""Odd code names in hot loops: non-ASCII identifiers, lambdas and comprehensions, and code compiled under a file name with quotes, a backslash, a comma and spaces."""

SOURCE = '''
def tally(n):
    acc = 0
    for i in range(n):
        acc = (acc * 31 + (i ^ (i >> 3))) & 0xFFFFFF
    return acc
'''


def größe(wörter):
    summe = 0
    for wort in wörter:
        summe += len(wort) * 3 + ord(wort[0])
    return summe


def évalue(n):
    carré = lambda x: (x * x) & 0xFFFF
    total = 0
    for i in range(n):
        total = (total + carré(i) + (i % 7)) & 0xFFFFFFF
    return total


def comprehensions(n):
    squares = {i: i * i & 0xFFF for i in range(n)}
    residues = {v % 97 for v in squares.values()}
    return sum(k ^ v for k, v in squares.items()) + len(residues)


def main():
    namespace = {}
    code = compile(SOURCE, "it's \"odd\", c:\\dir\\file.py", "exec")
    exec(code, namespace)
    tally = namespace["tally"]
    wörter = ["Äpfel", "Öl", "Übermut", "straße", "ça", "ñu", "ωμέγα", "ascii"] * 500
    checksum = 0
    for r in range(3000):
        checksum = (checksum * 31 + größe(wörter)) & 0xFFFFFFFF
        checksum = (checksum + évalue(4000 + r)) & 0xFFFFFFFF
        checksum ^= comprehensions(3000 + r)
        checksum = (checksum + tally(5000 + r)) & 0xFFFFFFFF
    print("checksum", checksum)


main()

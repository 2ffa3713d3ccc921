"""Classes: __slots__, properties with setters, inheritance with super(), class attributes, __eq__/__hash__ and isinstance dispatch."""


class Account(object):
    __slots__ = ("_balance", "owner", "ops")
    fee = 1

    def __init__(self, owner, balance):
        self.owner = owner
        self._balance = balance
        self.ops = 0

    @property
    def balance(self):
        return self._balance

    @balance.setter
    def balance(self, value):
        self.ops += 1
        self._balance = value if value > 0 else 0

    def deposit(self, amount):
        self.balance = self.balance + amount - self.fee
        return self.balance


class Savings(Account):
    __slots__ = ("rate",)
    fee = 0

    def __init__(self, owner, balance, rate):
        super().__init__(owner, balance)
        self.rate = rate

    def deposit(self, amount):
        return super().deposit(amount + amount // self.rate)


class Frozen(Savings):
    __slots__ = ()

    def deposit(self, amount):
        return super(Frozen, self).deposit(0)


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and self.x == other.x and self.y == other.y

    def __hash__(self):
        return self.x * 1000003 ^ self.y


def main():
    accounts = [Account("a", 10), Savings("s", 50, 7), Frozen("f", 99, 3), Savings("t", 5, 11)]
    s = 42
    seen = set()
    for i in range(25000000):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        acct = accounts[s % 4]
        amount = (s >> 12) % 200 - 80
        acct.deposit(amount)
        if isinstance(acct, Savings) and acct.balance > 100000:
            acct.balance = acct.balance // 3
        if i % 8 == 0:
            seen.add(Point(s % 64, (s >> 6) % 64))
    checksum = 0
    for a in accounts:
        checksum = (checksum * 131 + a.balance * 7 + a.ops + len(a.owner)) & 0xFFFFFFFF
    checksum ^= len(seen) + (Point(3, 4) in seen)
    print("checksum", checksum)


main()

"""collections (deque, defaultdict, Counter, OrderedDict) and sorting lists of tuples with key functions."""

from collections import Counter, OrderedDict, defaultdict, deque
from operator import itemgetter

TEAMS = ("red", "blue", "green", "gold", "grey")


def bfs_grid(w, h, walls):
    dist = [-1] * (w * h)
    q = deque([0])
    dist[0] = 0
    while q:
        cur = q.popleft()
        x, y = cur % w, cur // w
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < w and 0 <= ny < h:
                nxt = ny * w + nx
                if dist[nxt] < 0 and nxt not in walls:
                    dist[nxt] = dist[cur] + 1
                    q.append(nxt)
    return sum(d for d in dist if d > 0)


def tally(n, seed):
    s = seed
    groups = defaultdict(list)
    counts = Counter()
    recent = OrderedDict()
    for i in range(n):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        team = TEAMS[s % 5]
        score = (s >> 10) % 1000
        groups[team].append((score, i))
        counts[team] += 1
        counts[score % 10] += 1
        recent[score] = i
        recent.move_to_end(score)
        if len(recent) > 64:
            recent.popitem(last=False)
    rows = [(team, score, i) for team, lst in groups.items() for score, i in lst]
    rows.sort(key=itemgetter(1, 2))
    rows.sort(key=lambda t: t[0], reverse=True)
    best = sorted(rows[:2000], key=lambda t: (-t[1], t[0]))[:5]
    acc = sum(c * (k if isinstance(k, int) else len(k)) for k, c in counts.most_common(6))
    for team, score, i in best:
        acc = (acc * 31 + score + i + len(team)) & 0xFFFFFFFF
    return (acc + sum(recent.values()) + rows[7][1]) & 0xFFFFFFFF


def main():
    checksum = 0
    walls = set(range(37, 40 * 40, 7))
    for r in range(25):
        checksum = (checksum * 131 + tally(12000, r + 1)) & 0xFFFFFFFF
        checksum ^= bfs_grid(40 + r % 3, 40, walls)
        window = deque(maxlen=16)
        for v in range(r, 20000 + r):
            window.append(v * v & 0xFF)
        checksum = (checksum + sum(window)) & 0xFFFFFFFF
    print("checksum", checksum)


main()

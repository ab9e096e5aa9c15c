"""Connection sets (ports per protocol) and IPv4 address intervals, as small canonical tuples.

Reachability intersects and unites the same few connection sets millions of times (every source and
destination pair of a cluster), so a set is an immutable, hashable, canonical tuple and the set
operations are memoized: after the first call each operation is one dictionary lookup.

A connection set is ``((protocol, ((lo, hi), ...)), ...)`` sorted by protocol, with merged, sorted,
inclusive port ranges; ``()`` is no connection and :data:`ALL` is every port of TCP, UDP and SCTP
(the protocols a NetworkPolicy can name).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

Ranges = tuple[tuple[int, int], ...]
Conn = tuple[tuple[str, Ranges], ...]

PROTOCOLS = ("SCTP", "TCP", "UDP")
MIN_PORT = 1
MAX_PORT = 65535
FULL: Ranges = ((MIN_PORT, MAX_PORT),)
NONE: Conn = ()
ALL: Conn = tuple((p, FULL) for p in PROTOCOLS)


def _merge(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def conn_of(protocol: str, lo: int = MIN_PORT, hi: int = MAX_PORT) -> Conn:
    """One protocol, one port range (clamped to 1-65535); empty when the range is empty."""
    lo, hi = max(lo, MIN_PORT), min(hi, MAX_PORT)
    if protocol not in PROTOCOLS or lo > hi:
        return NONE
    return ((protocol, ((lo, hi),)),)


@lru_cache(maxsize=65536)
def union(a: Conn, b: Conn) -> Conn:
    if not a:
        return b
    if not b or a == b:
        return a
    merged: dict[str, list[tuple[int, int]]] = {}
    for proto, ranges in (*a, *b):
        merged.setdefault(proto, []).extend(ranges)
    return tuple((p, _merge(merged[p])) for p in sorted(merged))


@lru_cache(maxsize=65536)
def intersect(a: Conn, b: Conn) -> Conn:
    if not a or not b:
        return NONE
    if a == b or b == ALL:
        return a
    if a == ALL:
        return b
    other = dict(b)
    out: list[tuple[str, Ranges]] = []
    for proto, ranges in a:
        theirs = other.get(proto)
        if not theirs:
            continue
        cut = [
            (max(lo, lo2), min(hi, hi2))
            for lo, hi in ranges
            for lo2, hi2 in theirs
            if max(lo, lo2) <= min(hi, hi2)
        ]
        if cut:
            out.append((proto, _merge(cut)))
    return tuple(out)


def union_all(conns: list[Conn]) -> Conn:
    out = NONE
    for c in conns:
        out = union(out, c)
        if out == ALL:
            break
    return out


@lru_cache(maxsize=4096)
def conn_str(conn: Conn) -> str:
    """netpol-analyzer's spelling: ``All Connections``, ``No Connections`` or ``TCP 80,8080-8081,UDP 53``."""
    if conn == ALL:
        return "All Connections"
    if not conn:
        return "No Connections"
    return ",".join(
        f"{proto} " + ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
        for proto, ranges in conn
    )


def conn_json(conn: Conn) -> dict[str, list[str]] | str:
    """``"all"`` or ``{"TCP": ["80", "8080-8081"], ...}`` for JSON reports and `input.facts`."""
    if conn == ALL:
        return "all"
    return {proto: [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges] for proto, ranges in conn}


# ---- IPv4 intervals ------------------------------------------------------------------------------------

Interval = tuple[int, int]  # inclusive integer bounds of an IPv4 address range
IPV4_ALL: Interval = (0, 2**32 - 1)


def cidr_interval(cidr: str) -> Interval | None:
    """The address range of an IPv4 CIDR (host bits tolerated, as Kubernetes does); None for IPv6 or junk."""
    try:
        net = ipaddress.ip_network(cidr.strip(), strict=False)
    except ValueError:
        return None
    if net.version != 4:
        return None
    return int(net.network_address), int(net.broadcast_address)


def subtract(intervals: list[Interval], cut: Interval) -> list[Interval]:
    out: list[Interval] = []
    for lo, hi in intervals:
        if cut[1] < lo or cut[0] > hi:
            out.append((lo, hi))
            continue
        if lo < cut[0]:
            out.append((lo, cut[0] - 1))
        if hi > cut[1]:
            out.append((cut[1] + 1, hi))
    return out


def atoms(intervals: list[Interval]) -> list[Interval]:
    """The coarsest partition of 0.0.0.0/0 into ranges no referenced range boundary crosses.

    Every boundary is the start or end of some referenced range, so two adjacent atoms never lie in
    the same referenced ranges: these are netpol-analyzer's disjoint IP blocks, one range each.
    """
    cuts = {IPV4_ALL[0], IPV4_ALL[1] + 1}
    for lo, hi in intervals:
        cuts.add(lo)
        cuts.add(hi + 1)
    points = sorted(cuts)
    return [(points[i], points[i + 1] - 1) for i in range(len(points) - 1)]


def interval_str(interval: Interval) -> str:
    lo, hi = interval
    return f"{ipaddress.IPv4Address(lo)}-{ipaddress.IPv4Address(hi)}"


def interval_cidrs(interval: Interval) -> list[str]:
    lo, hi = interval
    return [
        str(n)
        for n in ipaddress.summarize_address_range(ipaddress.IPv4Address(lo), ipaddress.IPv4Address(hi))
    ]


@lru_cache(maxsize=65536)
def difference(a: Conn, b: Conn) -> Conn:
    """The connections of `a` that are not in `b`."""
    if not a or not b:
        return a
    theirs = dict(b)
    out: list[tuple[str, Ranges]] = []
    for proto, ranges in a:
        left = list(ranges)
        for cut in theirs.get(proto, ()):
            left = subtract(left, cut)
        if left:
            out.append((proto, _merge(left)))
    return tuple(out)

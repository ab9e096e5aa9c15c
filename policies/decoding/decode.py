"""The one YAML decoder: bytes to objects exactly as Kubernetes reads them, with positions kept.

The API server and kubectl read YAML with sigs.k8s.io/yaml over go-yaml v2 (YAML 1.1 scalars) and
then JSON. PyYAML resolves scalars differently (``y``, ``0o0``, ``=``, dates, merge lists), so a
manifest could mean one thing to the cluster and another to stockade. Here PyYAML's C parser and
composer build the node tree (and its line marks), and values are constructed from it with go-yaml
v2's rules (``resolve.go`` and ``decode.go``) and sigs.k8s.io/yaml's conversion to JSON:

- plain scalars: booleans ``y Y yes Yes YES on On ON true True TRUE`` (and their negatives), null
  ``~ null Null NULL`` and empty, ints as Go's ``strconv.ParseInt(s, 0, 64)`` reads them after
  removing ``_`` (``0x1F``, ``0o17``, ``017``, ``0b11``, ``+5``), floats of YAML's float syntax
  (an integral float is the int JSON would give), everything else a string: timestamps, ``=``,
  ``1e400``; ``.inf`` and ``.nan`` cannot be JSON and are errors, as kubectl says;
- explicit tags: ``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!timestamp`` convert or
  fail as go-yaml does; ``!!binary`` is its decoded text; other tags (``!foo``, ``!!set``) are ignored;
- keys become strings the way sigs.k8s.io/yaml makes them (``9000``, ``1.5``, ``true`` for ``y``);
  null, list and map keys are errors; a key written twice in one mapping is an error (the API server's
  strict field validation rejects duplicate fields);
- merge keys ``<<`` follow go-yaml v2: merged in document order, the first map of a merge list wins;
- aliases: an anchor inside itself is an error, and go-yaml's budget against "excessive aliasing" is
  applied (so a 600-byte alias bomb is a one-line error, not gigabytes); nesting deeper than
  :data:`MAX_DEPTH` is an error too (no real manifest comes close; JSON encoders stop near 255).

Every error is a :class:`DecodeError` with the 1-based line of the node. Aliased values are shared,
not copied, as PyYAML shares them. The differential test against the real ``kubectl`` lives in
``tests/policies/test_decode_kubectl.py``.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import math
import operator
import re
import struct
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from yaml._yaml import CParser
from yaml.composer import Composer
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

#: Deepest nesting of collections accepted in one document (aliases expanded).
MAX_DEPTH = 100
#: what every reader says of an object past MAX_DEPTH (the decoder, JSON files, the webhook, the audit)
TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"
#: Most nodes one document may expand to (aliases expanded), whatever the alias ratio.
MAX_NODES = 5_000_000

PLAIN = "!k8s/plain"  # the tag our resolver gives untagged plain scalars
_STR = "tag:yaml.org,2002:str"
_SEQ_TAG = BaseResolver.DEFAULT_SEQUENCE_TAG
_MAP_TAG = BaseResolver.DEFAULT_MAPPING_TAG
_LONG = "tag:yaml.org,2002:"
_RESOLVABLE = frozenset({"!!str", "!!bool", "!!int", "!!float", "!!null", "!!timestamp"})
MERGE = "<<"

INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether decoded JSON nests collections deeper than `limit` (iteratively, a level at a time: a
    hostile document cannot exhaust the stack). The JSON readers' counterpart of the YAML decoder's
    check. Only collections are queued, and exact types are tested first: the ABC check (Mapping)
    is made only for a value none of JSON's types is (it cost most of the walk)."""
    level: list[Any] = [value] if _collection(value) else []
    depth = 0
    while level:
        if depth >= limit:
            return True
        below: list[Any] = []
        for node in level:
            kind = type(node)
            mapping = kind is dict or (kind is not list and isinstance(node, Mapping))
            for child in node.values() if mapping else node:
                t = type(child)
                if t is dict or t is list or (t not in _JSON_SCALARS and _collection(child)):
                    below.append(child)
        level = below
        depth += 1
    return False


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _collection(value: Any) -> bool:
    return isinstance(value, Mapping | list)


class DecodeError(ValueError):
    """Input Kubernetes would not read (or that is not YAML), with the 1-based line of the problem."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


# ---- scalars: go-yaml v2 resolve.go --------------------------------------------------------------

_MAP: dict[str, Any] = {}
for _words, _value in (
    ("y Y yes Yes YES true True TRUE on On ON", True),
    ("n N no No NO false False FALSE off Off OFF", False),
    ("~ null Null NULL", None),
    (".nan .NaN .NAN", math.nan),
    (".inf .Inf .INF +.inf +.Inf +.INF", math.inf),
    ("-.inf -.Inf -.INF", -math.inf),
):
    for _word in _words.split():
        _MAP[_word] = _value
_MAP[""] = None
_HINTED = frozenset("+-0123456789yYnNtTfFoO~.")
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_DOT_FLOAT = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
_DIGITS = {16: re.compile(r"^[0-9a-fA-F]+$"), 10: re.compile(r"^[0-9]+$"), 8: re.compile(r"^[0-7]+$")}
_DIGITS[2] = re.compile(r"^[01]+$")


class _Range(ValueError):
    pass


def _go_int(s: str, signed: bool) -> int:
    """Go's strconv.ParseInt(s, 0, 64) (signed) or ParseUint(s, 0, 64): ValueError, _Range on overflow."""
    body, negative = s, False
    if body[:1] in ("+", "-"):
        if not signed:
            raise ValueError(s)
        negative, body = body[0] == "-", body[1:]
    base = 10
    if len(body) > 1 and body[0] == "0":
        prefix = body[1].lower()
        base, body = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(prefix, (8, body[1:]))
    if not _DIGITS[base].match(body):
        raise ValueError(s)
    value = -int(body, base) if negative else int(body, base)
    if (signed and not INT64_MIN <= value <= INT64_MAX) or (not signed and value > UINT64_MAX):
        raise _Range(s)
    return value


def _number(value: int | float) -> int | float | str:
    """What the number is once it has been JSON in the API server: an int when it is integral and fits
    int64, else a float (unstructured JSON keeps int64 or float64)."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError("NaN and infinity cannot be represented in JSON (kubectl refuses them)")
        if value.is_integer() and INT64_MIN <= value <= INT64_MAX:
            return int(value)
        return value
    if INT64_MIN <= value <= INT64_MAX:
        return value
    return float(value)


def _resolve(tag: str, text: str) -> tuple[str, Any]:
    """go-yaml v2 ``resolve(tag, in)`` for tag "" (plain) or a resolvable tag: (result tag, value)."""
    hint = text[0] if text else "N"
    if not text or hint in _HINTED:
        if text in _MAP:
            value = _MAP[text]
            return ("!!bool" if isinstance(value, bool) else "!!null" if value is None else "!!float"), value
        if hint == ".":
            if _DOT_FLOAT.match(text):
                return "!!float", float(text)
        elif hint in "+-0123456789":
            if tag == "!!timestamp" and _timestamp(text):
                return "!!timestamp", text
            plain = text.replace("_", "")
            try:
                return "!!int", _go_int(plain, signed=True)
            except ValueError:
                pass
            try:
                return "!!int", _go_int(plain, signed=False)
            except ValueError:
                pass
            if _YAML_FLOAT.match(plain):
                f = float(plain)
                if not math.isinf(f):  # Go: ErrRange, and the value stays a string
                    return "!!float", f
    return "!!str", text


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar, as go-yaml v2 and then JSON give it."""
    rtag, value = _resolve("", text)
    return _number(value) if rtag in ("!!int", "!!float") else value


def resolve_tagged(tag: str, text: str) -> Any:
    """The value of a scalar with an explicit tag (``!!int "7"``), or ValueError as go-yaml fails."""
    return _tagged_raw(tag, text, json=True)


def _tagged_raw(tag: str, text: str, *, json: bool) -> Any:
    """resolve_tagged, with go-yaml's own number types when ``json`` is false (for keys)."""
    short = "!!" + tag[len(_LONG) :] if tag.startswith(_LONG) else tag
    if short == "!!binary":
        try:
            data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("!!binary value contains invalid base64 data") from None
        return data.decode("utf-8", "replace")
    if short not in _RESOLVABLE:
        return text  # unknown tags (!foo, !!set, !!merge as a value) are ignored: the text is the value
    if short == "!!str":
        return text
    rtag, value = _resolve(short, text)
    uint64 = rtag == "!!int" and value > INT64_MAX  # go-yaml turns int and int64, not uint64, into floats
    if rtag == short or (short == "!!float" and rtag == "!!int" and not uint64):
        if rtag in ("!!int", "!!float"):
            value = float(value) if short == "!!float" else value
            return _number(value) if json else value
        return value
    raise ValueError(f"cannot decode {rtag} `{text}` as a {short}")


_TS = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))"
    r"|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?))?$"
)


def _timestamp(text: str) -> bool:
    """One of go-yaml v2's timestamp layouts, with a real date (time.Parse checks the day of month)."""
    m = _TS.match(text)
    if m is None:
        return False
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]):
        return False
    hms = [int(x) for x in (m[4], m[5], m[6]) if x] or [int(x) for x in (m[7], m[8], m[9]) if x]
    return not hms or (hms[0] < 24 and hms[1] < 60 and hms[2] < 60)


def go_float_key(value: float) -> str:
    """sigs.k8s.io/yaml's map key for a float: Go's ``strconv.FormatFloat(v, 'g', -1, 32)``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    try:
        f32 = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:  # Go rounds a float64 beyond float32's range to infinity
        return ".inf" if value > 0 else "-.inf"
    if math.isinf(f32):
        return ".inf" if f32 > 0 else "-.inf"
    sign = "-" if math.copysign(1.0, f32) < 0 else ""
    if f32 == 0:
        return f"{sign}0"
    for precision in range(1, 10):  # the shortest decimal that reads back as the same float32
        text = f"{abs(f32):.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == abs(f32):
            break
    mantissa, exp_text = text.split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    exponent = int(exp_text)  # Go: exp = dp - 1; %e when exp < -4 or exp >= 6 (shortest)
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    whole, frac = digits[: exponent + 1].ljust(exponent + 1, "0"), digits[exponent + 1 :]
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


# ---- the tree: PyYAML's C composer with our resolver ---------------------------------------------


class _Resolver(BaseResolver):
    """Untagged plain scalars get PLAIN (resolved later, the go-yaml way); quoted ones are strings.

    libyaml's composer calls the resolver three times per node. There are no path resolvers here,
    so descending and ascending do nothing: they are C built-ins that take the same arguments and
    whose results are ignored, instead of Python methods (a million calls in a large scan)."""

    descend_resolver = staticmethod(operator.is_)  # type: ignore[assignment]  # (parent, index)
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]  # ()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            return PLAIN if implicit[0] else _STR
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


class _CLoader(CParser, _Resolver):
    """libyaml's parser and composer (fast); PyYAML refuses an anchor defined twice, go-yaml does not."""

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        _Resolver.__init__(self)


class _PyLoader(Reader, Scanner, Parser, Composer, _Resolver):
    """PyYAML's Python composer, where a redefined anchor replaces the earlier one as in go-yaml."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Resolver.__init__(self)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if not isinstance(event, yaml.AliasEvent) and event.anchor is not None:
            self.anchors.pop(event.anchor, None)
        return Composer.compose_node(self, parent, index)


def compose(text: str) -> Iterator[yaml.Node | None]:
    """The node tree of every document (None for an empty one); DecodeError when the text is not YAML.

    libyaml composes; a stream that defines an anchor twice (which PyYAML refuses and go-yaml allows:
    the later definition wins) is composed again by the Python composer, from where libyaml stopped.
    """
    done = 0
    try:
        try:
            for node in _nodes(_CLoader(text)):
                done += 1
                yield node
            return
        except yaml.composer.ComposerError as exc:
            if "duplicate anchor" not in str(exc.context):
                raise
        for index, node in enumerate(_nodes(_PyLoader(text))):
            if index >= done:
                yield node
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and mark is not None and mark.index >= len(text.rstrip()):
            mark = exc.context_mark  # "unexpected end of input": where the open construct began helps more
        parts = [" ".join(p.split()) for p in (exc.context, exc.problem) if p]
        raise DecodeError("invalid YAML: " + ", ".join(parts), _line(mark)) from None
    except yaml.YAMLError as exc:
        raise DecodeError("invalid YAML: " + " ".join(str(exc).split()), None) from None


def _nodes(loader: Any) -> Iterator[yaml.Node | None]:
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def key_string(node: yaml.Node) -> str | None:
    """The JSON key a scalar key node becomes (``y`` -> ``true``, ``9000`` -> ``9000``, ``1e6`` ->
    ``1e+06``); None when the node cannot be a key (null, a list, a map, a uint64, a bad tag)."""
    if not isinstance(node, yaml.ScalarNode):
        return None
    try:
        return _key_of(_raw(node))
    except ValueError:
        return None


def _raw(node: yaml.ScalarNode) -> Any:
    """A scalar as go-yaml types it (int, float, bool, None, str), before any JSON conversion."""
    if node.tag == _STR:
        return node.value
    if node.tag == PLAIN:
        return _resolve("", node.value)[1]
    return _tagged_raw(node.tag, node.value, json=False)


def _key_of(value: Any) -> str | None:
    """sigs.k8s.io/yaml's key conversion: strings, bools, int64s and floats; nothing else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, float):
        return go_float_key(value)
    return None


# ---- values: go-yaml v2 decode.go, then sigs.k8s.io/yaml -----------------------------------------


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml v2 allowedAliasRatio: 99% below 400k decoded nodes, down to 10% at 4M."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


#: plain mapping keys already converted (apiVersion, metadata, name, ...): text -> (JSON key, go-yaml
#: key). A plain scalar's conversion depends on its text alone; the table stops growing at its bound.
_PLAIN_KEYS: dict[str, tuple[str, Any]] = {}
_PLAIN_KEYS_MAX = 4096


class _Builder:
    """Constructs one document's value from its nodes, counting like go-yaml's decoder."""

    def __init__(self, shared: set[int], *, last_key_wins: bool = False) -> None:
        self.shared = shared  # ids of the nodes reached more than once (anchored, then aliased)
        self.last_key_wins = last_key_wins  # a key written twice: Helm's reading, not the API server's
        self.decoded = 0
        self.aliased = 0
        self.done: dict[int, tuple[Any, int, int]] = {}  # node id -> (value, nodes, depth)
        self.active: set[int] = set()

    def build(self, node: yaml.Node) -> Any:
        value, _, _ = self._node(node, 1)
        return value

    def _check(self, node: yaml.Node) -> None:
        if self.decoded > MAX_NODES:
            raise DecodeError(
                f"the document expands to more than {MAX_NODES:,} nodes", _line(node.start_mark)
            )
        aliased, decoded = self.aliased, self.decoded
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise DecodeError("the document contains excessive aliasing", _line(node.start_mark))

    def _node(self, node: yaml.Node, depth: int) -> tuple[Any, int, int]:
        """(value, nodes it expands to, depth below it)."""
        key = id(node)
        # only a node reached more than once can be an alias, or contain an alias of itself
        shared = key in self.shared
        if shared:
            seen = self.done.get(key)
            if seen is not None:  # an alias: the same value, counted as go-yaml counts its expansion
                value, nodes, below = seen
                if depth + below - 1 > MAX_DEPTH:
                    raise DecodeError(TOO_DEEP, _line(node.start_mark))
                self.decoded += nodes + 1
                self.aliased += nodes
                self._check(node)
                return value, nodes + 1, below
            if key in self.active:
                raise DecodeError("an anchor's value contains an alias of itself", _line(node.start_mark))
        if depth > MAX_DEPTH:
            raise DecodeError(TOO_DEEP, _line(node.start_mark))
        self.decoded += 1
        if self.decoded > MAX_NODES or self.aliased > 100:  # what _check() could refuse
            self._check(node)
        before = self.decoded
        if isinstance(node, yaml.ScalarNode):
            result = (self._scalar(node), 1, 1)
        else:
            if shared:
                self.active.add(key)
            try:
                if isinstance(node, yaml.SequenceNode):
                    items, below = [], 0
                    for child in node.value:
                        value, _, d = self._node(child, depth + 1)
                        items.append(value)
                        below = max(below, d)
                    result = (items, self.decoded - before + 1, below + 1)
                else:
                    assert isinstance(node, yaml.MappingNode)
                    mapping, below = self._mapping(node, depth)
                    result = (mapping, self.decoded - before + 1, below + 1)
            finally:
                if shared:
                    self.active.discard(key)
        if shared:
            self.done[key] = result
        return result

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag == _STR:
            return node.value
        try:
            return resolve_plain(node.value) if node.tag == PLAIN else resolve_tagged(node.tag, node.value)
        except ValueError as exc:
            raise DecodeError(str(exc), _line(node.start_mark)) from None

    def _mapping(self, node: yaml.MappingNode, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        # key -> its node, for duplicates: by JSON key, and by go-yaml's own key (0.0 and -0.0 are
        # one key to Go, which keeps the last and its spelling; the API server's strict decoding
        # refuses). A string key is its own go-yaml key, so the JSON key alone tells.
        explicit: dict[Any, yaml.Node] = {}
        below = 0
        for key_node, value_node in node.value:
            if key_node.value == MERGE and _is_merge(key_node):
                below = max(below, self._merge(value_node, out, depth))
                continue
            self.decoded += 1  # the key
            tag, scalar = key_node.tag, type(key_node) is yaml.ScalarNode
            if scalar and tag == _STR:
                key = raw = key_node.value
            elif scalar and tag == PLAIN and key_node.value in _PLAIN_KEYS:
                key, raw = _PLAIN_KEYS[key_node.value]
            else:
                key, raw = self._key(key_node)
                if scalar and tag == PLAIN and len(_PLAIN_KEYS) < _PLAIN_KEYS_MAX:
                    _PLAIN_KEYS[key_node.value] = (key, raw)
            for seen in (key,) if type(raw) is str else (key, (type(raw), raw)):
                if seen in explicit and not self.last_key_wins:
                    first = _line(explicit[seen].start_mark)
                    raise DecodeError(
                        f"duplicate key {key!r} (first at line {first})", _line(key_node.start_mark) or 0
                    )
                explicit[seen] = key_node
            value, _, d = self._node(value_node, depth + 1)
            below = max(below, d)
            out[key] = value
        return out, below

    def _key(self, node: yaml.Node) -> tuple[str, Any]:
        """(JSON key, go-yaml's value of the key)."""
        if not isinstance(node, yaml.ScalarNode):
            raise DecodeError("a list or a map cannot be a mapping key", _line(node.start_mark))
        try:
            raw = _raw(node)
        except ValueError as exc:
            raise DecodeError(str(exc), _line(node.start_mark)) from None
        key = _key_of(raw)
        if key is None:
            raise DecodeError(f"mapping key {node.value!r} cannot be a JSON key", _line(node.start_mark))
        return key, raw

    def _merge(self, node: yaml.Node, out: dict[str, Any], depth: int) -> int:
        """go-yaml v2 merge: a map, or a list of maps where earlier maps take precedence."""
        maps = node.value if isinstance(node, yaml.SequenceNode) else [node]
        alias_of_list = isinstance(node, yaml.SequenceNode) and id(node) in self.done  # `<<: *a_list`
        if (
            alias_of_list
            or isinstance(node, yaml.ScalarNode)
            or not all(isinstance(m, yaml.MappingNode) for m in maps)
        ):
            raise DecodeError(
                "map merge requires map or sequence of maps as the value", _line(node.start_mark)
            )
        below = 0
        values = []
        for m in maps:
            value, _, d = self._node(m, depth + 1)
            values.append(value)
            below = max(below, d)
        for value in reversed(values):
            out.update(value)
        return below


def _is_merge(node: yaml.Node) -> bool:
    return (
        isinstance(node, yaml.ScalarNode)
        and node.value == MERGE
        and node.tag in (PLAIN, "tag:yaml.org,2002:merge")
    )


def _shared(root: yaml.Node) -> set[int]:
    """The nodes reached more than once (anchored, then aliased): only those are memoized."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        key = id(node)
        if key in seen:
            shared.add(key)
            continue
        seen.add(key)
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.append(k)
                stack.append(v)
    return shared


def construct(node: yaml.Node, *, aliases: bool = True, last_key_wins: bool = False) -> Any:
    """A document's value with Kubernetes' semantics; DecodeError names the line. ``aliases=False``
    (:func:`may_alias` found no alias in the text) skips looking for nodes reached twice: there are
    none. ``last_key_wins``: a key written twice in a mapping takes its last value, as Helm reads
    what it renders (sigs.k8s.io/yaml without strictness: `helm install` applies such a chart,
    where `kubectl apply`'s strict decoding refuses the file)."""
    shared = _shared(node) if aliases else set()
    return _Builder(shared, last_key_wins=last_key_wins).build(node)


#: what may stand right before an alias's ``*``: the text's start, white space, a flow indicator, or
#: ``:`` and ``?``, which in a flow collection are indicators even without a space after them
_BEFORE_ALIAS = frozenset("[{,:?\ufeff")


def may_alias(text: str) -> bool:
    """Whether a YAML text can hold an alias. An alias is ``*`` and an anchor name (letters, digits,
    ``-``, ``_`` for libyaml and PyYAML), where a node starts: after white space or an indicator.
    A cron schedule ``"*/5 * * * *"`` or a quoted ``"*"`` is not one. Over-answering only costs time:
    the document is then searched for nodes reached twice."""
    i = text.find("*")
    while i != -1:
        before = text[i - 1] if i else " "
        after = text[i + 1 : i + 2]
        if (before.isspace() or before in _BEFORE_ALIAS) and (after.isalnum() or after in ("-", "_")):
            return True
        i = text.find("*", i + 1)
    return False


def documents(text: str, *, last_key_wins: bool = False) -> Iterator[tuple[Any, yaml.Node | None]]:
    """(value, node) per document of a YAML stream; the first error stops the stream.
    ``last_key_wins``: see :func:`construct`."""
    aliases = may_alias(text)
    for node in compose(text):
        if node is None:
            yield None, None
        else:
            yield construct(node, aliases=aliases, last_key_wins=last_key_wins), node

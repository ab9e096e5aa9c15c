"""Rewrites that make regorus read Gatekeeper's Rego (v0) as OPA does, on Rego's tokens.

Each rewrite is a difference measured on the real gatekeeper-library (its gator suites and the OPA
unit tests of its sources), where regorus and OPA give different answers to the same text. They work
on tokens (strings, raw strings and comments are never matched), one logical expression at a time,
and each turns the text into one that both engines answer as OPA does:

1. ``not X == L[_]`` (or ``not L[_] == X``), "X is not in L": regorus answers "some element of L
   differs" (undefined for an empty L), OPA "no element equals". It becomes
   ``count({1 | L[_] == X}) == 0``. Only a whole expression on one line matches: an earlier
   line-regex version merged two lines of K8sPSPSeccomp into an expression that was always true.
2. A line that starts with ``(`` after a line that ended an expression: OPA ends the expression at
   the newline, regorus reads the parenthesis as a call of what came before
   (``input.parameters.minimumReplicaSpread`` then ``(hpa.spec.maxReplicas - …) >= …``, in
   K8sHorizontalPodAutoscaler). A ``;`` is put at the end of the earlier line.
3. Incremental rule bodies, ``head { A } { B }``: OPA reads two rules with the same head, regorus
   rejects them (set rules) or reads ``else`` (functions). The head is written again before each
   further body.
4. ``not f(…, a.b, …)``: OPA evaluates the arguments outside the negation (an undefined argument
   makes the body fail), regorus evaluates the whole call inside it (``not`` of undefined: true,
   a false deny in K8sPSPAllowedUsers). Arguments that are references or calls are bound first,
   ``__stk_argN := a.b``, on the line before.
5. ``sprintf`` with fewer arguments than verbs: OPA (Go's fmt) writes ``%!v(MISSING)`` for each verb
   without an argument, regorus fails the evaluation. When the format is a string literal and the
   arguments an array literal, the verbs without an argument become that text in the format. With
   more arguments than verbs, OPA appends ``%!(EXTRA int64=3, string=x)``; the format gets that text
   and the arguments the Go type names (``_sprintf``).
6. The v0 builtins OPA still accepts and regorus lacks: ``re_match`` is ``regex.match``; ``any`` and
   ``all`` become calls of functions in a module added beside the template (:data:`COMPAT_MODULE`).
7. A builtin called with an argument of the wrong type: OPA (strict-builtin-errors off, as in
   Gatekeeper) makes the expression undefined, regorus fails the evaluation (``object.get(null, …)``
   in K8sPSPProcMount with a null parameter). The builtins of :data:`GUARDED` become calls of
   functions of the compat module that check the argument types OPA declares for them and are
   undefined otherwise. Errors that depend on a value rather than a type (``to_number("x")``, an
   invalid regular expression) are not guarded: they stay errors, which a gate reports as a deny.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<newline>\n)
    | (?P<space>[ \t\r\f]+)
    | (?P<comment>\#[^\n]*)
    | (?P<string>"(?:[^"\\\n]|\\.)*")
    | (?P<raw>`[^`]*`)
    | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>:=|==|!=|<=|>=|[-+*/%|&=<>.,;:\[\](){}!])
    | (?P<other>.)
    """,
    re.X,
)


@dataclass(slots=True)
class Token:
    kind: str
    text: str


def tokenize(text: str) -> list[Token]:
    return [Token(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(text)]


def untokenize(tokens: list[Token]) -> str:
    return "".join(t.text for t in tokens)


_SKIP = ("space", "comment")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
#: the compat module's package and its functions
COMPAT_PACKAGE = "stockade_gatekeeper_compat"
COMPAT_MODULE = f"""package {COMPAT_PACKAGE}

any_true(xs) = r {{
    r := count([1 | xs[_] == true]) > 0
}}

all_true(xs) = r {{
    r := count([1 | xs[_] != true]) == 0
}}
"""

#: builtin -> OPA's declared argument types (its capabilities), for the guards of rewrite 7
GUARDED: dict[str, tuple[str, ...]] = {
    "object.get": ("object", "any", "any"),
    "regex.match": ("string", "string"),
    "startswith": ("string", "string"),
    "endswith": ("string", "string"),
    "contains": ("string", "string"),
    "indexof": ("string", "string"),
    "lower": ("string",),
    "upper": ("string",),
    "split": ("string", "string"),
    "replace": ("string", "string", "string"),
    "trim": ("string", "string"),
    "trim_left": ("string", "string"),
    "trim_right": ("string", "string"),
    "trim_prefix": ("string", "string"),
    "trim_suffix": ("string", "string"),
    "trim_space": ("string",),
    "substring": ("string", "number", "number"),
    "count": ("collection",),
    "concat": ("string", "strings"),
}
_TYPE_CHECK = {
    "string": "is_string({a})",
    "number": "is_number({a})",
    "object": "is_object({a})",
    "collection": "is_collection({a})",
    "strings": "is_strings({a})",
}


def _guard_name(builtin: str) -> str:
    return builtin.replace(".", "_") + "_guarded"


def _guards() -> str:
    out = []
    for builtin, types in GUARDED.items():
        args = [f"a{i}" for i in range(len(types))]
        checks = [_TYPE_CHECK[t].format(a=a) for t, a in zip(types, args, strict=True) if t != "any"]
        body = "; ".join([*checks, f"r := {builtin}({', '.join(args)})"])
        out.append(f"{_guard_name(builtin)}({', '.join(args)}) = r {{ {body} }}")
    return "\n".join(out)


COMPAT_MODULE += f"""
is_collection(x) {{ is_array(x) }}
is_collection(x) {{ is_object(x) }}
is_collection(x) {{ is_set(x) }}
is_collection(x) {{ is_string(x) }}

is_strings(x) {{ is_array(x); count([1 | y := x[_]; not is_string(y)]) == 0 }}
is_strings(x) {{ is_set(x); count([1 | y := x[_]; not is_string(y)]) == 0 }}

go_type(x) = "int64" {{ is_number(x); x == floor(x) }}
go_type(x) = "float64" {{ is_number(x); x != floor(x) }}
go_type(x) = "string" {{ not is_number(x) }}

{_guards()}
"""
_COMPAT_CALLS = {
    "any": f"data.{COMPAT_PACKAGE}.any_true",
    "all": f"data.{COMPAT_PACKAGE}.all_true",
    "re_match": f"data.{COMPAT_PACKAGE}.{_guard_name('regex.match')}",
    **{b: f"data.{COMPAT_PACKAGE}.{_guard_name(b)}" for b in GUARDED},
}
#: rewrite 6 alone (no guards)
_PLAIN_CALLS = {"any": _COMPAT_CALLS["any"], "all": _COMPAT_CALLS["all"], "re_match": "regex.match"}


def _lines(tokens: list[Token]) -> Iterator[list[Token]]:
    """Physical lines, each with its newline token (if any) last."""
    line: list[Token] = []
    for tok in tokens:
        line.append(tok)
        if tok.kind == "newline":
            yield line
            line = []
    if line:
        yield line


def _significant(line: list[Token]) -> list[Token]:
    return [t for t in line if t.kind not in _SKIP and t.kind != "newline"]


def _balanced(tokens: list[Token]) -> bool:
    depth = 0
    for t in tokens:
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _CLOSE:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _top_level(tokens: list[Token], text: str) -> list[int]:
    """Indexes of ``text`` operators outside any brackets."""
    out, depth = [], 0
    for i, t in enumerate(tokens):
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _CLOSE:
            depth -= 1
        elif depth == 0 and t.kind == "op" and t.text == text:
            out.append(i)
    return out


def _is_ref(tokens: list[Token]) -> bool:
    """A plain reference, ``a.b[c]["d"]`` (no operators, no calls)."""
    if not tokens or tokens[0].kind != "ident":
        return False
    depth = 0
    for t in tokens[1:]:
        if t.kind == "op" and t.text == "[":
            depth += 1
        elif t.kind == "op" and t.text == "]":
            depth -= 1
        elif depth == 0 and not (t.kind == "ident" or (t.kind == "op" and t.text == ".")):
            return False
    return depth == 0


def _text(tokens: list[Token]) -> str:
    return untokenize(tokens).strip()


# --- 1. not X == L[_] --------------------------------------------------------------------------


def _not_in(sig: list[Token]) -> str | None:
    """``count({1 | L[_] == X}) == 0`` for a line ``not X == L[_]`` / ``not L[_] == X``."""
    if len(sig) < 6 or sig[0].text != "not" or not _balanced(sig[1:]):
        return None
    expr = sig[1:]
    eqs = _top_level(expr, "==")
    if len(eqs) != 1 or any(t.kind == "op" and t.text in (":=", "=", "|", ";") for t in expr):
        return None
    left, right = expr[: eqs[0]], expr[eqs[0] + 1 :]

    def iterated(side: list[Token]) -> list[Token] | None:
        if len(side) >= 4 and [t.text for t in side[-3:]] == ["[", "_", "]"] and _is_ref(side[:-3]):
            return side[:-3]
        return None

    if (coll := iterated(right)) is not None and left and iterated(left) is None:
        return f"count({{1 | {_text(coll)}[_] == {_text(left)}}}) == 0"
    if (coll := iterated(left)) is not None and right and iterated(right) is None:
        return f"count({{1 | {_text(coll)}[_] == {_text(right)}}}) == 0"
    return None


# --- 4. not f(args) ----------------------------------------------------------------------------


def _not_call(sig: list[Token], names: Iterator[str]) -> tuple[list[str], str] | None:
    """(bindings, negation) for ``not f(a.b, c)`` with arguments to bind first."""
    if len(sig) < 4 or sig[0].text != "not" or sig[-1].text != ")":
        return None
    expr = sig[1:]
    # the callee: ident(.ident)* then "(" ... ")" closing at the end
    i = 0
    while i < len(expr) and (expr[i].kind == "ident" or (expr[i].kind == "op" and expr[i].text == ".")):
        i += 1
    if i == 0 or i >= len(expr) or expr[i].text != "(" or expr[0].kind != "ident":
        return None
    args = expr[i + 1 : -1]
    if not _balanced(args) or not _balanced(expr[i:]):
        return None
    # the "(" at i must close at the very end
    depth = 0
    for j, t in enumerate(expr[i:], start=i):
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _CLOSE:
            depth -= 1
            if depth == 0 and j != len(expr) - 1:
                return None
    parts: list[list[Token]] = []
    start = 0
    for k in [*_top_level(args, ","), len(args)]:
        parts.append(args[start:k])
        start = k + 1
    bindings, rendered = [], []
    for part in parts:
        if not part:
            return None
        needs = len(part) > 1 and (_is_ref(part) or part[-1].text == ")")
        if needs and not any(t.kind == "op" and t.text in (":=", "=", "|") for t in part):
            name = next(names)
            bindings.append(f"{name} := {_text(part)}")
            rendered.append(name)
        else:
            rendered.append(_text(part))
    if not bindings:
        return None
    return bindings, f"not {_text(expr[:i])}({', '.join(rendered)})"


# --- the whole module ---------------------------------------------------------------------------


def rewrite(text: str, guard: bool = True) -> str:
    """The module's text with every rewrite of the module docstring applied; without `guard`, all
    but rewrite 7 (the engine evaluates that text first, and the guarded one only when it raises:
    without a builtin error both answer the same, and the guards cost a function call each)."""
    calls = _COMPAT_CALLS if guard else _PLAIN_CALLS
    tokens = tokenize(text)
    tokens = _incremental_bodies(tokens)
    names = (f"__stk_arg{i}" for i in itertools.count())
    out: list[str] = []
    lines = list(_lines(tokens))
    depth = 0  # ( and [ depth across lines
    previous_sig: list[Token] = []
    for line in lines:
        sig = _significant(line)
        indent = "".join(t.text for t in itertools.takewhile(lambda t: t.kind == "space", line))
        newline = "\n" if line and line[-1].kind == "newline" else ""
        comment = next((t.text for t in line if t.kind == "comment"), "")
        tail = f" {comment}" if comment else ""
        if sig and depth == 0 and sig[0].text == "(" and previous_sig and out:
            last = previous_sig[-1]
            if last.kind in ("ident", "number", "string", "raw") or last.text in ("]", ")"):
                out[-1] = _append_semicolon(out[-1])
        replaced: str | None = None
        if sig and depth == 0:
            not_in = _not_in(sig)
            if not_in is not None:
                replaced = f"{indent}{not_in}{tail}{newline}"
            else:
                hoisted = _not_call(sig, names)
                if hoisted is not None:
                    bindings, negation = hoisted
                    lead = "".join(f"{indent}{b}\n" for b in bindings)
                    replaced = f"{lead}{indent}{negation}{tail}{newline}"
        out.append(_builtins(tokenize(replaced) if replaced is not None else _sprintf(line), calls))
        for t in sig:
            if t.kind == "op" and t.text in ("(", "["):
                depth += 1
            elif t.kind == "op" and t.text in (")", "]"):
                depth = max(0, depth - 1)
        if sig:
            previous_sig = sig
    return "".join(out)


_VERB = re.compile(r"%(?:%|[+\-# 0]*(?:\d+|\*)?(?:\.(?:\d+|\*)?)?([A-Za-z]))")


def _missing(m: re.Match[str], counter: list[int], args: int) -> str:
    if m.group(0) == "%%":
        return m.group(0)
    counter[0] += 1
    return m.group(0) if counter[0] <= args else f"%%!{m.group(1)}(MISSING)"


@dataclass(slots=True)
class _Sprintf:
    """A ``sprintf("format", [a, b])`` call: the format token's index, the array's bounds, the
    arguments' texts."""

    fmt_index: int
    fmt: Token
    start: int  # the array's "["
    end: int  # its "]"
    args: list[str]


def _sprintf_at(out: list[Token], i: int) -> _Sprintf | None:
    """The call starting at token `i`, when its format is a string literal and its arguments an
    array literal; None otherwise (rewrite 5 then leaves it alone)."""
    if out[i].kind != "ident" or out[i].text != "sprintf":
        return None
    rest = [(j, u) for j, u in enumerate(out) if j > i and u.kind not in _SKIP]
    if len(rest) < 5 or rest[0][1].text != "(" or rest[1][1].kind != "string" or rest[2][1].text != ",":
        return None
    if rest[3][1].text != "[":
        return None
    depth, end, commas = 0, None, []
    for j, u in rest[3:]:
        if u.kind == "op" and u.text in _OPEN:
            depth += 1
        elif u.kind == "op" and u.text in _CLOSE:
            depth -= 1
            if depth == 0:
                end = j
                break
        elif depth == 1 and u.text == ",":
            commas.append(j)
    if end is None:
        return None
    start = rest[3][0]
    pieces = [untokenize(out[a + 1 : b]).strip() for a, b in itertools.pairwise([start, *commas, end])]
    fmt_index, fmt = rest[1]
    return _Sprintf(fmt_index, fmt, start, end, [p for p in pieces if p])


def _sprintf(line: list[Token]) -> list[Token]:
    """Rewrite 5. Verbs past the last argument of ``sprintf("…", [a, b])`` become Go's
    ``%!v(MISSING)``. Arguments past the last verb are written by Go's fmt (OPA) as
    ``%!(EXTRA int64=3, string=x)`` after the text, and regorus fails the evaluation: the format gets
    ``%%!(EXTRA %v=%v, …)`` and each extra argument is preceded by its Go type name (the compat
    module's ``go_type``: int64, float64, or string, as OPA hands values to fmt); not for formats with
    explicit argument indexes or `*` widths."""
    out = list(line)
    i = 0
    while i < len(out):
        call = _sprintf_at(out, i)
        i += 1
        if call is None:
            continue
        text, args = call.fmt.text, call.args
        verbs = len([m for m in _VERB.finditer(text) if m.group(0) != "%%"])
        if verbs > len(args):
            fixed = _VERB.sub(functools.partial(_missing, counter=[0], args=len(args)), text)
            out[call.fmt_index] = Token("string", fixed)
        elif len(args) > verbs and "%[" not in text and "%*" not in text:
            extra = args[verbs:]
            gotype = f"data.{COMPAT_PACKAGE}.go_type"
            array = ", ".join([*args[:verbs], *(f"{gotype}({a}), {a}" for a in extra)])
            suffix = "%%!(EXTRA " + ", ".join(["%v=%v"] * len(extra)) + ")"
            out[call.fmt_index] = Token("string", text[:-1] + suffix + '"')
            out[call.start : call.end + 1] = tokenize(f"[{array}]")
    return out


def _append_semicolon(line: str) -> str:
    """``;`` after the last significant token of a line (before a comment and the newline)."""
    tokens = tokenize(line)
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i].kind not in (*_SKIP, "newline"):
            tokens.insert(i + 1, Token("op", ";"))
            break
    return untokenize(tokens)


def _builtins(line: list[Token], calls: dict[str, str]) -> str:
    """Rewrites 6 and 7: builtin calls (``name(`` or ``pkg.name(``, not after a ``.``) by name."""
    out: list[str] = []
    sig_before: Token | None = None
    i = 0
    while i < len(line):
        t = line[i]
        dotted = sig_before is not None and sig_before.text == "."
        name, end = _call_name(line, i) if t.kind == "ident" and not dotted else (None, i)
        if name is not None and name in calls:
            out.append(calls[name])
            sig_before = line[end]
            i = end + 1
            continue
        out.append(t.text)
        if t.kind not in _SKIP and t.kind != "newline":
            sig_before = t
        i += 1
    return "".join(out)


def _call_name(line: list[Token], i: int) -> tuple[str | None, int]:
    """The called name starting at token ``i`` (``a`` or ``a.b``) and its last token's index."""
    sig = list(itertools.islice((k for k in range(i, len(line)) if line[k].kind not in _SKIP), 4))
    texts = [line[k].text for k in sig]
    if len(texts) >= 2 and texts[1] == "(":
        return texts[0], sig[0]
    if len(texts) >= 4 and texts[1] == "." and line[sig[2]].kind == "ident" and texts[3] == "(":
        return f"{texts[0]}.{texts[2]}", sig[2]
    return None, i


def calls_external_data(text: str) -> bool:
    """Whether the module calls Gatekeeper's ``external_data`` builtin (outside strings and comments)."""
    tokens = [t for t in tokenize(text) if t.kind not in (*_SKIP, "newline")]
    return any(
        t.kind == "ident" and t.text == "external_data" and i + 1 < len(tokens) and tokens[i + 1].text == "("
        for i, t in enumerate(tokens)
    )


def uses_compat(text: str) -> bool:
    return f"data.{COMPAT_PACKAGE}." in text


def _incremental_bodies(tokens: list[Token]) -> list[Token]:
    """``head { A } { B }`` -> ``head { A }\\nhead { B }`` at the module's top level."""
    out: list[Token] = []
    brace = 0
    bracket = 0
    head: list[Token] = []
    in_head = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if brace == 0 and bracket == 0 and t.kind == "ident" and _line_start(out) and t.text != "else":
            # a new statement at the top level: a rule's head starts (or package, import, default)
            in_head, head = t.text not in ("package", "import", "default"), []
        if t.kind == "op" and t.text in ("(", "["):
            bracket += 1
        elif t.kind == "op" and t.text in (")", "]"):
            bracket = max(0, bracket - 1)
        if t.kind == "op" and t.text == "{" and bracket == 0:
            previous = next((u for u in reversed(head) if u.kind not in _SKIP), None)
            is_value = previous is not None and previous.text in ("=", ":=")
            if brace == 0 and in_head and not is_value:
                in_head = False
                head = [u for u in head if u.kind != "newline"]
            brace += 1
        elif t.kind == "op" and t.text == "}" and bracket == 0:
            brace = max(0, brace - 1)
            if brace == 0 and head and not in_head:
                j = i + 1
                while j < len(tokens) and tokens[j].kind in (*_SKIP, "newline"):
                    j += 1
                if j < len(tokens) and tokens[j].text == "{":
                    out.append(t)
                    out.append(Token("newline", "\n"))
                    out.extend(Token(u.kind, u.text) for u in _strip(head))
                    out.append(Token("space", " "))
                    i = j
                    continue
        if in_head:
            head.append(t)
        out.append(t)
        i += 1
    return out


def _line_start(out: list[Token]) -> bool:
    for t in reversed(out):
        if t.kind == "newline":
            return True
        if t.kind != "space":
            return False
    return True


def _strip(head: list[Token]) -> list[Token]:
    start = 0
    while start < len(head) and head[start].kind in _SKIP:
        start += 1
    end = len(head)
    while end > start and head[end - 1].kind in _SKIP:
        end -= 1
    return head[start:end]

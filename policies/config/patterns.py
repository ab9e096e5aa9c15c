"""The patterns of stockade.yaml: globs, in one grammar meant the same way by everything that matches
them, and registry prefixes.

A configured pattern is matched by regorus' `glob.match` (the embedded engine), by OPA's (the remote
engine) and, for the scope, waivers, overrides, suppressions and the sandbox facts, by Python's
`fnmatch`. The three agree on literal text, `*`, `?` and a class `[...]` of plain characters or of
one range, negated with `!`. Beyond that they part: regorus cannot compile `[unclosed`, `{a,b`, `a}`,
`[!]`, `[z-a]` or a trailing backslash (its VM then answers "no match", its interpreter fails), OPA
cannot compile `[0-9a-f]` or `[a-]`, `[^a]` negates for regorus and lists `^` for OPA and fnmatch,
`**` crosses delimiters for OPA only, braces are alternatives to the engines and text to fnmatch, a
backslash escapes for the engines and is text to fnmatch, and OPA matches `kube-*-system` to
"kube-system" (a prefix and a suffix that overlap). A pattern outside the common grammar is a
configuration error naming its key and line, not a floating-tag rule that silently flags nothing or
an allowlist that allows something else at each gate.

`tests/policies/test_config_globs.py` holds the grammar to regorus (interpreter and VM), OPA's Go
engine and fnmatch: each of the ~2,000 random pattern-delimiter pairs it accepts compiles in both
engines and matches the same values in all of them, and each form it refuses is shown failing or read
differently there (braces, `**`, a backslash and a lone `]` are refused by name: no name needs them).

An `images.allowed_registries` entry is no glob but a prefix (a registry host, a port, a repository
path: STK-IMG-001 matches it at a "/" boundary); :func:`registry_prefix_problem` says why an entry
could match no image, which would deny every one.
"""

import string

#: Characters that are never class members: the grammar's own, and those the engines read in a class.
_NOT_IN_CLASS = frozenset("*?[]{}\\^!-")

#: A range runs between two digits, two lower-case or two upper-case ASCII letters: what it spans
#: is then the same in every engine, whatever the delimiter or the case folding of the rule.
_RANGES = (string.digits, string.ascii_lowercase, string.ascii_uppercase)


def glob_problem(pattern: str, delimiter: str | None = None) -> str | None:
    """What keeps `pattern` out of the common grammar (one short phrase), or None when it is in.

    `delimiter` is the character the rule's `glob.match` separates on ("." for DNS names and Azure
    names, "/" for host paths; None: none, `*` crosses everything): a class may not hold it.
    """
    if not pattern:
        return "an empty pattern matches nothing"
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c < " " or c == "\x7f":
            return "a control character"
        if c == "\\":
            return "a backslash (the engines read it as an escape, fnmatch as text)"
        if c in "{}":
            return "braces: list each alternative as a pattern of its own"
        if c == "*" and pattern.startswith("*", i + 1):
            return "** (use *: OPA and regorus read ** differently)"
        if c == "]":
            return "a ] without its ["
        if c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                return "a [ without its ]"
            problem = _class_problem(pattern[i + 1 : end], delimiter)
            if problem:
                return problem
            i = end
        i += 1
    if delimiter is None:
        return _overlap_problem(pattern)
    return None


def _overlap_problem(pattern: str) -> str | None:
    """OPA (gobwas/glob) matches a pattern that is text, one `*`, text, by its prefix and suffix
    alone: `kube-*-system` matches "kube-system", whose start and end share the "-"; regorus and
    fnmatch need the whole of both. Refused where the two overlap."""
    head, star, tail = pattern.partition("*")
    if not star or any(c in "*?[" for c in tail) or any(c in "?[" for c in head):
        return None
    for k in range(min(len(head), len(tail)), 0, -1):
        if head.lower().endswith(tail[:k].lower()):
            shared = head[len(head) - k :]
            return (
                f"its start and end share {shared!r}, so OPA matches {head[: len(head) - k]}{tail}"
                f" too: write {head}?*{tail} (at least one character between)"
            )
    return None


def _class_problem(body: str, delimiter: str | None) -> str | None:
    if body.startswith("^"):
        return "[^...]: write [!...] (OPA and fnmatch read ^ as a character)"
    if body.startswith("!"):
        body = body[1:]
    if not body:
        return "an empty class"
    if len(body) == 3 and body[1] == "-":
        lo, hi = body[0], body[2]
        if not any(lo in chars and hi in chars for chars in _RANGES):
            return f"a range {lo}-{hi} (ranges run within 0-9, a-z or A-Z)"
        if lo > hi:
            return f"a reversed range {lo}-{hi}"
    elif "-" in body:
        return "a class holds one range or characters, not both (OPA refuses [0-9a-f]): list patterns"
    elif any(ch in _NOT_IN_CLASS for ch in body):
        return f"a class holding one of {''.join(sorted(_NOT_IN_CLASS))}"
    if delimiter is not None and delimiter in body:
        return f"a class holding {delimiter!r}, which separates what this pattern matches"
    return None


def registry_prefix_problem(entry: str) -> str | None:
    """What keeps `entry` from being a registry prefix an image could match, or None."""
    text = entry.strip()
    if text.startswith("[") and "]" in text:  # an IPv6 host, [fd00::1]:5000/: its brackets are no glob
        text = "ipv6" + text[text.index("]") + 1 :]
    if not text.strip("/"):
        return "an empty entry"
    if any(c.isspace() for c in entry):
        return "whitespace"
    if "://" in text:
        return f"a URL: write the host and path without the scheme ({text.split('://', 1)[1]!r})"
    if any(c in text for c in "*?[]{}"):
        shown = entry.strip()
        head = shown[: len(shown) - len(text) + min(text.index(c) for c in "*?[]{}" if c in text)]
        head = head[: head.rfind("/") + 1]
        hint = f"write {head!r}" if head else "name each registry (myacr.azurecr.io/); no list allows all"
        return f"a glob (an entry already covers every repository below it): {hint}"
    if "@" in text:
        return "a digest: an entry names a registry and a repository path"
    host, _, path = text.partition("/")
    if ":" in path or (":" in host and not host.partition(":")[2].isdigit()):  # nginx:1.25
        return "a tag: an entry names a registry and a repository path"
    return None

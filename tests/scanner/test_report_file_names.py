"""File names are data in every report format (issue 36).

A Linux file name is any bytes but ``/`` and NUL. Generated names (bytes that are not UTF-8, control
characters, newlines, quotes, ``<&>``, ``%``, ``|``, backticks, bidirectional controls, up to 255 bytes)
are written as real files holding a manifest with findings, scanned by the real CLI (typer's CliRunner
in this process, and once in a subprocess) in every format, and each report is parsed by an
independent reader (``json``, ElementTree, the SARIF 2.1.0 schema when ``make tools`` installed it,
markdown-it's GFM tables, the HTML parser, the table's columns) and its file name decoded by the
documented rule (``urllib.parse.unquote_to_bytes``) back to exactly the bytes on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.scanner.reports import FORMATS
from stockade.scanner.reports.names import original, shown

REPO = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = REPO / ".tools" / "bin" / "sarif" / "sarif-2.1.0.json"

POD = b"""\
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: apps}
spec:
  containers:
    - name: app
      image: nginx
      securityContext: {privileged: true}
"""

#: pieces that break naive reports: not UTF-8, controls, line breaks, markup, escapes, bidi, wide
PIECES = [
    b"\xff",
    b"\xc3",  # a truncated UTF-8 sequence
    b"\xed\xa0\x80",  # an encoded surrogate (not valid UTF-8)
    b"\x80\x80",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x1b[31m",
    b"\x7f",
    "\x85".encode(),
    "\u2028".encode(),
    "\u202e".encode(),
    "\ufffe".encode(),
    "\uffff".encode(),
    "é".encode(),
    "漢字".encode(),
    "👩‍💻".encode(),
    "\u0301".encode(),  # a combining accent
    b"%",
    b"%41",
    b"%FF",
    b"<&>",
    b"<code>",
    b"]]>",
    b'"',
    b"'",
    b"|",
    b"\\|",
    b"`",
    b"``",
    b"\\",
    b"*_[]#!~",
    b" ",
    b"  ",
    b":12",
    b".yaml",
    b"a",
]

runner = CliRunner()


def _name(parts: list[bytes]) -> bytes:
    name = b"".join(parts).replace(b"/", b"_").replace(b"\0", b"_")[:255]
    return name if name not in (b".", b"..") else name + b"x"


names = st.builds(
    _name,
    st.lists(
        st.one_of(
            st.sampled_from(PIECES),
            st.binary(min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=40,
    ),
)


def _write(directory: Path, name: bytes) -> None:
    with open(os.path.join(os.fsencode(directory), name), "wb") as f:
        f.write(POD)


def _scan(fmt: str, out: Path) -> None:
    result = runner.invoke(
        app,
        ["scan", ".", "--include", "*", "--format", fmt, "--output", str(out)],
        env={"COLUMNS": "4000"},  # wide enough that the table never stacks a 255-byte name
    )
    assert result.exit_code == 1, (fmt, result.output, result.exception)
    assert out.is_file(), fmt


# --- readers: each returns the file names a report identifies, as bytes ---------------------------


def _strip_line(location: str) -> str:
    return re.sub(r":[0-9]+\Z", "", location)


def read_json(text: str) -> set[bytes]:
    doc = json.loads(text)
    files = {f["location"]["file"] for f in doc["findings"]}
    return {original(f) for f in files}


def read_sarif(text: str) -> set[bytes]:
    doc = json.loads(text)
    if SARIF_SCHEMA.is_file():
        import jsonschema

        schema = json.loads(SARIF_SCHEMA.read_text())
        errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))
        assert not errors, [e.message for e in errors[:5]]
    found = set()
    for result in doc["runs"][0]["results"]:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        uri = artifact["uri"]
        # a relative-path URI reference (RFC 3986): unreserved, sub-delims, ':' '@' '/', and %XX only,
        # and no ':' before the first '/' (it would read as a scheme)
        assert re.fullmatch(
            r"(?:[A-Za-z0-9\-._~!$&'()*+,;=@/]|%[0-9A-F]{2})(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*",
            uri,
        ), uri
        assert ":" not in uri.split("/", 1)[0], uri
        found.add(unquote_to_bytes(uri))
    return found


#: XML 1.0 Char production
_XML_CHARS = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def read_junit(text: str) -> set[bytes]:
    assert not _XML_CHARS.search(text), _XML_CHARS.search(text)
    root = ET.fromstring(text.encode("utf-8"))
    return {original(case.attrib["file"]) for case in root.iter("testcase") if "file" in case.attrib}


def read_markdown(text: str) -> set[bytes]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    found, column, in_body = set(), 0, False
    for i, token in enumerate(tokens):
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tbody_close":
            break
        elif token.type == "tr_open":
            column = 0
        elif token.type == "td_open" and in_body:
            column += 1
            if column == 5:  # Location
                (code,) = [c for c in tokens[i + 1].children or [] if c.type == "code_inline"]
                found.add(original(_strip_line(code.content)))
    assert found, "no findings table"
    return found


class _Cells(HTMLParser):
    """The text of each `<td>`'s first `<code>`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self._td = False
        self._code: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self._td = True
        elif tag == "code" and self._td and self._code is None:
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            self.cells.append("".join(self._code))
            self._code, self._td = None, False
        elif tag == "td":
            self._td = False

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)


def read_html(text: str) -> set[bytes]:
    parser = _Cells()
    parser.feed(text)
    parser.close()
    locations = [c for c in parser.cells if re.search(r":[0-9]+\Z", c)]
    assert locations
    return {original(_strip_line(c)) for c in locations}


def read_table(text: str) -> set[bytes]:
    from rich.cells import cell_len

    lines = text.split("\n")
    header = next(i for i, line in enumerate(lines) if line.startswith("Location") and "Severity" in line)
    width = lines[header].index("Severity")  # cells before the Severity column (the header is ASCII)
    found = set()
    for line in lines[header + 2 :]:
        prefix = ""
        for char in line:
            if cell_len(prefix + char) > width:
                break
            prefix += char
        location = prefix.rstrip(" ")
        if not location:
            continue  # a row's second line
        if not line[len(prefix) :].startswith(("critical ", "high ", "medium ", "low ", "info ")):
            break  # the summary line below the table
        assert re.search(r":[0-9]+\Z", location), location
        found.add(original(_strip_line(location)))
    assert found
    return found


READERS = {
    "json": read_json,
    "sarif": read_sarif,
    "junit": read_junit,
    "markdown": read_markdown,
    "html": read_html,
    "table": read_table,
}


def _check(fmt: str, text: str, name: bytes) -> None:
    # line-oriented and XML formats: no control character but the line break; one name, no stray lines
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", text), (fmt, text[:2000])
    assert READERS[fmt](text) == {name}, fmt


def test_every_format_has_a_reader() -> None:
    assert set(READERS) == set(FORMATS)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names)
def test_any_file_name_round_trips_through_every_format(name: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        (Path(tmp) / "in").mkdir()
        _write(Path(tmp) / "in", name)
        with contextlib.chdir(Path(tmp) / "in"):
            for fmt in READERS:
                out = Path(tmp) / f"report.{fmt}"
                _scan(fmt, out)
                text = out.read_bytes().decode("utf-8")  # strict: every report is UTF-8
                _check(fmt, text, name)


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_a_hostile_name_in_a_real_process_on_stdout(fmt: str, tmp_path: Path) -> None:
    """The command in a subprocess, the report on stdout (a pipe, strict UTF-8)."""
    name = b"x\xff\n<&>%\x01 |`\\ \xe2\x80\xae.yaml"
    _write(tmp_path, name)
    done = subprocess.run(
        [sys.executable, "-c", "from stockade.cli.main import main; main()", "scan", ".", "-f", fmt],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "4000", "PYTHONIOENCODING": "utf-8:strict"},
        check=False,
    )
    assert done.returncode == 1, done.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in done.stderr
    _check(fmt, done.stdout.decode("utf-8"), name)


def test_the_rule() -> None:
    """The documented rule on a few names: unchanged when plain, percent-encoded bytes otherwise."""
    assert shown("k8s/web.yaml") == "k8s/web.yaml"
    assert shown("dir/é 漢 <&>'\"|`.yaml") == "dir/é 漢 <&>'\"|`.yaml"
    assert shown(os.fsdecode(b"a\xffb")) == "a%FFb"
    assert shown("a\nb\tc\x7f\x85") == "a%0Ab%09c%7F%C2%85"
    assert shown("50%.yaml") == "50%25.yaml"
    assert shown("a\u2028\u202eb\uffff") == "a%E2%80%A8%E2%80%AEb%EF%BF%BF"
    for raw in (b"a\xffb", b"50%.yaml", b"\n\r\t", "é\u2028".encode(), b"\xed\xa0\x80"):
        assert original(shown(os.fsdecode(raw))) == raw

"""The executables load no pydantic plugin (stockade.cli.plugins): a plugin is handed every value a
model validates, an admitted Secret's data included. A real plugin is installed for the test (a
distribution's metadata with a `pydantic` entry point, on the child's PYTHONPATH): pydantic loads it
in a plain process, `stockade scan` does not, does not import importlib.metadata to find out, and
passes the switch to its child processes; a user who set PYDANTIC_DISABLE_PLUGINS (even empty) gets
pydantic's own loader and the plugins that value allows."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pydantic.plugin._schema_validator as schema_validator

from stockade.cli import plugins

PLUGIN = """\
import os
class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, settings):
        with open(os.environ["PLUGIN_SEEN"], "a") as seen:
            seen.write(f"{schema_type_path.name}\\n")
        return None, None, None
plugin = Plugin()
"""

#: the child: what `stockade scan` does, then which plugins ran and whether importlib.metadata loaded
PROBE = """\
import sys
from stockade.cli import run
sys.argv = ['stockade', 'scan', *sys.argv[1:]]
try:
    run()
except SystemExit:
    pass
import os
switch = os.environ.get('PYDANTIC_DISABLE_PLUGINS')
print('METADATA', 'importlib.metadata' in sys.modules, 'SWITCH', repr(switch))
"""


def _secret(tmp_path: Path) -> str:
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: apps}\ndata: {token: c2VjcmV0}\n"
    )
    return str(manifest)


def _install_plugin(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    (site / "spy_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "spy_plugin.py").write_text(PLUGIN)
    (site / "spy_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n"
    )
    entry_points = site / "spy_plugin-1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    env = dict(os.environ, PLUGIN_SEEN=str(tmp_path / "seen"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    return env


def _run(code: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_an_installed_plugin_sees_nothing_the_command_line_validates(tmp_path: Path) -> None:
    env = _install_plugin(tmp_path)
    seen = tmp_path / "seen"
    # the plugin is real: pydantic loads it in a process that does not stand its loader in
    _run("import pydantic\nclass Probe(pydantic.BaseModel):\n    x: int = 0\n", env)
    assert "Probe" in seen.read_text().split()
    seen.unlink()
    out = _run(PROBE, env, _secret(tmp_path), "--fail-on", "never")
    assert not seen.exists()
    assert "METADATA False SWITCH '__all__'" in out


def test_a_switch_the_user_set_is_kept(tmp_path: Path) -> None:
    env = dict(_install_plugin(tmp_path), PYDANTIC_DISABLE_PLUGINS="")
    out = _run(PROBE, env, _secret(tmp_path), "--fail-on", "never")
    assert "SWITCH ''" in out
    assert "Config" in (tmp_path / "seen").read_text().split()


def test_the_stand_in_gives_what_pydantic_imports_from_its_loader() -> None:
    """A pydantic release that imports another name from its loader fails here, not on a user's start."""
    tree = ast.parse(Path(schema_validator.__file__).read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "_loader"
        for alias in node.names
    }
    assert imported == {"get_plugins"}
    assert f"{schema_validator.__package__}._loader" == plugins.LOADER

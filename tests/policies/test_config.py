"""stockade.yaml: defaults, strictness, one-line errors with file:line and the key's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.policies.config.settings import STARTER_CONFIG, Config, ConfigError, load_config, parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Action, Severity


def test_defaults_are_safe() -> None:
    cfg = load_config(None)
    assert cfg.pss.default_level == "restricted"
    assert "kube-system" in cfg.scope.excluded_namespaces
    assert cfg.scope.include_system_rbac is False


def test_starter_config_is_valid_and_equals_the_defaults() -> None:
    assert parse_config(STARTER_CONFIG) == Config()


def test_unknown_key_is_an_error_with_line_and_path() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("pss:\n  default_level: baseline\n  defualt: x\n", "cfg.yaml")
    assert str(info.value) == "cfg.yaml:3: pss.defualt: unknown key"


def test_bad_value_names_the_field() -> None:
    text = "overrides:\n  - rules: [STK-POD-*]\n    action: block\n"
    with pytest.raises(
        ConfigError, match=r"^cfg\.yaml:3: overrides\.0\.action: Input should be 'deny', 'warn' or 'audit'"
    ):
        parse_config(text, "cfg.yaml")


def test_exception_needs_owner_reason_and_expiry() -> None:
    text = "exceptions:\n  - name: x\n    rules: [STK-POD-003]\n    owner: me\n    reason: because\n"
    with pytest.raises(ConfigError, match=r"exceptions\.0\.expires: Field required"):
        parse_config(text, "cfg.yaml")


def test_duplicate_exception_names_rejected() -> None:
    one = "  - {name: a, rules: [X], owner: o, reason: r, expires: 2030-01-01}\n"
    with pytest.raises(ConfigError, match="duplicate exception name 'a'"):
        parse_config("exceptions:\n" + one + one)


def test_yaml_syntax_error_has_line() -> None:
    with pytest.raises(ConfigError, match=r"^c\.yaml:2: invalid YAML"):
        parse_config("pss:\n  default_level: [x\n", "c.yaml")


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read config"):
        load_config(tmp_path / "nope.yaml")


def test_rule_settings_parse_severity_and_action() -> None:
    cfg = parse_config("rules:\n  STK-POD-003: {action: warn, severity: low}\n")
    setting = cfg.rules["STK-POD-003"]
    assert setting.action is Action.WARN and setting.severity is Severity.LOW


def test_unknown_rule_id_in_rules_is_an_error() -> None:
    cfg = parse_config("rules:\n  STK-NOPE-999: {enabled: false}\n")
    with pytest.raises(ConfigError, match="names no rule of the library"):
        Evaluator.default(cfg)


def test_a_typo_in_overrides_or_exceptions_is_an_error_with_suggestions() -> None:
    """Issue 22: a typo'd id was accepted silently, so an override meant to deny left the rule
    warning. Patterns must name at least one rule; the closest ids are suggested."""
    cfg = parse_config("overrides:\n  - rules: [STK-POD-03]\n    action: deny\n")
    with pytest.raises(ConfigError, match=r"overrides\[0\].rules: 'STK-POD-03' .*did you mean .*STK-POD-003"):
        Evaluator.default(cfg)
    waiver = (
        "exceptions:\n  - name: w\n    rules: [STK-RBAC-0O2]\n    owner: me\n    reason: r\n"
        "    expires: 2099-01-01\n"
    )
    with pytest.raises(
        ConfigError, match=r"exceptions\[0\] \(w\).rules: 'STK-RBAC-0O2' names no rule.*did you mean"
    ):
        Evaluator.default(parse_config(waiver))
    Evaluator.default(parse_config("overrides:\n  - rules: ['STK-POD-*', '*']\n    action: warn\n"))
    # the rules a gate lets annotations suppress are checked the same way
    allowed = "suppressions:\n  admission: {namespaces: [ml], rules: [STK-POD-03]}\n"
    with pytest.raises(ConfigError, match=r"suppressions.admission.rules: 'STK-POD-03' .*did you mean"):
        Evaluator.default(parse_config(allowed))
    Evaluator.default(parse_config("suppressions:\n  audit: {namespaces: [ml], rules: ['STK-POD-*']}\n"))


def test_rule_data_hides_waivers_and_actions() -> None:
    data = Config().rule_data()
    assert set(data) == {
        "pss",
        "scope",
        "images",
        "resources",
        "gpu",
        "sandbox",
        "host_paths",
        "egress",
        "service_accounts",
        "rbac",
        "storage",
        "credentials",
        "exposure",
        "azure",
        "disabled_rules",
    }
    assert data["disabled_rules"] == []


def test_rule_data_names_the_rules_switched_off() -> None:
    """Only which rules are off (a rule that reports for another when that one is off reads it: the
    STK-RES rules, issue 37), never actions or severities."""
    config = parse_config("rules: {STK-RES-001: {enabled: false}, STK-RES-002: {action: warn}}")
    assert config.rule_data()["disabled_rules"] == ["STK-RES-001"]


@pytest.mark.parametrize(
    "entry, problem",
    [
        (
            "myacr.azurecr.io/*",
            "a glob (an entry already covers every repository below it): write 'myacr.azurecr.io/'",
        ),
        ("*.azurecr.io", "a glob"),
        (
            "https://myacr.azurecr.io/",
            "a URL: write the host and path without the scheme ('myacr.azurecr.io/')",
        ),
        ("nginx:1.25", "a tag"),
        ("docker.io/library/nginx:1.25", "a tag"),
        ("docker.io/library/nginx@sha256:" + "a" * 64, "a digest"),
        ("myacr.azurecr.io /", "whitespace"),
        ("/", "an empty entry"),
    ],
)
def test_a_registry_entry_that_would_match_no_image_is_an_error(entry: str, problem: str) -> None:
    """An allowlist entry STK-IMG-001 could never match (a glob, a URL, a tag, a digest) would deny
    every image: it is an error that says what to write instead."""
    text = f"images:\n  allowed_registries:\n    - mcr.microsoft.com/oss/\n    - {entry!r}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "s.yaml")
    assert str(info.value).startswith(
        f"s.yaml:4: images.allowed_registries.1: {entry!r} is not a registry prefix: "
    )
    assert problem in str(info.value)


def test_registry_entries_with_ports_paths_and_ipv6_hosts_are_accepted() -> None:
    entries = [
        "myacr.azurecr.io",
        "myacr.azurecr.io/",
        "localhost:5000/team/",
        "[fd00::1]:5000/ml/",
        "docker.io/library",
    ]
    assert parse_config(f"images: {{allowed_registries: {entries}}}").images.allowed_registries == tuple(
        entries
    )

from __future__ import annotations

import pytest

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.gates import (
    Bound,
    Tolerance,
    check_case,
    parse_case_gates,
    parse_rule,
    parse_suite_gates,
)


@pytest.mark.parametrize(
    ("text", "amount", "relative"),
    [
        ("+0.5pp", 0.005, False),
        ("0.5pp", 0.005, False),
        ("-2pp", 0.02, False),
        ("+10%", 0.10, True),
        ("+0", 0.0, False),
        ("0.01abs", 0.01, False),
        ("+0.0", 0.0, False),
    ],
)
def test_parse_tolerances(text: str, amount: float, relative: bool) -> None:
    rule = parse_rule("cer", text)
    assert isinstance(rule, Tolerance)
    assert rule.amount == pytest.approx(amount) and rule.relative is relative


@pytest.mark.parametrize(("text", "op", "value"), [("<= 0.2", "<=", 0.2), (">0.8", ">", 0.8)])
def test_parse_bounds(text: str, op: str, value: float) -> None:
    rule = parse_rule("cer", text)
    assert isinstance(rule, Bound) and rule.op == op and rule.value == value


@pytest.mark.parametrize(
    "bad", ["lots", "+5 apples", "=> 3", "", "significant:+1pp", "+5", "0.01", "-3"]
)
def test_bad_rules_name_the_metric(bad: str) -> None:
    with pytest.raises(SuiteConfigError, match="cer"):
        parse_rule("cer", bad)


def test_lower_is_better_tolerance() -> None:
    assert (
        check_case(
            "cer", 0.126, 0.121, [parse_rule("cer", "+0.5pp")], direction="lower", label="s/c[p]"
        )
        == []
    )
    [msg] = check_case(
        "cer",
        0.153,
        0.121,
        [parse_rule("cer", "+0.5pp")],
        direction="lower",
        label="papers/attention[pymupdf]",
    )
    assert msg == "cer 0.153 > baseline 0.121 + 0.5pp (papers/attention[pymupdf])"


def test_higher_is_better_tolerance() -> None:
    rules = [parse_rule("structure_f1", "-2pp")]
    assert check_case("structure_f1", 0.79, 0.80, rules, direction="higher", label="x") == []
    [msg] = check_case("structure_f1", 0.70, 0.80, rules, direction="higher", label="x")
    assert msg == "structure_f1 0.700 < baseline 0.800 - 2pp (x)"


def test_relative_tolerance_and_exact() -> None:
    rel = [parse_rule("cer", "+10%")]
    assert check_case("cer", 0.11, 0.10, rel, direction="lower", label="x") == []
    assert check_case("cer", 0.111, 0.10, rel, direction="lower", label="x")
    exact = [parse_rule("cer", "+0")]
    assert check_case("cer", 0.1000001, 0.1, exact, direction="lower", label="x") == []
    assert check_case("cer", 0.100002, 0.1, exact, direction="lower", label="x")


def test_bounds_need_no_baseline_and_tolerances_do() -> None:
    rules = [parse_rule("cer", "<= 0.2"), parse_rule("cer", "+1pp")]
    failures = check_case("cer", 0.3, None, rules, direction="lower", label="s/c[p]")
    assert failures[0] == "cer 0.300 violates bound <= 0.2 (s/c[p])"
    assert "no baseline for s/c[p]" in failures[1]


def test_case_and_suite_gate_tables() -> None:
    gates = parse_case_gates({"cer": "+0.5pp", "wer": ["+1pp", "<= 0.5"], "suite": {}})
    assert set(gates) == {"cer", "wer"} and len(gates["wer"]) == 2
    [gate] = parse_suite_gates({"cer": "significant:+0.5pp"})
    assert gate.metric == "cer" and gate.margin == pytest.approx(0.005)
    with pytest.raises(SuiteConfigError, match="significant"):
        parse_suite_gates({"cer": "+0.5pp"})


def test_ambiguous_tolerance_names_the_accepted_forms() -> None:
    with pytest.raises(SuiteConfigError, match=r"ambiguous.*'\+0\.5pp', '\+10%'"):
        parse_rule("cer", "+5")


@pytest.mark.parametrize(
    ("text", "direction", "ok"),
    [
        ("+0.5pp", "lower", True),
        ("0.5pp", "lower", True),
        ("-0.5pp", "lower", False),
        ("-2pp", "higher", True),
        ("+2pp", "higher", False),
        ("2pp", "higher", True),
    ],
)
def test_a_tolerance_sign_must_point_the_bad_way(text: str, direction: str, ok: bool) -> None:
    rule = parse_rule("m", text)
    assert isinstance(rule, Tolerance)
    if ok:
        rule.check_sign("m", direction)
    else:
        with pytest.raises(SuiteConfigError, match="allowed worsening is written"):
            rule.check_sign("m", direction)

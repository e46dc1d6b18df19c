"""A small, safe expression evaluator for playbook conditions (no Python ``eval``).

Grammar: names (bound facts), numbers, strings, lists, ``and``/``or``/``not``, comparisons
(``== != < <= > >= in not in``), ``+ - * / %``, unary minus, and the functions ``len``,
``min``, ``max``, ``abs``, ``minutes_between(a, b)`` (b − a in minutes, ISO timestamps),
``round(x, n)`` (half away from zero, ``n`` decimals, default 0) and ``pct_change(a, b)``
(the change from ``a`` to ``b`` in percent of ``|a|``).
Any other syntax is rejected when the playbook is loaded.

Every value an evaluation makes is bounded: a string or list holds at most
:data:`MAX_SIZE` characters or items (``'a' * n * n`` is refused before it is built) and an
integer fits in 64 bits (a literal that does not is refused when the playbook is loaded).
"""

from __future__ import annotations

import ast
import operator
from typing import Any


class ExprError(ValueError):
    pass


class Unknown(Exception):
    """A name the expression needs is not bound (its evidence is missing)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _minutes_between(a: Any, b: Any) -> float:
    from ..util.timeutil import parse_ts

    da, db = parse_ts(a, what="minutes_between"), parse_ts(b, what="minutes_between")
    return round((db - da).total_seconds() / 60.0, 3)


def _round(x: Any, n: Any = 0) -> int | float:
    from decimal import ROUND_HALF_UP, Decimal

    x = _num(x)
    if isinstance(n, bool) or not isinstance(n, int) or not -12 <= n <= 12:
        raise ExprError(f"decimals must be an integer from -12 to 12, got {n!r}")
    try:
        q = Decimal(str(x)).quantize(Decimal(1).scaleb(-n), rounding=ROUND_HALF_UP)
    except ArithmeticError:         # decimal.InvalidOperation: more digits than Decimal holds
        raise ExprError(f"round: {x!r} has too many digits to round to {n} decimals") from None
    return int(q) if n <= 0 else float(q)


def _pct_change(a: Any, b: Any) -> float:
    a, b = _num(a), _num(b)
    if a == 0:
        raise ExprError("the base value is zero")
    return (b - a) / abs(a) * 100.0


FUNCS = {"len": len, "min": min, "max": max, "abs": abs, "minutes_between": _minutes_between,
         "round": _round, "pct_change": _pct_change}
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Mod: lambda a, b: operator.mod(_num(a), _num(b))}   # numbers only: no str % formatting
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


MAX_SIZE = 100_000          # characters of a string, items of a list
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1


def _bounded(v: Any) -> Any:
    """``v`` when it is an integer within 64 bits (or not an integer), else ExprError. Strings
    and lists grow only through ``+`` and ``*``, whose size is checked before (_size_of)."""
    if isinstance(v, int) and not isinstance(v, bool) and not _INT_MIN <= v <= _INT_MAX:
        raise ExprError("an integer result does not fit in 64 bits")
    return v


def _size_of(op: ast.AST, a: Any, b: Any) -> int:
    """The length a string or list ``a op b`` would have (0 for numbers), computed before it is built."""
    if isinstance(op, ast.Mult):
        for x, n in ((a, b), (b, a)):
            if isinstance(x, (str, list)) and isinstance(n, int) and not isinstance(n, bool):
                return len(x) * max(n, 0)
    if isinstance(op, ast.Add) and isinstance(a, (str, list)) and isinstance(b, (str, list)):
        return len(a) + len(b)
    return 0


def parse(src: str) -> ast.Expression:
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as e:
        raise ExprError(f"invalid expression {src!r}: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):   # only param.NAME (a case parameter)
            if not (isinstance(node.value, ast.Name) and node.value.id == "param"):
                raise ExprError(f"expression {src!r} uses unsupported syntax (Attribute)")
            continue
        ok = isinstance(node, (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
                               ast.Compare, ast.BinOp, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple,
                               ast.Call, *_BIN, *_CMP))
        if not ok:
            raise ExprError(f"expression {src!r} uses unsupported syntax ({type(node).__name__})")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCS or node.keywords:
                raise ExprError(f"expression {src!r} calls an unknown function")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
            raise ExprError(f"expression {src!r} has an unsupported constant")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not _INT_MIN <= node.value <= _INT_MAX:
            raise ExprError(f"expression {src!r} has an integer that does not fit in 64 bits")
    return tree


def names(src: str) -> set[str]:
    """The names an expression uses (``param.NAME`` for a case parameter)."""
    tree = parse(src)
    params = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in FUNCS and id(n) not in params}
            | {f"param.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)})


def evaluate(src: str, env: dict[str, Any]) -> Any:
    tree = parse(src)
    return _ev(tree.body, env)


def _ev(n: ast.AST, env: dict[str, Any]) -> Any:
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.Name):
        if n.id in ("true", "True"):
            return True
        if n.id in ("false", "False"):
            return False
        if n.id not in env:
            raise Unknown(n.id)
        return env[n.id]
    if isinstance(n, ast.Attribute):   # param.NAME: normally filled in before evaluation
        key = f"param.{n.attr}"
        if key not in env:
            raise Unknown(key)
        return env[key]
    if isinstance(n, (ast.List, ast.Tuple)):
        return [_ev(e, env) for e in n.elts]
    if isinstance(n, ast.BoolOp):
        if isinstance(n.op, ast.And):
            return all(bool(_ev(v, env)) for v in n.values)
        return any(bool(_ev(v, env)) for v in n.values)
    if isinstance(n, ast.UnaryOp):
        v = _ev(n.operand, env)
        return (not v) if isinstance(n.op, ast.Not) else _bounded(-_num(v))
    if isinstance(n, ast.BinOp):
        a, b = _ev(n.left, env), _ev(n.right, env)
        if isinstance(n.op, (ast.Div, ast.Mod)) and b == 0:
            raise ExprError("division by zero")
        if _size_of(n.op, a, b) > MAX_SIZE:
            raise ExprError(f"a value longer than {MAX_SIZE} characters or items")
        try:
            return _bounded(_BIN[type(n.op)](a, b))
        except TypeError as e:
            raise ExprError(str(e)) from None
    if isinstance(n, ast.Compare):
        left = _ev(n.left, env)
        for op, comp in zip(n.ops, n.comparators):
            right = _ev(comp, env)
            try:
                if not _CMP[type(op)](left, right):
                    return False
            except TypeError as e:
                raise ExprError(f"cannot compare: {e}") from None
            left = right
        return True
    if isinstance(n, ast.Call):
        args = [_ev(a, env) for a in n.args]
        try:
            return _bounded(FUNCS[n.func.id](*args))
        except (TypeError, ValueError, ArithmeticError) as e:
            raise ExprError(f"{n.func.id}: {e}") from None
    raise ExprError(f"unsupported syntax {type(n).__name__}")


def _num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ExprError(f"expected a number, got {v!r}")
    return v

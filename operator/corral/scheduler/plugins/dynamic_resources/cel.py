"""CEL device selectors in Kubernetes' DRA environment (``DeviceSelector.cel.expression``).

The expression sees one variable, ``device``, as upstream's
``k8s.io/dynamic-resource-allocation/cel`` declares it: ``driver`` (string),
``allowMultipleAllocations`` (bool), ``attributes`` and ``capacity`` as maps keyed by domain,
then by name. An attribute or capacity without a domain belongs to the
driver's domain. A domain the device has nothing under reads as an empty map (upstream's map with a
default); a missing name inside a domain is the runtime error ``no such key: <name>``. Attribute
values are strings, ints, bools or versions (semver); capacities are quantities.

Kubernetes' library on top of the CEL standard: ``quantity()``, ``isQuantity()`` and a quantity's
``compareTo``, ``isGreaterThan``, ``isLessThan``, ``add``, ``sub``, ``asInteger``,
``asApproximateFloat``, ``isInteger``, ``sign``; ``semver()``, ``isSemver()`` and a version's
``major``, ``minor``, ``patch``, ``compareTo``, ``isGreaterThan``, ``isLessThan``.

cel-python evaluates; it has no ``cel.bind``, optional chaining (``.?``) or the strings
extension: such expressions fail to compile here (upstream accepts them). Upstream's bounds on
the work of one evaluation hold (:mod:`.cel_limits`): the expression's length and nesting are
checked before and after parsing, its estimated worst-case cost at compile time (what the API
server checks when the object is written; upstream's scheduler skips it, Corral's evaluator is
slow enough that a selector it would run for seconds is refused first), the runtime cost is
charged as cel-go charges it and cancelled past upstream's limit, and a deadline is checked
inside the evaluation.
Compilation is cached per expression.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeVar

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from corral.scheduler.config import quantity as q
from corral.scheduler.plugins.dynamic_resources import cel_compiled, cel_fast
from corral.scheduler.plugins.dynamic_resources import cel_limits as limits
from corral.scheduler.plugins.dynamic_resources.cel_limits import DeadlineExceededError, LimitError

NO_SUCH_KEY_HINT: Final = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check"
    " with has() for optional fields"
)
_MISSING_MEMBER = re.compile(r"no such member in mapping: '(.*)'")
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\Z"
)


class SelectorError(Exception):
    """A selector that does not compile, or fails at run time: the message is upstream's text."""


class SelectorInterruptedError(SelectorError):
    """The evaluation passed its deadline (upstream: the context was cancelled)."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A ``resource.Quantity`` in CEL: exact, compared by value (``1Gi == 1024Mi``)."""

    amount: Fraction

    @classmethod
    def parse(cls, text: str) -> Quantity:
        return cls(q.exact(text))  # unbounded as resource.Quantity (capacities may pass int64)


@dataclass(frozen=True, slots=True)
class Semver:
    """A semantic version (semver 2.0): ordered by core then prerelease, build ignored."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...]

    @classmethod
    def parse(cls, text: str) -> Semver:
        match = _SEMVER.match(text)
        if match is None:
            raise ValueError(f"invalid semver {text!r}")
        pre = tuple(int(p) if p.isdigit() else p for p in (match[4] or "").split(".") if p)
        return cls(int(match[1]), int(match[2]), int(match[3]), pre)

    def order(self, other: Semver) -> int:
        mine = (self.major, self.minor, self.patch)
        theirs = (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _prerelease_order(self.prerelease, other.prerelease)


def _prerelease_order(a: tuple[int | str, ...], b: tuple[int | str, ...]) -> int:
    if a == b:
        return 0
    if not a or not b:  # a release sorts after its prereleases
        return 1 if not a else -1
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        if isinstance(x, int) != isinstance(y, int):  # numeric identifiers sort first
            return -1 if isinstance(x, int) else 1
        return -1 if str(x) < str(y) else 1
    return -1 if len(a) < len(b) else 1


class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType()


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.amount > b.amount) - (a.amount < b.amount)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.order(b)
    raise TypeError(f"no such overload: compareTo({type(a).__name__}, {type(b).__name__})")


def _quantity(text: Any) -> Quantity:
    try:
        return Quantity.parse(str(text))
    except ValueError as err:
        raise ValueError(f"quantities must match the regular expression: {err}") from err


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        q.parse(str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _is_semver(text: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_SEMVER.match(str(text)) is not None)


def _as_integer(value: Quantity) -> celtypes.IntType:
    if value.amount.denominator != 1:
        raise ValueError("cannot convert value to integer")
    return celtypes.IntType(value.amount.numerator)


def _arith(op: Callable[[Fraction, Fraction], Fraction]) -> Callable[[Quantity, Any], Quantity]:
    def apply(a: Quantity, b: Any) -> Quantity:
        other = b.amount if isinstance(b, Quantity) else Fraction(int(b))
        return Quantity(op(a.amount, other))

    return apply


_FUNCTIONS: Final[dict[str, Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": lambda text: Semver.parse(str(text)),
    "isSemver": _is_semver,
    "compareTo": lambda a, b: celtypes.IntType(_compare(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "add": _arith(lambda a, b: a + b),
    "sub": _arith(lambda a, b: a - b),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(a.amount)),
    "isInteger": lambda a: celtypes.BoolType(a.amount.denominator == 1),
    "sign": lambda a: celtypes.IntType((a.amount > 0) - (a.amount < 0)),
    "major": lambda v: celtypes.IntType(v.major),
    "minor": lambda v: celtypes.IntType(v.minor),
    "patch": lambda v: celtypes.IntType(v.patch),
}
_M = TypeVar("_M", bound=celtypes.MapType)
_ENV: Final = celpy.Environment()
# The evaluator recurses about five frames per level of a collapsed tree (at most
# cel_limits.MAX_TREE_DEPTH); cel-python's own setting (2,500) is below that.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 6 * limits.MAX_TREE_DEPTH + 1000))


@dataclass(frozen=True, slots=True)
class Device:
    """The inputs of ``device``: driver, attributes and capacity as the ResourceSlice has them."""

    driver: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, Mapping[str, Any]]
    allow_multiple_allocations: bool = False


def activation(device: Device) -> dict[str, Any]:
    """The ``device`` variable; build once per device and reuse for every selector."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attribute in device.attributes.items():
        domain, ident = split_qualified_name(name, device.driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(attribute)
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, ident = split_qualified_name(name, device.driver)
        capacity.setdefault(domain, {})[ident] = Quantity.parse(str(cap.get("value", "0")))
    return {
        "device": _map(
            celtypes.MapType,
            {
                _DRIVER: celtypes.StringType(device.driver),
                _MULTI: celtypes.BoolType(device.allow_multiple_allocations),
                _ATTRIBUTES: _domains(attributes),
                _CAPACITY: _domains(capacity),
            },
        )
    }


_DRIVER, _MULTI, _ATTRIBUTES, _CAPACITY = (
    celtypes.StringType(k) for k in ("driver", "allowMultipleAllocations", "attributes", "capacity")
)


def _map(cls: type[_M], items: dict[Any, Any]) -> _M:
    """A celtypes map of ``items`` (their keys already celtypes), without ``MapType``'s
    per-key checks, which cost most of a device's activation (a hundred microseconds)."""
    out = cls.__new__(cls)
    dict.__init__(out, items)
    return out


def _domains(values: dict[str, dict[str, Any]]) -> _DomainMap:
    return _map(
        _DomainMap,
        {
            celtypes.StringType(domain): _map(
                celtypes.MapType, {celtypes.StringType(k): v for k, v in inner.items()}
            )
            for domain, inner in values.items()
        },
    )


def _attribute_value(attribute: Mapping[str, Any]) -> Any:
    if "string" in attribute:
        return celtypes.StringType(attribute["string"])
    if "int" in attribute:
        return celtypes.IntType(int(attribute["int"]))
    if "bool" in attribute:
        return celtypes.BoolType(bool(attribute["bool"]))
    if "version" in attribute:
        return Semver.parse(str(attribute["version"]))
    return celtypes.StringType("")


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """``domain/id`` → (domain, id); a bare ``id`` belongs to ``default_domain``."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


class Selector:
    """One compiled expression; :meth:`matches` raises :class:`SelectorError` at run time
    (:class:`SelectorInterruptedError` past its deadline). It runs as closures
    (:mod:`.cel_compiled`) where they cover the expression, else on cel-python's interpreter:
    the same results, errors and costs."""

    __slots__ = ("_code", "_program", "fast")

    def __init__(
        self,
        program: celpy.Runner,
        code: cel_compiled.Code | None = None,
        fast: cel_fast.FastSelector | None = None,
    ) -> None:
        self._program = program
        self._code = code
        self.fast = fast  # the common shape, answered from the device's JSON (:mod:`.cel_fast`)

    @property
    def compiled(self) -> bool:
        return self._code is not None

    def matches(
        self,
        variables: dict[str, Any],
        *,
        deadline: float | None = None,
        cost_limit: int = limits.MAX_COST,
        interpret: bool = False,
    ) -> bool:
        """``deadline``: a :func:`time.monotonic` instant; ``cost_limit``: upstream's runtime
        cost limit (``CELSelectorExpressionMaxCost``); ``interpret``: skip the closures."""
        return bool(self.evaluate(variables, limits.Tracker(limit=cost_limit, deadline=deadline),
                                  interpret=interpret))  # fmt: skip

    def evaluate(
        self, variables: dict[str, Any], tracker: limits.Tracker, *, interpret: bool = False
    ) -> celtypes.BoolType:
        try:
            if self._code is not None and not interpret:
                result = cel_compiled.run(self._code, variables, tracker)
            else:
                evaluator = limits.CostEvaluator(
                    self._program.ast, self._program.new_activation(), tracker
                )
                result = evaluator.evaluate(variables)
        except DeadlineExceededError as err:
            raise SelectorInterruptedError(str(err)) from err
        except LimitError as err:
            raise SelectorError(str(err)) from err
        except CELEvalError as err:
            raise SelectorError(_runtime_message(err)) from err
        except (TypeError, ValueError, KeyError) as err:
            raise SelectorError(str(err)) from err
        if isinstance(result, CELEvalError):
            raise SelectorError(_runtime_message(result))
        if not isinstance(result, celtypes.BoolType):
            raise SelectorError(
                f"CEL result of type {type(result).__name__} could not be converted to bool"
            )
        return result


def _runtime_message(err: CELEvalError) -> str:
    text = str(err.args[0]) if err.args else str(err)
    text = text.split(" (in activation", 1)[0]  # cel-python appends its whole activation
    missing = _MISSING_MEMBER.match(text)
    if missing is not None:
        return f"no such key: {missing[1]}{NO_SUCH_KEY_HINT}"
    return text


@functools.lru_cache(maxsize=4096)
def compile_selector(expression: str) -> Selector | SelectorError:
    """The compiled selector, or the compile error as a value (cached either way)."""
    try:
        limits.check_text(expression)
        ast = _ENV.compile(expression)
        limits.check_tree(ast)
        ast = limits.collapse(ast)
        limits.check_depth(ast)
        if limits.estimated_cost(ast) > limits.MAX_COST:
            return SelectorError(limits.TOO_COMPLEX)
    except CELParseError as err:
        first = str(err).splitlines()[0] if str(err) else "syntax error"
        return SelectorError(f"compilation failed: ERROR: <input>: {first}")
    except LimitError as err:
        return SelectorError(f"compilation failed: ERROR: <input>: {err}")
    return Selector(
        _ENV.program(ast, functions=_FUNCTIONS),
        cel_compiled.compile_tree(ast, _FUNCTIONS),
        cel_fast.compile_fast(ast),
    )


def estimated_cost(expression: str) -> int:
    """cel-go's worst-case cost of a selector that parses (:func:`cel_limits.estimated_cost`);
    raises :class:`SelectorError` for one that does not."""
    try:
        limits.check_text(expression)
        ast = _ENV.compile(expression)
        limits.check_tree(ast)
        ast = limits.collapse(ast)
        limits.check_depth(ast)
    except (CELParseError, LimitError) as err:
        raise SelectorError(str(err).splitlines()[0]) from None
    return limits.estimated_cost(ast)

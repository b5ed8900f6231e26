"""Bounded work for CEL device selectors: size and nesting before parsing, cost while running.

Upstream's bounds (``k8s.io/dynamic-resource-allocation/cel`` and cel-go at the pinned
release), with their messages:

- length: at most :data:`MAX_EXPRESSION_BYTES` (``CELSelectorExpressionMaxLength``, 10 KiB); the
  API server refuses longer expressions, and so does Corral before parsing ("Too long");
- nesting: cel-go's parser gives up when one grammar rule nests more than
  :data:`MAX_RECURSION_DEPTH` (250) deep ("expression recursion limit exceeded: 250"). Corral
  counts the same on cel-python's parse, per rule along each path, and counts brackets on the
  text first, so a deeply nested text is refused before it is parsed;
- runtime cost: :class:`CostEvaluator` charges what cel-go's runtime cost tracker charges (an
  identifier or field selection 1, a constant 0, a call 1, string comparisons and
  concatenations a tenth of their length, ``in`` on a list its size, a list literal 10, a map
  literal 30, a comprehension its loop step and condition per element) and cancels the
  evaluation past :data:`MAX_COST` (``CELSelectorExpressionMaxCost``, 1,000,000): "operation
  cancelled: actual cost limit exceeded";
- interruption: cel-go checks the caller's context every :data:`CHECK_FREQUENCY` (100)
  iterations of a comprehension; Corral checks the deadline there and every
  :data:`CHECK_COST` units of cost too (its evaluator is slower than cel-go's), so the
  allocator's filterTimeout holds inside one device's evaluation ("operation interrupted");
- estimated cost: :func:`estimated_cost` is cel-go's worst case from the declared size bounds of
  the DRA environment (32 attributes or capacities per device and per domain, 48 values in a
  list attribute, 64 characters in a string one, 63 in a driver name); the API server refuses
  a selector whose estimate passes :data:`MAX_COST` ("too complex, exceeds cost limit"). The
  scheduler itself compiles without estimating, as upstream's does; ``corral simulate``, where
  no API server validated the objects, checks it (:func:`validate_expression`).

Corral's own bound: its evaluator recurses once per level of the parse tree (pass-through
levels removed, :func:`collapse`), so a tree deeper than :data:`MAX_TREE_DEPTH` is refused
("expression nested N levels deep"), below what Python's stack allows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from celpy.evaluation import Evaluator
from lark import Token, Tree

MAX_EXPRESSION_BYTES: Final = 10 * 1024
MAX_RECURSION_DEPTH: Final = 250
MAX_TREE_DEPTH: Final = 800
MAX_COST: Final = 1_000_000
CHECK_FREQUENCY: Final = 100
CHECK_COST: Final = 1_000
COST_EXCEEDED: Final = "operation cancelled: actual cost limit exceeded"
INTERRUPTED: Final = "operation interrupted"
TOO_COMPLEX: Final = "too complex, exceeds cost limit"
# The DRA environment's declared bounds (resourceapi at the pinned release).
_PER_DEVICE: Final = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_LIST_VALUES: Final = 48  # ResourceSliceMaxAttributeValuesPerDevice
_VALUE_LENGTH: Final = 64  # DeviceAttributeMaxValueLength
_DRIVER_LENGTH: Final = 63  # DriverNameMaxLength
_UNBOUNDED: Final = 2**63  # a size nothing declares: any comprehension over it is too complex
_STRING_FACTOR: Final = 0.1
_REGEX_FACTOR: Final = 0.25
# Per element of a comprehension, on top of its predicate or transform (cel-go's expansion
# of the macro: the loop condition @not_strictly_false(accu) and the accumulator reads, and for
# map/filter the list concatenation and the one-element list created).
_ITERATION: Final = {"all": 3, "exists": 3, "exists_one": 2, "map": 12, "filter": 13}
_PASS_THROUGH: Final = frozenset(
    ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
     "unary", "member")
)  # fmt: skip
_COMPARE_STRINGS: Final = frozenset(
    ("relation_eq", "relation_ne", "relation_lt", "relation_le", "relation_gt", "relation_ge")
)
_OPENING: Final = {"(": ")", "[": "]", "{": "}"}


class LimitError(Exception):
    """An expression past a bound; the message is upstream's (or Corral's own, named so)."""


class DeadlineExceededError(LimitError):
    """The deadline passed while the expression ran."""


# --- before and after parsing -----------------------------------------------------------------


def check_text(expression: str) -> None:
    """Length and bracket nesting, on the text: cheap, and before the parser's linear but slow
    pass over a hostile text."""
    size = len(expression.encode())
    if size > MAX_EXPRESSION_BYTES:
        raise LimitError(f"Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes")
    depth = deepest = 0
    quote: str | None = None
    escaped = False
    for ch in expression:
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_RECURSION_DEPTH:
        raise LimitError(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")


def collapse(tree: Tree[Any]) -> Tree[Any]:
    """``tree`` without its pass-through levels (a rule with one child that its evaluator
    only hands on): the evaluator's recursion per level of nesting drops fivefold."""
    for node in _nodes(tree):
        node.children = [_skip(c) for c in node.children]
    top: Tree[Any] = _skip(tree)
    return top


def _skip(node: Any) -> Any:
    while (
        isinstance(node, Tree)
        and node.data in _PASS_THROUGH
        and len(node.children) == 1
        and isinstance(node.children[0], Tree)
    ):
        node = node.children[0]
    return node


def _nodes(tree: Tree[Any]) -> Iterator[Tree[Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in node.children if isinstance(c, Tree))


def check_tree(tree: Tree[Any]) -> None:
    """cel-go's recursion limit, counted per rule along every path of the parse (before
    :func:`collapse`), then Corral's depth bound on the collapsed tree; no recursion here."""
    counts: dict[str, int] = {}
    stack: list[tuple[Any, bool]] = [(tree, True)]
    while stack:
        node, entering = stack.pop()
        if not isinstance(node, Tree):
            continue
        if not entering:
            counts[node.data] -= 1
            continue
        counts[node.data] = counts.get(node.data, 0) + 1
        if counts[node.data] > MAX_RECURSION_DEPTH:
            raise LimitError(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        stack.append((node, False))
        stack.extend((c, True) for c in node.children)


def check_depth(tree: Tree[Any]) -> None:
    deepest = 0
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, Tree):
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in node.children)
    if deepest > MAX_TREE_DEPTH:
        raise LimitError(
            f"expression nested {deepest} levels deep; Corral's evaluator takes at most "
            f"{MAX_TREE_DEPTH}"
        )


# --- while running ------------------------------------------------------------------------


class Tracker:
    """The cost of one evaluation so far, its limit and deadline."""

    __slots__ = ("cost", "deadline", "iterations", "limit", "next_check", "pending")

    def __init__(self, *, limit: int = MAX_COST, deadline: float | None = None) -> None:
        self.cost = 0
        self.limit = limit
        self.deadline = deadline
        self.iterations = 0
        self.next_check = CHECK_COST
        self.pending = 0  # the per-element cost of the comprehension being built

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self.limit:
            raise LimitError(COST_EXCEEDED)
        if self.cost >= self.next_check:
            self.next_check = self.cost + CHECK_COST
            self.check_deadline()

    def iterate(self, amount: int) -> None:
        self.iterations += 1
        if self.iterations % CHECK_FREQUENCY == 0:
            self.check_deadline()
        self.charge(amount)

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceededError(INTERRUPTED)


def size(value: Any) -> int:
    """cel-go's ``actualSize``: the length of a string, bytes, list or map; 1 otherwise."""
    if isinstance(value, str | bytes | list | dict | tuple):
        return len(value)
    return 1


def _tenths(n: float) -> int:
    return math.ceil(n * _STRING_FACTOR)


class CostEvaluator(Evaluator):
    """cel-python's evaluator charging a :class:`Tracker` per step, as cel-go's runtime cost
    tracker does (the module's docstring lists what costs what)."""

    def __init__(
        self, ast: Tree[Any], activation: Any, tracker: Tracker, per_element: int = 0
    ) -> None:
        super().__init__(ast, activation)
        self.tracker = tracker
        self.per_element = per_element
        self._values: list[Any] = []

    def sub_evaluator(self, ast: Tree[Any]) -> Evaluator:
        return CostEvaluator(ast, self.activation, self.tracker, self.tracker.pending)

    def evaluate(self, context: Any = None) -> Any:
        if self.per_element:  # one element of a comprehension
            self.tracker.iterate(self.per_element)
        return super().evaluate(context)

    def visit_children(self, tree: Tree[Any]) -> list[Any]:
        values = super().visit_children(tree)
        self._values = values
        return values

    # celpy builds a macro's sub-evaluator after evaluating the range, which may hold macros
    # of its own: the per-element cost is set just before, from the macro's own node.
    def build_macro_eval(self, child: Tree[Any]) -> Any:
        self.tracker.pending = _ITERATION.get(str(child.children[1]), 0)
        return super().build_macro_eval(child)

    def build_ss_macro_eval(self, child: Tree[Any]) -> Any:
        self.tracker.pending = _ITERATION.get(str(child.children[1]), 0)
        return super().build_ss_macro_eval(child)

    def _visit_tree(self, tree: Tree[Any]) -> Any:
        result = super()._visit_tree(tree)
        cost = self._cost(tree)
        if cost:
            self.tracker.charge(cost)
        return result

    def _cost(self, tree: Tree[Any]) -> int:
        data, children = tree.data, tree.children
        if data == "primary":
            return _primary_cost(children[0])
        if data in ("member_dot", "member_index"):
            return 1
        if data == "member_object":
            return 40
        if data == "member_dot_arg":
            name = children[1].value if isinstance(children[1], Token) else ""
            if name in _ITERATION:
                return 0  # charged per element
            return _method_cost(name, self._values)
        if data in ("relation", "addition") and len(children) == 2:
            op = children[0].data if isinstance(children[0], Tree) else ""
            return _operator_cost(op, self._values)
        if data in ("multiplication", "unary") and len(children) == 2:
            return 1
        return 0


def _primary_cost(child: Any) -> int:
    if not isinstance(child, Tree):
        return 0
    kind = child.data
    if kind in ("ident", "dot_ident", "dot_ident_arg"):
        return 1
    if kind == "ident_arg":
        name = _text(child.children[0]) if child.children else ""
        return 0 if name in ("has", "dyn") else 1
    if kind == "list_lit":
        return 10
    if kind == "map_lit":
        return 30
    return 0


def _operands(values: list[Any]) -> tuple[Any, Any]:
    """``[[left], right]``, the children of a binary relation or addition."""
    if len(values) == 2 and isinstance(values[0], list) and values[0]:
        return values[0][0], values[1]
    return None, None


def _operator_cost(op: str, values: list[Any]) -> int:
    left, right = _operands(values)
    if op in _COMPARE_STRINGS:
        if op in ("relation_eq", "relation_ne") or isinstance(left, str | bytes):
            return max(1, _tenths(min(size(left), size(right))))
        return 1
    if op == "relation_in":
        return size(right) if isinstance(right, list | tuple) else 1
    if op == "addition_add" and isinstance(left, str | bytes) and isinstance(right, str | bytes):
        return max(1, _tenths(size(left) + size(right)))
    return 1


def _method_cost(name: str, values: list[Any]) -> int:
    target = values[0] if values else None
    args = values[2] if len(values) > 2 and isinstance(values[2], list) else []
    arg = args[0] if args else None
    if name in ("startsWith", "endsWith"):
        return max(1, _tenths(size(arg)))
    if name == "contains":
        return max(1, _tenths(size(target)) * _tenths(size(arg)))
    if name == "matches":
        return max(1, _tenths(1 + size(target)) * math.ceil(size(arg) * _REGEX_FACTOR))
    return 1


# --- before running: the worst case ------------------------------------------------------------


def estimated_cost(tree: Tree[Any]) -> int:
    """cel-go's estimated maximum cost of a (collapsed, depth-checked) selector."""
    return _Estimator().estimate(tree).cost


@dataclass(frozen=True, slots=True)
class _Est:
    """A node's maximum cost; the maximum size of its value (``None``: a value without one,
    a number or a boolean) and of its elements (for a list or a map)."""

    cost: int
    size: int | None = None
    elem: int | None = None


_ATTRIBUTE: Final = max(_VALUE_LENGTH, _LIST_VALUES)
_OPAQUE: Final = _Est(0, _UNBOUNDED, _UNBOUNDED)  # a value nothing bounds


def _size_of(est: _Est) -> int:
    return 1 if est.size is None else est.size


class _Estimator:
    """Walks the tree once, as cel-go's checker does: each node's worst case from the declared
    bounds of the DRA environment (the module's docstring) and the sizes of literals."""

    def __init__(self) -> None:
        self.scope: dict[str, _Est] = {}  # comprehension variables: what each element is

    def estimate(self, node: Any) -> _Est:
        if not isinstance(node, Tree):
            return _Est(0)
        method = _ESTIMATES.get(str(node.data))
        if method is not None:
            out: _Est = method(self, node)
            return out
        return _Est(_saturate(sum(self.estimate(c).cost for c in node.children)))

    def _expr(self, node: Tree[Any]) -> _Est:
        parts = [self.estimate(c) for c in node.children]
        if len(parts) == 3:  # cond ? a : b: the condition and the costlier branch
            branch = max(parts[1:], key=lambda e: e.cost)
            return _Est(_saturate(parts[0].cost + branch.cost), branch.size, branch.elem)
        return _Est(_saturate(sum(e.cost for e in parts)))

    def _primary(self, node: Tree[Any]) -> _Est:
        child = node.children[0]
        kind = str(child.data) if isinstance(child, Tree) else ""
        if kind == "literal":
            token = child.children[0]
            if isinstance(token, Token) and token.type.endswith("STRING_LIT"):
                return _Est(0, max(1, len(_text(token)) - 2))
            return _Est(0)
        if kind == "ident":
            name = _text(child.children[0])
            if name in self.scope:
                bound = self.scope[name]
                return _Est(1, bound.size, bound.elem)
            return _Est(1) if name == "device" else _Est(1, _UNBOUNDED, _UNBOUNDED)
        if kind in ("list_lit", "map_lit"):
            items = child.children[0].children if child.children else []
            parts = [self.estimate(i) for i in items]
            sized = [e.size for e in parts if e.size is not None]
            count = len(items) if kind == "list_lit" else len(items) // 2
            base = 10 if kind == "list_lit" else 30
            cost = base + sum(e.cost for e in parts)
            return _Est(_saturate(cost), count, max(sized) if sized else None)
        if kind == "ident_arg":
            name = _text(child.children[0])
            args = child.children[1].children if len(child.children) > 1 else []
            parts = [self.estimate(a) for a in args]
            own = 0 if name in ("has", "dyn") else 1
            if name == "dyn" and parts:
                return _Est(_saturate(parts[0].cost), parts[0].size, parts[0].elem)
            return _Est(_saturate(own + sum(e.cost for e in parts)))
        if kind == "paren_expr":
            return self.estimate(child.children[0])
        return _Est(1, _UNBOUNDED, _UNBOUNDED)

    def _member_dot(self, node: Tree[Any]) -> _Est:
        target = self.estimate(node.children[0])
        name = _text(node.children[1])
        size, elem = _field_bounds(node.children[0], name, target)
        return _Est(_saturate(target.cost + 1), size, elem)

    def _member_index(self, node: Tree[Any]) -> _Est:
        target = self.estimate(node.children[0])
        index = self.estimate(node.children[1])
        size, elem = _index_bounds(node.children[0], target)
        return _Est(_saturate(target.cost + index.cost + 1), size, elem)

    def _member_dot_arg(self, node: Tree[Any]) -> _Est:
        target = self.estimate(node.children[0])
        name = _text(node.children[1])
        args = node.children[2].children if len(node.children) > 2 else []
        if name in _ITERATION and len(args) == 2:
            var = next((_text(t) for t in args[0].scan_values(lambda v: isinstance(v, Token))), "")
            saved = self.scope.get(var)
            self.scope[var] = _Est(0, target.elem, None if target.elem is None else _UNBOUNDED)
            body = self.estimate(args[1])
            if saved is None:
                del self.scope[var]
            else:
                self.scope[var] = saved
            cost = target.cost + _size_of(target) * (_ITERATION[name] + body.cost)
            if name == "map":
                return _Est(_saturate(cost), target.size, body.size)
            if name == "filter":
                return _Est(_saturate(cost), target.size, target.elem)
            return _Est(_saturate(cost))
        parts = [self.estimate(a) for a in args]
        arg = _size_of(parts[0]) if parts else 1
        own = _method_cost_estimate(name, _size_of(target), arg)
        return _Est(_saturate(target.cost + sum(e.cost for e in parts) + own))

    def _relation(self, node: Tree[Any]) -> _Est:
        return self._binary(node)

    def _addition(self, node: Tree[Any]) -> _Est:
        return self._binary(node)

    def _multiplication(self, node: Tree[Any]) -> _Est:
        return self._binary(node)

    def _unary(self, node: Tree[Any]) -> _Est:
        parts = [self.estimate(c) for c in node.children]
        return _Est(_saturate(sum(e.cost for e in parts) + (len(parts) == 2)))

    def _binary(self, node: Tree[Any]) -> _Est:
        if len(node.children) != 2:
            return self.estimate(node.children[0])
        op_tree, right_tree = node.children
        left = self.estimate(op_tree.children[0])
        right = self.estimate(right_tree)
        op = str(op_tree.data)
        sized = left.size is not None and right.size is not None
        if op in ("relation_eq", "relation_ne") or (op in _COMPARE_STRINGS and sized):
            own = max(1, _tenths(min(_size_of(left), _size_of(right))))
        elif op == "relation_in":
            own = _size_of(right)
        elif op == "addition_add" and sized:
            own = max(1, _tenths(_size_of(left) + _size_of(right)))
        else:
            own = 1
        total = _saturate(left.cost + right.cost + own)
        if op == "addition_add" and sized:
            return _Est(total, min(_size_of(left) + _size_of(right), _UNBOUNDED), left.elem)
        return _Est(total)


# The grammar's rules with an estimate of their own; the others sum their children.
_ESTIMATES: Final[dict[str, Callable[[_Estimator, Tree[Any]], _Est]]] = {
    "expr": _Estimator._expr,
    "primary": _Estimator._primary,
    "member_dot": _Estimator._member_dot,
    "member_index": _Estimator._member_index,
    "member_dot_arg": _Estimator._member_dot_arg,
    "relation": _Estimator._relation,
    "addition": _Estimator._addition,
    "multiplication": _Estimator._multiplication,
    "unary": _Estimator._unary,
}


def _saturate(cost: int) -> int:
    return min(cost, 2**64 - 1)


def _text(node: Any) -> str:
    return str(node.value) if isinstance(node, Token) else ""


def _field_bounds(target: Any, name: str, est: _Est) -> tuple[int | None, int | None]:
    """The size bounds of ``target.name`` in the DRA environment."""
    if _is_device(target):
        if name == "driver":
            return _DRIVER_LENGTH, None
        if name in ("attributes", "capacity"):
            return _PER_DEVICE, _PER_DEVICE  # domains, each a map of attributes
        return None, None
    if _is_domain(target):  # device.attributes["d"].name: one attribute (maybe a list)
        return _ATTRIBUTE, _VALUE_LENGTH
    if _is_attributes(target):  # device.attributes.d: a domain's map
        return _PER_DEVICE, _ATTRIBUTE
    return est.elem if est.elem is not None else _UNBOUNDED, _UNBOUNDED


def _index_bounds(target: Any, est: _Est) -> tuple[int | None, int | None]:
    if _is_attributes(target):  # device.attributes["d"]
        return _PER_DEVICE, _ATTRIBUTE
    if _is_domain(target):
        return _ATTRIBUTE, _VALUE_LENGTH
    return est.elem if est.elem is not None else _UNBOUNDED, _UNBOUNDED


def _is_device(node: Any) -> bool:
    return (
        isinstance(node, Tree)
        and node.data == "primary"
        and isinstance(node.children[0], Tree)
        and node.children[0].data == "ident"
        and node.children[0].children[0] == "device"
    )


def _is_attributes(node: Any) -> bool:
    """``device.attributes`` or ``device.capacity``."""
    return (
        isinstance(node, Tree)
        and node.data == "member_dot"
        and _text(node.children[1]) in ("attributes", "capacity")
        and _is_device(node.children[0])
    )


def _is_domain(node: Any) -> bool:
    """``device.attributes["d"]`` or ``device.attributes.d`` (and capacity's)."""
    return (
        isinstance(node, Tree)
        and node.data in ("member_index", "member_dot")
        and _is_attributes(node.children[0])
    )


def _method_cost_estimate(name: str, target_size: int, arg_size: int) -> int:
    if name in ("startsWith", "endsWith"):
        return max(1, _tenths(arg_size))
    if name == "contains":
        return max(1, _tenths(target_size) * _tenths(arg_size))
    if name == "matches":
        return max(1, _tenths(1 + target_size) * math.ceil(arg_size * _REGEX_FACTOR))
    return 1

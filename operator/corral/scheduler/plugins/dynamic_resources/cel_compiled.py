"""CEL selectors compiled to Python closures: cel-python's semantics at a fraction of its cost.

cel-python's interpreter walks its parse tree through lark's visitor for every evaluation
(attribute lookups, a cloned activation per comprehension element, logging wrappers): a
selector as plain as ``device.driver == "x"`` costs it about half a millisecond, so 100,000
devices take most of a minute. :func:`compile_tree` turns a collapsed, bounds-checked parse
tree (:mod:`.cel_limits`) into nested closures that do what the interpreter's methods do,
node for node: the same celpy operator functions and celtypes, the same error values (a
``CELEvalError`` is a value that operators carry, and raised where the interpreter raises it:
out of a ``map`` or ``filter`` transform, and at the end), the same costs charged to the same
:class:`~.cel_limits.Tracker` (so the runtime cost limit and the deadline hold unchanged).

Contract: a tree using anything outside the subset below compiles to ``None`` and the caller
keeps the interpreter. The subset: literals (but bytes), ``device`` and comprehension
variables, field selection and indexing, the relations, arithmetic, ``!`` and unary ``-``,
``&&``, ``||``, ``?:``, list and map literals, function and method calls (the environment's
functions), ``has()``, ``dyn()``, and the ``all``, ``exists``, ``exists_one``, ``map`` and
``filter`` macros. ``tests/unit/scheduler/plugins/dynamic_resources/test_cel_compiled.py``
holds both paths to the same results, errors and costs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from functools import reduce
from typing import Any, Final

from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions, celstr, eval_error
from lark import Token, Tree

from corral.scheduler.plugins.dynamic_resources.cel_limits import (
    _ITERATION,
    Tracker,
    _method_cost,
    _operator_cost,
)

Frame = dict[str, Any]  # the variables in scope
Code = Callable[[Frame, Tracker], Any]
_RELATIONS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_ge": "_>=_",
    "relation_gt": "_>_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "_in_",
}
_ADDITIONS: Final = {"addition_add": "_+_", "addition_sub": "_-_"}
_MULTIPLICATIONS: Final = {
    "multiplication_div": "_/_",
    "multiplication_mul": "_*_",
    "multiplication_mod": "_%_",
}
_AND: Final[Callable[[Any, Any], Any]] = eval_error("no such overload", TypeError)(
    celtypes.logical_and
)
_OR: Final[Callable[[Any, Any], Any]] = eval_error("no such overload", TypeError)(
    celtypes.logical_or
)


_SIZED: Final = (str, bytes, list, dict, tuple)


def _comparison(compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """celpy's ``boolean(compare)``, which it builds anew on every call."""

    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError):
            return a
        if isinstance(b, CELEvalError):
            return b
        result = compare(a, b)
        if result is NotImplemented:
            return result
        return celtypes.BoolType(bool(result))

    return apply


_COMPARISONS: Final = {
    "_<_": _comparison(operator.lt),
    "_<=_": _comparison(operator.le),
    "_>_": _comparison(operator.gt),
    "_>=_": _comparison(operator.ge),
    "_==_": _comparison(operator.eq),
    "_!=_": _comparison(operator.ne),
}


class _UnsupportedError(Exception):
    """A construct this compiler leaves to the interpreter."""


def compile_tree(tree: Tree[Any], functions: Mapping[str, Any]) -> Code | None:
    """The closure evaluating ``tree`` (``frame`` holds ``device``), or ``None``."""
    try:
        return _Compiler({**base_functions, **functions}).node(tree, frozenset())
    except _UnsupportedError:
        return None


def run(code: Code, variables: Frame, tracker: Tracker) -> Any:
    """The value, as the interpreter's ``evaluate`` gives it: an error value is raised."""
    value = code(variables, tracker)
    if isinstance(value, CELEvalError):
        raise value
    return value


def _error(message: str, exc: BaseException) -> CELEvalError:
    value = CELEvalError(message, exc.__class__, exc.args)
    value.__cause__ = exc
    return value


class _Compiler:
    def __init__(self, functions: Mapping[str, Any]) -> None:
        self.functions = functions

    def function(self, name: str) -> Any:
        if name not in self.functions:
            raise _UnsupportedError(name)
        return self.functions[name]

    def node(self, tree: Any, scope: frozenset[str]) -> Code:
        if not isinstance(tree, Tree):
            raise _UnsupportedError(repr(tree))
        method = _RULES.get(str(tree.data))
        if method is None:
            raise _UnsupportedError(tree.data)
        code: Code = method(self, tree, scope)
        return code

    def _pass(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        if len(tree.children) != 1:
            raise _UnsupportedError(tree.data)
        return self.node(tree.children[0], scope)

    _member = _pass

    def _expr(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        if len(tree.children) == 1:
            return self.node(tree.children[0], scope)
        cond, left, right = (self.node(c, scope) for c in tree.children)
        func = self.function("_?_:_")

        def ternary(frame: Frame, t: Tracker) -> Any:
            value = cond(frame, t)
            yes = no = celtypes.BoolType(False)
            try:
                if value:
                    yes = left(frame, t)
                else:
                    no = right(frame, t)
                return func(value, yes, no)
            except TypeError as ex:
                return _error(
                    "found no matching overload for _?_:_ applied to "
                    f"'({type(value)}, {type(yes)}, {type(no)})'",
                    ex,
                )

        return ternary

    def _logical(self, tree: Tree[Any], scope: frozenset[str], name: str) -> Code:
        if len(tree.children) == 1:
            return self.node(tree.children[0], scope)
        left, right = (self.node(c, scope) for c in tree.children)
        func = self.function(name)

        def logical(frame: Frame, t: Tracker) -> Any:
            a, b = left(frame, t), right(frame, t)
            try:
                return func(a, b)
            except TypeError as ex:
                return _error(
                    f"found no matching overload for {name} applied to '({type(a)}, {type(b)})'",
                    ex,
                )

        return logical

    def _conditionalor(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        return self._logical(tree, scope, "_||_")

    def _conditionaland(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        return self._logical(tree, scope, "_&&_")

    def _binary(self, tree: Tree[Any], scope: frozenset[str], names: Mapping[str, str]) -> Code:
        if len(tree.children) == 1:
            return self.node(tree.children[0], scope)
        op_tree, right_tree = tree.children
        if not isinstance(op_tree, Tree) or op_tree.data not in names:
            raise _UnsupportedError(str(op_tree))
        op, shown = str(op_tree.data), repr(op_tree.data)  # messages show the rule as celpy does
        left = self.node(op_tree.children[0], scope)
        right = self.node(right_tree, scope)
        name = names[op]
        func = self.function(name)
        if func is base_functions.get(name) and name in _COMPARISONS:
            func = _COMPARISONS[name]  # the same function, without a wrapper made per call
        dynamic = names is not _MULTIPLICATIONS  # relations and additions cost by size

        def binary(frame: Frame, t: Tracker) -> Any:
            a, b = left(frame, t), right(frame, t)
            try:
                value = func(a, b)
            except TypeError as ex:
                value = _error(
                    f"found no matching overload for {shown} applied to '({type(a)}, {type(b)})'",
                    ex,
                )
            except ZeroDivisionError as ex:
                value = _error("modulus or divide by zero", ex)
            except (ValueError, OverflowError) as ex:
                value = _error("return error for overflow", ex)
            if dynamic and (isinstance(a, _SIZED) or isinstance(b, _SIZED)):
                t.charge(_operator_cost(op, [[a], b]))
            else:
                t.charge(1)  # what _operator_cost gives for values without a size
            return value

        return binary

    def _relation(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        return self._binary(tree, scope, _RELATIONS)

    def _addition(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        return self._binary(tree, scope, _ADDITIONS)

    def _multiplication(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        return self._binary(tree, scope, _MULTIPLICATIONS)

    def _unary(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        if len(tree.children) == 1:
            return self.node(tree.children[0], scope)
        op_tree, operand_tree = tree.children
        name = {"unary_not": "!_", "unary_neg": "-_"}.get(str(getattr(op_tree, "data", "")))
        if name is None:
            raise _UnsupportedError(str(op_tree))
        shown = repr(op_tree.data)
        operand = self.node(operand_tree, scope)
        func = self.function(name)

        def unary(frame: Frame, t: Tracker) -> Any:
            value = operand(frame, t)
            try:
                out = func(value)
            except TypeError as ex:
                out = _error(
                    f"found no matching overload for {shown} applied to '({type(value)})'", ex
                )
            except ValueError as ex:
                out = _error("return error for overflow", ex)
            t.charge(1)
            return out

        return unary

    def _member_dot(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        target_tree, name_token = tree.children
        target = self.node(target_tree, scope)
        name = str(name_token)

        def select(frame: Frame, t: Tracker) -> Any:
            member = target(frame, t)
            if isinstance(member, CELEvalError):
                value: Any = member
            elif isinstance(member, celtypes.MapType):
                try:
                    value = member[name]
                except KeyError:
                    value = CELEvalError(f"no such member in mapping: {name!r}", KeyError, None)
            elif isinstance(member, celtypes.MessageType):
                value = member.get(name)
            else:
                value = CELEvalError(
                    f"{member!r} with type: '{type(member)}' does not support field selection",
                    TypeError,
                    None,
                )
            t.charge(1)
            return value

        return select

    def _member_index(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        target, index = (self.node(c, scope) for c in tree.children)
        func = self.function("_[_]")

        def item(frame: Frame, t: Tracker) -> Any:
            member, key = target(frame, t), index(frame, t)
            try:
                value = func(member, key)
            except TypeError as ex:
                value = _error(
                    "found no matching overload for _[_] applied to "
                    f"'({type(member)}, {type(key)})'",
                    ex,
                )
            except KeyError as ex:
                value = _error("no such key", ex)
            except IndexError as ex:
                value = _error("invalid_argument", ex)
            t.charge(1)
            return value

        return item

    def _member_dot_arg(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        target_tree, name_token = tree.children[:2]
        name = str(name_token)
        args = tree.children[2].children if len(tree.children) > 2 else []
        if name in _ITERATION:
            return self._macro(name, target_tree, args, scope)
        target = self.node(target_tree, scope)
        arg_codes = [self.node(a, scope) for a in args]
        func = self.function(name)

        def method(frame: Frame, t: Tracker) -> Any:
            member = target(frame, t)
            values = [a(frame, t) for a in arg_codes]
            arglist: Any = next((v for v in values if isinstance(v, CELEvalError)), None)
            if arglist is None:
                arglist = celtypes.ListType(values)
            if isinstance(member, CELEvalError):
                out = member
            elif isinstance(arglist, CELEvalError):
                out = arglist
            else:
                try:
                    out = func(member, *arglist)
                except ValueError as ex:
                    out = _error("return error for overflow", ex)
                except (TypeError, AttributeError) as ex:
                    out = _error("no such overload", ex)
            t.charge(_method_cost(name, [member, name_token, arglist]))
            return out

        return method

    def _macro(self, name: str, target_tree: Any, args: list[Any], scope: frozenset[str]) -> Code:
        if len(args) != 2:
            raise _UnsupportedError(name)
        idents = list(args[0].find_data("ident")) if isinstance(args[0], Tree) else []
        if len(idents) != 1:
            raise _UnsupportedError(name)
        var = str(idents[0].children[0])
        target = self.node(target_tree, scope)
        body = self.node(args[1], scope | {var})
        per = _ITERATION[name]

        def element(frame: Frame, t: Tracker, value: Any) -> Any:
            t.iterate(per)
            return body({**frame, var: value}, t)

        def strict(frame: Frame, t: Tracker, value: Any) -> Any:
            out = element(frame, t, value)
            if isinstance(out, CELEvalError):
                raise out  # the interpreter's evaluate() raises a transform's error
            return out

        def comprehension(frame: Frame, t: Tracker) -> Any:
            items = target(frame, t)
            if isinstance(items, CELEvalError):
                return items
            if name == "map":
                return celtypes.ListType([strict(frame, t, v) for v in items])
            if name == "filter":
                return celtypes.ListType([v for v in items if strict(frame, t, v)])
            if name == "exists_one":
                return celtypes.BoolType(sum(1 for v in items if bool(strict(frame, t, v))) == 1)
            oper, start = (_AND, True) if name == "all" else (_OR, False)
            return reduce(oper, (element(frame, t, v) for v in items), celtypes.BoolType(start))

        return comprehension

    def _primary(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        (child,) = tree.children
        kind = getattr(child, "data", "")
        if kind == "literal":
            return self._literal(child)
        if kind == "paren_expr":
            return self.node(child.children[0], scope)
        if kind == "ident":
            return self._ident(str(child.children[0]), scope)
        if kind == "list_lit":
            return self._list(child, scope)
        if kind == "map_lit":
            return self._map(child, scope)
        if kind == "ident_arg":
            return self._call(child, scope)
        raise _UnsupportedError(kind)

    def _literal(self, tree: Tree[Any]) -> Code:
        token = tree.children[0]
        if not isinstance(token, Token):
            raise _UnsupportedError("literal")
        value: Any
        try:
            if token.type == "FLOAT_LIT":
                value = celtypes.DoubleType(token.value)
            elif token.type == "INT_LIT":
                value = celtypes.IntType(token.value)
            elif token.type == "UINT_LIT" and token.value[-1:].lower() == "u":
                value = celtypes.UintType(token.value[:-1])
            elif token.type in ("MLSTRING_LIT", "STRING_LIT"):
                value = celstr(token)
            elif token.type == "BOOL_LIT":
                value = celtypes.BoolType(token.value.lower() == "true")
            elif token.type == "NULL_LIT":
                value = None
            else:
                raise _UnsupportedError(token.type)
        except ValueError as ex:
            value = CELEvalError(ex.args[0], ex.__class__, ex.args)
        return lambda _frame, _t: value

    def _ident(self, name: str, scope: frozenset[str]) -> Code:
        if name not in scope and name != "device":
            raise _UnsupportedError(name)  # type names, packages: the interpreter's business

        def ident(frame: Frame, t: Tracker) -> Any:
            t.charge(1)
            return frame[name]

        return ident

    def _values(self, tree: Tree[Any], scope: frozenset[str]) -> list[Code]:
        if not tree.children:
            return []
        (items,) = tree.children
        return [self.node(c, scope) for c in items.children]

    def _list(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        items = self._values(tree, scope)

        def make_list(frame: Frame, t: Tracker) -> Any:
            values = [i(frame, t) for i in items]
            t.charge(10)
            error = next((v for v in values if isinstance(v, CELEvalError)), None)
            return error if error is not None else celtypes.ListType(values)

        return make_list

    def _map(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        items = self._values(tree, scope)

        def make_map(frame: Frame, t: Tracker) -> Any:
            values = [i(frame, t) for i in items]
            t.charge(30)
            out = celtypes.MapType()
            try:
                for key, value in zip(values[0::2], values[1::2], strict=True):
                    if key in out:
                        raise ValueError(f"Duplicate key {key!r}")
                    out[key] = value
            except (ValueError, TypeError) as ex:
                return CELEvalError(ex.args[0], ex.__class__, ex.args)
            return out

        return make_map

    def _call(self, tree: Tree[Any], scope: frozenset[str]) -> Code:
        name = str(tree.children[0])
        args = tree.children[1].children if len(tree.children) > 1 else []
        codes = [self.node(a, scope) for a in args]
        if name == "has":
            if len(codes) != 1:
                raise _UnsupportedError("has")
            (probe,) = codes
            return lambda frame, t: celtypes.BoolType(not isinstance(probe(frame, t), CELEvalError))
        if name == "dyn":
            if len(codes) != 1:
                raise _UnsupportedError("dyn")
            return codes[0]
        func = self.function(name)

        def call(frame: Frame, t: Tracker) -> Any:
            values = [c(frame, t) for c in codes]
            t.charge(1)
            for value in values:
                if isinstance(value, CELEvalError):
                    return value
            try:
                return func(*values)
            except ValueError as ex:
                return _error("return error for overflow", ex)
            except (TypeError, AttributeError) as ex:
                return _error("no such overload", ex)

        return call


# The grammar's rules this compiler takes (cel-python's rule names), each to its method.
_RULES: Final[dict[str, Callable[[_Compiler, Tree[Any], frozenset[str]], Code]]] = {
    "expr": _Compiler._expr,
    "conditionalor": _Compiler._conditionalor,
    "conditionaland": _Compiler._conditionaland,
    "relation": _Compiler._relation,
    "addition": _Compiler._addition,
    "multiplication": _Compiler._multiplication,
    "unary": _Compiler._unary,
    "member": _Compiler._member,
    "member_dot": _Compiler._member_dot,
    "member_index": _Compiler._member_index,
    "member_dot_arg": _Compiler._member_dot_arg,
    "primary": _Compiler._primary,
}

"""Node selectors (``nodeSelector``, node affinity terms): parsing, per-node and batch matching.

Semantics follow upstream component-helpers ``nodeaffinity``: terms are ORed; a term with no
expressions and no fields is dropped; a term that fails to parse never matches (lazy errors);
within a term ``matchExpressions`` and ``matchFields`` are ANDed. ``NotIn`` and
``DoesNotExist`` match a node without the label; ``Gt``/``Lt`` need the label and both sides to
parse as int64. ``matchFields`` supports ``metadata.name`` with ``In``/``NotIn`` and one value.

The batch form evaluates a requirement once per distinct label value (a lookup table over the
key's value vocabulary) and gathers it over the snapshot's label column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import api_types as api

if TYPE_CHECKING:
    from corral.scheduler.framework.snapshot import Snapshot

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
GT: Final = "Gt"
LT: Final = "Lt"
OBJECT_NAME_FIELD: Final = "metadata.name"

_INT64 = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

Mask = npt.NDArray[np.bool_]


def parse_int64(value: str) -> int | None:
    """Go's ``strconv.ParseInt(value, 10, 64)``: sign and decimal digits only, in range."""
    if not _INT64.match(value):
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Term:
    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()
    error: str | None = None  # a parse error: the term never matches


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """ORed terms, empty terms already dropped (no terms: matches nothing).

    ``empty_terms`` counts the dropped ones: NodeAffinity's PreFilter reads the terms as
    written, and an empty term there means "no node-name restriction".
    """

    terms: tuple[Term, ...]
    empty_terms: int = 0


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    term: Term


@dataclass(frozen=True, slots=True)
class PreferredTerms:
    """Weighted terms (weight 0 and empty terms dropped); ``error`` lists parse errors."""

    terms: tuple[PreferredTerm, ...]
    error: str | None = None


# --- parsing ------------------------------------------------------------------------------------


def _requirement_error(req: Requirement) -> str | None:
    if req.operator in (IN, NOT_IN):
        return None if req.values else f"{req.key}: values set can't be empty for {req.operator}"
    if req.operator in (EXISTS, DOES_NOT_EXIST):
        return None if not req.values else f"{req.key}: values set must be empty for exists"
    if req.operator in (GT, LT):
        if len(req.values) != 1 or parse_int64(req.values[0]) is None:
            return f"{req.key}: for 'Gt', 'Lt' operators, exactly one integer value is required"
        return None
    return f"{req.operator!r} is not a valid label selector operator"


def _field_error(req: Requirement) -> str | None:
    if req.key != OBJECT_NAME_FIELD:
        return f"{req.key!r} is not a valid field selector key"
    if req.operator not in (IN, NOT_IN):
        return f"{req.operator!r} is not a valid field selector operator"
    if len(req.values) != 1:
        return "must have one element"
    return None


def _requirements(raw: Sequence[api.NodeSelectorRequirement] | None) -> tuple[Requirement, ...]:
    return tuple(
        Requirement(
            key=r.get("key") or "",
            operator=r.get("operator") or "",
            values=tuple(r.get("values") or ()),
        )
        for r in raw or ()
    )


def parse_term(raw: api.NodeSelectorTerm) -> Term | None:
    """A term, or ``None`` for an empty term (no expressions, no fields)."""
    expressions = _requirements(raw.get("matchExpressions"))
    fields = _requirements(raw.get("matchFields"))
    if not expressions and not fields:
        return None
    errors = [e for e in map(_requirement_error, expressions) if e]
    errors += [e for e in map(_field_error, fields) if e]
    return Term(expressions, fields, "; ".join(errors) or None)


def parse_node_selector(raw: api.NodeSelector) -> NodeSelector:
    terms = [parse_term(t) for t in raw.get("nodeSelectorTerms") or ()]
    kept = tuple(t for t in terms if t is not None)
    return NodeSelector(kept, empty_terms=len(terms) - len(kept))


def parse_preferred(raw: Sequence[api.PreferredSchedulingTerm]) -> PreferredTerms:
    terms: list[PreferredTerm] = []
    errors: list[str] = []
    for item in raw:
        weight = int(item.get("weight") or 0)
        term = parse_term(item.get("preference") or {})
        if weight == 0 or term is None:
            continue
        if term.error:
            errors.append(term.error)
        else:
            terms.append(PreferredTerm(weight, term))
    return PreferredTerms(tuple(terms), "; ".join(errors) or None)


# --- per-node matching --------------------------------------------------------------------------


def requirement_matches(req: Requirement, labels: Mapping[str, str]) -> bool:
    value = labels.get(req.key)
    op = req.operator
    if op == IN:
        return value is not None and value in req.values
    if op == NOT_IN:
        return value is None or value not in req.values
    if op == EXISTS:
        return value is not None
    if op == DOES_NOT_EXIST:
        return value is None
    if value is None or len(req.values) != 1:
        return False
    have, want = parse_int64(value), parse_int64(req.values[0])
    if have is None or want is None:
        return False
    return have > want if op == GT else op == LT and have < want


def _field_matches(req: Requirement, node_name: str) -> bool:
    return (node_name == req.values[0]) == (req.operator == IN)


def term_matches(term: Term, labels: Mapping[str, str], node_name: str) -> bool:
    if term.error:
        return False
    return all(requirement_matches(r, labels) for r in term.expressions) and all(
        _field_matches(r, node_name) for r in term.fields
    )


def selector_matches(selector: NodeSelector, labels: Mapping[str, str], node_name: str) -> bool:
    return any(term_matches(t, labels, node_name) for t in selector.terms)


def map_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """``nodeSelector``: every pair must be present."""
    return all(labels.get(k) == v for k, v in selector.items())


def preferred_score(terms: PreferredTerms, labels: Mapping[str, str], node_name: str) -> int:
    return sum(p.weight for p in terms.terms if term_matches(p.term, labels, node_name))


# --- batch matching over a snapshot's columns ---------------------------------------------------


def requirement_mask(req: Requirement, snap: Snapshot) -> Mask:
    column = snap.label(req.key)
    op = req.operator
    if column is None:  # no node has the key
        absent_true = op in (NOT_IN, DOES_NOT_EXIST)
        return np.full(snap.capacity, absent_true, dtype=np.bool_)
    vocab = snap.label_vocab[req.key]
    if op == EXISTS:
        return column >= 0
    if op == DOES_NOT_EXIST:
        return column < 0
    if op in (IN, NOT_IN):
        table = np.zeros(len(vocab) + 1, dtype=np.bool_)  # last entry: the absent label (-1)
        for value in req.values:
            vid = vocab.ids.get(value)
            if vid is not None:
                table[vid] = True
        if op == NOT_IN:
            table = ~table
        return table[column]
    want = parse_int64(req.values[0]) if len(req.values) == 1 else None
    if want is None or op not in (GT, LT):
        return np.zeros(snap.capacity, dtype=np.bool_)
    ints, valid = vocab.int_table()
    table = valid & (ints > want if op == GT else ints < want)
    return table[column]


def term_mask(term: Term, snap: Snapshot) -> Mask:
    mask = np.full(snap.capacity, term.error is None, dtype=np.bool_)
    if term.error:
        return mask
    for req in term.expressions:
        mask &= requirement_mask(req, snap)
    for req in term.fields:
        hit = np.zeros(snap.capacity, dtype=np.bool_)
        slot = snap.slot_of.get(req.values[0])
        if slot is not None:
            hit[slot] = True
        mask &= hit if req.operator == IN else ~hit
    return mask


def selector_mask(selector: NodeSelector, snap: Snapshot) -> Mask:
    mask = np.zeros(snap.capacity, dtype=np.bool_)
    for term in selector.terms:
        mask |= term_mask(term, snap)
    return mask


def map_mask(selector: Mapping[str, str], snap: Snapshot) -> Mask:
    mask = np.ones(snap.capacity, dtype=np.bool_)
    for key, value in selector.items():
        mask &= requirement_mask(Requirement(key, IN, (value,)), snap)
    return mask


def preferred_scores(terms: PreferredTerms, snap: Snapshot) -> npt.NDArray[np.int64]:
    scores = np.zeros(snap.capacity, dtype=np.int64)
    for p in terms.terms:
        scores += term_mask(p.term, snap) * np.int64(p.weight)
    return scores

"""The paper's numbers as data: one TOML file per table (plus the text quotes and the
theoretical statements) in ``paper_checks/data``, loaded read-only.

Checks, figures and reports all read the paper from here, never from retyped literals.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vistalab.theory import DomainError, UnknownNameError

from vistalab._core._limits import toml_loads

__all__ = [
    "DATA_DIR",
    "PaperTable",
    "Quote",
    "Statement",
    "load_table",
    "table_keys",
    "load_quotes",
    "load_quote",
    "load_statements",
    "load_statement",
]

#: Folder holding the shipped data files (one ``<key>.toml`` per table).
DATA_DIR = Path(__file__).resolve().parent / "data"

# Files in DATA_DIR that are not tables.
_QUOTES_FILE = "text_quotes.toml"
_STATEMENTS_FILE = "theory_statements.toml"
_NOT_TABLES = {_QUOTES_FILE, _STATEMENTS_FILE}


def _freeze(value: Any) -> Any:
    """Deep read-only copy: dicts become mappingproxies, lists tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class PaperTable:
    """One table of the paper, as printed.

    Attributes
    ----------
    key : str
        Loader key, e.g. ``"main_results"`` (the file name without ``.toml``).
    label : str
        The LaTeX label, e.g. ``"tab:main-results"``.
    number : int or None
        Table number in the paper's order of appearance (None for text-derived tables).
    title : str
        Short title (the caption's bold part).
    where : str
        Section and table where it is printed.
    line : int
        Line of ``\\label{...}`` in ``paper.tex``.
    caption : str
        Caption text (abridged).
    notes : str
        Units, rounding and conventions of the transcription.
    columns : Mapping[str, str]
        Column key -> description with units, in the paper's column order.
    rows : tuple of Mapping
        One read-only mapping per printed row; a cell printed as ``--`` is absent.
    extra : Mapping
        Other top-level sections of the file (e.g. ``prices`` of the cost table).
    """

    key: str
    label: str
    number: int | None
    title: str
    where: str
    line: int
    caption: str
    notes: str
    columns: Mapping[str, str]
    rows: tuple[Mapping[str, Any], ...]
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> tuple[Any, ...]:
        """Values of column ``name``, one per row (None where the paper prints ``--``).

        Parameters
        ----------
        name : str
            A column key of :attr:`columns`.

        Returns
        -------
        tuple
            The cells, in row order.

        Raises
        ------
        UnknownNameError
            If the table has no such column.
        """
        if name not in self.columns:
            raise UnknownNameError(f"column of table {self.key!r}", name, self.columns)
        return tuple(r.get(name) for r in self.rows)

    def row(self, **match: Any) -> Mapping[str, Any]:
        """The unique row whose cells equal ``match``, e.g. ``row(method_id="vista")``.

        Parameters
        ----------
        **match
            Column key -> the cell value to select.

        Returns
        -------
        Mapping
            The row.

        Raises
        ------
        DomainError
            If ``match`` selects no row or several.
        UnknownNameError
            If a key is not a column.
        """
        found = self.select(**match)
        if len(found) != 1:
            raise DomainError(
                "match",
                match,
                f"must select exactly one row of table {self.key!r} (selected {len(found)})",
                "add more keys to the match",
            )
        return found[0]

    def select(self, **match: Any) -> tuple[Mapping[str, Any], ...]:
        """All rows whose cells equal ``match``.

        Parameters
        ----------
        **match
            Column key -> the cell value to select.

        Returns
        -------
        tuple of Mapping
            The rows, in table order (empty when none matches).

        Raises
        ------
        UnknownNameError
            If a key is not a column.
        """
        for k in match:
            if k not in self.columns:
                raise UnknownNameError(f"column of table {self.key!r}", k, self.columns)
        return tuple(r for r in self.rows if all(r.get(k) == v for k, v in match.items()))

    def decimals(self, name: str) -> int:
        """Decimal places column ``name`` is printed with (the rounding tolerance of every
        check is half a unit in that place).

        Parameters
        ----------
        name : str
            A numeric column key.

        Returns
        -------
        int
            The number of decimal places.

        Raises
        ------
        UnknownNameError
            If the table records no decimals for that column.
        """
        table = self.extra.get("decimals", {})
        if name not in table:
            raise UnknownNameError(f"numeric column of table {self.key!r}", name, table)
        return int(table[name])

    def to_records(self) -> list[dict[str, Any]]:
        """Rows as plain mutable dicts (for pandas, CSV or JSON).

        Returns
        -------
        list of dict
            One dict per row, copies of the frozen rows.
        """
        return [_thaw(r) for r in self.rows]


@dataclass(frozen=True)
class Quote:
    """A sentence of the paper's text with the numbers it states.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"intro-loca-counts"``.
    where : str
        Section / paragraph.
    line : int
        Line in ``paper.tex``.
    text : str
        The sentence (abridged with '...', every number kept).
    values : Mapping[str, Any]
        The numbers as printed.
    extra : Mapping[str, Any]
        Further structured content (e.g. ``blocks`` of the dashboard instance).
    """

    id: str
    where: str
    line: int
    text: str
    values: Mapping[str, Any]
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __getitem__(self, name: str) -> Any:
        if name not in self.values:
            raise UnknownNameError(f"value of quote {self.id!r}", name, self.values)
        return self.values[name]


@dataclass(frozen=True)
class Statement:
    """A theoretical statement of the paper written as formulas (sympy syntax).

    Attributes
    ----------
    id, where, line, text
        As for :class:`Quote`.
    formulas : Mapping[str, str]
        Named formula strings (``formula``, ``lhs``/``rhs``, ``k_formula`` ...).
    symbols : tuple of str
        Free symbols the formulas may use.
    """

    id: str
    where: str
    line: int
    text: str
    formulas: Mapping[str, str]
    symbols: tuple[str, ...]

    def formula(self, name: str = "formula") -> str:
        """One of the statement's named formula strings.

        Parameters
        ----------
        name : str
            The formula's name (``"formula"``, ``"lhs"``, ``"rhs"``, ``"k_formula"``...).

        Returns
        -------
        str
            The formula, in the symbols of :attr:`symbols`.

        Raises
        ------
        UnknownNameError
            If the statement has no formula of that name.
        """
        if name not in self.formulas:
            raise UnknownNameError(f"formula of statement {self.id!r}", name, self.formulas)
        return self.formulas[name]


def _data_dir_iv(data_dir: str | Path | None) -> Path:
    if data_dir is not None and (not isinstance(data_dir, (str, Path)) or not str(data_dir)
                                 or "\0" in str(data_dir)):
        raise DomainError("data_dir", data_dir, "must be a folder path",
                          "omit it to use the shipped data")
    path = DATA_DIR if data_dir is None else Path(data_dir)
    if not path.is_dir():
        raise DomainError(
            "data_dir", str(path), "must be an existing folder of paper data files",
            "omit it to use the shipped data",
        )
    return path


def _read(path: Path) -> dict[str, Any]:
    from vistalab._core._paths import input_file

    input_file("data file", path)  # a FIFO named *.toml is refused, not opened (no hang)
    try:
        with path.open("rb") as fh:
            return toml_loads(fh.read().decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DomainError("data file", str(path), f"must be valid TOML ({exc})") from exc


def table_keys(*, data_dir: str | Path | None = None) -> tuple[str, ...]:
    """Keys accepted by :func:`load_table`, sorted.

    Parameters
    ----------
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    tuple of str"""
    path = _data_dir_iv(data_dir)
    return tuple(sorted(p.stem for p in path.glob("*.toml") if p.name not in _NOT_TABLES))


def load_table(key: str, *, data_dir: str | Path | None = None) -> PaperTable:
    """Load one of the paper's tables.

    Parameters
    ----------
    key : str
        One of :func:`table_keys`: ``main_results`` (Table 1), ``cache_cost`` (2), ``id_ood``
        (3), ``ama_full`` (4), ``proprioception`` (5), ``capability_matrix`` (6),
        ``loca_dense`` (7), ``outcome_transitions`` (8), ``loca_pressure`` (9),
        ``ama_domain`` (10), ``case_studies`` (11), ``ablation`` (numbers of Section 3.7's
        text / Figure 5b).
    data_dir : path, optional
        Folder to read instead of the shipped data (tests use a perturbed copy).

    Returns
    -------
    PaperTable
    """
    keys = table_keys(data_dir=data_dir)
    if not isinstance(key, str) or key not in keys:
        raise UnknownNameError("paper table", key, keys)
    raw = _read(_data_dir_iv(data_dir) / f"{key}.toml")
    known = {"key", "label", "number", "title", "where", "line", "caption", "notes",
             "columns", "rows"}
    columns = raw.get("columns", {})
    rows = raw.get("rows", [])
    for i, r in enumerate(rows):
        unknown = set(r) - set(columns)
        if unknown:
            raise DomainError(
                f"rows[{i}] of {key}.toml", sorted(unknown),
                "must only use keys declared in [columns]", "declare the column or fix the key",
            )
    return PaperTable(
        key=raw.get("key", key),
        label=raw.get("label", ""),
        number=raw.get("number"),
        title=raw.get("title", ""),
        where=raw.get("where", ""),
        line=int(raw.get("line", 0)),
        caption=raw.get("caption", ""),
        notes=raw.get("notes", ""),
        columns=_freeze(columns),
        rows=_freeze(rows),
        extra=_freeze({k: v for k, v in raw.items() if k not in known}),
    )


def load_quotes(*, data_dir: str | Path | None = None) -> Mapping[str, Quote]:
    """All quoted sentences of the text, by id.

    Parameters
    ----------
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    mapping of str to Quote"""
    raw = _read(_data_dir_iv(data_dir) / _QUOTES_FILE)
    out: dict[str, Quote] = {}
    base = {"id", "where", "line", "text", "values"}
    for q in raw.get("quotes", []):
        out[q["id"]] = Quote(
            id=q["id"], where=q.get("where", ""), line=int(q.get("line", 0)),
            text=q.get("text", ""), values=_freeze(q.get("values", {})),
            extra=_freeze({k: v for k, v in q.items() if k not in base}),
        )
    return MappingProxyType(out)


def load_quote(quote_id: str, *, data_dir: str | Path | None = None) -> Quote:
    """One quoted sentence by id (see :func:`load_quotes`).

    Parameters
    ----------
    quote_id : str
        Its id.
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    Quote

    Raises
    ------
    UnknownNameError
        If no entry has that id (with the closest ids)."""
    quotes = load_quotes(data_dir=data_dir)
    if not isinstance(quote_id, str) or quote_id not in quotes:
        raise UnknownNameError("text quote", quote_id, quotes)
    return quotes[quote_id]


def load_statements(*, data_dir: str | Path | None = None) -> Mapping[str, Statement]:
    """All theoretical statements (formulas), by id.

    Parameters
    ----------
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    mapping of str to Statement"""
    raw = _read(_data_dir_iv(data_dir) / _STATEMENTS_FILE)
    out: dict[str, Statement] = {}
    base = {"id", "where", "line", "text", "symbols"}
    for s in raw.get("statements", []):
        out[s["id"]] = Statement(
            id=s["id"], where=s.get("where", ""), line=int(s.get("line", 0)),
            text=s.get("text", ""),
            formulas=MappingProxyType({k: str(v) for k, v in s.items() if k not in base}),
            symbols=tuple(s.get("symbols", ())),
        )
    return MappingProxyType(out)


def load_statement(statement_id: str, *, data_dir: str | Path | None = None) -> Statement:
    """One theoretical statement by id (see :func:`load_statements`).

    Parameters
    ----------
    statement_id : str
        Its id.
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    Statement

    Raises
    ------
    UnknownNameError
        If no entry has that id (with the closest ids)."""
    statements = load_statements(data_dir=data_dir)
    if not isinstance(statement_id, str) or statement_id not in statements:
        raise UnknownNameError("theory statement", statement_id, statements)
    return statements[statement_id]

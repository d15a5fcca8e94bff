"""The types of results.csv's cells and a column's declaration (results.py declares the
columns): how each kind of value is checked, written as text and read back, and shown."""

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CpuList:
    """The CPU ids a process could run on; ids None: every CPU ("all" in results.csv)."""

    ids: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.ids is not None:
            if not self.ids or not all(isinstance(c, int) and c >= 0 for c in self.ids):
                raise ValueError(f"CPU ids must be integers >= 0, got {self.ids!r}")
            object.__setattr__(self, "ids", tuple(sorted(set(self.ids))))

    @classmethod
    def parse(cls, text: str) -> "CpuList":
        """ "all" or comma-separated CPU ids ("0,1") as results.csv holds them."""
        text = text.strip()
        if text == "all":
            return cls(None)
        try:
            return cls(tuple(int(part) for part in text.split(",")))
        except ValueError:
            raise ValueError(f"{text!r} is not 'all' or CPU ids like '0,1'") from None

    @property
    def pinned(self) -> bool:
        return self.ids is not None

    def __str__(self) -> str:
        return "all" if self.ids is None else ",".join(map(str, self.ids))


def _missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


@dataclass(frozen=True)
class ColumnType:
    """How one kind of value is checked, written as text and read back."""

    name: str
    dtype: str  # pandas dtype of the column read back
    nullable_dtype: str  # ... when it may be empty

    def value(self, v):
        """v (typed, or text as results.csv holds it) as this type's Python value; None when
        missing. ValueError when it is not one."""
        if isinstance(v, str):  # as results.csv holds it
            v = v.strip()
            if v == "" or v.lower() == "nan":
                return None
            return self._parse(v)
        if _missing(v):
            return None
        return self._check(v)

    def text(self, v) -> str:
        return "" if v is None else str(v)

    def _parse(self, text: str):
        raise NotImplementedError

    def _check(self, v):
        raise NotImplementedError


class _Str(ColumnType):
    def value(self, v):
        if _missing(v):
            return ""
        if not isinstance(v, str):
            raise ValueError(f"{v!r} is not text")
        return v


class _Int(ColumnType):
    def _parse(self, text):
        number = float(text)  # "8.0", as pandas writes an int column that had a gap
        if not number.is_integer():
            raise ValueError(f"{text!r} is not a whole number")
        return int(number)

    def _check(self, v):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            if isinstance(v, float) and v.is_integer():
                return int(v)
            raise ValueError(f"{v!r} is not an integer")
        return int(v)


class _Float(ColumnType):
    def _parse(self, text):
        return float(text)

    def _check(self, v):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"{v!r} is not a number")
        return float(v)

    def value(self, v):
        out = super().value(v)
        return math.nan if out is None else out

    def text(self, v) -> str:
        return "" if math.isnan(v) else repr(v)


class _Bool(ColumnType):
    WORDS = {"true": True, "false": False, "1": True, "0": False}

    def _parse(self, text):
        if text.lower() not in self.WORDS:
            raise ValueError(f"{text!r} is not True or False")
        return self.WORDS[text.lower()]

    def _check(self, v):
        if not isinstance(v, bool | np.bool_):
            raise ValueError(f"{v!r} is not True or False")
        return bool(v)


class _Cpus(ColumnType):
    def _parse(self, text):
        return CpuList.parse(text)

    def _check(self, v):
        if isinstance(v, CpuList):
            return v
        if isinstance(v, list | tuple):
            return CpuList(tuple(v))
        raise ValueError(f"{v!r} is not a CPU list")


STR = _Str("str", "object", "object")
INT = _Int("int", "int64", "Int64")
FLOAT = _Float("float", "float64", "float64")
BOOL = _Bool("bool", "bool", "boolean")
CPUS = _Cpus("CPU list", "object", "object")


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    unit: str  # "" for none
    meaning: str  # one sentence
    format: str = ""  # a format spec for display, e.g. ",.0f"; "" as str()
    nullable: bool = False  # may be empty (floats may always be NaN)

    def show(self, value) -> str:
        """A value as a table or sentence shows it ("" when missing)."""
        value = self.type.value(value)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        return format(value, self.format) if self.format else str(value)

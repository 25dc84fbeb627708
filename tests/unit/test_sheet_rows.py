"""A spreadsheet's rows made into lines a chunk at a time, by the C module's
``sheet_lines`` and by its Python twin (``map`` over whole chunks of rows), give what
the rule gives row by row: cells joined, numbers as typed, every run of whitespace
one space, empty rows left out."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from typing import Any

import pytest

from services.common.runtime.native_code import native
from services.extractor.sheet_text import _ROWS_AT_ONCE, _rows_text, _sheet_text, rows_text

RowsText = Callable[[list[list[Any]]], str]


@pytest.fixture(params=["python", "c"])
def lines_of(request: pytest.FixtureRequest) -> RowsText:
    """Each way of making a chunk of rows into lines."""
    if request.param == "python":
        return _rows_text
    # scripts/install.sh installs a C compiler; without the module, the "c" cases
    # would compare Python with itself.
    assert native is not None, "services/common/_native.c was not built: pip install -e . with gcc present"
    return native.sheet_lines


def test_the_reader_takes_the_c_module_where_it_was_built() -> None:
    assert native is not None and rows_text is native.sheet_lines


def _rule(rows: list[list[Any]]) -> str:
    """The rule, one row and one cell at a time."""

    def cell(value: Any) -> str:
        if value is None:  # an empty cell, as some readers give it
            return ""
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            return str(int(value))
        return value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)

    lines = (" ".join(" ".join(cell(c) for c in row).split()) for row in rows)
    return "\n".join(line for line in lines if line)


ROWS: list[list[Any]] = [
    ["姓名", "", "学院"],  # an empty cell between two full ones
    ["张三", "", ""],  # empty cells at the end
    ["", "", ""],  # an empty row
    ["", "  ", "李四"],  # a cell of spaces, then text
    ["数学\n学院", "物理\t学院", "化学\u3000学院"],  # a line break, a tab, an ideographic space
    ["  前后有空格  ", "中间  两个", "a\xa0b"],
    [1482, "", 2.5],  # numbers as calamine gives them: int, float
    [6.0, -0.0, float("nan")],  # integral floats written as integers
    [True, datetime.datetime(2026, 1, 19, 0, 15), datetime.date(2026, 9, 1)],
    ["控制\x01字符", "零宽\u200b空格", ""],  # not whitespace: kept
    ["\x1c\x1d", "分隔符", "\x85"],  # whitespace to str.split, though control characters
]


@pytest.mark.parametrize("start", range(len(ROWS)))
def test_rows_give_what_the_rule_gives(start: int, lines_of: RowsText) -> None:
    rows = ROWS[start:] + ROWS[:start]
    assert lines_of(rows) == _rule(rows)
    assert lines_of([r for r in rows if all(isinstance(c, str) for c in r)]) == _rule(
        [r for r in rows if all(isinstance(c, str) for c in r)]
    )


def test_clean_rows_take_the_quick_path_and_give_the_same(lines_of: RowsText) -> None:
    rows = [["第 1 章 GNU/Linux 教程", "", ""], ["我认为学习一个计算机系统。", "虽然教程是有帮助的。", ""]] * 3
    assert (
        lines_of(rows)
        == _rule(rows)
        == "\n".join(["第 1 章 GNU/Linux 教程", "我认为学习一个计算机系统。 虽然教程是有帮助的。"] * 3)
    )


def test_a_sheet_is_read_in_chunks_until_the_character_cap_is_passed() -> None:
    rows = [[f"第{i}行", "", i] for i in range(3 * _ROWS_AT_ONCE + 5)]
    text, error = _sheet_text(iter(rows), 10**9)
    assert error is None and text == _rule(rows)
    taken = iter(rows)
    text, _ = _sheet_text(taken, 10)  # one chunk is enough to pass 10 characters
    assert text == _rule(rows[:_ROWS_AT_ONCE]) and len(list(taken)) == len(rows) - _ROWS_AT_ONCE


def test_the_rows_before_an_error_are_kept_with_the_error() -> None:
    def failing() -> Any:
        yield ["甲", 1]
        yield ["乙", ""]
        raise ValueError("a damaged row")

    text, error = _sheet_text(failing(), 10**9)
    assert text == "甲 1\n乙" and isinstance(error, ValueError)


def test_a_list_with_numbers_in_whole_columns_gives_what_the_rule_gives(lines_of: RowsText) -> None:
    rows: list[list[Any]] = [["序号", "姓名", "成绩", "日期"]]
    rows += [[float(i), f"学生{i}", 60 + i / 4, datetime.date(2026, 7, 1 + i % 28)] for i in range(1, 600)]
    rows[300][1] = 12345  # a number in a column of text, far from the first number
    rows[400][2] = "缺考"  # text in a column of numbers
    assert lines_of(rows) == _rule(rows)
    ints = [["序号", "字数"]] + [[i, i * 3] for i in range(1, 300)]
    assert lines_of(ints) == _rule(ints)


@pytest.mark.parametrize(
    "rows",
    [
        [],  # no rows
        [[], [""], [None, "  "]],  # rows with nothing in them
        [["\U0001f600 表情", "\x00", "é"]],  # a character beyond the BMP, NUL, Latin-1
        [("元组", 3.0), ["列表", float("inf"), float("-inf")]],  # a row as a tuple; infinities
        [["a"] * 3000],  # one line longer than the first buffer the C module takes
        [[1e300, -1e300, 5e-324, 2.0**53 + 2]],  # floats whose integer is long
    ],
)
def test_edge_rows_give_what_the_rule_gives(rows: list[list[Any]], lines_of: RowsText) -> None:
    assert lines_of(rows) == _rule(rows)


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")


def test_a_cell_whose_text_fails_raises_its_error(lines_of: RowsText) -> None:
    with pytest.raises(ValueError, match="no text"):
        lines_of([["甲", _Unprintable()]])

"""A synthetic development set of government-style tables: PDF pages, each
with one or two tables drawn at random (seeded) from the genres statistical
reports and government publications set, and each table's ground truth.

Usage: synth_tables.py OUT_DIR [--seed N] [--per-genre N]

For every page it writes, in OUT_DIR:
  GENRE-NN.pdf        the page (reportlab, the PDF standard fonts)
  GENRE-NN-str.xml    the tables' cells in the ICDAR 2013 structure format
                      (start-row, start-col, end-row, end-col, content), so
                      that ../shared/pdf-tables/score_tables.py scores this
                      set exactly as it scores ICDAR (same TEDS, same pairing)
  GENRE-NN.html       the same tables as HTML (rowspan/colspan), to read
and genres.json: each page's genre and what was drawn at random for it.

Unlike ICDAR's files, an empty cell of the grid is written as a cell with
no text (ICDAR leaves it out), so the truth is always a full grid.

Why synthetic: the ICDAR set is held out and pdf-bench has few tables of
this kind; rules are tuned here, on tables nobody picked, and checked on
the other two. Each genre is one trait of such tables (see GENRES); the
rest (face, size, gaps, leading, rules, captions) is drawn at random for
every page, so a rule that only fits one setting shows as a low genre."""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

PAGE_W, PAGE_H = letter
MARGIN = 72.0

GENRES = {
    "unruled": "no rules at all: columns set apart by white space",
    "booktabs": "three rules only: above and under the header, under the last row",
    "grid": "a full grid: every cell boxed",
    "spanning": "two header rows, group heads spanning columns (a short rule under each)",
    "stub": "indented row labels under section rows, subtotal and total rows",
    "leaders": "dot leaders from the row labels to the first column of numbers",
    "numbers": "decimal-aligned numbers, currency, negatives in parentheses, footnote markers",
    "wrapped": "row labels and column heads wrapped over two or three lines",
    "sparse": "many empty cells, and dashes or (NA) in some",
    "notes": "paragraphs above, caption, the table, notes and a source under it, text again",
    "two-tables": "two tables on one page, each with its caption",
    "two-column": "a table in one column of a two-column page, body text beside it",
    "combined": "three or four of the traits above in one table, as real statistical tables combine them",
}
# The traits a table of `simple_table` can have, one per genre of that name.
TRAITS = ("spanning", "leaders", "numbers", "wrapped", "sparse")

FACES = [
    ("Helvetica", "Helvetica-Bold"),
    ("Times-Roman", "Times-Bold"),
    ("Courier", "Courier-Bold"),
]

PLACES = [
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Michigan", "Minnesota",
    "Montana", "Nebraska", "Nevada", "New Jersey", "New Mexico", "New York", "Ohio",
    "Oregon", "Texas", "Utah", "Vermont", "Virginia", "Washington", "Wyoming",
]
INDUSTRIES = [
    "Agriculture", "Mining", "Utilities", "Construction", "Manufacturing", "Wholesale trade",
    "Retail trade", "Transportation", "Information", "Finance and insurance", "Real estate",
    "Educational services", "Health care", "Accommodation", "Public administration",
]
AGENCIES = [
    "Department of Agriculture", "Department of Commerce", "Department of Defense",
    "Department of Education", "Department of Energy", "Health and Human Services",
    "Homeland Security", "Housing and Urban Development", "Department of the Interior",
    "Department of Justice", "Department of Labor", "Department of State",
    "Department of Transportation", "Department of the Treasury", "Veterans Affairs",
    "Environmental Protection Agency", "Small Business Administration",
]
MEASURES = [
    "Total", "Number", "Percent", "Rate", "Median", "Mean", "Persons", "Households",
    "Employed", "Unemployed", "Income", "Outlays", "Receipts", "Acres", "Farms", "Change",
    "Share", "Index", "Cases", "Deaths", "Enrolled", "Graduates", "Loans", "Grants",
]
GROUPS = ["Male", "Female", "Urban", "Rural", "Public", "Private", "White", "Black",
          "Hispanic", "Other", "Full-time", "Part-time"]
SECTIONS = ["Age", "Sex", "Race", "Region", "Education", "Tenure", "Income"]
SUBLABELS = {
    "Age": ["Under 18 years", "18 to 24 years", "25 to 44 years", "45 to 64 years", "65 years and over"],
    "Sex": ["Male", "Female"],
    "Race": ["White", "Black", "Asian", "Other races"],
    "Region": ["Northeast", "Midwest", "South", "West"],
    "Education": ["Less than high school", "High school graduate", "Some college", "Bachelor's degree"],
    "Tenure": ["Owner occupied", "Renter occupied"],
    "Income": ["Under $25,000", "$25,000 to $49,999", "$50,000 to $99,999", "$100,000 or more"],
}
WORDS = (
    "the of and to in for on by with from this that report data year state federal program "
    "survey estimates total percent change during fiscal compared previous increase decrease "
    "number households agencies funds were was are is shown table below above includes excludes "
    "rates income population areas counties services health public office national average "
    "annual quarter period measured reported figures rounded independently sample based"
).split()
TITLES = [
    "Persons by Age and Sex", "Outlays by Agency", "Employment by Industry",
    "Farms and Land in Farms", "Households by Tenure", "Receipts by Source",
    "Enrollment by State", "Grants to States", "Cases Reported by Region",
    "Income of Households", "Loans Outstanding by Program", "Prices Received by Farmers",
]


@dataclass
class Cell:
    """One cell of the truth grid and how it is drawn."""

    row: int
    col: int
    lines: list[str]
    rowspan: int = 1
    colspan: int = 1
    bold: bool = False
    indent: int = 0
    align: str = "left"  # left, right, center, decimal
    marker: str = ""  # a footnote marker, set small and raised after the text

    def text(self) -> str:
        return " ".join(self.lines) + self.marker


@dataclass
class Table:
    ncols: int
    nhead: int
    cells: list[Cell]
    rules: str  # none, booktabs, grid, head
    leaders: bool = False
    rule_above: set[int] = field(default_factory=set)  # body rows (grid index) with a rule above
    group_rules: bool = False  # short rules under spanning header cells
    valign: str = "top"  # where a row's short cells sit when another wraps: top or bottom


@dataclass
class Style:
    face: tuple[str, str]
    size: float
    gap: float
    leading: float
    row_pad: float
    head_align: str  # center or right: column heads over numbers


def draw_style(rnd: random.Random) -> Style:
    size = rnd.choice([7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0])
    narrow = rnd.random() < 0.3
    return Style(
        face=rnd.choice(FACES),
        size=size,
        gap=rnd.uniform(size * 0.6, size * 1.2) if narrow else rnd.uniform(size * 1.2, size * 4.0),
        leading=size * rnd.uniform(1.1, 1.35),
        row_pad=size * rnd.choice([0.0, 0.1, 0.3, 0.6]),
        head_align=rnd.choice(["center", "right"]),
    )


# -- values ------------------------------------------------------------------

def number(rnd: random.Random, kind: str) -> str:
    if kind == "count":
        return f"{rnd.randint(5, 9_999_999) if rnd.random() < 0.5 else rnd.randint(5, 99_999):,}"
    if kind == "pct":
        return f"{rnd.uniform(0, 99.9):.1f}"
    if kind == "money":
        return f"${rnd.randint(10, 999_999):,}"
    if kind == "signed":
        v = rnd.randint(-99_999, 99_999)
        return f"({abs(v):,})" if v < 0 else f"{v:,}"
    if kind == "decimal":
        return f"{rnd.uniform(0, 9999):,.{rnd.choice([0, 1, 2, 2, 3])}f}"
    return str(rnd.randint(1, 999))


def sentence(rnd: random.Random, n: int) -> str:
    words = [rnd.choice(WORDS) for _ in range(n)]
    return (" ".join(words)).capitalize() + "."


def paragraph_lines(rnd: random.Random, width: float, face: str, size: float, nlines: int) -> list[str]:
    """Running text wrapped to `width`, `nlines` lines (the last may be short)."""
    lines, line = [], ""
    while len(lines) < nlines:
        word = rnd.choice(WORDS)
        if rnd.random() < 0.1:
            word += "."
        candidate = f"{line} {word}".strip()
        if stringWidth(candidate, face, size) > width:
            lines.append(line)
            line = word.capitalize() if line.endswith(".") else word
        else:
            line = candidate
    if rnd.random() < 0.5:
        lines[-1] = " ".join(lines[-1].split()[: max(2, len(lines[-1].split()) // 2)]) + "."
    return lines


# -- tables -------------------------------------------------------------------

def labels(rnd: random.Random, n: int) -> list[str]:
    pool = rnd.choice([PLACES, INDUSTRIES, AGENCIES])
    return rnd.sample(pool, min(n, len(pool)))


def simple_table(rnd: random.Random, genre: str, max_cols: int) -> Table:
    """A stub column and columns of values under one header row (or two,
    for the spanning genre), with each genre's trait (several, for the
    combined genre)."""
    traits = {genre}
    if genre == "combined":
        traits = set(rnd.sample(TRAITS, rnd.randint(3, 4)))
    ncols = rnd.randint(3, max_cols)
    nrows = rnd.randint(4, 14)
    kinds = [rnd.choice(["count", "pct", "money", "signed", "decimal", "small"]) for _ in range(ncols - 1)]
    if "numbers" in traits:
        kinds = [rnd.choice(["money", "signed", "decimal", "decimal"]) for _ in range(ncols - 1)]
    cells: list[Cell] = []
    nhead = 1
    stub_head = rnd.choice(["State", "Item", "Industry", "Agency", "Characteristic", "Area"])
    heads = rnd.sample(MEASURES, ncols - 1)
    if rnd.random() < 0.4 and "spanning" not in traits:
        year = rnd.randint(1990, 2020)
        heads = [str(year + i) for i in range(ncols - 1)]
    group_rules = False
    if "spanning" in traits:
        nhead = 2
        group_rules = rnd.random() < 0.7
        cells.append(Cell(0, 0, [stub_head], rowspan=2, bold=True))
        col = 1
        while col < ncols:
            span = min(ncols - col, rnd.choice([2, 2, 3]))
            group = rnd.choice(GROUPS) if rnd.random() < 0.5 else str(rnd.randint(1990, 2022))
            cells.append(Cell(0, col, [group], colspan=span, bold=True, align="center"))
            for k in range(span):
                cells.append(Cell(1, col + k, [rnd.choice(MEASURES)], bold=True, align="center"))
            col += span
    else:
        cells.append(Cell(0, 0, [stub_head], bold=True))
        for c, h in enumerate(heads, start=1):
            lines = [h]
            if "wrapped" in traits and rnd.random() < 0.7:
                lines = rnd.choice([["Number of", h.lower()], ["Percent", "of total"], [h, "(thousands)"],
                                    ["Change,", "2019 to", "2020"], [h, "per 1,000", "persons"]])
            cells.append(Cell(0, c, lines, bold=True, align="center"))
    row_labels = labels(rnd, nrows)
    nrows = len(row_labels)
    aligns = ["decimal" if k in ("decimal", "pct") and rnd.random() < 0.6 else "right" for k in kinds]
    for r, label in enumerate(row_labels):
        gr = nhead + r
        lines = [label]
        if "wrapped" in traits and len(label.split()) > 1 and rnd.random() < 0.6:
            words = label.split()
            cut = max(1, len(words) // 2)
            lines = [" ".join(words[:cut]), " ".join(words[cut:])]
        marker = ""
        if "numbers" in traits and rnd.random() < 0.2:
            marker = rnd.choice(["1", "2", "a", "b"])
        cells.append(Cell(gr, 0, lines, marker=marker))
        for c, kind in enumerate(kinds, start=1):
            value = number(rnd, kind)
            if "sparse" in traits:
                roll = rnd.random()
                if roll < 0.3:
                    value = ""
                elif roll < 0.4:
                    value = rnd.choice(["-", "(NA)", "(X)", "(D)", "Z"])
            cell_marker = ""
            if "numbers" in traits and rnd.random() < 0.08:
                cell_marker = rnd.choice(["1", "2", "3"])
            cells.append(Cell(gr, c, [value] if value else [], align=aligns[c - 1], marker=cell_marker))
    rules = {
        "unruled": "none",
        "booktabs": "booktabs",
        "grid": "grid",
        "leaders": rnd.choice(["none", "head"]),
    }.get(genre, rnd.choice(["none", "booktabs", "head", "grid"]))
    table = Table(ncols, nhead, cells, rules, leaders="leaders" in traits, group_rules=group_rules,
                  valign=rnd.choice(["top", "bottom"]))
    if rnd.random() < 0.3 and genre not in ("stub",):
        # a totals row at the foot
        gr = nhead + nrows
        table.cells.append(Cell(gr, 0, ["Total"], bold=True))
        for c, kind in enumerate(kinds, start=1):
            table.cells.append(Cell(gr, c, [number(rnd, kind)], bold=True, align=aligns[c - 1]))
        if rnd.random() < 0.6:
            table.rule_above.add(gr)
    for cell in table.cells:
        if cell.row < table.nhead and cell.col > 0 and cell.colspan == 1 and table.nhead == 1:
            cell.align = "center" if rnd.random() < 0.5 else "right"
    return table


def stub_table(rnd: random.Random, max_cols: int) -> Table:
    """Section rows (a label alone), indented rows under them, a subtotal
    per section and a total, as census and budget tables set them."""
    ncols = rnd.randint(3, max_cols)
    kinds = [rnd.choice(["count", "pct", "money", "decimal"]) for _ in range(ncols - 1)]
    cells = [Cell(0, 0, [rnd.choice(["Characteristic", "Item", "Subject"])], bold=True)]
    for c, h in enumerate(rnd.sample(MEASURES, ncols - 1), start=1):
        cells.append(Cell(0, c, [h], bold=True, align="center"))
    table = Table(ncols, 1, cells, rnd.choice(["none", "booktabs", "head"]), valign="top")
    gr = 1
    total_first = rnd.random() < 0.5
    if total_first:
        table.cells.append(Cell(gr, 0, ["Total population"], bold=True))
        for c, kind in enumerate(kinds, start=1):
            table.cells.append(Cell(gr, c, [number(rnd, kind)], bold=True, align="right"))
        gr += 1
    for section in rnd.sample(SECTIONS, rnd.randint(2, 3)):
        table.cells.append(Cell(gr, 0, [section], bold=rnd.random() < 0.5))
        for c in range(1, ncols):
            table.cells.append(Cell(gr, c, []))
        gr += 1
        for sub in SUBLABELS[section]:
            table.cells.append(Cell(gr, 0, [sub], indent=1))
            for c, kind in enumerate(kinds, start=1):
                table.cells.append(Cell(gr, c, [number(rnd, kind)], align="right"))
            gr += 1
        if rnd.random() < 0.5:
            table.cells.append(Cell(gr, 0, ["Subtotal"], indent=2, bold=True))
            for c, kind in enumerate(kinds, start=1):
                table.cells.append(Cell(gr, c, [number(rnd, kind)], align="right", bold=True))
            gr += 1
    if not total_first:
        table.cells.append(Cell(gr, 0, ["Total"], bold=True))
        for c, kind in enumerate(kinds, start=1):
            table.cells.append(Cell(gr, c, [number(rnd, kind)], bold=True, align="right"))
        if rnd.random() < 0.6:
            table.rule_above.add(gr)
    return table


# -- layout --------------------------------------------------------------------

@dataclass
class Placed:
    widths: list[float]
    xs: list[float]
    heights: list[float]
    width: float
    height: float


def font(style: Style, bold: bool) -> str:
    return style.face[1] if bold else style.face[0]


def text_width(cell: Cell, style: Style) -> float:
    indent = cell.indent * style.size * 1.2
    widest = max((stringWidth(line, font(style, cell.bold), style.size) for line in cell.lines), default=0.0)
    return indent + widest + (stringWidth(cell.marker, font(style, False), style.size * 0.6) if cell.marker else 0.0)


def layout(table: Table, style: Style) -> Placed:
    nrows = max(c.row + c.rowspan for c in table.cells)
    widths = [0.0] * table.ncols
    for cell in table.cells:
        if cell.colspan == 1:
            widths[cell.col] = max(widths[cell.col], text_width(cell, style))
    if table.leaders:
        widths[0] += style.size * 4
    pad = style.size * 0.4 if table.rules == "grid" else 0.0
    for cell in table.cells:
        if cell.colspan > 1:
            have = sum(widths[cell.col : cell.col + cell.colspan]) + style.gap * (cell.colspan - 1)
            need = text_width(cell, style) + style.size
            if need > have:
                widths[cell.col + cell.colspan - 1] += need - have
    xs, x = [], 0.0
    for w in widths:
        xs.append(x + pad)
        x += w + style.gap + 2 * pad
    heights = [0.0] * nrows
    for cell in table.cells:
        if cell.rowspan == 1:
            heights[cell.row] = max(heights[cell.row], max(1, len(cell.lines)) * style.leading)
    heights = [h + style.row_pad + (style.size * 0.5 if table.rules == "grid" else 0.0) for h in heights]
    return Placed(widths, xs, heights, x - style.gap, sum(heights))


def draw_table(canvas: Canvas, table: Table, style: Style, left: float, top: float, placed: Placed) -> None:
    """Draws the table with its top left corner at (left, top)."""
    row_tops = [top]
    for h in placed.heights:
        row_tops.append(row_tops[-1] - h)
    right = left + placed.width
    canvas.setLineWidth(0.5)
    for cell in table.cells:
        x0 = left + placed.xs[cell.col]
        x1 = left + placed.xs[cell.col + cell.colspan - 1] + placed.widths[cell.col + cell.colspan - 1]
        y_top = row_tops[cell.row]
        y_bottom = row_tops[cell.row + cell.rowspan]
        n = max(1, len(cell.lines))
        gpad = style.size * 0.25 if table.rules == "grid" else 0.0
        if cell.row < table.nhead or table.valign == "bottom":
            # heads sit on the bottom of their rows, as do a row's values
            # beside a wrapped label in many reports
            first_base = y_bottom + gpad + style.row_pad + style.size * 0.25 + (n - 1) * style.leading
        else:
            first_base = y_top - gpad - (style.leading - style.size * 0.25)
        face = font(style, cell.bold)
        for k, line in enumerate(cell.lines):
            y = first_base - k * style.leading
            w = stringWidth(line, face, style.size)
            mw = stringWidth(cell.marker, style.face[0], style.size * 0.6) if cell.marker and k == n - 1 else 0.0
            if cell.align == "right":
                x = x1 - w - mw
            elif cell.align == "center":
                x = (x0 + x1 - w - mw) / 2
            elif cell.align == "decimal":
                whole = line.split(".")[0]
                frac = stringWidth(".000", face, style.size)
                x = x1 - frac - stringWidth(whole, face, style.size)
            else:
                x = x0 + cell.indent * style.size * 1.2
            canvas.setFont(face, style.size)
            canvas.drawString(x, y, line)
            if mw:
                canvas.setFont(style.face[0], style.size * 0.6)
                canvas.drawString(x + w + 0.5, y + style.size * 0.4, cell.marker)
            if table.leaders and cell.col == 0 and k == n - 1 and cell.row >= table.nhead and line:
                dot = stringWidth(" .", face, style.size)
                lx = x + w + dot
                canvas.setFont(face, style.size)
                dots = ""
                while lx + dot * (len(dots) // 2 + 1) < x1 - style.size * 0.5:
                    dots += " ."
                canvas.drawString(lx - dot, y, dots)
        if table.rules == "grid":
            gx0 = x0 - style.gap / 2 - style.size * 0.4
            gx1 = x1 + style.gap / 2 + style.size * 0.4
            canvas.line(gx0, y_top, gx1, y_top)
            canvas.line(gx0, y_top, gx0, y_bottom)
        if table.group_rules and cell.colspan > 1 and cell.row < table.nhead:
            canvas.line(x0 + 2, y_bottom + 1, x1 - 2, y_bottom + 1)
    outer_l = left - (style.gap / 2 + style.size * 0.4 if table.rules == "grid" else 0.0)
    outer_r = right + (style.gap / 2 + style.size * 0.4 if table.rules == "grid" else 0.0)
    bottom = row_tops[-1]
    if table.rules == "grid":
        canvas.line(outer_r, top, outer_r, bottom)
        canvas.line(outer_l, bottom, outer_r, bottom)
    if table.rules in ("booktabs", "head"):
        head_bottom = row_tops[table.nhead]
        canvas.setLineWidth(1.0)
        if table.rules == "booktabs":
            canvas.line(outer_l, top + 2, outer_r, top + 2)
        canvas.line(outer_l, bottom - 1, outer_r, bottom - 1)
        canvas.setLineWidth(0.5)
        canvas.line(outer_l, head_bottom - 1, outer_r, head_bottom - 1)
    if table.rules != "grid":
        for r in table.rule_above:
            canvas.line(outer_l, row_tops[r] + 0.5, outer_r, row_tops[r] + 0.5)


# -- truth ----------------------------------------------------------------------

def grid_of(table: Table) -> list[list[Cell]]:
    """The cells by row, left to right, with an empty cell wherever the
    grid has no cell and no span covers it."""
    nrows = max(c.row + c.rowspan for c in table.cells)
    covered = set()
    for c in table.cells:
        for r in range(c.row, c.row + c.rowspan):
            for k in range(c.col, c.col + c.colspan):
                covered.add((r, k))
    cells = list(table.cells) + [Cell(r, k, []) for r in range(nrows) for k in range(table.ncols)
                                 if (r, k) not in covered]
    rows: list[list[Cell]] = [[] for _ in range(nrows)]
    for c in cells:
        rows[c.row].append(c)
    return [sorted(r, key=lambda c: c.col) for r in rows]


def truth_xml(tables: list[Table]) -> str:
    out = ["<?xml version='1.0' encoding='UTF-8'?>", "<document>"]
    for t, table in enumerate(tables, start=1):
        out.append(f"  <table id='{t}'>")
        out.append("    <region id='1' page='1'>")
        for row in grid_of(table):
            for c in row:
                spans = ""
                if c.rowspan > 1 or c.colspan > 1:
                    spans = f" end-row='{c.row + c.rowspan - 1}' end-col='{c.col + c.colspan - 1}'"
                out.append(f"      <cell start-row='{c.row}' start-col='{c.col}'{spans}>"
                           f"<content>{escape(c.text())}</content></cell>")
        out.append("    </region>")
        out.append("  </table>")
    out.append("</document>")
    return "\n".join(out) + "\n"


def truth_html(tables: list[Table]) -> str:
    parts = []
    for table in tables:
        rows = []
        for row in grid_of(table):
            tds = []
            for c in row:
                attrs = (f" rowspan={quoteattr(str(c.rowspan))}" if c.rowspan > 1 else "") + (
                    f" colspan={quoteattr(str(c.colspan))}" if c.colspan > 1 else "")
                tds.append(f"<td{attrs}>{html.escape(c.text())}</td>")
            rows.append("<tr>" + "".join(tds) + "</tr>")
        parts.append("<table>\n" + "\n".join(rows) + "\n</table>")
    return "\n".join(parts) + "\n"


# -- pages -----------------------------------------------------------------------

class Page:
    """Puts text and tables down a column from the top of the page."""

    def __init__(self, canvas: Canvas, rnd: random.Random, style: Style, left: float, width: float):
        self.canvas, self.rnd, self.style = canvas, rnd, style
        self.left, self.width = left, width
        self.y = PAGE_H - MARGIN
        self.body_size = rnd.choice([9.0, 10.0, 11.0])
        self.body_face = rnd.choice(FACES)[0] if rnd.random() < 0.3 else style.face[0]

    def room(self) -> float:
        return self.y - MARGIN

    def paragraph(self, nlines: int) -> None:
        lead = self.body_size * 1.25
        for line in paragraph_lines(self.rnd, self.width, self.body_face, self.body_size, nlines):
            if self.y - lead < MARGIN:
                return
            self.canvas.setFont(self.body_face, self.body_size)
            self.canvas.drawString(self.left, self.y - self.body_size, line)
            self.y -= lead
        self.y -= self.body_size * 0.8

    def caption(self, number: int) -> None:
        size = self.body_size + self.rnd.choice([0, 1])
        face = self.style.face[1]
        title = f"Table {number}. {self.rnd.choice(TITLES)}"
        if self.rnd.random() < 0.3:
            title += f": {self.rnd.randint(2000, 2022)}"
        while stringWidth(title, face, size) > self.width:
            title = title.rsplit(" ", 1)[0]
        self.canvas.setFont(face, size)
        self.canvas.drawString(self.left, self.y - size, title)
        self.y -= size * 1.3
        if self.rnd.random() < 0.4:
            units = self.rnd.choice(["[In thousands]", "(In millions of dollars)", "[Percent]"])
            self.canvas.setFont(self.style.face[0], size - 1)
            self.canvas.drawString(self.left, self.y - size + 1, units)
            self.y -= size * 1.3
        self.y -= size * 0.5

    def notes(self) -> None:
        size = max(6.5, self.style.size - 1)
        lines = []
        if self.rnd.random() < 0.6:
            lines.append("Note: " + sentence(self.rnd, self.rnd.randint(6, 12)))
        lines.append("Source: " + self.rnd.choice(["Bureau of the Census", "Bureau of Labor Statistics",
                                                  "Office of Management and Budget", "Department of Agriculture"])
                     + ", " + sentence(self.rnd, 4).lower())
        if self.rnd.random() < 0.4:
            lines.insert(0, "1 " + sentence(self.rnd, self.rnd.randint(5, 9)))
        for line in lines:
            while stringWidth(line, self.style.face[0], size) > self.width:
                line = " ".join(line.split()[:-1])
            self.canvas.setFont(self.style.face[0], size)
            self.canvas.drawString(self.left, self.y - size, line)
            self.y -= size * 1.25
        self.y -= self.body_size

    def table(self, table: Table) -> bool:
        placed = layout(table, self.style)
        if placed.width > self.width or placed.height > self.room() - 20:
            return False
        indent = 0.0 if self.rnd.random() < 0.6 else (self.width - placed.width) / 2
        draw_table(self.canvas, table, self.style, self.left + indent, self.y - 4, placed)
        self.y -= placed.height + 4 + self.style.size
        return True


def fitted_table(rnd: random.Random, genre: str, style: Style, width: float, room: float) -> Table | None:
    """A table of the genre that fits `width` by `room` points, shrinking
    its columns and rows as needed."""
    max_cols = 8
    for _ in range(40):
        table = stub_table(rnd, max_cols) if genre == "stub" else simple_table(rnd, genre, max_cols)
        placed = layout(table, style)
        if placed.width <= width and placed.height <= room:
            return table
        if placed.width > width:
            max_cols = max(3, max_cols - 1)
    return None


def make_page(path: Path, genre: str, rnd: random.Random) -> tuple[list[Table], dict]:
    style = draw_style(rnd)
    canvas = Canvas(str(path), pagesize=letter, invariant=1)
    canvas.setTitle(f"synthetic {genre} table")
    tables: list[Table] = []
    number = rnd.randint(1, 40)
    if genre == "two-column":
        gutter = rnd.uniform(10, 30)
        colw = (PAGE_W - 2 * MARGIN - gutter) / 2
        side = rnd.randint(0, 1)
        body = Page(canvas, rnd, style, MARGIN + (1 - side) * (colw + gutter), colw)
        body.paragraph(60)
        page = Page(canvas, rnd, style, MARGIN + side * (colw + gutter), colw)
        page.body_face, page.body_size = body.body_face, body.body_size
        page.paragraph(rnd.randint(3, 10))
        page.caption(number)
        table = fitted_table(rnd, rnd.choice(["booktabs", "unruled", "grid", "numbers"]), style, colw, page.room() - 60)
        if table and page.table(table):
            tables.append(table)
        page.paragraph(60)
    else:
        page = Page(canvas, rnd, style, MARGIN, PAGE_W - 2 * MARGIN)
        count = 2 if genre == "two-tables" else 1
        if genre == "notes" or rnd.random() < 0.6:
            page.paragraph(rnd.randint(2, 8))
        for k in range(count):
            page.caption(number + k)
            room = page.room() - 80 if count == 1 else page.room() / 2 - 40
            sub_genre = genre if genre != "two-tables" else rnd.choice(["booktabs", "unruled", "grid", "spanning"])
            table = fitted_table(rnd, sub_genre, style, page.width, room)
            if table and page.table(table):
                tables.append(table)
            if genre == "notes" or rnd.random() < 0.4:
                page.notes()
        if genre == "notes" or rnd.random() < 0.5:
            page.paragraph(rnd.randint(2, 8))
    canvas.showPage()
    canvas.save()
    drawn = {"genre": genre, "face": style.face[0], "size": style.size, "gap": round(style.gap, 1),
             "leading": round(style.leading, 1), "tables": len(tables),
             "rules": [t.rules for t in tables]}
    return tables, drawn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=2013)
    parser.add_argument("--per-genre", type=int, default=6)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for genre in GENRES:
        for i in range(args.per_genre):
            name = f"{genre}-{i + 1:02d}"
            rnd = random.Random(f"{args.seed}/{genre}/{i}")
            pdf = args.out / f"{name}.pdf"
            tables, drawn = make_page(pdf, genre, rnd)
            if not tables:
                print(f"synth_tables: {name}: no table fitted the page; left out", file=sys.stderr)
                pdf.unlink()
                continue
            (args.out / f"{name}-str.xml").write_text(truth_xml(tables))
            (args.out / f"{name}.html").write_text(truth_html(tables))
            manifest[name] = drawn
    (args.out / "genres.json").write_text(json.dumps({"genres": GENRES, "pages": manifest}, indent=1) + "\n")
    print(f"synth_tables: {len(manifest)} pages, {sum(d['tables'] for d in manifest.values())} tables in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

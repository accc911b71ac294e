"""A synthetic development set of papers for headings and reading order:
multi-page papers typeset by LaTeX (pdflatex) in the document classes
journals and conferences use, drawn at random (seeded), each with the
Markdown its source stands for.

Usage: synth_papers.py OUT_DIR [--seed N] [--per-class N]

For every paper it writes, in OUT_DIR:
  CLASS-NN.pdf   the paper, as pdflatex typesets it
  CLASS-NN.md    its truth: the title and every section heading as a
                 Markdown heading (`#` for the title, `##` a section, `###`
                 a subsection), the numbering as the class prints it
                 ("I. Introduction", "2.1 Data", "A. Setup"), the words as
                 the source writes them where the class sets them in a
                 small-capitals face (the letters stay as written) and in
                 capitals where it turns the letters themselves to capitals
                 (amsart's title, revtex's sections); a chapter's label and
                 its title as two headings, as pdf-bench's truth keeps
                 them; the paragraphs, list items and references as text
  CLASS-NN.tex   the source
and classes.json: each paper's class and what was drawn for it.

Why: the headings of papers are where porter's rules were weakest on
papers it had not seen ("I. INTRODUCTION" in small capitals, run-in and
centred heads, two columns). Each class sets its heads its own way; the
text, the number of sections, the lists and the columns are drawn at
random, so a rule that fits one class alone shows as a low class.

Needs pdflatex and the classes (Debian: texlive-latex-base,
texlive-latex-recommended, texlive-publishers, texlive-fonts-recommended,
lmodern)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

WORDS = """analysis approach baseline behaviour benchmark boundary calibration capacity
channel cluster coefficient component condition configuration constraint contrast
coverage criterion dataset decision density deployment design detector deviation
distribution domain dynamics effect efficiency element energy estimate evaluation
evidence experiment exposure factor feature field framework frequency function
gradient graph hypothesis impact index inference input interaction interval kernel
latency layer load margin measure mechanism memory method metric model module
network noise observation operator optimum output parameter pattern performance
phase policy population prediction principle probability procedure process profile
protocol quality range rate ratio region regression relation resolution response
result risk robustness sample scale scenario schedule segment sensor sequence signal
simulation solution source space spectrum stability state strategy structure study
surface system target task technique temperature term test threshold throughput
trajectory transfer trend uncertainty update validation value variable variance
vector weight window workload""".split()
VERBS = """affects improves reduces increases reveals supports determines limits
extends replaces matches exceeds follows precedes explains captures""".split()
ADJ = """adaptive robust linear sparse dense local global empirical theoretical
efficient stable accurate noisy large small temporal spatial joint partial""".split()
LINKS = ["however", "moreover", "therefore", "in practice", "in contrast", "as a result",
         "in particular", "for example", "at the same time", "under these conditions"]
SECTION_NAMES = [
    "Introduction", "Related Work", "Background", "Problem Statement",
    "Method", "Proposed Approach", "System Design", "Experimental Setup",
    "Experiments", "Results", "Evaluation", "Discussion", "Limitations",
    "Threats to Validity", "Case Study", "Implementation",
]


@dataclass
class Style:
    """How one class sets a paper: its preamble, how a section and a
    subsection are numbered in print, and whether it prints an abstract
    under a heading of its own."""

    name: str
    preamble: str
    section_number: str  # "roman", "arabic" or "arabic-dot"
    subsection_number: str  # "alpha", "arabic" or "arabic-dot"
    abstract_heading: bool
    references_heading: str
    # how the class opens an abstract that has no heading of its own
    abstract_prefix: str = ""


STYLES = [
    Style("ieee", r"\documentclass[conference]{IEEEtran}", "roman", "alpha", False, "References", "Abstract—"),
    Style("article", r"\documentclass[11pt]{article}", "arabic", "arabic", True, "References"),
    Style("article2col", r"\documentclass[10pt,twocolumn]{article}", "arabic", "arabic", True, "References"),
    Style("amsart", r"\documentclass{amsart}", "arabic-dot", "arabic-dot", False, "References", "Abstract."),
    # revtex sets its references under no heading
    Style("revtex", r"\documentclass[aps,prb,twocolumn]{revtex4-2}", "roman", "alpha", False, ""),
    Style("elsarticle", r"\documentclass[preprint,12pt]{elsarticle}", "arabic-dot", "arabic-dot", True, "References"),
    Style("llncs", r"\documentclass{llncs}", "arabic", "arabic", False, "References", "Abstract."),
    Style("report", r"\documentclass[11pt]{report}", "arabic", "arabic", True, "Bibliography"),
]


def roman(n: int) -> str:
    out = ""
    for value, numeral in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out += numeral
            n -= value
    return out


def sentence(rng: random.Random) -> str:
    n = rng.randint(8, 22)
    words = []
    for i in range(n):
        pick = rng.random()
        if i == 3 and pick < 0.6:
            words.append(rng.choice(VERBS))
        elif pick < 0.2:
            words.append(rng.choice(ADJ))
        else:
            words.append(rng.choice(WORDS))
    if rng.random() < 0.25:
        words.insert(0, rng.choice(LINKS).strip() + ",")
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, lo: int = 3, hi: int = 7) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(lo, hi)))


def title_words(rng: random.Random, lo: int, hi: int) -> str:
    pool = WORDS + ADJ
    words = [rng.choice(pool) for _ in range(rng.randint(lo, hi))]
    small = {"of", "and", "for", "in", "on"}
    out = []
    for i, w in enumerate(words):
        out.append(w if (i and w in small) else w.capitalize())
    return " ".join(out)


def numbered(style: Style, level: int, sec: int, sub: int, chapter: bool) -> str:
    """The number a class prints before a heading (section or subsection)."""
    if level == 1:
        if style.section_number == "roman":
            return f"{roman(sec)}."
        if style.section_number == "arabic-dot":
            return f"{sec}."
        return f"{sec}"
    if style.subsection_number == "alpha":
        return f"{chr(ord('A') + sub - 1)}."
    if style.subsection_number == "arabic-dot":
        return f"{sec}.{sub}."
    return f"{sec}.{sub}"


def draw_paper(rng: random.Random, style: Style) -> tuple[str, str, dict]:
    """(LaTeX source, truth Markdown, what was drawn)."""
    title = title_words(rng, 5, 10)
    authors = [f"{rng.choice('ABCDEFGHJKLMNPRST')}. {title_words(rng, 1, 1)}" for _ in range(rng.randint(1, 3))]
    n_sections = rng.randint(4, 7)
    names = rng.sample(SECTION_NAMES[1:], n_sections - 2)
    sections = ["Introduction"] + names + ["Conclusion"]
    chapter = style.name == "report"
    tex = [style.preamble]
    tex.append(r"\usepackage[T1]{fontenc}")
    tex.append(r"\usepackage{lmodern}")
    tex.append(r"\input{glyphtounicode}\pdfgentounicode=1")
    tex.append(r"\begin{document}")
    # amsart sets its title and authors in capitals (the letters themselves,
    # \MakeUppercase), the others as written
    shown_title = title.upper() if style.name == "amsart" else title
    md = [f"# {shown_title}", ""]
    if style.name == "llncs":
        tex.append(rf"\title{{{title}}}")
        tex.append(r"\author{" + r" \and ".join(authors) + "}")
        institute = "Institute of " + title_words(rng, 1, 2)
        tex.append(rf"\institute{{{institute}}}")
        md += ["  ".join(authors), "", institute, ""]
    elif style.name in ("revtex", "elsarticle", "amsart"):
        if style.name == "elsarticle":
            tex.append(r"\begin{frontmatter}")
        tex.append(rf"\title{{{title}}}")
        for a in authors:
            tex.append(rf"\author{{{a}}}")
    else:
        tex.append(rf"\title{{{title}}}")
        tex.append(r"\author{" + r" \and ".join(authors) + "}")
        tex.append(r"\date{}")
    if style.name == "amsart":
        names = [a.upper() for a in authors]
        line = names[0] if len(names) == 1 else (
            f"{names[0]} AND {names[1]}" if len(names) == 2 else ", ".join(names[:-1]) + ", AND " + names[-1])
        md += [line, ""]
    elif style.name != "llncs":
        md += ["  ".join(authors), ""]
    abstract = paragraph(rng, 4, 6)
    # amsart and revtex set the abstract before \maketitle; the others after.
    abstract_tex = [r"\begin{abstract}", abstract, r"\end{abstract}"]
    if style.name in ("amsart", "revtex", "elsarticle"):
        tex += abstract_tex
        if style.name == "elsarticle":
            tex.append(r"\end{frontmatter}")  # it sets the title itself
        else:
            tex.append(r"\maketitle")
    else:
        tex.append(r"\maketitle")
        tex += abstract_tex
    if style.abstract_heading:
        md += ["## Abstract", "", abstract, ""]
    else:
        md += [f"{style.abstract_prefix} {abstract}".strip(), ""]
    drawn_subsections = 0
    for s, name in enumerate(sections, start=1):
        number = numbered(style, 1, s, 0, chapter)
        cmd = "chapter" if chapter else "section"
        tex.append(rf"\{cmd}{{{name}}}")
        # revtex sets a section's title in capitals (the letters themselves)
        shown = name.upper() if style.name == "revtex" else name
        if chapter:
            # A chapter's label and its title are two lines far apart; the
            # benchmark's own truth keeps such a label a heading of its own
            # ("# 2" over "# The Lost Homeland").
            md += [f"## Chapter {s}", "", f"## {name}", ""]
        else:
            md += [f"## {number} {shown}", ""]
        for _ in range(rng.randint(1, 3)):
            p = paragraph(rng)
            tex += [p, ""]
            md += [p, ""]
        if rng.random() < 0.3:
            items = [sentence(rng) for _ in range(rng.randint(2, 4))]
            tex.append(r"\begin{itemize}")
            tex += [rf"\item {i}" for i in items]
            tex.append(r"\end{itemize}")
            md += [f"- {i}" for i in items] + [""]
        if name not in ("Introduction", "Conclusion") and rng.random() < 0.6:
            for sub in range(1, rng.randint(2, 3) + 1):
                sub_name = title_words(rng, 1, 4)
                drawn_subsections += 1
                if chapter:
                    tex.append(rf"\section{{{sub_name}}}")
                    md += [f"### {s}.{sub} {sub_name}", ""]
                else:
                    tex.append(rf"\subsection{{{sub_name}}}")
                    md += [f"### {numbered(style, 2, s, sub, chapter)} {sub_name}", ""]
                for _ in range(rng.randint(1, 2)):
                    p = paragraph(rng)
                    tex += [p, ""]
                    md += [p, ""]
    refs = []
    for i in range(1, rng.randint(3, 6) + 1):
        refs.append(f"{title_words(rng, 1, 1)}, {title_words(rng, 4, 8)}, {rng.randint(1990, 2025)}.")
    tex.append(r"\begin{thebibliography}{9}")
    tex += [rf"\bibitem{{r{i}}} {r}" for i, r in enumerate(refs, start=1)]
    tex.append(r"\end{thebibliography}")
    if style.references_heading:
        md += [f"## {style.references_heading}", ""]
    md += [f"[{i}] {r}" for i, r in enumerate(refs, start=1)] + [""]
    tex.append(r"\end{document}")
    drawn = {"class": style.name, "sections": len(sections), "subsections": drawn_subsections}
    return "\n".join(tex) + "\n", "\n".join(md), drawn


def typeset(tex: str, pdf: Path) -> str | None:
    """Runs pdflatex on the source; None when it made the PDF, else why not."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "paper.tex"
        src.write_text(tex)
        done = None
        for _ in range(2):  # twice: the class's own cross-references settle
            done = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
                cwd=tmp, capture_output=True, text=True, timeout=120,
            )
            if done.returncode:
                return done.stdout[-600:]
        shutil.copyfile(Path(tmp) / "paper.pdf", pdf)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--per-class", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated classes")
    args = parser.parse_args()
    if shutil.which("pdflatex") is None:
        print("synth_papers: pdflatex is not installed (Debian: texlive-latex-base and the classes)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    only = {c for c in args.only.split(",") if c}
    drawn_all = {}
    failed = 0
    for style in STYLES:
        for n in range(1, args.per_class + 1):
            tex, md, drawn = draw_paper(rng, style)  # drawn even when skipped: the seed's order holds
            if only and style.name not in only:
                continue
            stem = f"{style.name}-{n:02d}"
            why = typeset(tex, args.out / f"{stem}.pdf")
            if why:
                failed += 1
                print(f"synth_papers: {stem} was not typeset: {why}", file=sys.stderr)
                continue
            (args.out / f"{stem}.md").write_text(md)
            (args.out / f"{stem}.tex").write_text(tex)
            drawn_all[stem] = drawn
    (args.out / "classes.json").write_text(json.dumps(drawn_all, indent=1))
    print(f"synth_papers: {len(drawn_all)} papers in {args.out} ({failed} not typeset)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

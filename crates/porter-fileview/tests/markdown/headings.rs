//! Headings as papers, reports and books set them, each on a page drawn
//! for the rule: numbering schemes and the levels they give, small
//! capitals by size or by face, titles in capitals close over their text,
//! run-in headings, and a paper's title apart from its sections.

use porter_fileview::Options;

use super::assert_lines_in_order;
use super::structure::{Line, extract, page, page_in, pages_in};

/// Lines of running text at 10 points from `y` down, 12 points apart,
/// starting at `x`.
fn text_at<'a>(x: f32, y: f32, texts: &[&'a str], out: &mut Vec<Line<'a>>) {
    for (i, text) in texts.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = y - 12.0 * i as f32;
        out.push(Line {
            x,
            y,
            runs: vec![(10.0, false, *text)],
        });
    }
}

/// Two lines of running text ending in a full stop.
const PARAGRAPH: [&str; 2] = [
    "A paragraph of running text follows here, set in the size of",
    "the body over two lines, and it ends as a sentence does.",
];

#[test]
fn a_section_title_in_a_small_capitals_face_close_over_its_text_is_a_heading() {
    // The face's name marks it as small capitals: its lower-case letters
    // show as capitals, though the text keeps them lower case. The text
    // under it starts 4 points below it, closer than a blank line.
    let mut lines = Vec::new();
    text_at(72.0, 700.0, &PARAGRAPH, &mut lines);
    for (y, title) in [(660.0, "I. Introduction"), (600.0, "II. Related Work")] {
        lines.push(Line {
            x: 72.0,
            y,
            runs: vec![(10.0, true, title)],
        });
        text_at(72.0, y - 14.0, &PARAGRAPH, &mut lines);
    }
    let md = extract(
        &page_in(&lines, &[], ["Helvetica", "NimbusRomNo9L-ReguSC"]),
        &Options::default(),
    );
    assert_lines_in_order(
        &md.text,
        &[
            &PARAGRAPH.join(" "),
            "# I. Introduction",
            &PARAGRAPH.join(" "),
            "# II. Related Work",
            &PARAGRAPH.join(" "),
        ],
    );
}

#[test]
fn small_capitals_in_two_sizes_close_over_their_text_are_a_heading() {
    let mut lines = Vec::new();
    text_at(72.0, 700.0, &PARAGRAPH, &mut lines);
    lines.push(Line {
        x: 72.0,
        y: 660.0,
        runs: vec![(10.0, false, "III. M"), (8.0, false, "ETHODS")],
    });
    // The first line of text 12 points below: no more than its leading.
    text_at(72.0, 648.0, &PARAGRAPH, &mut lines);
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[&PARAGRAPH.join(" "), "# III. METHODS", &PARAGRAPH.join(" ")],
    );
}

#[test]
fn a_short_title_in_capitals_right_over_its_text_is_a_heading() {
    let mut lines = vec![Line {
        x: 72.0,
        y: 700.0,
        runs: vec![(10.0, false, "ABSTRACT")],
    }];
    text_at(72.0, 688.0, &PARAGRAPH, &mut lines);
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(&md.text, &["# ABSTRACT", &PARAGRAPH.join(" ")]);
}

#[test]
fn a_run_in_heading_stays_the_start_of_its_paragraph() {
    // "Methods." in bold, then the paragraph's text on the same line after
    // a wide space, as LaTeX sets a \paragraph: it is read as the
    // paragraph's first words, as readers and benchmarks take it.
    let mut lines = vec![Line {
        x: 72.0,
        y: 700.0,
        runs: vec![
            (10.0, true, "Methods."),
            (10.0, false, "    We measured every page twice, once"),
        ],
    }];
    text_at(
        72.0,
        688.0,
        &["in the morning and once at night, and kept the mean."],
        &mut lines,
    );
    lines.push(Line {
        x: 72.0,
        y: 660.0,
        runs: vec![(12.0, true, "Results")],
    });
    text_at(72.0, 644.0, &PARAGRAPH, &mut lines);
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "Methods. We measured every page twice, once in the morning and once at night, and kept the mean.",
            "# Results",
            &PARAGRAPH.join(" "),
        ],
    );
    assert!(!md.text.contains("# Methods"), "{}", md.text);
}

#[test]
fn a_bold_heading_right_over_a_run_in_heading_stays_a_heading() {
    // A numbered heading in bold, and 12 points below it (no more than the
    // leading) a paragraph opening with a bold run-in heading that fills
    // most of its first line, a wide space after it: the heading is not
    // read into the paragraph, nor the paragraph cut after its first line.
    let mut lines = Vec::new();
    text_at(72.0, 700.0, &PARAGRAPH, &mut lines);
    lines.push(Line {
        x: 72.0,
        y: 660.0,
        runs: vec![(10.0, true, "4.3.1 Instruction Tuning")],
    });
    lines.push(Line {
        x: 72.0,
        y: 648.0,
        runs: vec![
            (10.0, true, "Ablation on the training sets."),
            (10.0, false, "    We present"),
        ],
    });
    text_at(
        72.0,
        636.0,
        &["studies of the sets we trained on, one after the other."],
        &mut lines,
    );
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            &PARAGRAPH.join(" "),
            "### 4.3.1 Instruction Tuning",
            "Ablation on the training sets. We present studies of the sets we trained on, one after the other.",
        ],
    );
}

#[test]
fn a_numbered_title_in_italics_right_over_its_text_is_a_heading() {
    // Lower sections as many journals set them: numbered, in italics at
    // the body's size, the text starting on the next line.
    let mut lines = Vec::new();
    text_at(72.0, 700.0, &PARAGRAPH, &mut lines);
    for (y, title) in [(660.0, "2.1. Sampling the Pages"), (610.0, "B. Data Sets")] {
        lines.push(Line {
            x: 72.0,
            y,
            runs: vec![(10.0, true, title)],
        });
        text_at(72.0, y - 12.0, &PARAGRAPH, &mut lines);
    }
    let md = extract(
        &page_in(&lines, &[], ["Helvetica", "Helvetica-Oblique"]),
        &Options::default(),
    );
    assert_lines_in_order(
        &md.text,
        &[
            &PARAGRAPH.join(" "),
            "## 2.1. Sampling the Pages",
            &PARAGRAPH.join(" "),
            "## B. Data Sets",
            &PARAGRAPH.join(" "),
        ],
    );
}

#[test]
fn numbering_schemes_give_their_levels() {
    let mut lines = Vec::new();
    let mut y = 720.0;
    for heading in [
        "Chapter 3 Methods of Work",
        "3.1 Data We Used",
        "3.1.2 Where It Came From",
        "3.2 Tools",
        "Appendix A Proofs",
        "A.1 First Lemma",
        "Annex B Tables of Values",
    ] {
        lines.push(Line {
            x: 72.0,
            y,
            runs: vec![(11.0, true, heading)],
        });
        text_at(72.0, y - 18.0, &PARAGRAPH, &mut lines);
        y -= 60.0;
    }
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "# Chapter 3 Methods of Work",
            "## 3.1 Data We Used",
            "### 3.1.2 Where It Came From",
            "## 3.2 Tools",
            "# Appendix A Proofs",
            "## A.1 First Lemma",
            "# Annex B Tables of Values",
        ],
    );
}

#[test]
fn roman_and_lettered_sections_nest_under_a_papers_title() {
    let mut lines = vec![Line {
        x: 72.0,
        y: 720.0,
        runs: vec![(16.0, false, "On Reading Pages in Order")],
    }];
    text_at(72.0, 690.0, &PARAGRAPH, &mut lines);
    let mut y = 650.0;
    for heading in ["IV. RESULTS", "A. Setup", "B. Findings", "V. CONCLUSION"] {
        lines.push(Line {
            x: 72.0,
            y,
            runs: vec![(10.0, true, heading)],
        });
        text_at(72.0, y - 18.0, &PARAGRAPH, &mut lines);
        y -= 60.0;
    }
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "# On Reading Pages in Order",
            "## IV. RESULTS",
            "### A. Setup",
            "### B. Findings",
            "## V. CONCLUSION",
        ],
    );
}

#[test]
fn a_papers_sections_keep_their_level_on_pages_without_its_title() {
    // Page 1: the title, set largest, and section 1; page 2: section 2 and
    // a subsection, under no title of their own page.
    let mut first = vec![Line {
        x: 72.0,
        y: 720.0,
        runs: vec![(18.0, true, "Reading Pages in Order")],
    }];
    text_at(72.0, 690.0, &PARAGRAPH, &mut first);
    first.push(Line {
        x: 72.0,
        y: 650.0,
        runs: vec![(12.0, true, "1 Introduction")],
    });
    text_at(72.0, 632.0, &PARAGRAPH, &mut first);
    let mut second = vec![Line {
        x: 72.0,
        y: 700.0,
        runs: vec![(12.0, true, "2 Method")],
    }];
    text_at(72.0, 682.0, &PARAGRAPH, &mut second);
    second.push(Line {
        x: 72.0,
        y: 640.0,
        runs: vec![(11.0, true, "2.1 Pages We Read")],
    });
    text_at(72.0, 622.0, &PARAGRAPH, &mut second);
    second.push(Line {
        x: 72.0,
        y: 580.0,
        runs: vec![(12.0, true, "References")],
    });
    text_at(72.0, 562.0, &PARAGRAPH, &mut second);
    let md = extract(
        &pages_in(
            &[(&first, &[]), (&second, &[])],
            ["Helvetica", "Helvetica-Bold"],
        ),
        &Options::default(),
    );
    assert_lines_in_order(
        &md.text,
        &[
            "# Reading Pages in Order",
            "## 1 Introduction",
            "## 2 Method",
            "### 2.1 Pages We Read",
            "## References",
        ],
    );
}

#[test]
fn a_section_title_at_the_top_of_a_page_is_a_heading_where_the_running_head_is_not() {
    // Letter is 792 points high; the top 8 % (63 points) is where running
    // heads are set. Pages 2 and 3 carry one there, and page 2's text
    // starts close under the top with a section's title, as conference
    // and journal classes with narrow top margins set them: the title is
    // in the band too, but it is on one page only and is bold, while the
    // running head repeats from page to page.
    let running = |lines: &mut Vec<Line<'static>>| {
        lines.push(Line {
            x: 72.0,
            y: 770.0,
            runs: vec![(8.0, false, "Proceedings of the Workshop on Pages")],
        });
    };
    let mut first = vec![Line {
        x: 72.0,
        y: 690.0,
        runs: vec![(16.0, true, "Reading Tops of Pages")],
    }];
    first.push(Line {
        x: 72.0,
        y: 650.0,
        runs: vec![(12.0, true, "1 Introduction")],
    });
    text_at(72.0, 632.0, &PARAGRAPH, &mut first);
    let mut second = Vec::new();
    running(&mut second);
    second.push(Line {
        x: 72.0,
        y: 742.0,
        runs: vec![(12.0, true, "2 Method")],
    });
    text_at(72.0, 724.0, &PARAGRAPH, &mut second);
    let mut third = Vec::new();
    running(&mut third);
    text_at(72.0, 742.0, &PARAGRAPH, &mut third);
    third.push(Line {
        x: 72.0,
        y: 700.0,
        runs: vec![(12.0, true, "3 Results")],
    });
    text_at(72.0, 682.0, &PARAGRAPH, &mut third);
    let md = extract(
        &pages_in(
            &[(&first, &[]), (&second, &[]), (&third, &[])],
            ["Helvetica", "Helvetica-Bold"],
        ),
        &Options::default(),
    );
    assert_lines_in_order(
        &md.text,
        &[
            "# Reading Tops of Pages",
            "## 1 Introduction",
            "Proceedings of the Workshop on Pages",
            "## 2 Method",
            &PARAGRAPH.join(" "),
            "## 3 Results",
        ],
    );
    assert_eq!(
        md.text
            .matches("Proceedings of the Workshop on Pages")
            .count(),
        1,
        "the running head is shown once, as a line of text: {}",
        md.text
    );
}

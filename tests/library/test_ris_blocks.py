"""Every RIS block is counted: one without its `TY` line is read like the others (the type only
says what kind of reference it is), and one cut short is reported as skipped with its line.

Breaks that turn this red (each tried): _ris() ignoring tags outside a TY…ER block (the middle
block is neither read nor skipped: "Read 2 entries"); the headless block's first tag dropped
(its title, on that line, is lost: "no title").
"""

from __future__ import annotations

from digest.library.formats import parse_library

RIS = """TY  - JOUR
TI  - Sparse autoencoders find monosemantic features
AB  - We train sparse autoencoders on activations.
ER  -

TI  - Graph rewiring against oversquashing
AU  - Lovelace, Ada
AB  - Rewiring helps message passing in graph neural networks.
ER  -

TY  - CONF
TI  - Few-step diffusion sampling
ER  -
TY  - JOUR
AU  - Turing, Alan
"""


def test_a_block_without_ty_is_read_and_a_cut_one_is_skipped_with_its_line():
    library = parse_library(RIS.encode(), "mine.ris")
    assert library.format == "RIS" and library.read == 4
    titles = [e.record.title for e in library.entries if e.record is not None]
    assert titles == [
        "Sparse autoencoders find monosemantic features",
        "Graph rewiring against oversquashing",
        "Few-step diffusion sampling",
    ]
    assert [e.line for e in library.entries] == [1, 6, 11]
    assert library.entries[1].record.authors == ("Lovelace, Ada",)
    assert [(s.line, s.reason) for s in library.skipped] == [
        (14, "unreadable RIS: the file ends inside this entry (no ER)")
    ]

"""Search filters typed without a value, or twice, are refused with a clear line, never searched
for as query words or silently overwritten.

Breaks that turn this red: Args.parse back to treating `venue:` as a word ("No paper mentions
'venue'"); the repeated-key check removed (`year:2026 year:2025` keeps 2025); search_cmd checking
the query before the filters (`search venue:` says "Search for what?").
"""

import pytest

from tests.commands.test_commands import say


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("search venue:", "venue: needs a value"),
        ("search graphs author:", "author: needs a value"),
        ("search graphs year:", "year: needs a value"),
        ('search graphs venue:""', "venue: needs a value"),
        ("search graphs venue:\u200b", "venue: needs a value"),
        ("search graphs year:2026 year:2025", "year: given twice ('2026' and '2025')"),
        ("search graphs venue:NeurIPS VENUE:ICML", "venue: given twice"),
    ],
)
def test_empty_or_repeated_filters_are_refused(app, text, needle):
    reply = say(app, text)
    assert reply.error and needle in reply.text, reply.text
    assert "mentions" not in reply.text


def test_a_filter_still_works_and_pages_keep_it(app):
    reply = say(app, 'search graph neural networks author:"Grace Hopper"')
    assert reply.cards and not reply.error, reply.text
    nxt = [a for a in reply.actions if a.label.startswith("Next")]
    if nxt:  # the Next button's command parses back without a repeated filter
        assert not say(app, nxt[0].value).error

"""The /papers command core: every subcommand answers with a Reply, errors are short and ephemeral."""

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.commands import Context
from bot.commands.core import REGISTRY, Args
from digest.models import ChannelRef
from tests.support.votes import settle_votes

LAB = ChannelRef("console", "lab")
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def ctx(user="ann", admin=True, ref=LAB):
    return Context(
        ref=ref, user=user, is_admin=admin, dm=ChannelRef("console", f"@{user}"), now=NOW
    )


def say(app, text, **kw):
    return app.commands.handle(text, ctx(**kw))


def test_help_lists_every_subcommand(app):
    reply = say(app, "/papers help")
    for name in REGISTRY:
        assert f"/papers {name}" in reply.text
    assert "/papers me" in reply.text
    assert say(app, "").text == reply.text  # bare /papers is help


def test_help_schedule_line_names_every_day_preset(app):
    """Every preset `schedule` accepts is in its help line. Break seen red: `weekends` dropped."""
    from digest.clock.times import PRESETS

    line = next(x for x in say(app, "help").text.splitlines() if "/papers schedule" in x)
    assert all(p in line for p in PRESETS), line


def test_subscribe_list_unsubscribe_by_number_text_and_all(app):
    assert (
        "Now following topic 'graph neural networks'"
        in say(app, "subscribe graph neural networks").text
    )
    assert "Already following" in say(app, "subscribe  graph   neural networks ").text
    say(app, "subscribe author:Grace Hopper")
    say(app, "exclude heterophily")
    listing = say(app, "list").text
    assert "1. topic: graph neural networks" in listing and "2. author: Grace Hopper" in listing
    assert "3. exclude: heterophily" in listing and "Schedule: 09:00 UTC" in listing
    assert say(app, "unsubscribe 2").text == "Stopped following 'Grace Hopper'."
    assert say(app, "unsubscribe exclude:heterophily").text == "Stopped following 'heterophily'."
    assert say(app, "unsubscribe 7").error
    assert say(app, "unsubscribe quantum chemistry").error
    assert say(app, "unsubscribe all").text == "Stopped following 'graph neural networks'."
    assert "Nothing yet" in say(app, "list").text


def test_like_subscription_needs_a_real_paper(app):
    title = app.papers.paper("syn-rl-0").title
    assert say(app, "subscribe like:syn-rl-0").text.startswith(
        f"Now following papers like *{title}*"
    )
    bad = say(app, "subscribe like:no-such-paper")
    assert bad.error and "No paper with id" in bad.text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("schedule 25:00", "Time must look like 09:30"),
        ("schedule 09:00 Mars/Base", "Unknown time zone 'Mars/Base' (e.g. Europe/Berlin"),
        ("schedule 09:00 Europe/Berlin someday", "Days must be daily, weekdays"),
        ("schedule", "When?"),
        ("size 0", "from 1 to 25"),
        ("size lots", "from 1 to 25"),
        ("threshold 2", "from 0 to 1"),
        ("threshold nan", "from 0 to 1"),
        ("subscribe", "Say what to follow"),
        ("subscribe " + "x" * 300, "at most 200 characters"),
        ("frobnicate", "Unknown command 'frobnicate'"),
        ("search", "Search for what?"),
        ("search graphs year:20x6", "four-digit year"),
        ("paper", "Which paper?"),
        ("paper nope", "No paper with id 'nope'"),
        ("why syn-rl-0", "follows nothing yet"),
        ("digest later", "digest now"),
        ("export csv", "export bibtex"),
        ("option loud on", "Unknown option"),
        ("size ²", "from 1 to 25"),  # found by the fuzzer: '²'.isdigit() is True, int('²') fails
        ("unsubscribe ²", "does not follow '²'"),
        ("/PAPERSSIZE 3", "Unknown command '/paperssize'"),
    ],
)
def test_bad_input_gets_a_short_ephemeral_error(app, text, message):
    app.channels.channel(LAB)  # set up, following nothing: the input itself is what is wrong
    reply = say(app, text)
    assert reply.error and reply.ephemeral and message in reply.text
    assert len(reply.text) < 200


def test_schedule_size_threshold_pause_resume(app):
    reply = say(app, "schedule 7:30 Europe/Berlin mon,wed,fri")
    assert (
        reply.text == "Digests at 07:30 Europe/Berlin on mon,wed,fri."
        and reply.schedule_changed == LAB
    )
    assert (
        say(app, "schedule 18:00 weekends").text
        == "Digests at 18:00 Europe/Berlin on sat,sun (time zone unchanged)."
    )
    say(app, "size 3")
    say(app, "threshold 0.45")
    say(app, "pause")
    listing = say(app, "list").text
    assert "Size 3 · threshold 0.45" in listing and "(⏸ paused by ann)" in listing
    assert "(⏸ paused by ann)" in app.commands.handle("list", ctx(user="bob")).text
    say(app, "resume")
    assert "(active)" in say(app, "list").text


def test_admin_only_channels_refuse_settings_from_members(app):
    say(app, "option admin-only on")
    refused = say(app, "subscribe diffusion models", admin=False, user="bo")  # not who locked it
    assert refused.error and "Only channel admins" in refused.text
    assert not say(app, "search diffusion models", admin=False).error  # reading is open to all
    assert not say(app, "me subscribe diffusion models", admin=False).error  # own digest is theirs
    assert not say(app, "subscribe diffusion models", admin=True).error


def test_admin_only_is_refused_on_a_personal_digest(app):
    """Break seen red: drop the '@' check in ChannelService.set_option -> accepted."""
    for text in ("me option admin-only on", "me option admin-only off"):
        refused = say(app, text, user="bo")
        assert refused.error and "personal digest" in refused.text, refused.text
    dm = ChannelRef("console", "@bo")
    refused = app.commands.handle("option admin-only on", ctx(user="bo", ref=dm))  # in the DM
    assert refused.error
    assert not say(app, "me option quiet on", user="bo").error  # other options still work
    assert not app.store.channels.get(dm).admin_only


def test_public_is_a_flag_on_every_platform_never_query_text(app):
    """Break seen red: _run passing `args` on without `without_public()` -> the search is for
    'graph neural networks --public' and the topic stored with '--public' in it."""
    plain = say(app, "search graph neural networks")
    for text in ("search graph neural networks --public", "search --PUBLIC graph neural networks"):
        shared = say(app, text)
        assert shared.public and not plain.public
        assert shared.title == plain.title and shared.cards == plain.cards
    assert (
        "Now following topic 'federated learning'."
        in say(app, "subscribe federated learning --public").text
    )
    assert "--public" not in say(app, "list").text
    typed = app.commands.invoke("search", ctx(), Args.typed("graph neural networks --public"))
    assert typed.public and typed.title == plain.title
    assert not say(app, "search nothingmatcheshere --public").public  # errors stay private
    assert "`--public`" in say(app, "help").text and "console" in say(app, "help").text


def test_me_commands_use_the_users_direct_message_channel(app):
    say(app, "me subscribe federated learning", user="bo")
    assert "Your personal digest" in say(app, "me list", user="bo").title
    assert "federated learning" in say(app, "me list", user="bo").text
    assert "federated learning" not in say(app, "list", user="bo").text
    assert app.store.channels.get(ChannelRef("console", "@bo")) is not None


def test_search_pages_and_filters(app):
    first = say(app, "search graph neural networks")
    assert len(first.cards) == 5 and not first.error
    nxt = next(a for a in first.actions if a.label.startswith("Next"))
    second = say(app, nxt.value)
    assert {c.paper_id for c in first.cards}.isdisjoint({c.paper_id for c in second.cards})
    assert any(a.label.startswith("◀") for a in second.actions)
    filtered = say(app, 'search graph neural networks author:"Grace Hopper"')
    assert filtered.cards and all("Grace Hopper" in c.authors for c in filtered.cards)


def _votes(app):
    ch = app.store.channels.get(ctx().ref)
    return dict(app.channels.profile(ch).votes)


def test_up_votes_on_every_paper_listed_and_a_typo_records_none(app):
    """Repro: `/papers up ID1 ID2` voted on ID1 and silently ignored ID2. Breaks seen red:
    `_vote` taking only the first word; an unknown id checked after the votes were stored."""
    text = say(app, "up syn-sae-1 syn-sae-2, syn-gnn-3").text
    assert text.startswith("3 votes") and len(text.splitlines()) == 4, text
    assert _votes(app) == {"syn-sae-1": 1, "syn-sae-2": 1, "syn-gnn-3": 1}
    reply = say(app, "down syn-sae-4 no-such-paper")
    assert reply.error and "no-such-paper" in reply.text and "No vote recorded" in reply.text
    assert "syn-sae-4" not in _votes(app)
    assert say(app, "down syn-sae-1").text.startswith("👎 noted")  # one id: the short reply


def test_vote_count_in_a_reply_counts_only_votes_in_force(app):
    """Repro: `/papers up A B` with A already 👍 withdrew A but said "2 votes". Breaks that turn
    this red: the head counting every paper listed (`len(done)`); withdrawn ones left unsaid."""
    say(app, "up syn-sae-1")
    settle_votes(app)  # each command a while after the one before: no double click
    text = say(app, "up syn-sae-1 syn-sae-2").text
    assert text.splitlines()[0] == "1 vote, 1 withdrawn; future digests here will learn from it."
    assert _votes(app) == {"syn-sae-2": 1}
    settle_votes(app)
    text = say(app, "up syn-sae-2 syn-sae-3 syn-sae-1").text
    assert text.splitlines()[0].startswith("2 votes, 1 withdrawn;"), text
    settle_votes(app)
    assert say(app, "up syn-sae-3 syn-sae-1").text.splitlines()[0] == "2 votes withdrawn."
    assert _votes(app) == {}


def test_paper_similar_why_topics_votes_export_stats(app):
    assert say(app, "paper syn-sae-1").title.startswith("On ")
    sim = say(app, "similar syn-sae-1")
    assert sum(c.paper_id.startswith("syn-sae") for c in sim.cards) >= 4
    say(app, "subscribe sparse autoencoders")
    say(app, "threshold 0.2")  # the synthetic SAE papers match a two-word topic at about 0.22
    why = say(app, "why syn-sae-1").text
    assert "above this channel's threshold" in why and "matches 'sparse autoencoders'" in why
    assert "below" in say(app, "why syn-fl-1").text
    assert say(app, "topics").text.count("•") >= 3
    assert say(app, "up syn-sae-1").text.startswith("👍 noted")
    settle_votes(app)
    assert say(app, "up syn-sae-1").text.startswith("Vote withdrawn")
    say(app, "like syn-sae-2")
    bib = say(app, "export bibtex liked")
    assert bib.attachment[0] == "digestbot-liked.bib" and "@inproceedings{" in bib.attachment[1]
    assert "SynthConf 2025" in bib.attachment[1]
    assert say(app, "stats").text.startswith("0 digests, 0 papers posted, 1 👍, 0 👎")


def test_replies_read_well(app):
    """Item 15: plurals, personal wording, one abstract per `paper`, pages past the end."""
    assert "`/papers me subscribe <topic>`" in say(app, "me list").text  # none yet: how to start
    say(app, "me option quiet on")  # a setting sets the personal digest up, following nothing
    assert "`/papers me subscribe <topic>`" in say(app, "me list").text
    assert say(app, "me stats").title == "Your stats"
    one = say(app, "paper syn-sae-1")
    assert one.text.startswith(app.papers.paper("syn-sae-1").abstract[:40])
    assert one.cards[0].snippet == ""  # the abstract is shown once, as the text
    past = say(app, "search sparse autoencoders page:99")
    assert past.error and past.text.startswith("There is no page 99:")
    assert "[page:N]" in say(app, "help").text


def test_digest_preview_is_ephemeral_and_now_asks_the_runner(app):
    assert say(app, "digest now").error  # nothing followed yet
    say(app, "subscribe diffusion models")
    preview = say(app, "digest preview")
    assert preview.title.startswith("📚 Papers for Tue 01 Dec 2026") and len(preview.cards) == 5
    assert all(c.paper_id.startswith("syn-diffusion") for c in preview.cards)
    assert any(a.kind == "up" for a in preview.cards[0].actions)
    now = say(app, "digest now")
    assert now.deliver_now == LAB and not now.error


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda c, t: f"/papers {c} {t}",
            st.sampled_from(sorted(REGISTRY) + ["me", "me list"]),
            st.text(max_size=120),
        ),
    )
)
def test_any_command_text_gets_a_reply_and_nothing_raises(app, text):
    reply = app.commands.handle(text, ctx())
    assert reply.text or reply.cards
    assert "Something went wrong" not in reply.text  # that would be a bug caught by the safety net


@pytest.mark.parametrize("page", ["page:0", "page:-1", "page:abc", "page:²"])
def test_a_bad_search_page_is_a_short_error_not_query_text(app, page):
    """Break: treat a bad `page:` as a query word again -> "No paper mentions 'page'" (red)."""
    reply = say(app, f"search graph neural networks {page}")
    assert reply.ephemeral and reply.error and "page must be" in reply.text


def test_the_same_topic_typed_differently_is_followed_once(app):
    """Break: store the text as typed -> three list entries, one with literal quotes (red)."""
    assert (
        "Now following topic 'graph neural networks'"
        in say(app, 'subscribe "graph neural networks"').text
    )
    assert "Already following" in say(app, "subscribe Graph Neural Networks").text
    assert "Already following" in say(app, "subscribe “graph neural networks”").text
    assert "mention 'tensor'" in say(app, "exclude 'tensor'").text
    listing = say(app, "list").text
    assert listing.count("graph neural networks") == 1 and '"' not in listing


@pytest.mark.parametrize(
    "text",
    [
        "/papers --public list",
        "/papers me --public list",
        "--public me list",
        "/papers list \u2014public",
        "/papers \u2014public list",
        "/papers list \u2013public",
    ],
)
def test_public_is_read_anywhere_and_in_its_autocorrected_dash_form(app, text):
    """README: add `--public` anywhere. Breaks seen red: _dispatch splitting the subcommand off
    before dropping the flag -> "Unknown command '--public'"; PUBLIC matching only `--` -> the em
    dash form is read as the subcommand or a topic."""
    say(app, "subscribe graph neural networks")
    say(app, "me subscribe graph neural networks")
    reply = say(app, text)
    assert not reply.error and reply.public, reply.text
    assert "public" not in reply.text


@pytest.mark.parametrize("topic", ["a\x1b[31mred\x07", "bell\x07", "rtl \u202eexe.txt"])
def test_topics_with_control_characters_are_refused_and_not_stored(app, topic):
    """ESC/BEL once reached `list` (and terminals) raw. Break seen red: clean_topic() without the
    control-character check -> 'Now following topic …' and the raw ESC in `list`."""
    reply = say(app, f"subscribe {topic}")
    assert reply.error and "control characters" in reply.text, reply.text
    assert "\x1b" not in say(app, "list").text and "\u202e" not in say(app, "list").text
    assert not app.store.channels.get(LAB) or not app.store.channels.subscriptions(
        app.store.channels.get(LAB).id
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("exclude", "Say what to exclude"),
        ("exclude quantum", "Now excluding papers that mention 'quantum'."),
        ("option admin-only maybe", "`/papers option admin-only on`"),
        ("option threads perhaps", "`/papers option threads on`"),
        ("schedule 08:00 UTC funday", "got 'funday'"),
        ("schedule 08:00 New York funday", "got 'funday'"),
        ("threshold -0", "at least 0.00."),
    ],
)
def test_messages_name_what_was_actually_typed(app, text, said):
    """Breaks seen red: exclude worded as 'Now following exclude …'; option's fixed `quiet on`
    hint; schedule taking 'UTC funday' as one zone name; threshold storing -0.0."""
    reply = say(app, text)
    assert said in reply.text, reply.text
    assert "Unknown time zone" not in reply.text and "-0.00" not in reply.text


def test_list_shows_every_option_and_only_those_that_apply(app):
    """`option threads on` was never shown by `list`; a personal digest showed 'admins only'
    though that option is refused there. Breaks seen red: the old settings line (no threads,
    admins only everywhere); share-votes left out of the settings line."""
    say(app, "subscribe graph neural networks")
    say(app, "option threads on")
    shown = say(app, "list").text
    assert "threads: on" in shown and "admins only: off" in shown, shown
    assert "share votes: on" in shown, shown
    say(app, "option share-votes off")  # was never shown at all
    assert "share votes: off" in say(app, "list").text
    say(app, "me subscribe graph neural networks")
    mine = say(app, "me list").text
    assert "threads: off" in mine and "admins only" not in mine, mine
    assert "share votes" not in mine, mine  # refused on a personal digest
    assert say(app, "me option admin-only on").error

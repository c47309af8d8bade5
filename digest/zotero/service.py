"""Use cases of a live Zotero library: connect, disconnect, sync into `like:`, save a paper.

The API key is sealed (secrets.py) before it is stored and opened only to build a client; it is
handed to ``reveal`` (the log redactor) when opened, and no message here ever holds it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from digest.clock import Clock, system_clock
from digest.errors import DigestError
from digest.models import ChannelRef, Paper, SubscriptionKind

# pyzotero (with bibtexparser, feedparser), cryptography and the library readers load with the
# first Zotero call: every command builds this service, and `/papers list` must not pay for them.
if TYPE_CHECKING:
    from digest.channels.service import ChannelService
    from digest.store.zotero import Connection
    from digest.zotero.client import ZoteroLibrary
    from digest.zotero.secrets import SecretBox

SYNCED, SAVED = "synced", "saved"  # as digest/store/zotero.py names the two kinds of item
LIBRARY_ID = re.compile(r"\d{1,12}")
API_KEY = re.compile(r"[A-Za-z0-9]{24}")

log = logging.getLogger(__name__)

API_URL = "https://api.zotero.org"
COLLECTION = "digestbot"
#: How often the scheduler's sweep syncs each library.
DAILY = timedelta(days=1)
#: Items that are not papers: never a `like:`.
NOT_PAPERS = frozenset({"note", "attachment", "annotation"})


class ZoteroError(DigestError):
    """A Zotero problem worded for the person (never holding their key)."""


@dataclass(frozen=True)
class Person:
    """Whose library: their platform, workspace and user id, and their personal digest."""

    platform: str
    workspace: str
    user: str
    digest: ChannelRef


@dataclass
class SyncReport:
    """What one sync did."""

    library: str
    version: int
    changed: int = 0
    added: int = 0  # new `like:` interests
    removed: int = 0  # `like:` interests dropped because their item left Zotero
    skipped: int = 0  # notes, attachments and entries without a title or id
    unchanged: bool = False
    first: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SaveResult:
    """Where a saved paper is: its item key, and whether it was already there."""

    item_key: str
    existed: bool
    library: str


class ZoteroService:
    """People's Zotero libraries (see the module docstring)."""

    def __init__(
        self,
        channels: ChannelService,
        secret: str | None,
        api_url: str = API_URL,
        clock: Clock = system_clock,
        reveal: Callable[[str], None] | None = None,
    ) -> None:
        self.channels = channels
        self.store = channels.store
        self._secret = secret or ""
        self.api_url = api_url
        self.clock = clock
        self.reveal = reveal or (lambda _key: None)

    @property
    def available(self) -> bool:
        """Whether a key may be stored at all (the settings hold a secret key)."""
        return bool(self._secret)

    def _box(self) -> SecretBox:
        from digest.zotero.secrets import NO_SECRET, SecretBox

        if not self._secret:
            raise ZoteroError(NO_SECRET)
        return SecretBox(self._secret)

    # -- connect --------------------------------------------------------------------------------

    def connect(self, who: Person, library: str, key: str) -> str:
        """Check ``library`` (a user id, or `group:ID`) and ``key`` against Zotero, then store
        the key sealed; the library it names ('users/123')."""
        from digest.zotero.client import NotModified, RateLimited, ZoteroLibrary

        box = self._box()  # first: without a secret nothing is read or sent
        library_type, library_id = parse_library(library)
        key = key.strip()
        if not API_KEY.fullmatch(key):
            raise ZoteroError(
                "That is not a Zotero API key (24 letters and digits, from "
                "zotero.org/settings/keys); nothing was stored."
            )
        self.reveal(key)
        client = ZoteroLibrary(self.api_url, library_type, library_id, key)
        try:
            client.changed_since(0)  # proves the key may read the library
        except NotModified:
            pass
        except RateLimited as exc:
            raise ZoteroError(_busy(exc.seconds)) from None
        self.channels.channel(who.digest)  # the personal digest the library feeds
        self.store.zotero.connect(
            who.platform,
            who.workspace,
            who.user,
            who.digest.channel_id,
            library_type,
            library_id,
            box.seal(key),
        )
        log.info("zotero connected (platform=%s library=%s)", who.platform, client.where)
        return client.where

    def disconnect(self, who: Person) -> bool:
        """Forget the connection and its key; the `like:` interests it added stay."""
        return self.store.zotero.disconnect(who.platform, who.workspace, who.user)

    def connection(self, who: Person) -> Connection | None:
        return self.store.zotero.get(who.platform, who.workspace, who.user)

    def _open(self, conn: Connection) -> ZoteroLibrary:
        from digest.zotero.client import ZoteroLibrary

        key = self._box().open(conn.key_encrypted)
        self.reveal(key)
        return ZoteroLibrary(self.api_url, conn.library_type, conn.library_id, key)

    def _wait_over(self, conn: Connection, now: datetime) -> None:
        if conn.backoff_until is not None and now < conn.backoff_until:
            raise ZoteroError(_busy((conn.backoff_until - now).total_seconds()))

    def _backed_off(self, conn: Connection, seconds: float, now: datetime) -> ZoteroError:
        self.store.zotero.set(conn.id, backoff_until=now + timedelta(seconds=seconds))
        return ZoteroError(_busy(seconds))

    def _heed(self, conn: Connection, client: ZoteroLibrary, now: datetime) -> None:
        if client.backoff:
            self.store.zotero.set(conn.id, backoff_until=now + timedelta(seconds=client.backoff))

    # -- sync -----------------------------------------------------------------------------------

    def sync(self, who: Person) -> SyncReport:
        """Bring the library's changes since the last sync into the personal digest's likes."""
        conn = self.connection(who)
        if conn is None:
            raise ZoteroError(NOT_CONNECTED)
        return self._sync(conn)

    def _sync(self, conn: Connection) -> SyncReport:
        from digest.zotero.client import NotModified, RateLimited

        now = self.clock()
        self._wait_over(conn, now)
        client = self._open(conn)
        report = SyncReport(client.where, conn.version, first=conn.version == 0)
        try:
            try:
                versions, latest = client.changed_since(conn.version)
            except NotModified:
                report.unchanged = True
                self.store.zotero.set(conn.id, synced_at=now)
                self._heed(conn, client, now)
                return report
            items = list(client.items(sorted(versions))) if versions else []
            gone = client.deleted_since(conn.version) if conn.version else []
        except RateLimited as exc:
            raise self._backed_off(conn, exc.seconds, now) from None
        ref = ChannelRef(conn.platform, conn.channel_id, conn.workspace)
        report.changed = len(versions)
        live = [i for i in items if not i.get("deleted") and i.get("itemType") not in NOT_PAPERS]
        trashed = [str(i["key"]) for i in items if i.get("deleted")]
        report.skipped += sum(1 for i in items if i.get("itemType") in NOT_PAPERS)
        self._follow(conn, ref, live, report)
        self._unfollow(conn, ref, [*gone, *trashed], report)
        self.store.zotero.set(conn.id, version=latest or conn.version, synced_at=now)
        self._heed(conn, client, now)
        report.version = latest or conn.version
        return report

    def _follow(
        self, conn: Connection, ref: ChannelRef, items: list[dict[str, Any]], report: SyncReport
    ) -> None:
        """Each item as a library entry, followed through the `/papers import` path."""
        from digest.library.entries import Library, make_entry

        entries = [(str(i["key"]), make_entry(n, _fields(i))) for n, i in enumerate(items, 1)]
        usable = [(k, e) for k, e in entries if e.ref or e.record is not None]
        report.skipped += len(entries) - len(usable)
        if not usable:
            return
        library = Library("Zotero", tuple(e for _, e in usable))
        from digest.library.seed import LibraryImports  # `/papers import`'s path, as is

        imported = LibraryImports.over(self.channels).import_library(ref, library, conn.user_id)
        report.added += imported.added
        from digest.library.seed import wanted_of  # the parsers: only a sync loads them

        found = self.store.papers.find_wanted([wanted_of(e) for _, e in usable])
        added = set(imported.liked)
        for (key, _), pid in zip(usable, found, strict=True):
            self.store.zotero.put_item(conn.id, SYNCED, key, pid, pid in added)

    def _unfollow(
        self, conn: Connection, ref: ChannelRef, keys: list[str], report: SyncReport
    ) -> None:
        """Items gone from Zotero stop being interests: the likes sync added for them, unless
        another item still in the library names the same paper."""
        known = self.store.zotero.items(conn.id, SYNCED)
        leaving = [k for k in keys if k in known]
        if not leaving:
            return
        staying = {pid for k, (pid, _) in known.items() if k not in leaving}
        drop = {pid for k in leaving for pid, added in [known[k]] if added and pid}
        drop -= staying
        channel = self.channels.lookup.get(ref)
        if channel is not None and drop:
            subs = self.store.channels.subscriptions(channel.id)
            ids = [s.id for s in subs if s.kind is SubscriptionKind.LIKE and s.text in drop]
            report.removed += self.store.channels.remove_subscriptions(channel.id, ids)
        self.store.zotero.drop_items(conn.id, SYNCED, leaving)

    def sync_due(self) -> dict[str, str]:
        """The scheduler's daily pass: each library not synced for a day and not asked to wait;
        one failing library never stops the others. Outcomes by connection, for the log."""
        now = self.clock()
        done: dict[str, str] = {}
        for conn in self.store.zotero.all():
            if conn.synced_at is not None and now - conn.synced_at < DAILY:
                continue
            if conn.backoff_until is not None and now < conn.backoff_until:
                continue
            try:
                r = self._sync(conn)
                done[str(conn.id)] = f"+{r.added} -{r.removed}"
            except DigestError as exc:
                done[str(conn.id)] = "failed"
                log.warning("zotero sync of connection %s failed: %s", conn.id, exc)
        return done

    # -- save -----------------------------------------------------------------------------------

    def save(self, who: Person, paper_id: str) -> tuple[Paper, SaveResult]:
        """Put a paper in the person's `digestbot` collection, once."""
        from digest.zotero.client import RateLimited

        paper = self.channels.papers.paper(paper_id)
        conn = self.connection(who)
        if conn is None:
            raise ZoteroError(NOT_CONNECTED)
        now = self.clock()
        self._wait_over(conn, now)
        client = self._open(conn)
        try:
            result = self._save(conn, client, paper)
        except RateLimited as exc:
            raise self._backed_off(conn, exc.seconds, now) from None
        self._heed(conn, client, now)
        return paper, result

    def _save(self, conn: Connection, client: ZoteroLibrary, paper: Paper) -> SaveResult:
        known = self.store.zotero.saved_key(conn.id, paper.id)
        url = _url(paper)
        marks = [m for m in (_arxiv_mark(paper), _doi(paper), f"digestbot id {paper.id}") if m]
        # Remembered, or found by its URL or ids: saving twice (or after a crash between the
        # write and remembering it) makes one item.
        existing = known if known is not None and client.alive(known) else None
        existing = existing or client.find(url, marks)
        if existing is not None:
            self.store.zotero.put_item(conn.id, SAVED, existing, paper.id, False)
            return SaveResult(existing, True, client.where)
        collection = conn.collection_key
        if collection is None:
            collection = client.collection(COLLECTION)
            self.store.zotero.set(conn.id, collection_key=collection)
        key = client.create(zotero_item(paper, collection))
        if known is not None:  # the item remembered was deleted in Zotero: this is its successor
            self.store.zotero.drop_items(conn.id, SAVED, [known])
        self.store.zotero.put_item(conn.id, SAVED, key, paper.id, False)
        return SaveResult(key, False, client.where)


NOT_CONNECTED = "You have not connected a Zotero library; `/papers me zotero connect` does."


def _busy(seconds: float) -> str:
    mins = max(1, round(seconds / 60))
    return f"Zotero asked us to wait; try again in about {mins} minute{'s' if mins != 1 else ''}."


def parse_library(text: str) -> tuple[str, str]:
    """('user' | 'group', id) from '123', 'user:123', 'group:456' or a zotero.org group link."""
    text = (text or "").strip()
    m = re.fullmatch(r"(?i)(?:(user|group)s?[:/ ]\s*)?(\d{1,12})", text) or re.search(
        r"(?i)zotero\.org/(group)s/(\d{1,12})", text
    )
    if not m or not LIBRARY_ID.fullmatch(m.group(2)):
        raise ZoteroError(
            "Give your Zotero user id (a number, shown at zotero.org/settings/keys) or "
            "`group:ID` for a group library."
        )
    return (m.group(1) or "user").lower(), m.group(2)


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    """A Zotero item's data as a library entry's fields (the names the BibTeX reader uses)."""
    names = []
    for c in item.get("creators") or []:
        if c.get("creatorType", "author") not in ("author", "editor"):
            continue
        name = c.get("name") or ", ".join(x for x in (c.get("lastName"), c.get("firstName")) if x)
        if name:
            names.append(name)
    year = re.search(r"\b(1[89]\d\d|20\d\d)\b", str(item.get("date", "")))
    fields = {
        "title": item.get("title", ""),
        "abstract": item.get("abstractNote", ""),
        "authors": " and ".join(names),
        "doi": item.get("DOI", ""),
        "url": item.get("url", ""),
        "extra": " ".join(str(item.get(f, "")) for f in ("extra", "archiveID")).strip(),
        "venue": item.get("publicationTitle") or item.get("proceedingsTitle") or "",
        "year": year.group(1) if year else "",
    }
    return {k: v for k, v in fields.items() if v}


def _url(p: Paper) -> str | None:
    return p.links.abs or p.links.forum or p.links.pdf


def _doi(p: Paper) -> str | None:
    for link in (p.links.abs, p.links.forum, p.links.pdf):
        if link and (m := re.search(r"doi\.org/(10\.\d{4,9}/\S+)", link)):
            return m.group(1)
    return None


def _arxiv_mark(p: Paper) -> str | None:
    return f"arXiv:{p.arxiv_id}" if p.arxiv_id else None


def _creators(authors: tuple[str, ...]) -> list[dict[str, str]]:
    out = []
    for a in authors[:100]:
        if "," in a:
            last, first = (x.strip() for x in a.split(",", 1))
        else:
            first, _, last = a.strip().rpartition(" ")
        out.append(
            {"creatorType": "author", "firstName": first, "lastName": last}
            if last and first
            else {"creatorType": "author", "name": a.strip()}
        )
    return out


def zotero_item(p: Paper, collection: str) -> dict[str, Any]:
    """A paper as a new Zotero item: a preprint for arXiv, else a journal article."""
    item: dict[str, Any] = {
        "title": p.title,
        "creators": _creators(p.authors),
        "abstractNote": p.abstract,
        "url": _url(p) or "",
        "date": str(p.year) if p.year else "",
        "collections": [collection],
        "tags": [],
        "relations": {},
    }
    doi = _doi(p)
    if p.arxiv_id:
        item |= {
            "itemType": "preprint",
            "repository": "arXiv",
            "archiveID": f"arXiv:{p.arxiv_id}",
            "DOI": doi or f"10.48550/arXiv.{p.arxiv_id}",
            "extra": f"arXiv: {p.arxiv_id}",
        }
    else:
        item |= {
            "itemType": "journalArticle",
            "publicationTitle": p.venue or "",
            "DOI": doi or "",
            "extra": f"digestbot id {p.id}",
        }
    return item

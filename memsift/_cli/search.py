"""``memsift notes``, ``memsift search`` and ``memsift show``: memory read by the agent itself, on demand.

The hooks add what answers a message on their own; when the user refers to
earlier work they did not bring, the agent asks:

    $ memsift search "lottie SPM"
    notes (/home/u/.local/share/memsift/projects/shop-1a2b3c4d/notes.md):
      notes.md:4  decision: add lottie via SPM? -> No: CocoaPods only, SPM breaks the widget target.
    store (embedded store):
      nothing close

Plain text, each hit with a pointer to where it came from; a fact memsift kept
comes with the head of the exchange it was distilled from, and ``memsift show
ex-…`` prints that exchange whole. The query is redacted before it reaches a
store. What is printed went through the screen recall's goes through
(``memsift.screen``: a home or notes not the user's own are not read, an item
that reads as orders to the agent is withheld and said so by its pointer,
credentials are redacted) and is terminal-safe: control characters and bidi
overrides come out escaped.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from .._hooks.guarded import open_trusted
from ..notes import NotesFile, one_line
from .._fs.project import project_root
from ..screen import Screened, screen, terminal_safe
from ..services import Services
from ..stages import EndPath, Sift, call_service
from .._words.text import stems
from ..types import Item, Message

SHOWN_CHARS = 600  # a passage from elsewhere can be long: the agent gets its start, and the pointer
EXCHANGE_SHOWN = 200  # under a fact, the head of its exchange: `memsift show` prints the rest


def print_notes(folder: str | os.PathLike[str], *, restore: bool = False, forget: bool = False) -> int:
    """Print the project's notes, numbered as their pointers name them, under their path.

    ``restore``: first append again memsift's lines another program's write
    removed; ``forget``: agree they are gone. A line the screen withholds (it
    reads as orders to the agent) is printed as why, under its number; control
    characters and bytes that are not UTF-8 are printed escaped (``\\x1b``),
    never sent to the terminal.
    """
    root = project_root(folder)
    services = open_trusted(root)
    notes = services.notebook
    assert isinstance(notes, NotesFile)
    if restore or forget:
        done = notes.restore() if restore else notes.forget_missing()
        what = "restored" if restore else "forgotten (no longer counted as memsift's)"
        print(f"{len(done)} of memsift's lines {what}" + "".join(f"\n  + {terminal_safe(line)}" for line in done))
    lines = notes.lines()
    print(f"notes of {terminal_safe(str(root))}: {terminal_safe(str(notes.path))}")
    if not any(line.strip() for line in lines):
        print("  (none yet)")
    numbered = [Item(str(number), line, "note", f"{notes.path.name}:{number}")
                for number, line in enumerate(lines, start=1) if line.strip()]
    shown, withheld = screen(numbered, services)
    kept = {int(item.id): item.text for item in shown}
    why = {int(reason.split(": ", 1)[0].rsplit(":", 1)[1]): reason.split(": ", 1)[1] for reason in withheld}
    for number in sorted(kept.keys() | why.keys()):
        text = kept[number] if number in kept else f"[withheld: {why[number]}]"
        print(f"  {number:>3}  {terminal_safe(text)}")
    return 0


def print_search(query: str, folder: str | os.PathLike[str], *, limit: int = 5) -> int:
    """Print the notes and the store's passages that share words with *query*, best first."""
    services = open_trusted(project_root(folder))
    clean = services.redactor.redact(query)
    notebook = services.notebook
    where = f" ({notebook.path})" if isinstance(notebook, NotesFile) else ""
    print(f"notes{terminal_safe(where)}:")
    config = services.config  # a million notes: their index's best matches, as recall narrows them
    nearby = notebook.candidates(clean, limit=config.narrowed_notes, above=config.narrow_notes_above)
    _print_items(screen(matching_notes(clean, nearby), services), limit, "no note shares a word with it")
    if services.store is not None:
        print(f"store ({terminal_safe(services.store.name)}):")
        passages, trouble = _search_store(services, clean, limit)
        _print_items(screen(passages, services), limit, trouble or "nothing close")
    print("(earlier work, possibly out of date: check the code before acting on it)")
    return 0


def matching_notes(query: str, notes: list[Item]) -> list[Item]:
    """The notes sharing a word with *query*, the most shared words first (then the newest).

    >>> [n.source for n in matching_notes("lottie spm", notes)]
    ['notes.md:4']
    """
    wanted = stems(query)
    scored = []
    for position, note in enumerate(notes):
        shared = len(wanted & stems(note.text))
        if shared:
            scored.append((shared, position, note))
    return [note for _, _, note in sorted(scored, key=lambda found: (-found[0], -found[1]))]


def _search_store(services: Services, query: str, limit: int) -> tuple[list[Item], str]:
    """The store's closest passages, within its deadline and minding its breaker; or why none."""
    assert services.store is not None
    found = _within_deadline(services, services.store.search, query, limit=limit,
                             timeout=services.config.store_deadline)
    return ([], found) if isinstance(found, str) else (found, "")


# A line of the notes as recall and search point to it (``notes.md:4``), or as ``memsift notes`` numbers it.
_NOTE_POINTER = re.compile(r"(?:notes\.md:)?([0-9]+)")
_KEPT_POINTER = re.compile(r"\bex-[0-9a-f]{8}\b")
_SOURCE_LABEL = re.compile(r"(?:memsift|cognee):[\w-]+")  # memsift:decision, cognee:memsift


def print_source(pointer: str, folder: str | os.PathLike[str]) -> int:
    """Print what a pointer memsift printed names: a line of the notes (``notes.md:4``), then the
    exchange its fact came from when it ends with one; or the store's item (``ex-3f2a9c1b``, the
    pointer a note line ends with): its fact line, then the whole exchange it was distilled from.
    Through the screen, terminal-safe. 1 when there is no such line or item, or it is withheld."""
    pointer = pointer.strip()
    if _SOURCE_LABEL.fullmatch(pointer):  # recall shows a stored item's source beside it: not one item
        print(f"memsift: {terminal_safe(pointer)} names where stored items come from, not one item: show takes "
              "the ex-… pointer at the end of the item's line")
        return 1
    services = open_trusted(project_root(folder))
    line = _NOTE_POINTER.fullmatch(pointer)
    if line is None:
        return _print_item(services, pointer)
    notebook = services.notebook
    lines = notebook.lines() if isinstance(notebook, NotesFile) else []
    number = int(line[1])
    if not 0 < number <= len(lines) or not lines[number - 1].strip():
        where = notebook.path if isinstance(notebook, NotesFile) else "the notes"
        print(terminal_safe(f"memsift: {where} has {len(lines)} line{'' if len(lines) == 1 else 's'}: "
                            f"no note at line {number}"))
        return 1
    shown, withheld = screen([Item(str(number), lines[number - 1], "note", f"notes.md:{number}")], services)
    if not shown:
        print(terminal_safe(f"memsift: withheld: {withheld[0]}"))
        return 1
    print(f"notes.md:{number}  {terminal_safe(shown[0].text)}")
    kept = _KEPT_POINTER.findall(shown[0].text)
    if kept:  # the fact's source: a line memsift did not write has none (the line is all there is)
        print()
        _print_item(services, kept[-1])
    return 0


def _print_item(services: Services, item_id: str) -> int:
    """Print the store's item *item_id*: its fact line and the whole exchange; 1 when it holds none."""
    store = services.store
    get = getattr(store, "get", None)
    if store is None or get is None:
        print(f"memsift: the store ({store.name if store else 'none'}) cannot show an item by its id")
        return 1
    found = _within_deadline(services, get, item_id)
    if not isinstance(found, Item):
        print(terminal_safe(f"memsift: {found or f'the store ({store.name}) holds no item {item_id}'}"))
        return 1
    shown, withheld = screen([found], services)
    if not shown:
        print(terminal_safe(f"memsift: withheld: {withheld[0]}"))
        return 1
    item = shown[0]
    print(terminal_safe(f"{item.id}  {item.source}"))
    print(f"fact: {terminal_safe(one_line(item.text))}")
    print(f"exchange:\n{terminal_safe(item.exchange, lines=True)}" if item.exchange
          else "(no exchange: the passage is all there is)")
    return 0


def _within_deadline(services: Services, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What the store's *call* returns, within its deadline and minding its breaker; or why not (a str)."""
    store = services.store
    assert store is not None
    deadline = services.config.store_deadline
    state = Sift(message=Message(" ".join(map(str, args))))
    try:
        return call_service(services, state, "search", store, deadline, time.perf_counter(), call, *args, **kwargs)
    except EndPath as end:
        return end.state.notice or end.state.stopped_by


def _print_items(screened: Screened, limit: int, none: str) -> None:
    """The items the screen kept, best first, at most *limit*, each after its pointer, which ``memsift
    show`` takes (a note's line, a stored item's id); then those it withheld, by pointer and why."""
    items = screened.items[:limit]
    if not items:
        print(f"  {terminal_safe(none)}")
    for item in items:
        print(f"  {terminal_safe(item.source if item.origin == 'note' else item.id)}  {_shown(item.text)}")
        if item.exchange:
            print(f"      from the exchange: {_shown(item.exchange, EXCHANGE_SHOWN)}")
    for reason in screened.dropped:
        print(f"  withheld: {terminal_safe(reason)}")


def _shown(text: str, limit: int = SHOWN_CHARS) -> str:
    text = terminal_safe(one_line(text))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

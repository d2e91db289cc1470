"""Words out of text: the one tokenizer the decider, dedupe and stores share.

>>> words("Why did we pick Stripe over Mollie?")
['why', 'did', 'we', 'pick', 'stripe', 'over', 'mollie']
>>> content_words("Why did we pick Stripe over Mollie?")
['pick', 'stripe', 'mollie']
>>> sorted(stems("the migrations retried"))
['migr', 'retr']
"""

from __future__ import annotations

import functools
import re

# Letters and digits of any script; inner dots, dashes, slashes and underscores
# keep identifiers like ``node_args``, ``v2.1`` or ``src/api`` whole.
_WORD = re.compile(r"[^\W_][\w.\-/]*[^\W_]|[^\W_]")
_SPLIT = re.compile(r"[_.\-/]")

# Function words and chat filler: they say how a message is put, not what it
# is about, so overlap on them is no evidence that a note answers it.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he her
here hers herself him himself his how i if in into is isn't it it's its itself just let let's
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should shouldn't so some such than that that's the their theirs them themselves
then there these they this those through to too under until up very was wasn't we were weren't
what when where which while who whom why will with won't would wouldn't you your yours yourself
yourselves ok okay yes yeah yep nope please thanks thank hi hey hello morning lol hmm hm
again still actually really maybe think know want need get got go going make made use used
using one two like just also now then well sure let lets thing things stuff way bit lot
im ive id dont doesnt didnt cant wont isnt arent wasnt thats whats theres heres youre we're
we've we'll i'm i've i'll you're you've they're it'll
""".split())


def words(text: str) -> list[str]:
    """Lower-cased words; identifiers like ``node_args`` or ``v2.1`` stay whole."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Words that carry the subject: no stopwords, no single characters.

    Compound identifiers also yield their parts (``max-old-space`` gives
    ``max``, ``old``, ``space``), so a note that spells it differently still
    meets the message.
    """
    out: list[str] = []
    for word in words(text):
        if word in STOPWORDS or len(word) < 2:
            continue
        out.append(word)
        if _SPLIT.search(word):
            out.extend(p for p in _SPLIT.split(word) if len(p) > 1 and p not in STOPWORDS)
    return out


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude stem, enough to meet 'migration' with 'migrate' and 'retries' with 'retry'."""
    for suffix in ("ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "s", "e", "y"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: len(word) - len(suffix)]
    return word


def stems(text: str) -> set[str]:
    """The stems of a text's content words: what two texts are compared by (dedupe, novelty, search)."""
    return {stem(w) for w in content_words(text)}


def overlap(words: set[str], other: set[str]) -> float:
    """The share of the smaller set's words that the other holds too (0.0 when either is empty)."""
    return len(words & other) / (min(len(words), len(other)) or 1)

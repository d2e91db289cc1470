"""memsift's long-term store on a Cognee server, over HTTP.

What goes over the wire, and when:

- ``add``: the items, each as a text file named after its id, into the
  project's dataset (created on first use) and tagged with the node set
  ``memsift:<dataset>``; then cognify is started in the background, which
  chunks and embeds them on the server. Re-adding an item is a no-op
  (Cognee keeps one copy of identical content); an item whose text changed
  replaces the stored one.
- ``search``: one CHUNKS search (vector search over the passages, no LLM
  call), limited to the project's dataset and node set; a chunk the server
  returns from any other is dropped. A result's file name gives back the
  item id it was added under.
- ``get``: one item by its id (``memsift show``), its file read back whole.

An item memsift kept (a fact line and the exchange it came from) goes up as
one file: the fact line, a marker line, the exchange. A chunk holding the
marker comes back as the fact with its exchange; any other chunk (a dataset
other tools feed, a later piece of a long file) as its text.

    >>> store = CogneeStore("http://127.0.0.1:8011", api_key="...")
    >>> store.add([Item("a1", "We chose Stripe over Adyen: Adyen wants a sales call.",
    ...                 "passage", "notes.md:3")], timeout=30)
    >>> store.settle(timeout=120)      # wait for cognify, as the bench does after loading
    >>> store.search("why not Adyen?", limit=3, timeout=12)
    [Item(id='a1', text='We chose Stripe over Adyen: ...', origin='passage',
          source='cognee:memsift', score=0.58)]

Failures come out as memsift's errors: ``ServiceUnavailable`` when the server
is unreachable, times out or fails (5xx, or Cognee's own "cannot now"
answers); ``DeadlineExceeded`` when a call's deadline passes; and
``ConfigurationError`` when the server refuses memsift (401/403, after one
fresh login with user and password) or the settings are wrong. Those are
never retried.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ConfigurationError, DeadlineExceeded, ServerError, ServiceUnavailable
from .._runtime.health import public_name
from .._runtime.remote import last_answer, read_within
from .._fs.scope import identifiers
from ..types import Item

if TYPE_CHECKING:
    from pathlib import Path

    import httpx

    from ..config import Config

# httpx and tenacity cost about 190 ms to import; they are imported on the
# first request, so a hook that builds the store but never calls it pays nothing.

_NO_DATA = {"DatasetNotFoundError", "NoDataError", "DatasetNoDataError"}
_RETRY_STATUSES = {502, 503, 504}  # a proxy, or a server still starting: worth another try
_BUSY_STATUSES = {402, 409, 420, 429}  # Cognee's "cannot do it now": token budget, pipeline errors
_COMPLETED, _ERRORED = "DATASET_PROCESSING_COMPLETED", "DATASET_PROCESSING_ERRORED"
_PAGE = 1000  # the most GET /datasets/{id}/data returns at once
# The most of an answer read, streamed: past it the call fails as the server being away would (the
# breaker opens, memory pauses). A search of a few chunks takes kilobytes; a page of the data listing
# or an item read back whole, hundreds.
SEARCH_BYTES = 1 << 20
ANSWER_BYTES = 8 << 20


class CogneeStore:
    """The ``Store`` seam on a Cognee server (tested against Cognee 1.6.5).

    ``url``: the server's address; ``dataset``: the dataset memsift writes and searches (its own);
    ``connect_timeout``: seconds to open a connection; ``transport``: an ``httpx.BaseTransport``
    the requests go through instead of the network (an ``httpx.MockTransport`` in tests). Each
    call takes a ``timeout`` in seconds; ``search`` returns at most ``limit`` items.

    Authentication is one of: none (a server with access control off), an
    ``api_key`` sent as ``X-Api-Key``, or a ``user`` and ``password``, logged in once per
    process for a bearer token and logged in again when the server says 401.
    """

    def __init__(self, url: str, *, dataset: str = "memsift", api_key: str | None = None,
                 user: str | None = None, password: str | None = None,
                 connect_timeout: float = 0.5, transport: httpx.BaseTransport | None = None) -> None:
        _check_settings(url, dataset, api_key, user, password)
        self.url = url.rstrip("/")
        self.name = f"Cognee at {public_name(self.url)}"  # shown in notices: no credentials
        self.dataset = dataset
        self.source = f"cognee:{dataset}"
        # Without access control a dataset name does not scope a search; this node set does.
        self._node_set = f"memsift:{dataset}"
        self._api_key = api_key
        self._user = user
        self._password = password
        self._connect_timeout = connect_timeout
        self._transport = transport  # tests put an httpx.MockTransport here
        self._token: str | None = None
        self._dataset_id: str | None = None
        self._client: httpx.Client | None = None
        self._opening = threading.Lock()  # recalls on one set of services search from several threads

    @classmethod
    def from_config(cls, config: Config, project: Path) -> CogneeStore:
        """The store that ``MEMSIFT_COGNEE_*`` (or ``config.toml``) describes, for the project at
        *project*: its own dataset, ``<dataset>-<scope>`` (``memsift-shop-5c1e4f0a92d7``), named
        after the repository's remote so that every clone of it shares it (``memsift._fs.scope``)."""
        from .._fs.scope import scope_name

        return cls(config.cognee_url, dataset=f"{config.dataset}-{scope_name(project)}",
                   api_key=config.cognee_api_key,
                   user=config.cognee_user, password=config.cognee_password,
                   connect_timeout=config.connect_timeout)

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        """The passages closest to *query*, best first, one per item."""
        deadline = time.monotonic() + timeout
        reply = self._request("POST", "/api/v1/search", deadline, json={
            "search_type": "CHUNKS", "query": query, "datasets": [self.dataset],
            "top_k": limit, "node_name": [self._node_set]}, limit=SEARCH_BYTES)
        if reply.status == 404 and reply.error_name() in _NO_DATA:
            return []  # nothing added or cognified yet
        # Checked on the way out too: whatever the server returns, another project's chunk is never shown.
        # Scopes are compared whole, as sets of names: a string that merely holds ours is another's.
        ours = [(dataset, chunk) for dataset, chunk in _chunks(self._answer(reply), self.dataset)
                if self._node_set in identifiers(chunk.get("belongs_to_set"))]
        return self._items(ours)[:limit]

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        """Store *items* and start cognify in the background; safe to repeat."""
        items = [item for item in items if item.text.strip()]  # Cognee refuses empty files
        if not items:
            return
        deadline = time.monotonic() + timeout
        dataset_id = self._ensure_dataset(deadline)
        reply = self._post_files(items, dataset_id, deadline)
        if reply.status == 409:
            self._replace_changed(items, dataset_id, deadline, refusal=reply)
        else:
            self._answer(reply)
        self._cognify(dataset_id, deadline)

    def held(self, items: Sequence[Item], *, timeout: float) -> set[str]:
        """The ids of *items* the dataset already holds with the same text: what a send whose
        answer never came did store. One listing of the dataset (``GET /datasets/{id}/data``);
        when it holds some, cognify is started too, since the lost answer may have been the add's,
        before cognify was asked for (it skips what it has done)."""
        import hashlib

        deadline = time.monotonic() + timeout
        dataset_id = self._ensure_dataset(deadline)
        stored = self._stored(dataset_id, deadline)

        def same(item: Item) -> bool:
            # Cognee keeps a file's text as text_<md5 of its bytes>.txt; another name, and it is sent again.
            content = hashlib.md5(_document(item).encode("utf-8"), usedforsecurity=False).hexdigest()
            row = stored.get(_stem(item.id)) or {}
            return str(row.get("rawDataLocation", "")).endswith(f"/text_{content}.txt")

        held = {item.id for item in items if same(item)}
        if held:
            self._cognify(dataset_id, deadline)
        return held

    def get(self, item_id: str, *, timeout: float = 12.0) -> Item | None:
        """The item stored under *item_id*, read back whole within ``timeout`` seconds; None when the
        dataset has no such file."""
        deadline = time.monotonic() + timeout
        dataset_id = self._ensure_dataset(deadline)
        row = self._stored(dataset_id, deadline).get(_stem(item_id))
        if row is None:
            return None
        data_id = row["id"]
        reply = self._request("GET", f"/api/v1/datasets/{dataset_id}/data/{data_id}/raw", deadline)
        if reply.status == 404:
            return None
        if not 200 <= reply.status < 300:
            self._answer(reply)  # raises the error its status means
        return _item(item_id, reply.body.decode("utf-8", "replace"), self.source)

    def settle(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, until the dataset's cognify pipeline has completed."""
        deadline = time.monotonic() + timeout
        dataset_id = self._ensure_dataset(deadline)
        while True:
            statuses = self._answer(self._request("GET", "/api/v1/datasets/status", deadline,
                                                  params={"dataset": dataset_id,
                                                          "pipeline": "cognify_pipeline"}))
            status = (statuses or {}).get(dataset_id)
            if status in (None, _COMPLETED):  # None: never cognified, nothing to wait for
                return
            if status == _ERRORED:
                raise ServiceUnavailable(f"{self.name}: cognify failed on dataset "
                                         f"{self.dataset!r}; the server's log says why")
            if time.monotonic() + 0.5 >= deadline:
                raise DeadlineExceeded(f"{self.name}: cognify still {status} after {timeout:g} s")
            time.sleep(0.5)

    def close(self) -> None:
        """Close the connections; the next request opens new ones."""
        with self._opening:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # -- what memsift asks of Cognee ------------------------------------------

    def _ensure_dataset(self, deadline: float) -> str:
        if self._dataset_id is None:  # creating is get-or-create on the server
            answer = self._answer(self._request("POST", "/api/v1/datasets", deadline,
                                                json={"name": self.dataset}))
            self._dataset_id = str(answer["id"])
        return self._dataset_id

    def _cognify(self, dataset_id: str, deadline: float) -> None:
        self._answer(self._request("POST", "/api/v1/cognify", deadline, json={
            "dataset_ids": [dataset_id], "run_in_background": True}))

    def _post_files(self, items: Sequence[Item], dataset_id: str, deadline: float) -> _Reply:
        return self._request("POST", "/api/v1/add", deadline,
                             data={"datasetId": dataset_id, "node_set": [self._node_set]},
                             files=[("data", _upload(item)) for item in items])

    def _replace_changed(self, items: Sequence[Item], dataset_id: str, deadline: float,
                         refusal: _Reply) -> None:
        """Cognee refuses to add a known file name with new content: that is an update."""
        stored = self._stored(dataset_id, deadline)
        changed = [item for item in items if _stem(item.id) in stored]
        if not changed:  # 409 is also Cognee's catch-all for failures
            raise ServerError(f"{self.name} refused the add: {refusal.message()}", refusal.status)
        for item in changed:
            self._answer(self._request(
                "PATCH", "/api/v1/update", deadline,
                params={"data_id": str(stored[_stem(item.id)]["id"]), "dataset_id": dataset_id},
                data={"node_set": [self._node_set]}, files=[("data", _upload(item))]))
        fresh = [item for item in items if _stem(item.id) not in stored]
        if fresh:
            self._answer(self._post_files(fresh, dataset_id, deadline))

    def _stored(self, dataset_id: str, deadline: float) -> dict[str, dict[str, Any]]:
        """File stem -> Cognee's data row (``id``, ``rawDataLocation``...), for everything in the dataset."""
        names: dict[str, dict[str, Any]] = {}
        offset = 0
        while True:
            page = self._answer(self._request("GET", f"/api/v1/datasets/{dataset_id}/data",
                                              deadline, params={"limit": _PAGE, "offset": offset}))
            names.update({row["name"]: row for row in page})
            if len(page) < _PAGE:
                return names
            offset += _PAGE

    def _items(self, chunks: list[tuple[str, dict[str, Any]]]) -> list[Item]:
        """One item per document, from its closest chunk; its source names the dataset the server said
        the chunk is from (``memsift.screen`` drops an item of any other)."""
        best: dict[str, Item] = {}
        for dataset, chunk in sorted(chunks, key=lambda found: _distance(found[1])):
            name = chunk.get("document_name") or chunk.get("document_id") or chunk.get("id")
            item_id = _item_id(str(name))
            best.setdefault(item_id, _item(item_id, str(chunk["text"]), f"cognee:{dataset}", _similarity(chunk)))
        return list(best.values())

    # -- HTTP: authentication, deadlines, retries, error mapping ---------------

    def _request(self, method: str, path: str, deadline: float, *, limit: int = ANSWER_BYTES,
                 **kwargs: Any) -> _Reply:
        reply = self._send(method, path, deadline, headers=self._auth_headers(deadline), limit=limit, **kwargs)
        if reply.status == 401 and self._password:
            self._token = None  # expired or revoked: one fresh login, then the answer stands
            reply = self._send(method, path, deadline, headers=self._auth_headers(deadline), limit=limit,
                               **kwargs)
        return reply

    def _auth_headers(self, deadline: float) -> dict[str, str]:
        if self._api_key:
            return {"X-Api-Key": self._api_key}
        if not self._password:
            return {}
        if self._token is None:
            self._token = self._login(deadline)
        return {"Authorization": f"Bearer {self._token}"}

    def _login(self, deadline: float) -> str:
        reply = self._send("POST", "/api/v1/auth/login", deadline,
                           data={"username": self._user, "password": self._password})
        if reply.status == 400:  # LOGIN_BAD_CREDENTIALS
            raise ConfigurationError(
                f"{self.name} refused the login of {self._user!r}: {reply.message()}; "
                "check MEMSIFT_COGNEE_USER and MEMSIFT_COGNEE_PASSWORD")
        token = self._answer(reply)["access_token"]
        self._http().cookies.clear()  # the login also set a cookie; only the bearer token may speak for us
        return str(token)

    def _send(self, method: str, path: str, deadline: float, **kwargs: Any) -> _Reply:
        """One call, tried again only where that is safe and the deadline leaves room.

        Every call memsift makes is idempotent (Cognee dedupes added content,
        cognify skips what is done), so a connection that failed may be tried
        again; a timeout is not, as it has spent the time. 502/503/504 are.
        """
        import httpx
        import tenacity

        retrying = tenacity.Retrying(
            retry=(tenacity.retry_if_exception(_transient)
                   | tenacity.retry_if_result(lambda reply: reply.status in _RETRY_STATUSES)),
            stop=(tenacity.stop_after_attempt(3)
                  | tenacity.stop_before_delay(max(0.0, deadline - time.monotonic()))),
            wait=tenacity.wait_random_exponential(multiplier=0.1, max=1.0),
            retry_error_callback=last_answer,
        )
        try:
            return retrying(self._attempt, method, path, deadline, **kwargs)
        except httpx.ConnectTimeout as error:
            raise ServiceUnavailable(f"{self.name} did not accept a connection within "
                                     f"{self._connect_timeout:g} s") from error
        except httpx.TimeoutException as error:
            raise DeadlineExceeded(f"{self.name} did not answer {method} {path} "
                                   "within its deadline") from error
        except httpx.TransportError as error:
            said = str(error) or type(error).__name__
            raise ServiceUnavailable(f"{self.name} is unreachable: {said}") from error

    def _attempt(self, method: str, path: str, deadline: float, *, limit: int = ANSWER_BYTES,
                 **kwargs: Any) -> _Reply:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded(f"{self.name}: no time left for {method} {path}")
        timeout = httpx.Timeout(remaining, connect=min(self._connect_timeout, remaining))
        client = self._http()
        status, body, _ = read_within(client, client.build_request(method, path, timeout=timeout, **kwargs),
                                      deadline, late=f"{self.name}: {method} {path} ran past its deadline",
                                      limit=limit, who=f"{self.name}: {method} {path}")
        return _Reply(status, body)

    def _answer(self, reply: _Reply) -> Any:
        """The JSON of a successful reply; otherwise the memsift error its status means."""
        if 200 <= reply.status < 300:
            try:
                return reply.json()
            except ValueError as error:
                raise ServiceUnavailable(f"{self.name} answered {reply.status} with something "
                                         "that is not JSON") from error
        said = f"{self.name} answered {reply.status}: {reply.message()}"
        if reply.status in (401, 403):
            raise ConfigurationError(f"{said}; check MEMSIFT_COGNEE_API_KEY, or "
                                     "MEMSIFT_COGNEE_USER and MEMSIFT_COGNEE_PASSWORD")
        if reply.status >= 500 or reply.status in _BUSY_STATUSES:
            raise ServerError(said, reply.status)
        raise ConfigurationError(f"{said}; is MEMSIFT_COGNEE_URL a Cognee 1.6 server?")

    def _http(self) -> httpx.Client:
        with self._opening:  # one client, made once: a second one's connections would never close
            if self._client is None:
                import httpx

                self._client = httpx.Client(base_url=self.url, headers={"User-Agent": "memsift"},
                                            transport=self._transport)
            return self._client


class _Reply(NamedTuple):
    """A whole HTTP answer: what is left of httpx once the body is read in time."""

    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def message(self) -> str:
        """What the server said went wrong, from any of its shapes:
        ``{"detail"}``, ``{"error"}``, ``{"error", "detail"}``, ``{"message"}``."""
        try:
            body = self.json()
        except ValueError:
            return self.body[:300].decode(errors="replace") or "(empty answer)"
        if not isinstance(body, dict):
            return str(body)[:300]
        parts = [_said(body[key]) for key in ("error", "detail", "message") if body.get(key)]
        return ": ".join(parts) or json.dumps(body)[:300]

    def error_name(self) -> str | None:
        """Cognee's exception name, which it puts at the end of a detail: ``... [NoDataError]``."""
        found = re.search(r"\[(\w+)\]\s*$", self.message())
        return found.group(1) if found else None


def _said(value: Any) -> str:
    if isinstance(value, list):  # a validation error: [{"loc": [...], "msg": "..."}, ...]
        return "; ".join(str(entry.get("msg", entry)) if isinstance(entry, dict) else str(entry)
                         for entry in value)
    return value if isinstance(value, str) else json.dumps(value)


def _transient(error: BaseException) -> bool:
    import httpx

    return isinstance(error, httpx.TransportError) and not isinstance(error, httpx.TimeoutException)


def _chunks(answer: Any, dataset: str) -> list[tuple[str, dict[str, Any]]]:
    """The chunk payloads of a CHUNKS search of *dataset*, from either of its shapes, each with the
    dataset it is from.

    Access control off: a bare list of chunks, all of the dataset asked for. On: one object per
    dataset, ``{"dataset_id", "dataset_name", "search_result": [chunk, ...]}``; an object that does not
    name *dataset* exactly is skipped.
    """
    chunks: list[tuple[str, dict[str, Any]]] = []
    for entry in answer if isinstance(answer, list) else []:
        if isinstance(entry, dict) and "search_result" in entry:
            if entry.get("dataset_name") != dataset or not isinstance(entry["search_result"], list):
                continue
            chunks.extend((dataset, c) for c in entry["search_result"] if isinstance(c, dict) and "text" in c)
        elif isinstance(entry, dict) and "text" in entry:
            chunks.append((dataset, entry))
    return chunks


def _distance(chunk: dict[str, Any]) -> float:
    distance = chunk.get("score")
    return float(distance) if isinstance(distance, int | float) else 1.0


def _similarity(chunk: dict[str, Any]) -> float:
    # Cognee reports the cosine distance; memsift's scores grow with relevance.
    distance = chunk.get("score")
    return 1.0 - float(distance) if isinstance(distance, int | float) else 0.0


def _stem(item_id: str) -> str:
    """The file stem an item is stored under; Cognee hands it back as ``document_name``.

    Quoted so any id is a safe file name, dots included, so the stem never
    gains or loses an extension on the way.
    """
    return urllib.parse.quote(item_id, safe="").replace(".", "%2E")


def _item_id(document_name: str) -> str:
    return urllib.parse.unquote(document_name.removesuffix(".txt"))


EXCHANGE_MARK = "[the exchange this fact was kept from]"  # between a fact line and its exchange, in one file


def _document(item: Item) -> str:
    """What an item's file holds: its text, and its exchange after the marker when it has one."""
    return f"{item.text}\n\n{EXCHANGE_MARK}\n{item.exchange}" if item.exchange else item.text


def _item(item_id: str, text: str, source: str, score: float = 0.0) -> Item:
    """An item from a file's text (or a chunk of it): a fact line and its exchange, or a passage."""
    fact, mark, exchange = text.partition(EXCHANGE_MARK)
    if not mark or not fact.strip():  # no marker, or a chunk starting at it: the text is all there is
        return Item(item_id, text, "passage", source, score)
    return Item(item_id, fact.strip(), "passage", source, score, exchange=exchange.strip())


def _upload(item: Item) -> tuple[str, bytes, str]:
    return f"{_stem(item.id)}.txt", _document(item).encode("utf-8"), "text/plain"


def _check_settings(url: str, dataset: str, api_key: str | None, user: str | None,
                    password: str | None) -> None:
    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"MEMSIFT_COGNEE_URL must be an http(s) URL, not {public_name(url)!r}")
    if not dataset or re.search(r"[\s.]", dataset):
        raise ConfigurationError(f"MEMSIFT_DATASET must be a name without dots or spaces "
                                 f"(Cognee refuses them), not {dataset!r}")
    if api_key and (user or password):
        raise ConfigurationError("set MEMSIFT_COGNEE_API_KEY or MEMSIFT_COGNEE_USER and "
                                 "MEMSIFT_COGNEE_PASSWORD, not both")
    if bool(user) != bool(password):
        raise ConfigurationError("MEMSIFT_COGNEE_USER and MEMSIFT_COGNEE_PASSWORD go together")

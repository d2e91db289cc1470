"""Redact credentials from text before it leaves the machine.

>>> redact("export GITHUB_TOKEN=ghp_4fT9kQ2mZx8LwP1vR7bN3cY6dJ0sHaUeGiKo")
'export GITHUB_TOKEN=[REDACTED:github-token]'
>>> redact("postgres://app:s3cr3t-pw@db.internal:5432/shop")
'postgres://app:[REDACTED:password]@db.internal:5432/shop'

Each credential format is a `Rule`: a pattern; a trigger, a cheap test of
the text (usually for a literal such as `ghp_`) that decides whether the
pattern is worth compiling and running, so a plain message compiles none;
and a judge that tells a credential from a look-alike (a placeholder, a
variable, a public key). Patterns repeat only within bounds, so no input
makes them backtrack catastrophically.
"""

import re
import sys
from collections.abc import Callable, Mapping

Verdict = tuple[int, int, str]
"""What to replace: start, end, and the kind of secret the placeholder names."""

Judge = Callable[["re.Match[str]", str], Verdict | None]
"""Given a match and its rule's kind, the span to replace, or None to keep the text."""

Trigger = Callable[[str, str], bool]
"""Given a text and its lower-cased form, whether a rule is worth compiling and running on it."""

_PLACEHOLDER = "[REDACTED:{}]"
PLACEHOLDER_START = "[REDACTED:"
_LONGEST_PLACEHOLDER = 64
_KIND_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
# A credential glued to another may only stand apart once the other is
# replaced; a few passes reach the fixed point that makes redaction idempotent.
_MAX_PASSES = 4
# A word this long before a token's prefix is the tail of another secret
# glued to it, not a name the prefix happens to end (`mytask-...`).
_GLUED_SECRET_TAIL = 16


def _looks_like_placeholder(value: str) -> bool:
    """True for `<your-api-key>`, `${TOKEN}`, `%(password)s`, `xxxx`, `********` and the like."""
    if not value or value[0] in "$<{*[#!" or value[:2] in ("%s", "%(", "%{"):
        return True
    lowered = value.lower()
    if any(word in lowered for word in ("your", "example", "placeholder", "redacted", "dummy", "changeme")):
        return True
    if "xxxx" in lowered and lowered.count("x") * 3 >= len(value):
        return True  # `sk_live_xxxxxxxx`; a run of x inside a long random key is chance
    # A long value drawn from a handful of characters is a filler, not a key.
    return len(value) >= 12 and len(set(value[-16:])) <= 4


def _looks_random(value: str) -> bool:
    """True for a value that reads like a generated key rather than a word or a name."""
    if len(value) < 16 or _looks_like_placeholder(value) or any(c.isspace() for c in value):
        return False
    classes = any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)
    return classes >= 2 and len(set(value)) >= min(12, len(value) // 3)


def _generated_tail(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a prefixed token known by its shape alone: the whole of it goes when its tail holds
    upper case, lower case and digits, three of each at least (no word, name or hex digest does)."""
    tail = match.group("secret")
    kinds = (sum(c.isupper() for c in tail), sum(c.islower() for c in tail), sum(c.isdigit() for c in tail))
    if min(kinds) < 3 or _looks_like_placeholder(tail):
        return None
    return (*match.span(), kind)


def _secret_span(match: "re.Match[str]") -> tuple[int, int]:
    return match.span("secret") if "secret" in match.re.groupindex else match.span()


def every_match(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a pattern of the user's: whatever it matches goes."""
    return (*_secret_span(match), kind)


def unless_placeholder(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a token known by its prefix: anything but a placeholder."""
    begin, end = _secret_span(match)
    return None if _looks_like_placeholder(match.string[begin:end]) else (begin, end, kind)


def contextual(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a value known by its context (a header, a URL): not a placeholder nor a keyword."""
    begin, end = _secret_span(match)
    value = match.string[begin:end]
    if _looks_like_placeholder(value) or value.lower() in _NOT_SECRETS:
        return None
    return begin, end, kind


def random_value(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a value that only its look tells from a word (`Bearer ...`, `sk-...`): it must look generated."""
    begin, end = _secret_span(match)
    return (begin, end, kind) if _looks_random(match.string[begin:end]) else None


def handed_over(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a value given after a credential word in prose: as `random_value`, but the
    word must stand alone (not a field of an ARN: `...:secret:prod/db`) and the value hold a digit."""
    if match.string[match.start() - 1 : match.start()] in (":", "/", "_", "-", "."):
        return None
    value = match["secret"]
    if not _has_digit(value) or re.fullmatch(_CODE_REFERENCE, value):
        return None  # `password=settings.DB_PASSWORD` names where a secret is, it holds none
    return random_value(match, kind)


def said_in_prose(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a value a sentence hands over after a credential word (`use key X and secret Y`,
    `le mot de passe est X`): it must read as generated, nothing between the word and it may
    say it is an id, a hash or a commit, and the word may not name a key that is no secret."""
    begin, end = match.span("secret")
    text, value = match.string, match["secret"].rstrip(".")  # the sentence's end is not the secret's
    end = begin + len(value)
    if text[match.start() - 1 : match.start()] in (":", "/", "_", "-", ".") or text[end : end + 1] in ("(", "["):
        return None  # `...:secret:prod/db`, `token(`: a field of a name, a call
    quote = text[begin - 1 : begin]
    if quote in ("`", "'", '"') and text[end : end + 1] != quote:
        return None  # a quoted value the pattern stopped inside: the assignment rule takes it whole
    lead = text[max(0, match.start() - 24) : match.start()].lower().split()
    gap = match["gap"].lower()
    if gap.find(")") > gap.find("(") == -1:
        return None  # the word sat in a parenthesis that closed: `(not secret), service MG...`
    # An access key id is half of a credential pair (`access key id AKIA…`, R2's 32 hex): not an id.
    key_id = re.search(r"access[ _-]?keys?\W+id\W*(?:is\W*)?$", match["word"].lower() + gap)
    if (lead and lead[-1].strip("`'\"(") in _NOT_SECRET_KEYS) or (not key_id and _names_a_non_secret(gap)):
        return None
    if "=" in gap or "=" in value.rstrip("=") or re.fullmatch(_CODE_REFERENCE, value):
        return None  # `name = value` is the assignment rule's; `attempts=3` is a log field
    if value.startswith(_PUBLISHABLE_PREFIXES) or re.fullmatch(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", value):
        return None  # a key meant to be public, an e-mail address
    if match["word"].lower().startswith(_PASSWORD_WORDS):
        return (begin, end, "password") if _made_password(value) or _looks_random(value) else None
    return (begin, end, _prose_kind(match["word"].lower())) if _looks_random(value) else None


def _made_password(value: str) -> bool:
    """8 characters or more of three kinds (lower, upper, digit, symbol): a password someone made, not a word."""
    classes = (any(c.islower() for c in value) + any(c.isupper() for c in value) + _has_digit(value)
               + any(not c.isalnum() for c in value))
    return len(value) >= 8 and classes >= 3 and not _looks_like_placeholder(value)


def login_pair(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a `user / password` pair after a login word (`the login is admin / Xc7#pLq2Rv9!`,
    `creds: deploy:Hq4!mZ8wLp2`): the second half must read as a made password (a digit, both
    cases or a symbol), so `src / lib`, `OAuth2 / OpenID-Connect`, regions, dates and ratios stay."""
    begin, end = match.span("secret")
    value = match["secret"].rstrip(".,;)")  # the sentence's punctuation is not the password's
    end = begin + len(value)
    if match["user"].isdigit() or _names_a_non_secret(match["gap"].lower()):
        return None  # `user 1000:1000`, `login build 42 / ...`: ids, not an account
    if not _has_digit(value) or re.match(r"v?\d+(?:\.\d+)+", value) or re.search(r"\.[a-z]{2,4}$", value):
        return None  # a version (`v1.2 / v2.0.0-Beta`) or a file name
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not mixed and not any(not c.isalnum() and c not in "-_." for c in value):
        return None  # `acme-prod / eu-west-1`, `web / node-18`: a region, a name with a number
    return (begin, end, kind) if _made_password(value) else None


def _names_a_non_secret(gap: str) -> bool:
    """Whether the words before a value say it is an id, a hash, a commit (`the key fix is in commit <sha>`)."""
    return re.search(r"(?<![a-z])(?:" + "|".join(_NAMES_OF_NON_SECRETS) + r")(?![a-z])", gap) is not None


def _prose_kind(word: str) -> str:
    """The placeholder's kind for a credential word of prose: `secret`, `token` or `api-key`."""
    if word.startswith(("secret", "cred")):
        return "secret"
    return "token" if word.startswith(("token", "jeton")) else "api-key"


def basic_credentials(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for `Basic <base64>`: only what decodes to `user:password`."""
    import binascii

    begin, end = _secret_span(match)
    try:
        decoded = binascii.a2b_base64(match.string[begin:end], strict_mode=True).decode()
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    user, colon, password = decoded.partition(":")
    return (begin, end, kind) if user and colon and password and decoded.isprintable() else None


def cli_password(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for `-u user:pass` and `-pPASS`: as `contextual`, and `1000:1000` is a uid:gid."""
    begin, end = _secret_span(match)
    user = match.groupdict().get("user") or ""
    if user.isdigit() and match.string[begin:end].isdigit():
        return None
    return contextual(match, kind)


def flag_value(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for `--db-password X`: as `contextual`, and not a path, a keyword (`--password prompt`) or a
    value a shell fills in; a flag that names a token or a key must hold a generated value."""
    begin, end = _secret_span(match)
    value = match.string[begin:end]
    if value.startswith(("/", "~/", "./", "../", "-")) or (value.isalpha() and value.islower()):
        return None
    if "pass" not in match["flag"].lower() and "pwd" not in match["flag"].lower():
        return random_value(match, kind)
    return contextual(match, kind)


def cookie_value(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a cookie's `name=value`: a value that reads as generated, given to a name that says it holds
    a session (`sessionid`, `PHPSESSID`, `_shop_session`) or in a line that sends or sets cookies; an
    analytics id (`_ga=GA1.2.123.456`) is no credential."""
    text, (begin, end) = match.string, match.span("secret")
    name, value = match["name"].lower(), text[begin:end]
    before = text[max(0, match.start() - 2000) : match.start()]  # a header's line, not the whole text
    line = before[before.rfind("\n") + 1 :].lower()
    if not (re.search(_SESSION_NAME, name) or "cookie" in line) or re.fullmatch(r"[A-Z]{0,4}\d[\d.]*", value):
        return None
    return None if value.startswith("/") or "://" in value else random_value(match, kind)


def strong_pair(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for a `user / password` pair no login word announces (`the staging box is root / Hq3$vT9mKp2w`,
    `root:Hq3$vT9mKp2w`): before the slash, a user that opens a clause or follows `is`, `as`, `with`...;
    the password must be made of all four kinds, which no path, region or ratio is."""
    value = match["secret"].rstrip(".,;)")
    kinds = (any(c.islower() for c in value) + any(c.isupper() for c in value) + _has_digit(value)
             + any(not c.isalnum() for c in value))
    if kinds < 4 or _looks_like_placeholder(value):
        return None
    if "account" not in match.re.groupindex and not _pair_user_stands_alone(match.string, match.start()):
        return None
    begin = match.start("secret")
    return begin, begin + len(value), kind


def _pair_user_stands_alone(text: str, slash_at: int) -> bool:
    """Whether the word before a pair's slash is a user a sentence hands over: a name that starts with a
    letter, after `is`, `as`, `with`... or where a clause opens."""
    before = text[max(0, slash_at - 100) : slash_at]
    found = re.search(r"(?:^|(?<=[\s(,;:=]))[`'\"]?(?P<user>[A-Za-z][\w.@+-]{0,63})[`'\"]?$", before)
    if found is None:
        return False
    lead = before[: found.start()]
    return (not lead.strip() and slash_at - len(before) == 0) or bool(
        re.search(r"(?i)(?:(?<![\w-])(?:is|are|as|with|use|using|via|takes|it's)[ \t]+|[(,;:=][ \t]*|\n[ \t]*)$", lead))


def containing(*literals: str) -> Trigger:
    """Trigger on any of the literals, as written."""
    return lambda text, folded: any(map(text.__contains__, literals))  # map: no generator frame per literal


def _long_part_after_underscore(text: str, folded: str) -> bool:
    """Trigger of the token known by its shape: a part after an underscore opens with 24 letters and
    digits (its tail); a plain ``user_id`` compiles nothing."""
    return "_" in text and any(len(part) >= 24 and part[:24].isascii() and part[:24].isalnum()
                               for part in text.split("_")[1:])


def mentioning(*literals: str) -> Trigger:
    """Trigger on any of the lower-case literals, in any case."""
    return lambda text, folded: any(map(folded.__contains__, literals))


def always(text: str, folded: str) -> bool:
    return True


def _continues_word(text: str, start: int) -> bool:
    """Whether `start` is inside a word: after a few letters or digits, not after a long run of them."""
    run = 0
    while run < _GLUED_SECRET_TAIL and run < start and text[start - run - 1].isalnum():
        run += 1
    return 0 < run < _GLUED_SECRET_TAIL


class Rule:
    """One credential format: when to look, what it looks like, which part goes.

    The pattern is compiled and run only on texts the trigger accepts; a
    `standalone` rule also skips matches that start inside a word.

    >>> rule = Rule("npm-token", r"npm_[A-Za-z0-9]{36}", containing("npm_"), unless_placeholder)
    >>> rule.redact("//registry.npmjs.org/:_authToken=npm_" + "a1B2c3D4e" * 4)
    '//registry.npmjs.org/:_authToken=[REDACTED:npm-token]'
    """

    __slots__ = ("_pattern", "judge", "kind", "source", "standalone", "trigger")

    def __init__(
        self, kind: str, source: str, trigger: Trigger, judge: Judge = contextual, *, standalone: bool = False
    ) -> None:
        self.kind = kind
        self.source = source
        self.trigger = trigger
        self.judge = judge
        self.standalone = standalone
        self._pattern: re.Pattern[str] | None = None

    def __repr__(self) -> str:
        return f"Rule({self.kind!r}, {self.source!r})"

    @property
    def pattern(self) -> "re.Pattern[str]":
        # Compiled on first use: compiling every rule would cost the hot path
        # far more than redacting a message does.
        if self._pattern is None:
            self._pattern = re.compile(self.source, re.ASCII)
        return self._pattern

    def redact(self, text: str) -> str:
        """The text with every match the judge accepts replaced by a placeholder.

        A match the judge refuses is looked at again from its next character:
        its span may hold a credential of its own (`postgres://app:[REDACTED:password]@db
        and the api key is 9a8b...`: the prose rule's match from `password` is refused,
        the one from `api key` is not).
        """
        pieces: list[str] = []
        copied = searched = 0  # copied up to here; the next search starts there
        replaced_until = -1
        while match := self.pattern.search(text, searched):
            start, stop = match.span()
            searched = max(stop, start + 1)
            # A token right after one this call replaced is glued to a secret, not inside a word.
            if self.standalone and start != replaced_until and _continues_word(text, start):
                continue
            verdict = self.judge(match, self.kind)
            begin, end, kind = verdict if verdict is not None else (start, start, self.kind)
            end = _end_sparing_placeholders(text, begin, end)
            if end == begin:
                searched = start + 1
                continue
            pieces += [text[copied:begin], _PLACEHOLDER.format(kind)]
            copied, replaced_until = end, stop
        return "".join(pieces) + text[copied:] if pieces else text


def prefixed(kind: str, source: str, *literals: str, judge: Judge = unless_placeholder) -> Rule:
    """A rule for a token that starts with one of the literals, never in the middle of a word."""
    return Rule(kind, source, containing(*literals), judge, standalone=True)


def _end_sparing_placeholders(text: str, begin: int, end: int) -> int:
    """Where a replacement of `text[begin:end]` must stop to leave placeholders whole.

    `begin` itself when the span starts in a placeholder: nothing is replaced.
    """
    opening = text.rfind(PLACEHOLDER_START, max(0, begin - _LONGEST_PLACEHOLDER), begin + len(PLACEHOLDER_START))
    if opening != -1 and _placeholder_end(text, opening) > begin:
        return begin
    opening = text.find(PLACEHOLDER_START, begin, end + len(PLACEHOLDER_START) - 1)
    while opening != -1:
        if _placeholder_end(text, opening) != -1:
            return opening
        opening = text.find(PLACEHOLDER_START, opening + 1, end + len(PLACEHOLDER_START) - 1)
    return end


def _placeholder_end(text: str, opening: int) -> int:
    """Where the placeholder that starts at `opening` ends, or -1 if none starts there."""
    closing = text.find("]", opening, opening + _LONGEST_PLACEHOLDER)
    kind = text[opening + len(PLACEHOLDER_START) : closing]
    return closing + 1 if closing != -1 and kind and all(c in _KIND_CHARS for c in kind) else -1


# Values that name a type, a flag or a variable rather than holding a secret.
_NOT_SECRETS = frozenset(
    "none null nil true false yes no on off str string bytes int bool boolean any object text "
    "optional required undefined env secret secrets password passwd pass pwd token key auth "
    "credentials hidden masked empty unset secretstr default value".split()
)


def _drop_private_blocks(text: str, folded: str) -> str:
    """Replace each `<private>...</private>` block, in any case, with a placeholder.

    Tag by tag rather than one lazy pattern, which would rescan the rest of
    the text once per opening tag that has no closing one.
    """
    if "<private>" not in folded:
        return text
    opening_tag = re.compile("<private>", re.IGNORECASE | re.ASCII)
    closing_tag = re.compile("</private>", re.IGNORECASE | re.ASCII)
    pieces, position = [], 0
    while (opening := opening_tag.search(text, position)) and (closing := closing_tag.search(text, opening.end())):
        pieces += [text[position : opening.start()], _PLACEHOLDER.format("private")]
        position = closing.end()
    return "".join(pieces) + text[position:]


# --- the generic `name = value` rule -------------------------------------

_ASSIGNMENT = (
    r"(?i)(?=[ackpst])(?P<word>pass(?:word|wd|phrase)?|pwd|secret(?:_key_base)?|token|credentials?|key|auth)"
    r"(?P<sep>"
    r"[\"']?\]?[ \t]{0,8}(?:=>|:=|\+?=|:)[ \t]{0,8}"  # key=value, key: value, "key": "value", ["key"] = value
    r"|>"  # <password>value</password>
    # name/value pairs: `{"name": "DB_PASSWORD", "value": ...}`, `- name: DB_PASSWORD` then `value: ...`
    r"|[\"']?[ \t]{0,4}(?:,[ \t]{0,4}[\"']?|\r?\n[ \t]{0,40}-?[ \t]{0,4})value[\"']?[ \t]{0,4}[:=][ \t]{0,4}"
    r"|[ \t]{1,4}(?:(?:is|was)[ \t]{1,4})?"  # `password is hunter2`, `.netrc`
    r")"
    r"(?P<value>[bru]{0,2}\"[^\"\n]{1,256}\"|[bru]{0,2}'[^'\n]{1,256}'|`[^`\n]{1,256}`"
    r"|[^\s\"'`,;<>(){}\[\]]{1,256})"  # quoted with an optional b/r/u prefix, or bare
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# Patterns used by the judges; `re` caches them once compiled, and only
# messages that reach a judge pay for compiling them.
_KEY_NAME = (
    r"(?:^|[_.-])(?:x-)?(?:api|secret|access|private|auth|signing|encryption|master|client|app|application|service|"
    r"account|admin|webhook|server|session|jwt|hmac|shared|consumer|license|deploy|root|sas|storage|subscription|"
    r"integration|live|prod|production|write|cookie)[_-]?key$|^[a-z0-9]*apikey$"
)
_NOT_CREDENTIAL_NAMES = (
    "page", "cursor", "continuation", "next", "sync", "etag", "idempotency", "request", "trace", "correlation",
    "public", "publishable", "primary", "foreign", "sort", "partition", "cache", "lock", "dedup", "unique",
    "lookup", "max", "num", "count", "limit", "usage",
)
# Credential words of prose, in the languages developers write to an agent in.
_PROSE_WORDS = (
    r"api[ _-]?keys?|access[ _-]?keys?|secret[ _-]?keys?|private[ _-]?keys?|keys?|secrets?|tokens?|"
    r"passwords?|passphrases?|passwd|pwd|pass|credentials?|creds|"
    r"mots? de passe|cl(?:e|\u00e9)s?|jetons?|passw(?:o|\u00f6)rt|kennwort|(?:api-)?schl(?:u|\u00fc)ssel|"
    r"contrase(?:n|\u00f1)as?|claves?|wachtwoord|sleutel|senhas?|chaves?|parola|chiave"
)
# Words that name a login, before the `user / password` pair they hand over.
_LOGIN_WORDS = (
    r"log[ -]?ins?|logon|sign[ -]?in|users?(?:[ _-]?names?)?|accounts?|creds|credentials?|"
    r"identifiants?|utilisateur|zugangsdaten|benutzer(?:name)?|anmeldung|usuario|credenciales|gebruiker|utente"
)
_LOGIN_LITERALS = ("log", "sign", "user", "account", "cred", "identifiant", "utilisateur", "zugangsdaten", "benutzer",
                   "anmeldung", "usuario", "gebruiker", "utente")
_PASSWORD_WORDS = ("pass", "pwd", "mot", "passw", "kennwort", "contrase", "wachtwoord", "senha", "parola")
# A word between the credential word and the value that says the value is not the credential.
_NAMES_OF_NON_SECRETS = (
    "commit", "commits", "sha", "sha1", "sha256", "sha-256", "hash", "hashes", "digest", "checksum",
    "fingerprint", "id", "ids", "uuid", "guid", "rev", "revision", "version", "build", "request", "trace",
    "span", "job", "run", "issue", "ticket", "pr", "branch", "tag", "etag", "nonce", "salt", "kid", "serial",
)
_NOT_SECRET_KEYS = frozenset(_NOT_CREDENTIAL_NAMES) | {"ssh", "gpg", "pgp", "host"}


_PUBLISHABLE_PREFIXES = ("pk_live_", "pk_test_", "pk.eyJ")
# Accounts every machine has, which `<account>:<password>` hands over without a login word.
_ACCOUNTS = ("root", "admin", "administrator", "sa", "postgres", "ubuntu", "ec2-user", "pi", "deploy", "ops", "oracle",
             "mysql", "guest", "jenkins", "git", "ci")
# Cookie names that hold a session or a login.
_SESSION_NAME = (r"^(?:sessionid|session_?id|sessid|session|phpsessid|jsessionid|asp\.net_sessionid|connect\.sid|"
                 r"_?[a-z0-9]+_session|remember_(?:user_)?token|_?csrf(?:token)?|xsrf-token)$")
# How a private key's DER body starts, in base64: PKCS #8 and PKCS #1 RSA, SEC1 and PKCS #8 EC, Ed25519, DSA,
# encrypted PKCS #8, OpenSSH. A public key or a certificate starts otherwise.
_KEY_BODY_STARTS = ("MIIEvQIBADAN", "MIIEvgIBADAN", "MIIEvAIBADAN", "MIIJQwIBADAN", "MIIJQgIBADAN", "MIIJQQIBADAN",
                    "MIIEpAIBAAKC", "MIIEowIBAAKC", "MIIEogIBAAKC", "MIIJKQIBAAKC", "MIIJKAIBAAKC", "MIIJJwIBAAKC",
                    "MHcCAQEEI", "MIGkAgEBBDA", "MIHcAgEBBEI", "MIGHAgEAMBMG", "MIG2AgEAMBAG", "MC4CAQAwBQYDK2Vw",
                    "MIIBuwIBAAKBgQ", "MIIBvAIBAAKBgQ", "MIIFHDBOBgkqhkiG9w0BBQ0w", "MIIFLTBXBgkqhkiG9w0BBQ0w",
                    "b3BlbnNzaC1rZXktdjEA")
_KIND_BY_WORD = {"token": "token", "key": "api-key", "auth": "secret", "secret": "secret", "credential": "secret"}
_CODE_REFERENCE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"


# Words of the assignment rule, and whether a bare blank may separate them from
# their value (`password hunter2` in a .netrc) rather than `=`, `:` or a quote.
_CREDENTIAL_WORDS = (
    ("password", True), ("passwd", True), ("passphrase", True), ("pass", True), ("pwd", True), ("secret", True),
    ("secret_key_base", True), ("token", False), ("credential", False), ("credentials", False), ("key", False),
    ("auth", False),
)
_SEPARATOR_STARTS = frozenset("=:+>\"'],\r\n")


def _may_assign_credential(text: str, folded: str) -> bool:
    """Trigger of the assignment rule: a credential word followed by a separator.

    Cheaper than compiling that rule's pattern to find out that `key` in
    `KeyError` or `token` in prose assigns nothing.
    """
    for word, blank_separates in _CREDENTIAL_WORDS:
        at = folded.find(word)
        while at != -1:
            following = folded[at + len(word) : at + len(word) + 300]
            if following.lstrip(" \t")[:1] in _SEPARATOR_STARTS:
                return True
            if blank_separates and following[:1] in (" ", "\t") and _has_digit(_value_after_blank(following)):
                return True  # `password hunter2`, `password is hunter2`
            at = folded.find(word, at + 1)
    return False


def _may_hand_over_login(text: str, folded: str) -> bool:
    """Trigger of the login pair rule: a pair's separator and a word that names a login."""
    return ("/" in text or ":" in text) and any(word in folded for word in _LOGIN_LITERALS)


def _may_hand_over_pair(text: str, folded: str) -> bool:
    """Trigger of the unannounced pair rule: a slash, and a symbol a made password has."""
    return "/" in text and any(c in text for c in "!#$%&*?@^~+=")


def _value_after_blank(following: str) -> str:
    """The word a blank-separated value would be: `hunter2` in ` hunter2` and in ` is hunter2`."""
    words = following.split(maxsplit=2)
    if len(words) > 1 and words[0] in ("is", "was"):
        return words[1]
    return words[0] if words else ""


def _has_digit(value: str) -> bool:
    return re.search(r"\d", value) is not None  # in C: a judge asks it of every value a rule finds


def _name_before(text: str, end: int) -> str:
    """The identifier that ends at `end` (`DB_PASSWORD` for `...DB_PASSWORD=`)."""
    start = end
    while start > 0 and end - start < 64 and text[start - 1] in _NAME_CHARS:
        start -= 1
    return text[start:end].lstrip(".-")


def assignment(match: "re.Match[str]", kind: str) -> Verdict | None:
    """Judge for `name = value`: the name must name a credential, the value hold one."""
    text, word = match.string, match["word"].lower()
    name = _name_before(text, match.end("word"))
    name_start = match.end("word") - len(name)
    before_name = text[name_start - 1 : name_start]
    lowered_name = name.lower()
    begin, end = match.span("value")
    unprefixed = match["value"].lstrip("bruBRU")
    quoted = unprefixed[:1] in ("'", '"', "`")
    if quoted:
        begin, end = end - len(unprefixed) + 1, end - 1
    elif before_name in ("?", "&"):
        # In a query string `&` starts the next field; elsewhere it may be part of a password.
        field_end = text.find("&", begin, end)
        end = end if field_end == -1 else field_end
    value = text[begin:end]
    sep = match["sep"].strip(" \t\"'")
    if (sep == ":" == match["sep"] and before_name == ":") or value.startswith(_PUBLISHABLE_PREFIXES):
        return None  # a field of an ARN (`...:secret:prod/db`), or a key meant to be public
    if word.startswith("pass") or word == "pwd":
        if word in ("pass", "pwd") and lowered_name[-len(word) - 1 : -len(word)].isalpha():
            return None  # `bypass`, `compass`; but `PGPASSWORD` is a password
        return (begin, end, "password") if _password_like(match, value, quoted, name, sep, end) else None
    if word.startswith("secret"):
        if re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+", value):
            return None  # `existingSecret: db-credentials` names a Kubernetes secret, it holds none
        return (begin, end, "secret") if _password_like(match, value, quoted, name, sep, end) else None
    if sep in ("", "is", "was") or any(part in lowered_name for part in _NOT_CREDENTIAL_NAMES):
        return None  # `token is X` is prose, the prose rules' to judge: a blank assigns only a password
    if word == "key" and not (re.search(_KEY_NAME, lowered_name) or (name.isupper() and name.endswith("_KEY"))):
        return None
    if word == "auth" and lowered_name not in ("auth", "_auth") and not lowered_name.endswith(("_auth", "-auth")):
        return None
    return (begin, end, _KIND_BY_WORD[word.rstrip("s")]) if _looks_random(value) else None


def _password_like(match: "re.Match[str]", value: str, quoted: bool, name: str, sep: str, end: int) -> bool:
    """Whether a value given to a password-like name is a literal password, not code or a placeholder."""
    lowered = value.lower()
    if len(value) < 4 or _looks_like_placeholder(value) or lowered in _NOT_SECRETS or lowered == name.lower():
        return False
    if value.startswith(("/", "~/", "./", "../")):
        return False  # a path, as in `PWD=/home/jane`
    has_digit = _has_digit(value)
    if not sep:  # `password is hunter2`: only a value that no prose word would be
        return (
            not quoted and len(value) >= 6 and has_digit and "=" not in value
            and not re.fullmatch(_CODE_REFERENCE, value)
        )
    if quoted:
        if value != value.strip():
            return False  # the quote closed a string rather than opened one: `"Password: " PASSWORD`
        # A quoted sentence is a help text; a passphrase with spaces has a digit or symbol.
        return not any(c.isspace() for c in value) or has_digit or not value.replace(" ", "").isalpha()
    if match.string[end : end + 1] in ("(", "[") or re.fullmatch(_CODE_REFERENCE, value):
        return False  # `password=get_password()`, `token=request.headers[...]`, `password=self.password`
    if value.replace("_", "").isalpha():
        # A bare word is a variable in code, a literal in env files and YAML.
        rest_of_line = match.string[end : end + 200].split("\n", 1)[0].strip()
        return name.isupper() or (sep == ":" and (not rest_of_line or rest_of_line.startswith("#")))
    return True


# --- the rules -------------------------------------------------------------

_B64 = "A-Za-z0-9+/"
_PEM_BEGIN = r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_NEWLINE = r"(?:(?:\\r)?\\n|\s)"  # a real newline, or one escaped inside JSON

RULES: tuple[Rule, ...] = (
    # Private keys. The body may not cross another BEGIN line, so each scan
    # stops where the next key starts and many headers cost one pass.
    Rule("private-key", _PEM_BEGIN + r"(?:[^-]|-(?!----BEGIN)){0,16384}?" + _PEM_END, containing("PRIVATE KEY")),
    # A key pasted without its END line: the header and the base64 lines after it.
    Rule("private-key",
         _PEM_BEGIN + _PEM_NEWLINE + r"{1,8}(?:[" + _B64 + r"=]{16,100}" + _PEM_NEWLINE + r"{0,8}){1,400}+",
         containing("PRIVATE KEY")),
    # A key's body without its BEGIN line: base64 that starts as a private key's structure does.
    prefixed("private-key",
             r"(?:" + "|".join(_KEY_BODY_STARTS) + r")[" + _B64 + r"]{40,100}+(?:" + _PEM_NEWLINE
             + r"{1,4}[" + _B64 + r"]{16,100}+){0,200}+={0,2}(?:" + _PEM_NEWLINE + r"{1,4}" + _PEM_END + r")?",
             *_KEY_BODY_STARTS),
    # A PEM block base64-encoded whole, as a kubeconfig's `client-key-data` holds it.
    prefixed("private-key",
             r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,40}?(?:UFJJVkFURSBLRV|BSSVZBVEUgS0VZ|QUklWQVRFIEtFW)[" + _B64
             + r"]{20,16384}={0,2}", "LS0tLS1CRUdJTi"),
    prefixed("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    # Cloud providers.
    prefixed("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}",
             "AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    prefixed("aws-session-token", r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[" + _B64 + r"=]{80,2048}",
             "FwoGZXIvYXdz", "IQoJb3JpZ2lu"),
    Rule(
        "aws-secret-key",
        r"(?i)(?:secret[ _-]?access[ _-]?key|aws[ _-]?secret(?:[ _-]?key)?)(?:[ \t]{0,4}\[[^\]\n]{0,20}\])?"
        r"[\"']?[ \t]{0,8}(?:=>|:=|=|:)[ \t]{0,8}[\"']?(?P<secret>[" + _B64 + r"]{40})(?![" + _B64 + r"=])",
        mentioning("secret_access_key", "secretaccesskey", "secret access key", "secret-access-key", "aws_secret",
                   "aws secret", "aws-secret", "awssecret"),
    ),
    # The secret that follows its key id, as in `credentials.csv`.
    Rule("aws-secret-key",
         r"\[REDACTED:aws-access-key\][\s,;:|\"']{1,6}(?P<secret>[" + _B64 + r"]{40})(?![" + _B64 + r"=])",
         containing("[REDACTED:aws-access-key]")),
    prefixed("gcp-api-key", r"AIza[0-9A-Za-z_-]{35}", "AIza"),
    # A service-account file's key id: with the key, what signs as the account; alone, what names it in logs.
    Rule("gcp-private-key-id", r"private_key_id[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<secret>[a-f0-9]{40})\b",
         containing("private_key_id")),
    prefixed("gcp-oauth-client-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", "GOCSPX-"),
    prefixed("gcp-access-token", r"ya29\.[0-9A-Za-z_-]{30,2048}", "ya29."),
    prefixed("gcp-refresh-token", r"1//0[0-9A-Za-z_-]{40,512}", "1//0"),
    Rule("azure-storage-key", r"(?i)AccountKey=(?P<secret>[" + _B64 + r"]{86}==)", mentioning("accountkey=")),
    Rule("azure-shared-access-key", r"(?i)SharedAccessKey=(?P<secret>[" + _B64 + r"]{42,44}=)",
         mentioning("sharedaccesskey=")),
    Rule("azure-sas-signature", r"[?&;]sig=(?P<secret>[A-Za-z0-9%+/=]{30,200})", containing("sig=")),
    # Signed URLs: S3 and GCS presigned, CloudFront's, a temporary credential's session token in the query.
    Rule("url-signature",
         r"(?i)[?&;](?:x-amz-signature|x-goog-signature|x-amz-security-token|signature)=(?P<secret>[A-Za-z0-9%+/=_.~-]"
         r"{16,4096})", mentioning("signature=", "security-token="), contextual),
    # Version control.
    prefixed("github-token", r"github_pat_[A-Za-z0-9_]{50,255}", "github_pat_"),
    prefixed("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    prefixed("gitlab-token",
             r"gl(?:pat|dt|rt|ptt|oas|cbt|soat|ft|imt|agent|ffct|wt)-[A-Za-z0-9_-]{20,64}|GR1348941[A-Za-z0-9_-]{20,64}",
             "gl", "GR1348941"),
    prefixed("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{100,300}", "ATATT3"),
    prefixed("bitbucket-app-password", r"ATBB[A-Za-z0-9_=.-]{28,40}", "ATBB"),
    # Payments.
    prefixed("stripe-secret-key", r"sk_(?:live|test)_[A-Za-z0-9]{20,247}", "sk_live_", "sk_test_"),
    prefixed("stripe-restricted-key", r"rk_(?:live|test)_[A-Za-z0-9]{20,247}", "rk_live_", "rk_test_"),
    prefixed("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{32,100}", "whsec_"),
    prefixed("square-token", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}", "sq0"),
    prefixed("braintree-token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}", "access_token$"),
    prefixed("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", "shp"),
    # Chat.
    prefixed("slack-token", r"(?:xox[abposrce](?:\.xox[abposr])?|xapp)-[0-9A-Za-z-]{10,250}", "xox", "xapp-",
             judge=random_value),
    Rule("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_-]{20,200})",
         containing("hooks.slack.com/")),
    Rule("discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d{15,21}/(?P<secret>[A-Za-z0-9_-]{60,80})",
         containing("/api/webhooks/")),
    # Glued to `/bot` in API URLs, so not a standalone token.
    Rule("telegram-bot-token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}", containing(":AA")),
    Rule("teams-webhook", r"\.webhook\.office\.com/webhookb2/(?P<secret>[A-Za-z0-9@/_-]{40,300})",
         containing(".webhook.office.com/")),
    prefixed("firebase-server-key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,200}", "APA91b"),
    prefixed("twitter-bearer-token", r"A{18,24}[A-Za-z0-9]{4,40}%[A-Za-z0-9%]{20,150}", "AAAAAAAAAAAAAAA"),
    # AI providers.
    prefixed("anthropic-key", r"sk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_-]{20,300}", "sk-ant-"),
    prefixed("openrouter-key", r"sk-or-v1-[a-f0-9]{64}", "sk-or-"),
    prefixed("groq-key", r"gsk_[A-Za-z0-9]{48,56}", "gsk_"),
    prefixed("perplexity-key", r"pplx-[A-Za-z0-9]{48}", "pplx-"),
    prefixed("xai-key", r"xai-[A-Za-z0-9]{70,90}", "xai-"),
    # Email and messaging APIs.
    prefixed("brevo-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
    # Package registries.
    prefixed("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_"),
    prefixed("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,400}", "pypi-AgE"),
    prefixed("rubygems-token", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    prefixed("docker-hub-token", r"dckr_pat_[A-Za-z0-9_-]{27,40}", "dckr_pat_"),
    # Infrastructure.
    prefixed("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,300}", "hvs.", "hvb.", "hvr."),
    prefixed("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", "_v1_"),
    prefixed("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    prefixed("heroku-token", r"HRKU-[A-Za-z0-9_-]{40,80}", "HRKU-"),
    prefixed("flyio-token", r"fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/=_-]{60,2048}", "fo1_", "fm1", "fm2"),
    prefixed("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", "dp."),
    prefixed("grafana-token", r"glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glc_", "glsa_"),
    prefixed("sentry-token", r"sntr[ysu]_[A-Za-z0-9+/=_-]{40,300}", "sntr"),
    # An error tracker's DSN: its key before the host (Sentry, GlitchTip, a self-hosted Sentry).
    Rule("sentry-dsn", r"https?://(?P<secret>[a-f0-9]{32})(?::[a-f0-9]{32})?@[A-Za-z0-9.-]{1,253}(?::\d{1,5})?/\d+",
         containing("://")),
    prefixed("newrelic-key", r"NR(?:AK|JS|II)-[A-Za-z0-9]{19,40}", "NRAK-", "NRJS-", "NRII-"),
    prefixed("postman-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", "PMAK-"),
    prefixed("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}", "pscale_"),
    prefixed("mapbox-secret-token", r"sk\.eyJ[A-Za-z0-9_-]{20,400}\.[A-Za-z0-9_-]{20,100}", "sk.eyJ"),
    prefixed("jwt", r"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,1024}", "eyJ"),
    # Short or missing prefixes that a word or a hash can contain; they run
    # after the distinctive ones, which leaves fewer glued neighbours to wait for.
    prefixed("mollie-api-key", r"\b(?:live|test)_[A-Za-z0-9]{30}\b", "live_", "test_", judge=random_value),
    prefixed("openai-key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,300}", "sk-", judge=random_value),
    prefixed("huggingface-token", r"(?:hf_|api_org_)[A-Za-z]{30,40}", "hf_", "api_org_"),
    prefixed("replicate-token", r"r8_[A-Za-z0-9]{37}", "r8_"),
    prefixed("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", "SG."),
    prefixed("mailgun-key", r"key-[0-9a-f]{32}", "key-"),
    prefixed("mailchimp-key", r"[0-9a-f]{32}-us\d{1,2}", "-us"),
    prefixed("resend-key", r"re_[A-Za-z0-9]{8,10}_[A-Za-z0-9]{20,30}", "re_"),
    prefixed("nuget-key", r"oy2[a-z0-9]{43}", "oy2"),
    prefixed("crates-token", r"cio[A-Za-z0-9]{32}", "cio"),
    prefixed("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", ".atlasv1."),
    prefixed("pulumi-token", r"pul-[a-f0-9]{40}", "pul-"),
    prefixed("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", "lin_"),
    prefixed("notion-token", r"(?:secret|ntn)_[A-Za-z0-9]{43,50}", "secret_", "ntn_"),
    prefixed("supabase-token", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,64}", "sbp_", "sb_secret_"),
    prefixed("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?", "dapi"),
    prefixed("meta-access-token", r"EAA[A-Za-z0-9]{90,300}", "EAA"),
    prefixed("azure-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", "Q~"),
    Rule("discord-token", r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
         # No literal marks a bare Discord token; these words surround the ones people paste.
         mentioning("discord", "token", "bot", ".run("), unless_placeholder, standalone=True),
    # Passwords in URLs and command lines, tokens after an auth scheme.
    Rule("password", r"://(?P<user>[^\s:/?#@'\"]{0,128}):(?P<secret>[^\s/?'\"]{1,256})@(?!sha\d{3}:)",
         containing("://")),
    Rule("password",
         r"curl\b[^\n]{0,300}?\s(?:-u|--user)[ \t=]{1,4}[\"']?(?P<user>[^\s:\"']{1,64}):(?P<secret>[^\s\"']{1,128})",
         containing("curl"), cli_password),
    Rule("password",
         r"(?:mysql(?:dump|admin|sh|import|check)?|mariadb)\b[^\n]{0,200}?[ \t]-p(?P<secret>[^\s\"'-][^\s\"']{2,127})",
         containing("mysql", "mariadb"), cli_password),
    Rule("password",
         r"(?:sshpass|(?:docker|podman|helm registry) login)\b[^\n]{0,200}?[ \t]-p[ \t]{1,4}[\"']?"
         r"(?P<secret>[^\s\"']{3,128})",
         containing("sshpass", " login"), cli_password),
    Rule("password", r"redis-cli\b[^\n]{0,200}?[ \t]-a[ \t]{1,4}[\"']?(?P<secret>[^\s\"']{3,128})",
         containing("redis-cli"), cli_password),
    Rule("password", r"(?:sqlcmd|bcp|isql|osql)\b[^\n]{0,200}?[ \t]-P[ \t]{0,4}[\"']?(?P<secret>[^\s\"']{3,128})",
         containing("sqlcmd", "bcp", "isql", "osql"), cli_password),
    # Go's MySQL DSN and Oracle's EZConnect: `user:pass@tcp(host:3306)/db`, `sqlplus scott/tiger@//db:1521/svc`.
    Rule("password", r"(?<![\w.$\[-])(?P<user>[\w.$-]{1,64}):(?P<secret>[^\s/:'\"]{1,128}?)@(?:tcp6?|udp|unix)\(",
         containing("@tcp(", "@tcp6(", "@udp(", "@unix(")),
    Rule("password", r"\b(?:sqlplus|sqlldr|expdp|impdp|rman|exp|imp)\b[^\n]{0,100}?\s(?P<user>[\w$#]{1,30})/"
         r"(?P<secret>[^\s@/'\"]{1,128})@", containing("sqlplus", "sqlldr", "expdp", "impdp", "rman", "exp", "imp")),
    # `htpasswd -b FILE USER PASS`, `htpasswd -nb USER PASS`: the last word of the command.
    Rule("password", r"htpasswd\b[^\n]{0,200}?[ \t]-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-\S+[ \t]+)*(?:[^\s-]\S*[ \t]+){1,2}"
         r"[\"']?(?P<secret>[^\s\"']{1,128})[\"']?(?=[ \t]*(?:$|[;&|)\n#]))", containing("htpasswd"), cli_password),
    # A command line's password or token flag: `--db-password X`, `--admin-password=X`, `-storepass X`.
    Rule("password",
         # Two dashes, or one before the keytool and jarsigner flags: `-JWT_SECRET=...` is an env line.
         r"(?i)(?<![\w-])(?P<flag>--(?:[a-z0-9]+[-_])*(?:password|passwd|passphrase|pwd|storepass|keypass|"
         r"secret|token|api[-_]?key)|-(?:src|dest)?(?:storepass|keypass))(?:[ \t]*=[ \t]*|[ \t]+)[\"']?"
         r"(?P<secret>[^\s\"']{3,256})",
         mentioning("--", "-storepass", "-keypass", "-srcstorepass", "-deststorepass"), flag_value),
    Rule("password", r"-pass(?:in|out)[ \t]+[\"']?pass:(?P<secret>[^\s\"']{1,256})", containing("-passin", "-passout")),
    # The auth helpers of HTTP clients: `auth=("user", "pass")`, `HTTPBasicAuth("user", "pass")`,
    # `req.SetBasicAuth`, `UsernamePasswordCredentials`, `NetworkCredential`, `aiohttp.BasicAuth`.
    Rule("password",
         r"(?:\bauth[ \t]*=[ \t]*\(|(?:HTTP(?:Basic|Digest|Proxy)Auth|\bBasicAuth|UsernamePasswordCredentials|"
         r"NetworkCredential|[Ss]etBasicAuth|PasswordAuthentication)[ \t]*\()[ \t]*(?:\w+[ \t]*=[ \t]*)?"
         r"[bru]?[\"'][^\"'\n]{1,64}[\"'][ \t]*,[ \t]*(?:\w+[ \t]*=[ \t]*)?[bru]?[\"'](?P<secret>[^\"'\n]{1,256})[\"']",
         containing("auth=", "auth =", "Auth(", "Auth (", "Credentials(", "Credential(", "BasicAuth"), contextual),
    # A cookie: `Cookie: sessionid=...`, `Set-Cookie: _shop_session=...`, `curl -b 'PHPSESSID=...'`.
    Rule("cookie", r"(?<![\w.$!#%&*+^|~-])(?P<name>[A-Za-z0-9_.$!#%&*+^|~-]{1,64})=(?P<secret>[^;\s\"',&]{8,4096})",
         mentioning("cookie", "sess", "connect.sid", "remember", "csrf", "xsrf"), cookie_value),
    Rule("basic-auth", r"(?i)basic[ \t]{1,4}(?P<secret>[" + _B64 + r"]{6,1024}={0,2})", mentioning("basic"),
         basic_credentials),
    Rule("bearer-token", r"(?i)bearer[ \t]{1,4}(?P<secret>[A-Za-z0-9._~+/-]{16,4096}=*)", mentioning("bearer"),
         random_value),
    Rule("token",
         r"(?i)authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
         r"(?:(?:token|apikey|api-key|key|sso-key|ssws)[ \t]{1,4})?(?P<secret>[A-Za-z0-9._~+/=:-]{16,4096})",
         mentioning("authorization"), random_value),
    # An access key id given by name (`AWS_ACCESS_KEY_ID=...`), whoever issued it (AWS, Scaleway, MinIO...).
    Rule("access-key-id",
         r"(?i)access_?key_?id[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?P<secret>[A-Za-z0-9/+]{16,128})",
         mentioning("access"), random_value),
    # A vendor's token no rule names, by its shape: a short lower-case prefix of two to four parts and a
    # long generated tail of upper case, lower case and digits (`cf_dns_Zq3Xw8...`, `pl_sbx_4Hq8...`),
    # where the words that announce it are too far ahead for the prose rules.
    # Not the ids meant to be public: a publishable key (`pk_live_...`), a checkout session (`cs_test_...`).
    Rule("token", r"(?<![\w-])(?!pk_|cs_)[a-z]{2,10}(?:_[a-z0-9]{2,10}){1,3}_(?P<secret>[A-Za-z0-9]{24,128})(?![\w-])",
         _long_part_after_underscore, _generated_tail, standalone=True),
    # A value handed over in prose: "here's my token so you can test it: 7d2f...".
    Rule("token",
         r"(?i)\b(?:tokens?|api[ _-]?keys?|secrets?|passwords?|credentials?)\b[^\n:=]{0,60}?[:=][ \t]{0,4}"
         r"(?P<secret>[A-Za-z0-9][A-Za-z0-9_.:+/=-]{19,255})",
         mentioning("token", "key", "secret", "password", "credential"), handed_over),
    # A value a sentence hands over, in any phrasing: "use key X and secret Y", "secret key X",
    # "the api key for staging, use X", "le mot de passe est `X`". Nothing but a blank, a few words
    # and punctuation may stand between: not a line break, not another value's quotes.
    Rule("token",
         r"(?i)(?<![\w-])(?P<word>" + _PROSE_WORDS + r")(?![\w-])"
         # no `=` in it: `name = value` is the assignment rule's (the judge would refuse it)
         r"(?P<gap>(?:[^\n`'\"=]|(?<=[A-Za-z])'(?=[A-Za-z])){0,60}?)[`'\"]?"  # an apostrophe inside a word
         # A digit or a symbol in it: a plain word ("servidor") would end the match before the value.
         r"(?<![A-Za-z0-9_+/.~!@#$%^&*-])(?=[A-Za-z0-9_+/=.~!@#$%^&*-]{0,255}?[0-9_+/=~!@#$%^&*])"
         r"(?P<secret>[A-Za-z0-9][A-Za-z0-9_+/=.~!@#$%^&*-]{7,255}+)(?![\w+/=~!@#$%^&*-])",
         mentioning("key", "secret", "token", "pass", "pwd", "cred", "cle", "clé", "jeton", "schl",
                    "kennwort", "contrase", "clave", "wachtwoord", "sleutel", "senha", "chave", "parola", "chiave"),
         said_in_prose),
    # A login handed over as a pair: "the login is admin / Xc7#pLq2Rv9!", "creds: deploy:Hq4!mZ8wLp2".
    # Slash with blanks around it (`src/lib` is a path), or a colon glued to both halves.
    Rule("password",
         r"(?i)(?<![\w-])(?:" + _LOGIN_WORDS + r")(?![\w-])(?P<gap>[^\n`'\"/]{0,60}?)[`'\"]?"
         r"(?P<user>[A-Za-z0-9][\w.@+-]{0,63})[`'\"]?(?:[ \t]{1,3}/[ \t]{1,3}[`'\"]?|:)"
         r"(?P<secret>[^\s`'\"/:]{8,128})",
         _may_hand_over_login, login_pair),
    # A pair no login word announces, after `is`, `as`, `with` or a colon: `the staging box is root / Hq3$vT9mKp2w`,
    # `root:Hq3$vT9mKp2w works`. The password must be of all four kinds.
    # Found at the slash, cheaper than at every word: the judge reads the user before it.
    Rule("password", r"(?<=[\w.@+`'\"-])[`'\"]?[ \t]{1,3}/[ \t]{1,3}[`'\"]?(?P<secret>[^\s`'\"/:]{8,128})",
         _may_hand_over_pair, strong_pair),
    # Glued by a colon, only an account every machine has: `h1:<hash>` and `SHA256:<fingerprint>` are no login.
    Rule("password",
         r"(?i)(?<![\w.:/@-])(?P<account>" + "|".join(_ACCOUNTS) + r"):(?P<secret>[^\s`'\"/:]{8,128})",
         mentioning(*(f"{account}:" for account in _ACCOUNTS)), strong_pair),
    # Anything assigned to a name that says it holds a credential.
    Rule("secret", _ASSIGNMENT, _may_assign_credential, assignment),
)


class PatternRedactor:
    """Replace credentials with `[REDACTED:<kind>]` placeholders, nothing else.

    ``extra`` patterns map a kind to a regular expression (compiled with
    `re.ASCII`, as the built-in ones); a group named `secret`, when present,
    is the part replaced. They run on every text, after the built-in rules.

    >>> PatternRedactor({"employee-id": r"EMP-\\d{6}"}).redact("ask EMP-123456 for the key")
    'ask [REDACTED:employee-id] for the key'
    """

    def __init__(self, extra: Mapping[str, str] | None = None) -> None:
        extra_rules = []
        for kind, source in (extra or {}).items():
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", kind):
                raise ValueError(f"kind {kind!r}: use lower-case letters, digits and '-'")
            re.compile(source, re.ASCII)  # a bad pattern fails here, not on a message
            extra_rules.append(Rule(kind, source, always, every_match))
        self.rules = RULES + tuple(extra_rules)

    def redact(self, text: str) -> str:
        """The text with every credential replaced by a placeholder naming its kind."""
        for _ in range(_MAX_PASSES):
            redacted = self._redact_once(text)
            if redacted == text:
                break
            text = redacted
        return text

    def _redact_once(self, text: str) -> str:
        # Lower-cased once per pass: placeholders written during the pass hide
        # literals but add none that a trigger looks for, and the next pass sees them.
        folded = text.lower()
        text = _drop_private_blocks(text, folded)
        for rule in self.rules:
            if rule.trigger(text, folded):
                text = rule.redact(text)
        return text


_default = PatternRedactor()


def redact(text: str) -> str:
    """``text`` with its credentials redacted by the built-in rules.

    >>> redact("curl -H 'Authorization: Bearer 3kT9vQ2xLm8ZpR4wN7cB1yF6'")
    "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"
    """
    return _default.redact(text)


def main(argv: list[str] | None = None) -> int:
    """`memsift redact [FILE]`: print FILE, or standard input, with credentials redacted.

    Bytes that are not UTF-8 pass through unchanged. Returns 0, or 2 with a
    message on stderr when FILE cannot be read.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="memsift redact", description="Print a file, or standard input, with its credentials redacted."
    )
    parser.add_argument("file", nargs="?", default="-", help="the file to read (default: standard input)")
    arguments = parser.parse_args(argv)
    try:
        if arguments.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(arguments.file, "rb") as handle:
                data = handle.read()
    except OSError as error:
        print(f"memsift redact: cannot read {arguments.file}: {error.strerror or error}", file=sys.stderr)
        return 2
    redacted = redact(data.decode("utf-8", "surrogateescape"))
    try:
        sys.stdout.buffer.write(redacted.encode("utf-8", "surrogateescape"))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head`): point stdout at /dev/null so the exit flush is quiet.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

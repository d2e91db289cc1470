"""Notes of the kind retain writes, as many as wanted, for measuring memsift at scale.

Short lines (100 to 180 characters, median 135) with a date, a category, the fact and
a pointer back to the exchange; a vocabulary of several hundred technical words
and generated identifiers, so the words of a message meet a few dozen notes,
as they would in a long-lived project, not none and not all.

    >>> lines = generated_notes(20_000, seed=1)
    >>> lines[0]
    '2026-02-09 decision: the scim dropped throughput over csv (src/arrow/journald.py) since the old one ...'
"""

from __future__ import annotations

import random

NOUNS = """
ledger invoice webhook shard replica cursor tenant quota bucket kernel socket daemon cron schema index
vacuum parser lexer buffer mutex thread queue broker topic offset snapshot rollup metric gauge tracer span
proxy gateway router tunnel certificate token cookie session locale timezone currency rounding decimal
bitmap checksum archive tarball wheel lockfile resolver mirror registry artifact runner matrix fixture
migration rollback canary failover quorum leader follower heartbeat lease backoff jitter deadline retry
breaker outbox inbox saga payout refund chargeback dispute mandate thumbnail encoder codec bitrate subtitle
playlist manifest segment chunk upload download search ranking embedding vector tokenizer prompt cache
eviction ttl redis postgres sqlite mysql kafka rabbitmq nginx caddy traefik docker compose kubernetes helm
terraform ansible systemd journald logrotate cronjob backup restore replication partition sharding batch
stream worker scheduler celery sidekiq resque dramatiq stripe mollie paypal adyen braintree signature
idempotency nonce hmac oauth jwt saml sso ldap scim react vue svelte htmx tailwind vite webpack esbuild
babel typescript eslint prettier jest vitest pytest node deno bun python ruby golang rust java kotlin swift
elixir erlang php laravel django flask fastapi rails spring express nest next nuxt remix astro graphql grpc
rest openapi swagger protobuf avro parquet arrow csv json yaml toml heap memory cpu disk iops latency
throughput p95 p99 timeout pool connection handshake tls dns cdn
""".split()
VERBS = "uses picked chose pinned capped moved switched dropped replaced limited batched sharded cached retried".split()
REASONS = (
    "because it dropped events under load", "since the old one leaked memory nightly",
    "as the vendor caps requests per minute", "so that retries stay idempotent",
    "because the migration locked the table for minutes", "since p95 latency doubled",
    "because the free tier only allows a few connections", "so deploys stay under a minute",
    "because the CI runner has little disk", "since the library is unmaintained",
    "because timezones broke the nightly report", "so the worker never exceeds its heap",
)
UNITS = ("MB", "requests", "ms", "connections")


def generated_notes(count: int, seed: int = 1) -> list[str]:
    """``count`` distinct note lines, the same for the same seed."""
    rng = random.Random(seed)
    lines: dict[str, None] = {}
    while len(lines) < count:
        lines[_note(rng)] = None
    return list(lines)


def _identifier(rng: random.Random) -> str:
    a, b = rng.sample(NOUNS, 2)
    return rng.choice([f"{a}-{b}", f"src/{a}/{b}.py", f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}", f"{a}_{b}",
                       f"{rng.randint(2, 4096)} MB", f"port {rng.randint(1024, 65000)}"])


def _note(rng: random.Random) -> str:
    category = rng.choice(("decision", "constraint", "incident"))
    a, b, c = rng.sample(NOUNS, 3)
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    why = rng.choice(REASONS)
    if category == "decision":
        fact = f"the {a} {rng.choice(VERBS)} {b} over {c} ({_identifier(rng)}) {why}"
    elif category == "constraint":
        fact = (f"{a} {b} must stay under {rng.randint(2, 900)} {rng.choice(UNITS)} "
                f"on {_identifier(rng)}: {why}")
    else:
        fact = f"{a} {b} failed in {_identifier(rng)}; fixed by {rng.choice(VERBS)} {c} {why}"
    return f"{day} {category}: {fact} [exchange {rng.getrandbits(32):08x}]"

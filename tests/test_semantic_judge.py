"""The semantic judge: memsift/semantic/judge.py over the embedded decider, and its head's rebuild."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift.decider.embedded import EmbeddedDecider
from memsift.pipeline import recall
from memsift.semantic.embedder import InProcessEmbedder
from memsift.semantic.judge import HEAD, SemanticDecider
from memsift.semantic.model import installed
from memsift.services import open_services
from memsift.stages.recall import ANSWERS
from memsift.stages.retain import NOVEL_OPTIONS
from memsift.types import Choice, Message, Noul, Turn, Vectors

REPO = Path(__file__).resolve().parent.parent
semantic = pytest.mark.skipif(not installed(), reason="the [semantic] extra is not installed")

LOCKS = "We'll use Postgres advisory locks instead of Redis locks, because a Redis key can be evicted mid-job."
NOTES = [
    "Deploys go out on Tuesdays only: the payments partner freezes changes from Wednesday to Friday.",
    LOCKS,
    "The nightly exporter OOMed at 1 GB; it now streams rows with a server-side cursor.",
    "Invoices are rendered by WeasyPrint in the worker, never in the request.",
    "Feature flags live in Unleash; the frontend reads them through /api/flags, cached 60 s.",
]


def answers(*items: tuple[str, str]) -> dict[str, Noul]:
    return {str(i): Noul("answers", {"question": ANSWERS, "item": text, "origin": origin})
            for i, (text, origin) in enumerate(items)}


class Silent:
    """An embedder still starting (the warm server not up): ``embed`` returns None, as the protocol allows."""

    name = "silent"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        self.asked.append(list(texts))
        return None


class Broken(Silent):
    def embed(self, texts: Sequence[str]) -> Vectors | None:
        self.asked.append(list(texts))
        raise OSError("the socket went away")


class Counted(InProcessEmbedder):
    """The real model, counting its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        return super().embed(texts)


STATE = {"message": "why didn't we just use Redis for mutual exclusion?",
         "conversation": [{"role": "user", "text": "the import job ran twice again"}], "kind": "past_choice"}


@pytest.mark.parametrize("make", [Silent, Broken], ids=["returns None", "fails"])
def test_without_vectors_the_lexical_answers_come_back_unchanged(decider, make):
    embedder = make()
    questions = {**answers((LOCKS, "note"), (NOTES[0], "passage")),
                 "novel": Choice("novel", {"item": NOTES[2], "new": "The exporter streams rows now."}, NOVEL_OPTIONS),
                 "kind": Choice("kind", "What kind of message is this?", {"past_choice": None, "reaction": None})}

    judged = SemanticDecider(decider, embedder).decide(STATE, questions)

    assert judged == decider.decide(STATE, questions)
    assert len(embedder.asked) == 1  # it was asked, once, for every text at once


def test_a_question_the_head_does_not_judge_is_not_embedded(decider):
    embedder = Silent()
    question = {"k": Choice("kind", "What kind of message is this?", {"past_choice": None, "reaction": None})}

    assert SemanticDecider(decider, embedder).decide(STATE, question) == decider.decide(STATE, question)
    assert embedder.asked == []


@semantic
def test_one_embed_call_per_decide_for_the_message_the_turns_and_every_item(decider):
    embedder = Counted()

    SemanticDecider(decider, embedder).decide(STATE, answers(*((n, "note") for n in NOTES)))

    assert embedder.calls == [len(NOTES) + 2]


@semantic
def test_the_head_answers_with_probabilities_and_ranks_the_rephrased_note_first(decider):
    judged = SemanticDecider(decider, InProcessEmbedder()).decide(STATE, answers(*((n, "note") for n in NOTES)))
    scores = [judged[str(i)].noul for i in range(len(NOTES))]

    assert all(0.0 < s < 1.0 for s in scores)
    assert max(range(len(NOTES)), key=scores.__getitem__) == NOTES.index(LOCKS)


@semantic
def test_a_rephrased_question_reaches_the_note_that_answers_it(tmp_path):
    # The first embed loads the model: on a busy machine that alone can outlast the decider's 2 s.
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_JUDGE": "semantic",
                          "MEMSIFT_DECIDER_DEADLINE": "60"})
    services = open_services(config, project_root=tmp_path)
    services.notebook.append(NOTES)

    result = recall(Message("why didn't we just use Redis for mutual exclusion?",
                            (Turn("user", "the nightly import ran twice again"), Turn("assistant", "Looking."))),
                    services)

    assert isinstance(services.decider, SemanticDecider)
    assert [item.text for item in result.items] == [LOCKS], result.trace


@semantic
@pytest.mark.xfail(strict=True, reason="not yet: the novel head, fit on 24 pairs, still calls this rewording "
                   "'differs'; it needs more restatement pairs")
def test_a_restatement_in_other_words_is_not_new(decider):
    note = "Invoices are rendered by WeasyPrint in the worker, never in the request. (decision 2026-11-02 ex-0badf00d)"
    question = {"q": Choice("novel", {"question": "How does the new line relate to this note?", "item": note,
                                      "new": "PDF invoices get generated by a background job with WeasyPrint "
                                             "rather than during the HTTP call. (decision 2026-11-20 ex-1badf00d)"},
                            NOVEL_OPTIONS)}

    answer = SemanticDecider(decider, InProcessEmbedder()).decide({}, question)["q"]

    assert answer.choice == "restates"
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)


def test_judge_lexical_gives_todays_answers(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_JUDGE": "lexical"})
    services = open_services(config, project_root=tmp_path)
    questions = answers(*((n, "note") for n in NOTES))

    assert isinstance(services.decider, EmbeddedDecider) and services.embedder is None
    assert services.decider.decide(STATE, questions) == EmbeddedDecider.load().decide(STATE, questions)


@semantic
def test_open_services_wraps_the_embedded_decider_only_when_the_judge_is_on(tmp_path):
    on = {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_JUDGE": "semantic"}
    default = open_services(load_config({"MEMSIFT_HOME": str(tmp_path)}), project_root=tmp_path)
    embedded = open_services(load_config(on), project_root=tmp_path)
    remote = open_services(load_config({**on, "MEMSIFT_DECIDER": "openai", "MEMSIFT_DECIDER_URL": "http://127.0.0.1:9/v1",
                                        "MEMSIFT_DECIDER_MODEL": "m"}), project_root=tmp_path)

    assert default.embedder is None and not isinstance(default.decider, SemanticDecider)  # lexical by default
    assert isinstance(embedded.decider, SemanticDecider) and embedded.embedder is not None
    assert not isinstance(remote.decider, SemanticDecider)  # the head is calibrated on the embedded judge


@semantic
@pytest.mark.slow
def test_rebuilding_the_head_gives_the_same_head(tmp_path):
    out = tmp_path / "head.json"
    subprocess.run([sys.executable, str(REPO / "training" / "build_semantic.py"), "--out", str(out)],
                   check=True, capture_output=True, cwd=REPO)

    assert_same_head(json.loads(out.read_text()), json.loads(HEAD.read_text()))


# ONNX Runtime picks its int8 kernels by the instructions a CPU has (AVX-512 VNNI, AVX2...), so on another
# CPU a cosine can differ in its 4th decimal and a weight in its 5th: 4.3e-5 at most, measured between two
# machines, with the same thresholds and the same figures on the corpus. Anything else must be the same.
CPU_TOLERANCE = 1e-4


def assert_same_head(built, shipped, where="head"):
    if isinstance(shipped, float) and isinstance(built, float):
        assert abs(built - shipped) <= CPU_TOLERANCE, f"{where}: {built} against {shipped}"
    elif isinstance(shipped, dict):
        assert isinstance(built, dict) and built.keys() == shipped.keys(), where
        for key in shipped:
            assert_same_head(built[key], shipped[key], f"{where}.{key}")
    elif isinstance(shipped, list):
        assert isinstance(built, list) and len(built) == len(shipped), where
        for i, (b, s) in enumerate(zip(built, shipped, strict=True)):
            assert_same_head(b, s, f"{where}[{i}]")
    else:
        assert built == shipped, f"{where}: {built!r} against {shipped!r}"


def test_the_heads_comparison_allows_the_cpus_noise_and_nothing_more():
    shipped = json.loads(HEAD.read_text())
    weights = shipped["answers"]["fact"]["weights"]
    assert_same_head({**shipped, "answers": {**shipped["answers"], "fact": {
        **shipped["answers"]["fact"], "weights": [w + 4.3e-5 for w in weights]}}}, shipped)
    for changed in ({**shipped, "bar": 0.71}, {**shipped, "model": "another"},
                    {**shipped, "answers": {**shipped["answers"], "fact": {
                        **shipped["answers"]["fact"], "weights": [weights[0] + 0.01, *weights[1:]]}}}):
        with pytest.raises(AssertionError):
            assert_same_head(changed, shipped)

"""The embedding model of the semantic judge: memsift/semantic/model.py (the [semantic] extra)."""

import shutil

import pytest

from memsift.errors import ConfigurationError
from memsift.semantic.model import EmbeddingModel, installed, model_files

pytestmark = pytest.mark.skipif(not installed(), reason="the [semantic] extra is not installed")


@pytest.fixture(scope="module")
def model():
    return EmbeddingModel.load()


def test_vectors_are_unit_length_one_row_a_text(model):
    vectors = model.embed(["the nightly worker runs out of memory", "", "x" * 5000])

    assert vectors.shape == (3, 384)
    assert [round(float(v @ v), 4) for v in vectors] == [1.0, 1.0, 1.0]


def test_a_rephrased_question_is_closer_to_its_note_than_an_unrelated_one(model):
    note, asked, other = model.embed([
        "We'll use Postgres advisory locks instead of Redis locks, because Postgres is already there.",
        "why didn't we just use Redis for mutual exclusion?",
        "never deploy on Thursdays: the payment provider freezes releases",
    ])

    assert note @ asked > other @ asked + 0.2


def test_batches_give_the_vectors_of_one_text_at_a_time(model):
    texts = [f"note number {i} about the cache" for i in range(20)]

    together = model.embed(texts)
    alone = [model.embed([t])[0] for t in texts]

    assert max(abs(float(together[i] @ alone[i]) - 1.0) for i in range(20)) < 1e-4


def test_another_model_is_named_by_its_folder(tmp_path, model):
    packaged_model, packaged_tokenizer, name = model_files()
    shutil.copy(packaged_model, tmp_path / "model.onnx")
    shutil.copy(packaged_tokenizer, tmp_path / "tokenizer.json")

    other = EmbeddingModel.load(tmp_path)

    assert name == "all-MiniLM-L6-v2-onnx-int8" and other.name.startswith(tmp_path.name)
    assert float(other.embed(["a"])[0] @ model.embed(["a"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_a_folder_without_the_model_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match=r"model\.onnx and tokenizer\.json"):
        EmbeddingModel.load(tmp_path)

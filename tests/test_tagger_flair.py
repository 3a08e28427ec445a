"""spanscore train flair: the time limit and the epoch kept (a tiny character-only model on BTC).

flair pins transformers below 5, so this file runs in ``.venv-flair`` (see ``.ci/run``) and is
skipped where flair is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spanscore.programs.tagger import FlairConfig, load_model, read_meta, read_sentences, train_flair

pytest.importorskip("flair")

TINY = {"embeddings": ("char",), "hidden_size": 16, "device": "cpu", "seed": 1}


def test_time_limit_stops_before_an_epoch_that_would_overrun(btc: Path, tmp_path: Path) -> None:
    train = read_sentences(btc / "train.txt").head(40)
    dev = read_sentences(btc / "dev.txt").head(20)
    # Any limit shorter than the first epoch leaves room for that epoch alone: the first epoch
    # always runs (there is nothing to go by before it), the second would end past the limit.
    config = FlairConfig(**TINY, max_epochs=20, time_limit=1e-3)  # type: ignore[arg-type]
    result = train_flair(train, tmp_path / "m.flair", dev=dev, config=config)
    training = read_meta(tmp_path / "m.flair")["training"]
    assert result.iterations == 1 and training["epochs"] == 1
    assert training["time_limit_reached"] is True and training["best_epoch"] == 1
    assert len(training["epoch_seconds"]) == 1 and training["epoch_seconds"][0] > 0
    assert load_model(tmp_path / "m.flair").predict(dev.tokens[:3])


def test_a_generous_limit_changes_nothing_and_the_best_dev_epoch_is_reported(btc: Path, tmp_path: Path) -> None:
    train = read_sentences(btc / "train.txt").head(60)
    dev = read_sentences(btc / "dev.txt").head(30)
    metas = []
    for name, limit in (("free", None), ("limited", 3600.0)):
        config = FlairConfig(**TINY, max_epochs=4, time_limit=limit)  # type: ignore[arg-type]
        train_flair(train, tmp_path / f"{name}.flair", dev=dev, config=config)
        metas.append(read_meta(tmp_path / f"{name}.flair")["training"])
    free, limited = metas
    assert free["epochs"] == limited["epochs"] == 4
    assert free["time_limit_reached"] is False and limited["time_limit_reached"] is False
    assert free["epoch_dev_f1"] == limited["epoch_dev_f1"] and len(free["epoch_dev_f1"]) == 4
    scores = free["epoch_dev_f1"]
    assert max(scores) > 0  # else Flair keeps no epoch and there is nothing to check
    # Flair keeps the first epoch with the highest dev F1 (only a strict improvement saves the model),
    # and the dev F1 reported is that epoch's, not the last one's.
    assert free["best_epoch"] == scores.index(max(scores)) + 1
    assert free["dev_scores"] == {"micro": max(scores)}


def test_each_epochs_dev_f1_uses_that_epochs_character_embeddings(
    btc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flair scores dev without gradients and so keeps every embedding of the dev sentences between
    scorings; the trained character embeddings must be computed again for each epoch's dev F1,
    which picks the epoch kept."""
    import torch
    from flair.embeddings import CharacterEmbeddings

    scored: list[int] = []  # sentences embedded without gradients: dev scoring
    original = CharacterEmbeddings._add_embeddings_internal

    def counting(self: object, sentences: list[object]) -> object:
        if not torch.is_grad_enabled():
            scored.append(len(sentences))
        return original(self, sentences)

    monkeypatch.setattr(CharacterEmbeddings, "_add_embeddings_internal", counting)
    train = read_sentences(btc / "train.txt").head(40)
    dev = read_sentences(btc / "dev.txt").head(20)
    config = FlairConfig(**TINY, max_epochs=3)  # type: ignore[arg-type]
    train_flair(train, tmp_path / "m.flair", dev=dev, config=config)
    assert len(read_meta(tmp_path / "m.flair")["training"]["epoch_dev_f1"]) == 3
    assert sum(scored) == 3 * 20


def test_flair_smoke(btc: Path, tmp_path: Path) -> None:
    train = read_sentences(btc / "train.txt").head(40)
    dev = read_sentences(btc / "dev.txt").head(20)
    model = tmp_path / "tiny.flair"
    config = FlairConfig(embeddings=("char",), hidden_size=16, max_epochs=1, device="cpu")
    result = train_flair(train, model, dev=dev, config=config)
    assert read_meta(model)["kind"] == "flair" and result.iterations == 1
    tagger = load_model(model)
    out = tagger.predict(dev.tokens)
    assert [len(s) for s in out] == [len(s) for s in dev.tokens]

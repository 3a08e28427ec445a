"""The founding paper's Good/Bad verdicts on the partial matches of its Flair tagger on BTC dev
(shared/data/seed-partial-matches/judgements.md), as judgements located in BTC dev: a held-out
set of a second domain (tweets; PER, ORG, LOC) for the judge's transfer tests."""

from __future__ import annotations

import json
from pathlib import Path

# (gold mention, predicted mention, Good?) -- the overlap table, and the two right-boundary pairs it lacks
PAPER_VERDICTS: tuple[tuple[str, str, bool], ...] = (
    ("New Hampshire", "Hampshire", False),
    ("The Health and Safety Executive", "Health and Safety Executive", True),
    ("Universidade Federal do Tocantins", "Universidade Federal", True),
    ("VERIZON WIRELESS", "VERIZON", True),
    ("Philips AVENT", "Philips", True),
    ("Grimsby", "Yume & Co Grimsby", False),
    ("@ firefox", "firefox", True),
    ("@ MarylandMSoccer", "MarylandMSoccer", True),
    ("Venezuela #SOSVenezuela #OscarsForVenezuela", "Venezuela", True),
    ("@ john", "john", True),
    ("@ justinbieber @ scooterbraun @ Ludacris", "@ justinbieber", True),
    ("SAM C", "SAM", True),
    ("Eric Plott Eric Plott Patricia Plott E . G . Plott", "Eric Plott Eric Plott Patricia Plott", True),
    ("@ ryanbutcher321 @ ijamesmacdonald @ ReganStevely @ GeorgioMartini", "@ ryanbutcher321", True),
    ("Blink Technologies , Inc .", "Blink Technologies", True),
    ("Gurudev", "Gurudev #yoga", True),
    ("Kim Seung Soo Bertolak", "Kim Seung", True),
    ("Sprint", "Sprint Network", True),
    ("T . W . Shannon", "Shannon", True),
    ("Austin Mahone #AustinMahone", "Austin Mahone", True),
    ("Cassese 's", "Cassese", True),
    ("NY )", "NY", True),
    ("@ followBack_080", "followBack_080", True),
    ("@ oln_9", "oln_9", True),
    ("@ butchey12", "butchey12", True),
    ("@ Symposiu", "Symposiu", True),
    ("@ justinbieber @ scooterbraun @ Ludacris", "@ Ludacris", True),
    ("@ ryanbutcher321 @ ijamesmacdonald @ ReganStevely @ GeorgioMartini", "@ GeorgioMartini", True),
)


def _tweets(path: Path) -> list[tuple[list[str], list[tuple[int, int, str]]]]:
    out = []
    for block in path.read_text(encoding="utf-8").strip("\n").split("\n\n"):
        tokens, tags = [], []
        for line in block.split("\n"):
            token, tag = line.rsplit("\t", 1)
            tokens.append(token)
            tags.append(tag)
        mentions, start = [], None
        for i, tag in enumerate([*tags, "O"]):
            if start is not None and not tag.startswith("I-"):
                mentions.append((start, i, tags[start][2:]))
                start = None
            if tag.startswith("B-") or (tag.startswith("I-") and start is None):
                start = i
        out.append((tokens, mentions))
    return out


def btc_paper_judgements(btc_dev: Path) -> list[dict[str, object]]:
    """Each verdict as a judgement (Good 5, Bad 1) on the first BTC dev tweet holding the gold
    mention with the prediction inside or around it."""
    tweets = _tweets(btc_dev)
    out = []
    for n, (gold, pred, good) in enumerate(PAPER_VERDICTS):
        found = None
        for index, (tokens, mentions) in enumerate(tweets):
            for s, e, label in mentions:
                if " ".join(tokens[s:e]) != gold:
                    continue
                want = pred.split()
                for ps in range(max(0, s - len(want)), min(len(tokens), e + len(want))):
                    if tokens[ps : ps + len(want)] == want and ps < e and ps + len(want) > s:
                        found = (index, tokens, s, e, ps, ps + len(want), label)
                        break
                if found:
                    break
            if found:
                break
        if found is None:
            raise LookupError(f"verdict {n}: {gold!r} / {pred!r} is not in {btc_dev}")
        index, tokens, s, e, ps, _pe, label = found

        def offset(i: int, tokens: list[str] = tokens) -> int:
            return len(" ".join(tokens[:i])) + (1 if i else 0)

        sentence = " ".join(tokens)
        out.append({
            "id": f"btc-dev-{n}", "sentence_index": index, "sentence": sentence,
            "gold_text": gold, "gold_label": label, "gold_start": offset(s), "gold_end": offset(s) + len(gold),
            "pred_text": pred, "pred_start": offset(ps), "pred_end": offset(ps) + len(pred),
            "score": 5 if good else 1,
        })
    return out


def write_btc_paper_judgements(btc_dev: Path, path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in btc_paper_judgements(btc_dev)), encoding="utf-8")
    return path

"""Train gpuplan's question classifier (intent and troubleshooting topics) on labelled questions.

usage:  pip install -e ".[train]"
        python train/train_classifier.py [--dev ../shared/questions/dev.yaml] [--out knowledge/classifier.npz]

Data: train/questions/*.yaml (questions from public GitHub issues, rewritten in our own words and
labelled) and the development set of ../shared/questions/dev.yaml. The features are computed by
bot/language/classifier.py (through intent.py) exactly as at run time; scikit-learn fits the
weights, which are stored in an .npz that bot/language/classifier.py applies with numpy.

It prints, before fitting the shipped model on everything:
  held-out   trained on train/questions only, scored on the dev set (never seen in training)
  5-fold CV  over all questions, each scored by a model that did not see it
and stores both in the model file's metadata (the README quotes them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from collections import Counter
from pathlib import Path

import numpy as np
import yaml
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from gpuplan.bot.language import intent, parser

ROOT = Path(__file__).resolve().parent.parent

MIN_DF = 2  # an n-gram seen in one question only says nothing general
C_GRID = (1.0, 3.0, 10.0)
TOPIC_C = 3.0
SEED = 0
# gpuplan's own examples (spec.yaml: the parser table's questions) are the product's intended
# readings; they count this many times a real question, so that a batch of hard real questions
# does not pull the classifier off them. Our choice, not fitted.
SPEC_WEIGHT = 3.0


def load(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        for q in yaml.safe_load(path.read_text(encoding="utf-8")):
            e = q["expected"]
            topics = {t for t in (e.get("topic"), e.get("alt_topic")) if t and t != "other"}
            intent_label = "other" if e["intent"] == "help" else e["intent"]
            weight = SPEC_WEIGHT if path.name == "spec.yaml" else 1.0
            rows.append({"id": q["id"], "text": q["text"], "intent": intent_label, "topics": topics, "weight": weight})
    return rows


def featurize(rows: list[dict]) -> None:
    """The run-time inputs of each question: its n-gram counts and its dense features."""
    for row in rows:
        parsed, evidence = parser.read(row["text"])
        row["grams"] = intent.ngrams(intent.text_for_ngrams(evidence))
        row["dense"] = intent.dense(evidence, parsed)
        row["fired"] = intent.triggered(evidence.raw)
        row["parsed"], row["ask"] = parsed, intent.asked(evidence.prose, parsed)
        row["prose"] = evidence.prose


class Vectorizer:
    """Vocabulary and idf from a training set; rows as run time builds them."""

    def __init__(self, rows: list[dict]):
        df = Counter(g for row in rows for g in row["grams"])
        self.vocabulary = sorted(g for g, n in df.items() if n >= MIN_DF)
        self.index = {g: i for i, g in enumerate(self.vocabulary)}
        n = len(rows)
        # smooth idf, log((1 + n) / (1 + df)) + 1: scikit-learn's TfidfVectorizer default
        self.idf = np.array([math.log((1 + n) / (1 + df[g])) + 1 for g in self.vocabulary], dtype=np.float64)

    def matrix(self, rows: list[dict]) -> sparse.csr_matrix:
        data, cols, indptr = [], [], [0]
        width = len(self.vocabulary)
        for row in rows:
            idx, vals = intent.tfidf(row["grams"], self.index, self.idf)
            cols += idx.tolist()
            data += vals.tolist()
            for j, value in enumerate(row["dense"]):
                if value:
                    cols.append(width + j)
                    data.append(float(value))
            indptr.append(len(cols))
        return sparse.csr_matrix((data, cols, indptr), shape=(len(rows), width + len(rows[0]["dense"])))


def fit(rows: list[dict], c: float) -> intent.Model:
    vec = Vectorizer(rows)
    x = vec.matrix(rows)
    labels = [r["intent"] for r in rows]
    sample_weight = [r["weight"] for r in rows]
    clf = LogisticRegression(C=c, max_iter=5000, class_weight="balanced", random_state=SEED)
    clf.fit(x, labels, sample_weight=sample_weight)
    topics = sorted({t for r in rows for t in r["topics"]})
    weights, biases = [], []
    for topic in topics:
        y = [topic in r["topics"] for r in rows]
        one = LogisticRegression(C=TOPIC_C, max_iter=5000, class_weight="balanced", random_state=SEED)
        one.fit(x, y, sample_weight=sample_weight)
        weights.append(one.coef_[0])
        biases.append(one.intercept_[0])
    return intent.Model(
        index=vec.index,
        idf=vec.idf.astype(np.float32),
        dense_names=intent.dense_names(),
        intents=list(clf.classes_),
        intent_w=clf.coef_.astype(np.float32),
        intent_b=clf.intercept_.astype(np.float32),
        topics=topics,
        topic_w=np.array(weights, dtype=np.float32),
        topic_b=np.array(biases, dtype=np.float32),
        meta={},
    )


def predict(model: intent.Model, row: dict) -> tuple[str, list[str]]:
    """Exactly what gpuplan.bot.language.intent.judge does at run time, on precomputed inputs."""
    scores, topics = model.probabilities(model.vector(row["grams"], row["dense"]))
    verdict = intent.verdict(scores, topics, row["fired"], row["parsed"], row["ask"], row["prose"])
    return verdict.intent, verdict.topics


def score(model: intent.Model, rows: list[dict]) -> dict[str, float]:
    right_intent = sum(predict(model, r)[0] == r["intent"] for r in rows)
    with_topic = [r for r in rows if r["topics"] and r["intent"] in ("troubleshoot", "compare")]
    right_topic = sum(bool(set(predict(model, r)[1][:2]) & r["topics"]) for r in with_topic)
    return {"intent": right_intent / len(rows), "topic_top2": right_topic / max(1, len(with_topic)), "n": len(rows)}


def cross_validate(rows: list[dict], c: float, folds: int = 5) -> dict[str, float]:
    splitter = StratifiedKFold(folds, shuffle=True, random_state=SEED)
    labels = [r["intent"] for r in rows]
    totals = Counter()
    for train_idx, test_idx in splitter.split(rows, labels):
        model = fit([rows[i] for i in train_idx], c)
        got = score(model, [rows[i] for i in test_idx])
        totals["intent"] += got["intent"] * got["n"]
        with_topic = [
            rows[i] for i in test_idx if rows[i]["topics"] and rows[i]["intent"] in ("troubleshoot", "compare")
        ]
        totals["topic"] += got["topic_top2"] * len(with_topic)
        totals["topic_n"] += len(with_topic)
    return {
        "intent": totals["intent"] / len(rows),
        "topic_top2": totals["topic"] / max(1, totals["topic_n"]),
        "n": len(rows),
    }


def save(model: intent.Model, path: Path, meta: dict) -> None:
    np.savez_compressed(
        path,
        vocabulary=np.array(list(model.index), dtype=str),
        idf=model.idf,
        dense_names=np.array(model.dense_names, dtype=str),
        intents=np.array(model.intents, dtype=str),
        intent_w=model.intent_w.astype(np.float16).astype(np.float32),
        intent_b=model.intent_b,
        topics=np.array(model.topics, dtype=str),
        topic_w=model.topic_w.astype(np.float16).astype(np.float32),
        topic_b=model.topic_b,
        meta=np.array(yaml.safe_dump(meta, sort_keys=False)),
    )


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--dev", type=Path, default=ROOT.parent / "shared" / "questions" / "dev.yaml")
    args.add_argument("--out", type=Path, default=ROOT / "knowledge" / "classifier.npz")
    opts = args.parse_args()
    corpus = load(sorted((ROOT / "train" / "questions").glob("*.yaml")))
    dev = load([opts.dev]) if opts.dev.exists() else []
    featurize(corpus + dev)
    print(f"{len(corpus)} training questions, {len(dev)} development questions")
    by_c = {c: cross_validate(corpus, c) for c in C_GRID}
    c = max(C_GRID, key=lambda k: (by_c[k]["intent"] + by_c[k]["topic_top2"], -k))
    for k, got in by_c.items():
        figures = f"intent {got['intent']:.1%}, topic top-2 {got['topic_top2']:.1%}"
        print(f"  C={k:g}: 5-fold CV on the training questions: {figures}")
    print(f"chosen C={c:g}")
    meta = {
        "trained": dt.date.today().isoformat(),
        "C": c,
        "training_questions": len(corpus),
        "dev_questions": len(dev),
    }
    if dev:
        held = score(fit(corpus, c), dev)
        print(f"held-out (train/questions -> dev): intent {held['intent']:.1%}, topic top-2 {held['topic_top2']:.1%}")
        meta["held_out_dev"] = {k: round(v, 4) for k, v in held.items()}
    everything = corpus + dev
    cv = cross_validate(everything, c)
    print(f"5-fold CV on all {len(everything)}: intent {cv['intent']:.1%}, topic top-2 {cv['topic_top2']:.1%}")
    meta["cv_all"] = {k: round(v, 4) for k, v in cv.items()}
    model = fit(everything, c)
    meta["in_sample"] = {k: round(v, 4) for k, v in score(model, everything).items()}
    save(model, opts.out, meta)
    print(f"wrote {opts.out} ({opts.out.stat().st_size // 1024} KiB, {len(model.index)} n-grams)")


if __name__ == "__main__":
    main()

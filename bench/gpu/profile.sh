#!/bin/bash
# Where a Flair training mini-batch's time goes on the GPU: cProfile of `spanscore train flair`
# for 2 epochs on 640 BTC tweets. Needs what run.sh needs (README.md); writes $OUT/prof-*.txt.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.." || exit 2
OUT=${OUT:-/tmp/prof-out}; mkdir -p "$OUT"; SITE=/tmp/site
export PYTHONUNBUFFERED=1 PYTHONPATH=$SITE:$PWD/src HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ ! -f "$SITE/flair/__init__.py" ]; then
  mkdir -p $SITE
  timeout 120 python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' "$HERE/site.tar.xz" $SITE || exit 2
fi
W=$(mktemp -d)
timeout 200 python3 -c '
import cProfile, pstats, sys, time
work, train, out = sys.argv[1:4]
sys.argv = ["spanscore", "train", "flair", train, "-o", work + "/m.flair", "--device", "cuda", "--epochs", "2", "--limit", "640", "-v"]
from spanscore.cli.main import cli
p = cProfile.Profile()
t = time.perf_counter()
p.enable()
try:
    cli(args=sys.argv[1:], prog_name="spanscore", standalone_mode=False)
finally:
    p.disable()
    print("wall", round(time.perf_counter() - t, 1))
    for key in ("cumulative", "tottime"):
        with open(out + "/prof-" + key + ".txt", "w") as f:
            pstats.Stats(p, stream=f).sort_stats(key).print_stats(60)
' "$W" "$HERE/data/train.txt" "$OUT" 2>&1 | grep -v "it/s]" | tail -40 | tee "$OUT/run.log"

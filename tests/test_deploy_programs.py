"""An ordinary after-training PyTorch program (torch.jit trace/script/save/load, torch.onnx
with dynamic batch and sequence axes run in onnxruntime, torch.profiler over a training step,
torch.utils.tensorboard read back with TensorBoard's reader) run unmodified as ``python X.py``
under real torch and as ``python -m torchlike X.py``: the two print the same lines.

The program draws no random numbers (its weights are set from ``arange``), so every line it
prints is comparable exactly; values are printed as agreement checks or rounded.
"""
import textwrap

import onnxruntime  # noqa: F401  (the test extra's: NOTE [ torch is required ] in conftest.py)
import tensorboard  # noqa: F401

from test_examples import run_side_by_side

TIMEOUT = 120   # seconds for the pair of runs (a pass takes about 6 s)

PROGRAM = textwrap.dedent('''
    import os, sys, tempfile
    from typing import Dict, List
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    from torch.profiler import ProfilerActivity, profile, record_function
    from torch.utils.tensorboard import SummaryWriter
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    @torch.jit.script
    def longest(lengths: List[int]) -> int:
        best = 0
        for n in lengths:
            if n > best:
                best = n
        return best

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.bn, self.fc2 = nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 3)

        def forward(self, x):
            return self.fc2(torch.relu(self.bn(self.fc1(x))))

    def filled(module):
        with torch.no_grad():
            for i, p in enumerate(module.parameters()):
                p.copy_(torch.linspace(-0.5, 0.5 + 0.1 * i, p.numel()).reshape(p.shape))
        return module

    out = tempfile.mkdtemp()
    x = torch.linspace(-1, 1, 20).reshape(5, 4)
    net = filled(Net())
    print("script", longest([3, 7, 2]), torch.jit.isinstance({"a": [1]}, Dict[str, List[int]]))

    # profile one training step (the BatchNorm updates its running statistics)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("train_step"):
            loss = net(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    names = {e.key for e in prof.key_averages()}
    print("profiled", [n in names for n in ("train_step", "aten::batch_norm", "aten::addmm",
                                            "aten::relu", "Optimizer.step#SGD.step")])
    prof.export_chrome_trace(os.path.join(out, "trace.json"))

    # trace in eval mode, save, load where the model's code is not needed
    net.eval()
    traced = torch.jit.trace(net, x)
    traced.save(os.path.join(out, "net.pt"))
    loaded = torch.jit.load(os.path.join(out, "net.pt"), map_location="cpu")
    with torch.no_grad():
        ref = net(x)
        print("jit", type(loaded).__name__, loaded.training,
              [m.training for m in loaded.modules()], sorted(loaded.state_dict()),
              torch.allclose(loaded(x), ref, atol=1e-6),
              torch.allclose(traced(x[:2]), ref[:2], atol=1e-6))

    # ONNX: a tagger over (batch, time), both axes dynamic
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.head = nn.LSTM(4, 8, batch_first=True), nn.Linear(8, 2)

        def forward(self, seq):
            return self.head(self.lstm(seq)[0])
    tagger = filled(Tagger()).eval()
    path = os.path.join(out, "tagger.onnx")
    torch.onnx.export(tagger, (torch.ones(2, 3, 4),), path, input_names=["seq"],
                      output_names=["tags"], dynamo=False,
                      dynamic_axes={"seq": {0: "batch", 1: "time"},
                                    "tags": {0: "batch", 1: "time"}})
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    seq = torch.linspace(-2, 2, 7 * 5 * 4).reshape(7, 5, 4)
    (tags,) = session.run(None, {"seq": seq.numpy()})
    with torch.no_grad():
        print("onnx", [i.name for i in session.get_inputs()], tags.shape,
              bool(np.abs(tags - tagger(seq).numpy()).max() < 1e-5))

    # TensorBoard, read back with its own reader
    with SummaryWriter(os.path.join(out, "tb")) as w:
        for step in range(3):
            w.add_scalar("loss/train", 1.0 / (step + 1), step)
        w.add_histogram("fc1.weight", net.fc1.weight, 0)
        w.add_image("inputs", torch.linspace(0, 1, 48).reshape(1, 6, 8), 0)
    acc = EventAccumulator(os.path.join(out, "tb"))
    acc.Reload()
    hist = acc.Histograms("fc1.weight")[0].histogram_value
    print("tensorboard", [(e.step, round(e.value, 4)) for e in acc.Scalars("loss/train")],
          hist.num, round(hist.min, 4), round(hist.max, 4),
          [(i.width, i.height) for i in acc.Images("inputs")])
''')


def test_after_training_program_prints_as_under_torch(tmp_path):
    script = tmp_path / "after_training.py"
    script.write_text(PROGRAM)
    results = run_side_by_side({"torch": [str(script)],
                                "torchlike": ["-m", "torchlike", str(script)]},
                               tmp_path, TIMEOUT, "the program")
    (want, _), (got, err) = results["torch"], results["torchlike"]
    assert got.splitlines() == want.splitlines()
    # torch's jit deprecations point into torch (hidden by default); no can't-compile warning
    assert "DeprecationWarning" not in err and "cannot compile" not in err, err

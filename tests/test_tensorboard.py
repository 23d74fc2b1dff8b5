"""torchlike.utils.tensorboard against torch.utils.tensorboard: the same calls write two runs,
one with each SummaryWriter, and TensorBoard's own readers (the event-file loader and the
EventAccumulator) read both back: the events' protos (scalars, histograms with their buckets,
text, tensors, audio, PR curves, custom-scalar layouts, meshes, hyper-parameters) are equal,
the images (figures, boxes) decode to the same pixels, the projector's files are equal, and
both runs hold a graph with the same input/output nodes and module scopes.  Also log_dir
naming, flush / close / reopen, purge_step, torch's errors, ONNX graphs, and the error without
the tensorboard package.  (The example's --tensorboard flag: tests/test_examples_digits.py.)"""
import io
import os
import re
import socket
import sys
import warnings
from datetime import datetime

import matplotlib
import numpy as np
import pytest
import torch
from PIL import Image
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.plugins.hparams import plugin_data_pb2
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import torchlike as tl
from torchlike.utils.tensorboard import SummaryWriter as Writer

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

WALLTIME = 1.7e9
RNG = np.random.default_rng(0)
HIST = RNG.normal(size=(40, 25)).astype(np.float32)
TENSOR = RNG.normal(size=(2, 3)) * 3
LABELS = RNG.integers(0, 2, 50)
PREDICTIONS = RNG.uniform(0, 1, 50)
EMBEDDING = RNG.normal(size=(7, 3)).astype(np.float32)
THUMBS = RNG.uniform(0, 1, (7, 3, 4, 4)).astype(np.float32)
BOXED = RNG.uniform(0, 1, (3, 32, 40)).astype(np.float32)
IMAGES = {   # tag -> (array, dataformats, batched): float ones reach past [0, 1] to be clipped
    "chw": (RNG.uniform(-0.2, 1.2, (3, 5, 7)).astype(np.float32), "CHW", False),
    "hwc_uint8": (RNG.integers(0, 256, (6, 4, 3), dtype=np.uint8), "HWC", False),
    "hw": (RNG.uniform(0, 1, (4, 9)).astype(np.float64), "HW", False),
    "rgba": (RNG.uniform(0, 1, (4, 3, 5)).astype(np.float32), "CHW", False),
    "grey_batch": (RNG.uniform(0, 1, (10, 1, 3, 4)).astype(np.float32), "NCHW", True),
    "nhwc": (RNG.uniform(0, 1, (3, 4, 5, 3)).astype(np.float32), "NHWC", True),
}


def _figure():
    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
    ax.plot([0, 1, 2], [2, 0, 1])
    return fig


def _write(lib, Summary, log_dir):
    """The same calls through either library: ``lib`` is torch or torchlike."""
    t = lib.tensor
    w = Summary(log_dir)
    for step, value in enumerate([t(0.5), np.float32(0.25), 3, t([[1.5]])]):
        w.add_scalar("loss", value, step, walltime=WALLTIME)
    w.add_scalar("new", t(0.1), 0, walltime=WALLTIME, new_style=True)
    w.add_scalar("double", 0.1, 0, walltime=WALLTIME, new_style=True, double_precision=True)
    w.add_scalars("pair", {"a": t(1.0), "b": 2.0}, 0, walltime=WALLTIME)
    w.add_histogram("default_bins", t(HIST), 0, walltime=WALLTIME)
    w.add_histogram("auto", HIST, 1, bins="auto", walltime=WALLTIME)
    w.add_histogram("merged", t(HIST), 2, bins=50, max_bins=7, walltime=WALLTIME)
    w.add_histogram("ints", t(np.arange(12) % 5), 3, walltime=WALLTIME)
    w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 19.0, [1.0, 2.0, 3.0], [1, 2, 3], 4,
                        walltime=WALLTIME)
    for tag, (array, formats, batched) in IMAGES.items():
        add = w.add_images if batched else w.add_image
        add(tag, t(array), 0, walltime=WALLTIME, dataformats=formats)
    w.add_figure("figure", _figure(), 0, walltime=WALLTIME)
    boxes = t([[1.0, 2.0, 20.0, 14.0], [5.0, 5.0, 9.0, 30.0]])
    w.add_image_with_boxes("boxes", t(BOXED), boxes, 0, walltime=WALLTIME, labels=["cat", "x"])
    w.add_image_with_boxes("boxes_scaled", t(BOXED), boxes, 0, walltime=WALLTIME, rescale=0.5,
                           labels="one label for two boxes: dropped")
    w.add_figure("figures", [_figure(), _figure()], 1, walltime=WALLTIME)
    w.add_text("note", "hello **world**", 5, walltime=WALLTIME)
    for dtype in ("float32", "float64", "int64", "uint8", "bool", "float16", "bfloat16",
                  "complex64"):
        values = np.abs(TENSOR) if dtype == "uint8" else TENSOR   # negative -> uint8: C's UB
        w.add_tensor(f"tensor_{dtype}", t(values).to(getattr(lib, dtype)), 6, walltime=WALLTIME)
    w.add_audio("audio", t(np.sin(np.arange(64) / 3.0)[None] * 1.5), 7, sample_rate=8000,
                walltime=WALLTIME)
    w.add_pr_curve("pr", t(LABELS), t(PREDICTIONS), 8, num_thresholds=200, walltime=WALLTIME)
    w.add_pr_curve_raw("pr_raw", *[np.arange(4.0) + i for i in range(6)], 9, num_thresholds=4,
                       walltime=WALLTIME)
    w.add_custom_scalars({"losses": {"both": ["Multiline", ["loss", "new"]],
                                     "band": ["Margin", ["loss", "new", "double"]]}})
    w.add_custom_scalars_multilinechart(["loss"], title="one")
    w.add_custom_scalars_marginchart(["loss", "new", "double"], category="c")
    w.add_mesh("mesh", t(EMBEDDING[None]), colors=t(THUMBS[None, :, :, 0, 0] * 255).to(lib.uint8),
               faces=t(np.array([[[0, 1, 2], [2, 3, 4]]], np.int32)),
               config_dict={"camera": {"fov": 75}}, global_step=4, walltime=WALLTIME)
    w.add_video("video", t(THUMBS[None]), 5, walltime=WALLTIME)   # no moviepy: no image, as torch
    w.add_embedding(t(EMBEDDING), metadata=[f"p{i}" for i in range(7)], label_img=t(THUMBS),
                    global_step=3, tag="emb/1")
    w.add_embedding(t(EMBEDDING), metadata=[[i, i % 2] for i in range(7)],
                    metadata_header=["i", "odd"])
    w.add_hparams({"lr": 0.1, "batch": 16, "opt": "adam", "nesterov": True, "skip": None,
                   "wd": t([0.5])},
                  {"hparam/accuracy": 0.75}, hparam_domain_discrete={"opt": ["adam", "sgd"]},
                  run_name="hp", global_step=7)

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x))).softmax(-1)

    w.add_graph(Net(), lib.zeros(3, 4))
    w.close()


def _events(log_dir):
    """Every event of the run's event files, wall times cleared."""
    events = []
    for name in sorted(os.listdir(log_dir)):
        if name.startswith("events.out.tfevents"):
            for event in EventFileLoader(os.path.join(log_dir, name)).Load():
                event.ClearField("wall_time")
                events.append(event)
    return events


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tensorboard")
    ours, theirs = str(root / "torchlike"), str(root / "torch")
    _write(tl, Writer, ours)
    with warnings.catch_warnings():   # torch.jit.trace's deprecation, in torch's add_graph
        warnings.simplefilter("ignore", DeprecationWarning)
        _write(torch, TorchWriter, theirs)
    return ours, theirs


def _accumulator(log_dir):
    acc = event_accumulator.EventAccumulator(log_dir, size_guidance={
        event_accumulator.IMAGES: 0, event_accumulator.HISTOGRAMS: 0,
        event_accumulator.TENSORS: 0, event_accumulator.SCALARS: 0})
    acc.Reload()
    return acc


def test_same_runs_and_tags(runs):
    ours, theirs = runs
    runs_in = [sorted(n for n in os.listdir(d) if not n.startswith("events.")) for d in runs]
    assert runs_in[0] == runs_in[1] == ["00000", "00003", "hp", "pair_a", "pair_b",
                                        "projector_config.pbtxt"]
    a, b = _accumulator(ours), _accumulator(theirs)
    assert a.Tags() == b.Tags()
    assert a.Tags()["graph"] and a.Tags()["run_metadata"] == ["step1"]


def test_scalars_histograms_text_events_equal_torchs(runs):
    """Event by event, as TensorBoard's loader reads them: scalars (old and new style, add_scalars'
    sub-runs), histograms (min, max, sums, bucket limits and counts, with torch's default bins,
    a NumPy rule, max_bins merging), text, tensors of each dtype, audio (clipped), PR curves,
    custom-scalar layouts, a mesh, a video without moviepy."""
    ours, theirs = runs

    def summaries(log_dir):
        skip = ("images", "graphs", "graph_tagged_run_metadata")
        return [e for e in _events(log_dir) if e.HasField("summary")
                and e.summary.value[0].metadata.plugin_data.plugin_name not in skip]

    mine, ref = summaries(ours), summaries(theirs)
    # scalars, histograms, text; tensors, audio, PR curves, layouts, mesh, video
    assert len(mine) == len(ref) == 12 + 8 + 1 + 2 + 3 + 1 + 1
    for m, r in zip(mine, ref):
        assert m == r, (m, r)
    for sub in ("pair_a", "pair_b"):
        assert _events(os.path.join(ours, sub)) == _events(os.path.join(theirs, sub))
    histo = _accumulator(ours).Histograms("merged")[0].histogram_value
    assert len(histo.bucket) <= -(-50 // (50 // 7)) + 1 and sum(histo.bucket) == HIST.size


def test_images_decode_to_torchs_pixels(runs):
    a, b = (_accumulator(d) for d in runs)
    tags = list(IMAGES) + ["figure", "figures", "boxes", "boxes_scaled"]
    assert sorted(a.Tags()["images"]) == sorted(tags)
    for tag in tags:
        (mine,), (ref,) = a.Images(tag), b.Images(tag)
        assert (mine.width, mine.height, mine.step) == (ref.width, ref.height, ref.step), tag
        pixels = [np.asarray(Image.open(io.BytesIO(e.encoded_image_string))) for e in (mine, ref)]
        np.testing.assert_array_equal(pixels[0], pixels[1], err_msg=tag)
    assert np.asarray(Image.open(io.BytesIO(a.Images("rgba")[0].encoded_image_string))).shape \
        == (3, 5, 4)


def test_hparams_sub_run_equals_torchs(runs):
    """The hparams plugin's experiment, session start and end, and the metric, in <run>/hp."""
    ours, theirs = (os.path.join(d, "hp") for d in runs)
    assert _events(ours) == _events(theirs)
    content = _accumulator(ours).PluginTagToContent("hparams")
    assert sorted(content) == ["_hparams_/experiment", "_hparams_/session_end_info",
                               "_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(
        content["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["opt"].string_value == "adam" and start.hparams["wd"].number_value == 0.5
    assert [e.value for e in _accumulator(ours).Scalars("hparam/accuracy")] == [0.75]


def test_embedding_files_equal_torchs(runs):
    ours, theirs = runs
    for path in ("projector_config.pbtxt", "00003/emb%2f1/tensors.tsv",
                 "00003/emb%2f1/metadata.tsv", "00000/default/metadata.tsv"):
        with open(os.path.join(ours, path), "rb") as a, open(os.path.join(theirs, path), "rb") as b:
            assert a.read() == b.read(), path
    sprites = [np.asarray(Image.open(os.path.join(d, "00003/emb%2f1/sprite.png"))) for d in runs]
    np.testing.assert_array_equal(*sprites)


def test_graph_has_torchs_io_nodes_and_module_scopes(runs):
    """torch's graph holds TorchScript ops, torchlike's XLA ops; both have the input and output
    nodes, the module scopes and the output shape."""
    graphs = [_accumulator(d).Graph() for d in runs]
    for g in graphs:
        nodes = {n.name: n for n in g.node}
        assert nodes["input/x"].op == "IO Node"
        out = nodes["output/output.1"]
        assert [d.size for d in out.attr["_output_shapes"].list.shape[0].dim] == [3, 2]
        assert any(n.startswith("Net/Linear[fc1]/") for n in nodes)
        assert any(n.startswith("Net/ReLU[act]/") for n in nodes)
    mine = {n.name: n for n in graphs[0].node}
    assert mine["Net/Linear[fc1]/weight"].op == "Parameter"
    dot = mine["Net/Linear[fc1]/dot_general"]
    assert list(dot.input) == ["input/x", "Net/Linear[fc1]/transpose"]
    for n in graphs[0].node:   # every edge leads to a node of the graph
        assert all(i.split(":")[0] in mine for i in n.input), n.name


def test_default_log_dir_is_torchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = datetime.now().replace(microsecond=0)
    with Writer(comment="_lr0.1") as mine, TorchWriter(comment="_lr0.1") as ref:
        pattern = r"runs/([A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2})_" + re.escape(
            socket.gethostname()) + "_lr0.1"
        for w in (mine, ref):
            stamp = re.fullmatch(pattern, w.get_logdir().replace(os.sep, "/"))
            assert stamp, w.get_logdir()
            when = datetime.strptime(stamp.group(1), "%b%d_%H-%M-%S").replace(year=before.year)
            assert abs((when - before).total_seconds()) < 60
        assert os.path.isdir(mine.get_logdir())


def test_flush_close_reopen_and_purge_step(tmp_path):
    w = Writer(str(tmp_path / "run"), flush_secs=1000)
    w.add_scalar("x", 1.0, 0)
    w.flush()   # readable before close
    assert [e.value for e in _accumulator(w.get_logdir()).Scalars("x")] == [1.0]
    w.close()
    w.close()   # a second close does nothing
    w.add_scalar("x", 2.0, 1)   # after close: a new event file in the same directory
    w.close()
    assert len(os.listdir(tmp_path / "run")) == 2
    assert [e.value for e in _accumulator(w.get_logdir()).Scalars("x")] == [1.0, 2.0]
    # purge_step: the same events as torch's writer, the session restarted at the step
    for cls, name in ((Writer, "ours"), (TorchWriter, "theirs")):
        with cls(str(tmp_path / name), purge_step=3) as p:
            p.add_scalar("x", 5.0, 3, walltime=WALLTIME)
    assert _events(tmp_path / "ours") == _events(tmp_path / "theirs")


def test_bad_input_errors_as_torchs(tmp_path):
    with Writer(str(tmp_path / "ours")) as mine, TorchWriter(str(tmp_path / "theirs")) as ref:
        for w, lib in ((mine, tl), (ref, torch)):
            with pytest.raises(AssertionError, match="Tensor should contain one element"):
                w.add_scalar("v", lib.ones(2))
            with pytest.raises(TypeError, match="hparam_dict and metric_dict should be"):
                w.add_hparams([], {})
            with pytest.raises(ValueError, match="The input has no element"):
                w.add_histogram("empty", lib.zeros(0))
            with pytest.raises(AssertionError, match="size of input tensor and input format"):
                w.add_image("img", lib.zeros(3, 4), dataformats="CHW")
            with pytest.raises(ValueError, match=re.escape("len(bucket_limits) != len(")):
                w.add_histogram_raw("r", 0, 1, 1, 1, 1, [1.0], [1, 2])


def test_missing_tensorboard_raises_on_writer_creation(tmp_path, monkeypatch):
    """Without the package, the module imports and a writer raises ModuleNotFoundError naming
    'tensorboard' with the extra to install (torch's import raises ModuleNotFoundError too)."""
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    import torchlike.utils.tensorboard as tb
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'tensorboard'.*"
                       r"pip install \"torchlike\[tensorboard\]\"") as info:
        tb.SummaryWriter(str(tmp_path))
    assert info.value.name == "tensorboard"
    assert not os.listdir(tmp_path)


def test_onnx_graph_equals_torchs(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1, alpha=0.5),
         helper.make_node("Relu", ["h"], ["y"])], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / "mlp.onnx")
    onnx.save(helper.make_model(graph), path)
    for cls, name in ((Writer, "ours"), (TorchWriter, "theirs")):
        with cls(str(tmp_path / name)) as w:
            w.add_onnx_graph(path)
    mine, ref = (_accumulator(str(tmp_path / n)).Graph() for n in ("ours", "theirs"))
    assert mine == ref and [n.op for n in mine.node][-2:] == ["Gemm", "Relu"]


@pytest.mark.parametrize("batch", [1, 3, 4, 8])
def test_video_frames_laid_out_as_torchs(batch):
    """add_video's frames before the GIF (which needs moviepy): the clips on torch's grid."""
    from torch.utils.tensorboard._utils import _prepare_video as ref

    from torchlike.utils.tensorboard._utils import _prepare_video
    clips = RNG.integers(0, 256, (batch, 2, 3, 4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(_prepare_video(clips), ref(clips))

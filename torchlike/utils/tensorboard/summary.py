"""Summary protocol buffers (mirrors ``torch.utils.tensorboard.summary``): each builder returns
a ``Summary`` of TensorBoard's protos (``tensorboard.compat.proto``), which ``SummaryWriter``
wraps in an ``Event``.  The protos come from ``_proto.load`` (NOTE [ tensorboard is optional ])."""
import io
import struct
import wave

import numpy as np

from . import _proto
from ._convert_np import make_np
from ._png import encode_png
from ._utils import _prepare_video, convert_to_HWC

__all__ = ["scalar", "tensor_proto", "histogram_raw", "histogram", "make_histogram", "image",
           "image_boxes", "draw_boxes", "make_image", "video", "make_video", "audio",
           "custom_scalars", "text", "pr_curve_raw", "pr_curve", "compute_curve", "mesh",
           "hparams"]


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """Mirrors ``torch.utils.tensorboard.summary.scalar``: a ``Summary`` holding one number.

    Args:
        name: the tag.
        tensor: a Tensor, array or number holding exactly one value.
        collections: unused (kept for torch's signature).
        new_style: store it as a ``tensor`` for the scalars plugin (``DT_FLOAT``) instead of
            the legacy ``simple_value``.
        double_precision: with ``new_style``, store a ``DT_DOUBLE``.

    Returns:
        Summary: the protocol buffer.

    Example::

        >>> scalar("loss", torchlike.tensor(0.5)).value[0].simple_value
        0.5
    """
    pb = _proto.load()
    Summary, SummaryMetadata = pb.summary_pb2.Summary, pb.summary_pb2.SummaryMetadata
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {array.size} and {array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    if double_precision:
        proto = pb.tensor_pb2.TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = pb.tensor_pb2.TensorProto(float_val=[value], dtype="DT_FLOAT")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])


def _half_bits(values):
    # torch's half_to_int: each value's float32 bit pattern, as an int (for half_val)
    return [struct.unpack("i", struct.pack("f", v))[0] for v in values]


def _complex_parts(values):
    return [part for v in values for part in (v.real, v.imag)]


# numpy dtype name -> (TensorProto dtype, its value field, conversion); torch's table
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "float32": ("DT_FLOAT", "float_val", list),
    "float64": ("DT_DOUBLE", "double_val", list),
    "int8": ("DT_INT8", "int_val", list),
    "uint8": ("DT_UINT8", "uint32_val", list),
    "int16": ("DT_INT16", "int_val", list),
    "int32": ("DT_INT32", "int_val", list),
    "int64": ("DT_INT64", "int64_val", list),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", list),
}


def tensor_proto(tag, tensor):
    """Mirrors ``torch.utils.tensorboard.summary.tensor_proto``: a ``Summary`` holding the whole
    Tensor (the tensor plugin), its values in the ``TensorProto`` field of its dtype
    (bfloat16 is stored as ``DT_BFLOAT16`` in ``half_val``, as torch stores it)."""
    from ..._dtype import bfloat16
    from ..._tensor import Tensor
    pb = _proto.load()
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    is_bf16 = isinstance(tensor, Tensor) and tensor.dtype == bfloat16
    array = make_np(tensor.float() if is_bf16 else tensor)
    if is_bf16:
        dtype, field, convert = "DT_BFLOAT16", "half_val", _half_bits
    elif array.dtype.name in _TENSOR_TYPES:
        dtype, field, convert = _TENSOR_TYPES[array.dtype.name]
    else:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    shape = pb.tensor_shape_pb2.TensorShapeProto(
        dim=[pb.tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in array.shape])
    proto = pb.tensor_pb2.TensorProto(dtype=dtype, tensor_shape=shape,
                                      **{field: convert(array.reshape(-1).tolist())})
    SummaryMetadata = pb.summary_pb2.SummaryMetadata
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag, metadata=metadata, tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """Mirrors ``torch.utils.tensorboard.summary.histogram_raw``: a histogram ``Summary`` from
    its statistics and buckets (``bucket_limits`` are the buckets' right edges)."""
    pb = _proto.load()
    histo = pb.summary_pb2.HistogramProto(min=min, max=max, num=num, sum=sum,
                                          sum_squares=sum_squares, bucket_limit=bucket_limits,
                                          bucket=bucket_counts)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(tag=name, histo=histo)])


def histogram(name, values, bins, max_bins=None):
    """Mirrors ``torch.utils.tensorboard.summary.histogram``: a histogram ``Summary`` of
    ``values`` (any shape), binned by ``numpy.histogram(values, bins)`` (see
    ``make_histogram``)."""
    pb = _proto.load()
    histo = make_histogram(make_np(values).astype(float), bins, max_bins)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(tag=name, histo=histo)])


def _merge_bins(counts, limits, max_bins):
    """At most ``max_bins`` buckets: each run of ``len(counts) // max_bins`` neighbours merged."""
    step = len(counts) // max_bins
    pad = (-len(counts)) % step
    counts = np.concatenate([counts, np.zeros(pad, counts.dtype)]).reshape(-1, step).sum(axis=1)
    return counts, np.append(limits[:-1:step], limits[-1])


def make_histogram(values, bins, max_bins=None):
    """Mirrors ``torch.utils.tensorboard.summary.make_histogram``: a ``HistogramProto`` of
    ``values``.

    ``numpy.histogram(values, bins)`` counts them (``bins``: a number, a NumPy rule such as
    "auto" or "fd", or the edges; SummaryWriter's "tensorflow" edges are its ``default_bins``).
    TensorBoard stores each bucket by its right edge, so the proto keeps the buckets from the
    first non-empty one to the last, led by one more bucket (the one before, or an empty one)
    whose right edge is the first kept bucket's left edge.
    """
    pb = _proto.load()
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_bins(counts, limits, max_bins)
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = int(filled[0]), int(filled[-1])
    if first > 0:
        counts = counts[first - 1:last + 1]
    else:
        counts = np.concatenate([[0], counts[:last + 1]])
    limits = limits[first:last + 2]
    return pb.summary_pb2.HistogramProto(
        min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
        sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """Mirrors ``torch.utils.tensorboard.summary.image``: an image ``Summary`` (PNG).

    Args:
        tag: the tag.
        tensor: the pixels in ``dataformats`` (a batch is drawn as one grid, eight a row).
            uint8 values are kept; any other dtype is read as [0, 1] and multiplied by 255;
            both are clipped to [0, 255] and cast to uint8 (truncating, as torch).
        rescale: scale factor of the stored image (only 1: torchlike does not resample).
        dataformats: letters N, C, H, W in the tensor's order ("CHW", "HWC", "HW", "NCHW", ...).

    Returns:
        Summary: the protocol buffer.
    """
    pb = _proto.load()
    array = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag, image=make_image(array, rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """Mirrors ``torch.utils.tensorboard.summary.image_boxes``: an image ``Summary`` with
    boxes (rows of xmin, ymin, xmax, ymax) drawn in red, each with its label (needs Pillow,
    as torch)."""
    pb = _proto.load()
    array = convert_to_HWC(make_np(tensor_image), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag, image=make_image(array, rescale=rescale, rois=make_np(tensor_boxes),
                                  labels=labels))])


def _draw_single_box(image, xmin, ymin, xmax, ymax, display_str, color="black",
                     color_text="black", thickness=2):
    """One box outline on a Pillow image and, above its bottom-left corner, its label on a
    filled strip (Pillow's default font)."""
    from PIL import ImageDraw, ImageFont
    font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    corners = [(xmin, ymin), (xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)]
    draw.line(corners, width=thickness, fill=color)
    if display_str:
        left, top, right, bottom = font.getbbox(display_str)
        text_width, text_height = right - left, bottom - top
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(xmin, ymax - text_height - 2 * margin), (xmin + text_width, ymax)],
                       fill=color)
        draw.text((xmin + margin, ymax - text_height - margin), display_str, fill=color_text,
                  font=font)
    return image


def draw_boxes(disp_image, boxes, labels=None):
    """Mirrors ``torch.utils.tensorboard.summary.draw_boxes``: each row of ``boxes`` (xyxy)
    drawn in red on the Pillow image, with ``labels[i]`` when given."""
    for i in range(boxes.shape[0]):
        disp_image = _draw_single_box(disp_image, *boxes[i, :4],
                                      display_str=None if labels is None else labels[i],
                                      color="Red")
    return disp_image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """Mirrors ``torch.utils.tensorboard.summary.make_image``: a ``Summary.Image`` of a uint8
    (H, W, C) array, PNG-encoded (NOTE [ PNG without Pillow ] in ``_png.py``).  Drawing boxes
    (``rois``) and resampling (``rescale`` != 1, Lanczos) use Pillow, as torch's do; the
    stored height and width are the array's, as torch stores them."""
    pb = _proto.load()
    height, width, channels = tensor.shape
    pixels = tensor
    if rois is not None or rescale != 1:
        from PIL import Image
        picture = Image.fromarray(tensor)
        if rois is not None:
            picture = draw_boxes(picture, rois, labels=labels)
        picture = picture.resize((int(width * rescale), int(height * rescale)),
                                 Image.Resampling.LANCZOS)
        pixels = np.asarray(picture)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
    return pb.summary_pb2.Summary.Image(height=height, width=width, colorspace=channels,
                                        encoded_image_string=encode_png(pixels))


def video(tag, tensor, fps=4):
    """Mirrors ``torch.utils.tensorboard.summary.video``: (N, T, C, H, W) clips (uint8, or
    floats in [0, 1]) as one animated GIF, the batch on a grid (needs ``moviepy``, as torch)."""
    pb = _proto.load()
    array = _prepare_video(make_np(tensor))
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag, image=make_video(array, fps))])


def make_video(tensor, fps):
    """A ``Summary.Image`` holding the (T, H, W, C) uint8 frames as a GIF written by
    ``moviepy``; without ``moviepy`` torch prints why and stores no image, and so does this."""
    pb = _proto.load()
    try:
        import moviepy  # noqa: F401  (is it installed at all?)
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor as mpy
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.",
              "Some packages could be missing [imageio, requests]")
        return None
    import tempfile
    _, h, w, c = tensor.shape
    clip = mpy.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        try:   # moviepy's keyword for silence changed between versions
            clip.write_gif(f.name, verbose=False, logger=None)
        except TypeError:
            clip.write_gif(f.name, verbose=False)
        f.seek(0)
        return pb.summary_pb2.Summary.Image(height=h, width=w, colorspace=c,
                                            encoded_image_string=f.read())


def audio(tag, tensor, sample_rate=44100):
    """Mirrors ``torch.utils.tensorboard.summary.audio``: a mono clip (values in [-1, 1],
    clipped with a printed warning past them) as a 16-bit WAV ``Summary.Audio``."""
    pb = _proto.load()
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (array * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(samples.tobytes())
    clip = pb.summary_pb2.Summary.Audio(sample_rate=sample_rate, num_channels=1,
                                        length_frames=samples.shape[-1],
                                        encoded_audio_string=buffer.getvalue(),
                                        content_type="audio/wav")
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(tag=tag, audio=clip)])


def custom_scalars(layout):
    """Mirrors ``torch.utils.tensorboard.summary.custom_scalars``: the custom-scalars plugin's
    layout, ``{category: {chart title: ["Multiline", tags] or ["Margin", [value, lower,
    upper]]}}``."""
    pb = _proto.load()
    lp = pb.layout_pb2
    categories = []
    for category, charts in layout.items():
        made = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = lp.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                made.append(lp.Chart(title=title, margin=lp.MarginChartContent(series=[series])))
            else:
                made.append(lp.Chart(title=title, multiline=lp.MultilineChartContent(tag=tags)))
        categories.append(lp.Category(title=category, chart=made))
    proto = pb.tensor_pb2.TensorProto(
        dtype="DT_STRING", string_val=[lp.Layout(category=categories).SerializeToString()],
        tensor_shape=pb.tensor_shape_pb2.TensorShapeProto())
    SummaryMetadata = pb.summary_pb2.SummaryMetadata
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="custom_scalars"))
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag="custom_scalars__config__", tensor=proto, metadata=metadata)])


def text(tag, text):
    """Mirrors ``torch.utils.tensorboard.summary.text``: a ``Summary`` for the text plugin, tag
    ``<tag>/text_summary``, the string as a one-element ``DT_STRING`` tensor (markdown)."""
    pb = _proto.load()
    SummaryMetadata = pb.summary_pb2.SummaryMetadata
    content = pb.text_plugin_data_pb2.TextPluginData(version=0).SerializeToString()
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text",
                                                                       content=content))
    shape = pb.tensor_shape_pb2.TensorShapeProto(
        dim=[pb.tensor_shape_pb2.TensorShapeProto.Dim(size=1)])
    proto = pb.tensor_pb2.TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                                      tensor_shape=shape)
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag + "/text_summary", metadata=metadata, tensor=proto)])


def _plugin_summary(pb, tag, **data):
    """A ``Summary`` of the hparams plugin: one value, its data in the metadata."""
    SummaryMetadata = pb.summary_pb2.SummaryMetadata
    content = pb.hparams_plugin_data_pb2.HParamsPluginData(
        version=pb.hparams_metadata.PLUGIN_DATA_VERSION, **data).SerializeToString()
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=pb.hparams_metadata.PLUGIN_NAME, content=content))
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(tag=tag,
                                                                       metadata=metadata)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """Mirrors ``torch.utils.tensorboard.summary.hparams``: the hparams plugin's three
    summaries, ``(experiment, session_start_info, session_end_info)``.

    Args:
        hparam_dict: name -> value (int, float, str, bool or a Tensor; None is skipped).
        metric_dict: name -> value of the metrics (only the names are stored here).
        hparam_domain_discrete: name -> the list of values that hyper-parameter may take.

    Returns:
        tuple of Summary: the experiment (hyper-parameter and metric declarations), the
        session's values, and its end (status success).

    As in torch, a bool counts as a number (``number_value`` 1.0 / 0.0) since ``bool`` is an
    ``int``, and a Tensor gives its first element.
    """
    from google.protobuf import struct_pb2

    from ..._tensor import Tensor
    pb = _proto.load()
    api = pb.hparams_api_pb2
    for name, value in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(value, dict):
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, "
                        "nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos = []
    start = pb.hparams_plugin_data_pb2.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        if isinstance(v, (int, float)):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(start.hparams[k], field, v)
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                  for d in domains[k]])
        infos.append(api.HParamInfo(name=k, type=api.DataType.Value(kind),
                                    domain_discrete=domain))
    experiment = api.Experiment(hparam_infos=infos, metric_infos=[
        api.MetricInfo(name=api.MetricName(tag=k)) for k in metric_dict])
    end = pb.hparams_plugin_data_pb2.SessionEndInfo(status=api.Status.Value("STATUS_SUCCESS"))
    meta = pb.hparams_metadata
    return (_plugin_summary(pb, meta.EXPERIMENT_TAG, experiment=experiment),
            _plugin_summary(pb, meta.SESSION_START_INFO_TAG, session_start_info=start),
            _plugin_summary(pb, meta.SESSION_END_INFO_TAG, session_end_info=end))


def _pr_summary(tag, data, num_thresholds):
    """The pr_curves plugin's ``Summary``: a (6, num_thresholds) float tensor of tp, fp, tn,
    fn, precision, recall."""
    pb = _proto.load()
    SummaryMetadata = pb.summary_pb2.SummaryMetadata
    content = pb.pr_curve_plugin_data_pb2.PrCurvePluginData(
        version=0, num_thresholds=num_thresholds).SerializeToString()
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves",
                                                                       content=content))
    Dim = pb.tensor_shape_pb2.TensorShapeProto.Dim
    proto = pb.tensor_pb2.TensorProto(
        dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
        tensor_shape=pb.tensor_shape_pb2.TensorShapeProto(dim=[Dim(size=n) for n in data.shape]))
    return pb.summary_pb2.Summary(value=[pb.summary_pb2.Summary.Value(
        tag=tag, metadata=metadata, tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """Mirrors ``torch.utils.tensorboard.summary.pr_curve_raw``: a precision-recall curve from
    its counts (``num_thresholds`` at most 127, as torch)."""
    data = np.stack([make_np(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, min(num_thresholds, 127))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """Mirrors ``torch.utils.tensorboard.summary.pr_curve``: a precision-recall curve of binary
    ``labels`` against ``predictions`` in [0, 1] (see ``compute_curve``)."""
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                       num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """tp, fp, tn, fn, precision and recall at ``num_thresholds`` evenly spaced thresholds:
    each prediction falls in bucket ``floor(p * (num_thresholds - 1))``, and a threshold's
    counts are those of the buckets at or above it (TensorBoard's pr_curve definition)."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    edges = dict(bins=num_thresholds, range=(0, num_thresholds - 1))
    tp_buckets, _ = np.histogram(buckets, weights=positive * weights, **edges)
    fp_buckets, _ = np.histogram(buckets, weights=(1.0 - positive) * weights, **edges)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """Mirrors ``torch.utils.tensorboard.summary.mesh``: the mesh plugin's ``Summary``, one
    value per given part (vertices, faces, colors; each (B, N, 3)), with the three.js
    ``config_dict`` as JSON."""
    import json

    from tensorboard.plugins.mesh import metadata as mesh_metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
    pb = _proto.load()
    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(x, kind) for x, kind in ((vertices, MeshPluginData.VERTEX),
                                       (faces, MeshPluginData.FACE),
                                       (colors, MeshPluginData.COLOR)) if x is not None]
    components = mesh_metadata.get_components_bitmask([kind for _, kind in parts])
    Dim = pb.tensor_shape_pb2.TensorShapeProto.Dim
    values = []
    for x, kind in parts:
        array = make_np(x)
        metadata = mesh_metadata.create_summary_metadata(
            tag, display_name, kind, components, array.shape, description,
            json_config=json_config)
        proto = pb.tensor_pb2.TensorProto(
            dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(),
            tensor_shape=pb.tensor_shape_pb2.TensorShapeProto(dim=[Dim(size=n)
                                                                    for n in array.shape[:3]]))
        values.append(pb.summary_pb2.Summary.Value(
            tag=mesh_metadata.get_instance_name(tag, kind), tensor=proto, metadata=metadata))
    return pb.summary_pb2.Summary(value=values)

"""``SummaryWriter`` and ``FileWriter`` (mirror ``torch.utils.tensorboard.writer``): event files
written by TensorBoard's own ``EventFileWriter`` (NOTE [ tensorboard is optional ])."""
import os
import socket
import time
from datetime import datetime

from . import _proto
from ._convert_np import make_np
from ._utils import figure_to_image
from .summary import (audio, custom_scalars, histogram, histogram_raw, hparams, image,
                      image_boxes, mesh, pr_curve, pr_curve_raw, scalar, tensor_proto, text,
                      video)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Mirrors ``torch.utils.tensorboard.writer.FileWriter``: one event file in ``log_dir``,
    written asynchronously by TensorBoard's ``EventFileWriter``.

    Args:
        log_dir: the directory (created if missing).
        max_queue: events held before an ``add`` call forces a write.
        flush_secs: seconds between the background flushes.
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        pb = _proto.load()
        self._event_pb2 = pb.event_pb2
        self.event_writer = pb.EventFileWriter(str(log_dir), max_queue, flush_secs,
                                               filename_suffix)

    def get_logdir(self):
        """The directory the event file is written in."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Write an ``Event`` proto, stamped with ``walltime`` (default: now) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Write a ``Summary`` proto as an ``Event``."""
        self.add_event(self._event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Write a ``(GraphDef, RunMetadata)`` pair: the graph, then its run metadata tagged
        ``step1``, as torch does."""
        graph, stepstats = graph_profile
        self.add_event(self._event_pb2.Event(graph_def=graph.SerializeToString()), None,
                       walltime)
        trm = self._event_pb2.TaggedRunMetadata(tag="step1",
                                                run_metadata=stepstats.SerializeToString())
        self.add_event(self._event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def flush(self):
        """Write the pending events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self):
        """After ``close``, write further events to a new event file in the same directory."""
        self.event_writer.reopen()


def _default_bins():
    """SummaryWriter's "tensorflow" bin edges: +-1e-12 * 1.1**k up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


class SummaryWriter:
    """Mirrors ``torch.utils.tensorboard.SummaryWriter``: writes scalars, histograms, images,
    figures, text, hyper-parameters and the model's graph to TensorBoard event files.

    Values may be torchlike Tensors on any device, numpy arrays or Python numbers.  Needs the
    ``tensorboard`` package (``pip install "torchlike[tensorboard]"``), imported here.

    Args:
        log_dir: the run's directory; default ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: restarting a crashed run at this step, TensorBoard hides the events the
            old run wrote at or after it.
        max_queue: events held before an ``add_*`` call forces a write.
        flush_secs: seconds between the background flushes.
        filename_suffix: appended to every event file's name.

    Example::

        >>> with SummaryWriter("runs/exp1") as writer:
        ...     for step in range(3):
        ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        _proto.load()
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_"
                                   + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The run's FileWriter, made again after ``close``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                event_pb2 = _proto.load().event_pb2
                self.file_writer.add_event(event_pb2.Event(step=self.purge_step,
                                                           file_version="brain.Event:2"))
                self.file_writer.add_event(event_pb2.Event(
                    step=self.purge_step,
                    session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory event files are written in."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """Mirrors ``SummaryWriter.add_hparams``: one session of the HParams dashboard.

        Written, as torch writes it, to a sub-run ``<log_dir>/<run_name>`` (default: the
        current time): the experiment, the session's start (the values) and end, and each
        metric as a scalar.

        Args:
            hparam_dict: name -> value (bool, str, int, float, None or a Tensor).
            metric_dict: name -> value; use tags no ``add_scalar`` of the run uses.
            hparam_domain_discrete: name -> list of the values that hyper-parameter takes.
            run_name: the sub-run's name.
            global_step: the step recorded with the metrics.
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for s in summaries:
                w_hp.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Mirrors ``SummaryWriter.add_scalar``: one point of the curve ``tag``.

        Args:
            tag: the curve's name.
            scalar_value: a number, or a Tensor / array with one element.
            global_step: the step (x axis).
            walltime: seconds since the epoch (default: now).
            new_style: store a ``tensor`` for the scalars plugin instead of ``simple_value``.
            double_precision: with ``new_style``, store it as a double.
        """
        self._get_file_writer().add_summary(
            scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
            global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Mirrors ``SummaryWriter.add_scalars``: several curves in one chart.

        Each key gets its own run, ``<log_dir>/<main_tag with / as _>_<key>``, written by its
        own FileWriter, where the value is logged under ``main_tag``.
        """
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Mirrors ``SummaryWriter.add_tensor``: the whole Tensor, for the tensor plugin."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Mirrors ``SummaryWriter.add_histogram``.

        Args:
            tag: the histogram's name.
            values: a Tensor or array (any shape).
            global_step: the step.
            bins: "tensorflow" (torch's default: edges +-1e-12 * 1.1**k, see
                ``default_bins``), any ``numpy.histogram`` rule ("auto", "fd", ...), a number
                of bins or the edges.
            walltime: seconds since the epoch (default: now).
            max_bins: merge neighbouring buckets down to at most this many.
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """Mirrors ``SummaryWriter.add_histogram_raw``: a histogram from its statistics and
        buckets (``bucket_limits``: each bucket's right edge)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
            global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Mirrors ``SummaryWriter.add_image``: one image (PNG).

        Args:
            tag: the image's name.
            img_tensor: the pixels: uint8 in [0, 255], any other dtype in [0, 1].
            global_step: the step.
            walltime: seconds since the epoch (default: now).
            dataformats: "CHW" (default), "HWC", "HW", "WH", ... (1 or no channel: grey).
        """
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Mirrors ``SummaryWriter.add_images``: a batch of images drawn as one grid (eight a
        row); ``dataformats`` "NCHW" (default), "NHWC", ..."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        """Mirrors ``SummaryWriter.add_image_with_boxes``: an image with boxes drawn on it
        (needs Pillow, as torch).

        Args:
            tag: the image's name.
            img_tensor: the pixels, as ``add_image`` takes them.
            box_tensor: (N, 4) boxes, each (xmin, ymin, xmax, ymax) in pixels.
            global_step: the step.
            walltime: seconds since the epoch (default: now).
            rescale: scale the stored image by this factor.
            dataformats: the image's layout ("CHW", "HWC", ...).
            labels: a label per box (ignored unless there is one per box).
        """
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._get_file_writer().add_summary(
            image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                        labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Mirrors ``SummaryWriter.add_figure``: a matplotlib figure (or a list of them, drawn
        as a grid) rendered by Agg and stored as an image; ``close`` closes the figure(s)."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Mirrors ``SummaryWriter.add_text``: markdown text, shown under ``<tag>/text_summary``."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Mirrors ``SummaryWriter.add_video``: (N, T, C, H, W) clips as one animated GIF
        (needs ``moviepy``, as torch; without it, torch's message and no image)."""
        self._get_file_writer().add_summary(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Mirrors ``SummaryWriter.add_audio``: a mono clip, shape (1, L), values in [-1, 1],
        stored as 16-bit WAV."""
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate=sample_rate),
                                            global_step, walltime)

    @staticmethod
    def _encode(rawstr):
        # a tag as a directory name: %, / and \ percent-encoded
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Mirrors ``SummaryWriter.add_embedding``: points for the Projector.

        Args:
            mat: (N, D), one feature vector a row.
            metadata: N labels (or, with ``metadata_header``, N rows of columns).
            label_img: (N, C, H, W) thumbnails in [0, 1], C 1 or 3.
            global_step: the step (default 0).
            tag: the embedding's name.
            metadata_header: the columns' names.
        """
        from ._embedding import get_embedding_info, make_mat, make_sprite, make_tsv
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot "
                                         "proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data "
                                 "points")
        make_mat(mat, save_path)
        from google.protobuf import text_format
        pb = _proto.load()
        if not hasattr(self, "_projector_config"):
            self._projector_config = pb.projector_config_pb2.ProjectorConfig()
        self._projector_config.embeddings.extend(
            [get_embedding_info(pb, metadata, label_img, subdir, global_step, tag)])
        with open(os.path.join(self._get_file_writer().get_logdir(),
                               "projector_config.pbtxt"), "wb") as f:
            f.write(text_format.MessageToString(self._projector_config).encode("utf_8"))

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Mirrors ``SummaryWriter.add_pr_curve``: the precision-recall curve of binary
        ``labels`` against ``predictions`` (probabilities in [0, 1]) at ``num_thresholds``
        (at most 127) thresholds."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._get_file_writer().add_summary(
            pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """Mirrors ``SummaryWriter.add_pr_curve_raw``: a precision-recall curve from its
        counts, one value per threshold in each."""
        self._get_file_writer().add_summary(
            pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         num_thresholds, weights), global_step, walltime)

    def add_custom_scalars(self, layout):
        """Mirrors ``SummaryWriter.add_custom_scalars``: charts that gather scalar tags,
        ``{category: {title: ["Multiline", tags] or ["Margin", [value, lower, upper]]}}``
        (once per writer)."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """Mirrors ``SummaryWriter.add_custom_scalars_multilinechart``: one chart of ``tags``."""
        self._get_file_writer().add_summary(custom_scalars({category: {title: ["Multiline",
                                                                               tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """Mirrors ``SummaryWriter.add_custom_scalars_marginchart``: one chart of a value and
        its lower and upper bounds (three tags)."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._get_file_writer().add_summary(custom_scalars({category: {title: ["Margin",
                                                                               tags]}}))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """Mirrors ``SummaryWriter.add_mesh``: a mesh or point cloud for the mesh plugin.

        Args:
            tag: the mesh's name.
            vertices: (B, N, 3) coordinates.
            colors: (B, N, 3) uint8 colours of the vertices.
            faces: (B, F, 3) vertex indices of each triangle.
            config_dict: three.js classes and settings of the scene.
            global_step: the step.
            walltime: seconds since the epoch (default: now).
        """
        self._get_file_writer().add_summary(mesh(tag, vertices, colors, faces, config_dict),
                                            global_step, walltime)

    def add_onnx_graph(self, prototxt):
        """Mirrors ``SummaryWriter.add_onnx_graph``: the graph of the ONNX model in the file
        ``prototxt`` (needs ``onnx``: ``pip install "torchlike[onnx]"``)."""
        from ._onnx_graph import load_onnx_graph
        graph = load_onnx_graph(prototxt)
        self._get_file_writer().add_event(
            _proto.load().event_pb2.Event(graph_def=graph.SerializeToString()))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Mirrors ``SummaryWriter.add_graph``: the model's forward on ``input_to_model`` as a
        graph of module scopes and XLA ops (NOTE [ the graph of a forward ] in ``_graph.py``).

        Args:
            model: an ``nn.Module``.
            input_to_model: a Tensor or a tuple / list of the forward's arguments.
            verbose: print the traced program.
            use_strict_trace: accepted for torch's signature.
        """
        from ._graph import graph
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose,
                                                use_strict_trace))

    def flush(self):
        """Write every pending event of the run (and of ``add_scalars``' runs) to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every event file; a later ``add_*`` call opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

"""The ``tensorboard`` package, imported when a summary is first built.

NOTE [ tensorboard is optional ]
torchlike's core runs without ``tensorboard`` (the ``tensorboard`` extra).
``torch.utils.tensorboard`` imports it at the top of the package; here ``import
torchlike.utils.tensorboard`` always works and the package is imported when a ``SummaryWriter``
is made (``load`` below, also called by every summary builder).  Where it is missing, ``load``
raises torch's error, a ``ModuleNotFoundError`` for 'tensorboard', with the extra to install;
an older TensorBoard than 1.15 raises torch's ``ImportError``.  ``load`` keeps no cache: after
the first call each import is a lookup in ``sys.modules``, and a test that hides the package
(``sys.modules["tensorboard"] = None``) sees it hidden.
"""
import types


def _version(text):
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def load():
    """The tensorboard modules torchlike writes with, as one namespace."""
    try:
        import tensorboard
        from tensorboard.compat.proto import (attr_value_pb2, config_pb2, event_pb2, graph_pb2,
                                              node_def_pb2, step_stats_pb2, summary_pb2,
                                              tensor_pb2, tensor_shape_pb2, versions_pb2)
        from tensorboard.plugins.custom_scalar import layout_pb2
        from tensorboard.plugins.hparams import api_pb2 as hparams_api_pb2
        from tensorboard.plugins.hparams import metadata as hparams_metadata
        from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_plugin_data_pb2
        from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_curve_plugin_data_pb2
        from tensorboard.plugins.projector import projector_config_pb2
        from tensorboard.plugins.text import plugin_data_pb2 as text_plugin_data_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboard.summary.writer.record_writer import RecordWriter
    except ImportError as e:
        raise ModuleNotFoundError(
            "No module named 'tensorboard': torchlike.utils.tensorboard writes its event files "
            'with it (pip install "torchlike[tensorboard]")', name="tensorboard") from e
    if _version(getattr(tensorboard, "__version__", "0")) < (1, 15):
        raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
    return types.SimpleNamespace(
        attr_value_pb2=attr_value_pb2, config_pb2=config_pb2, event_pb2=event_pb2,
        graph_pb2=graph_pb2, node_def_pb2=node_def_pb2, step_stats_pb2=step_stats_pb2,
        summary_pb2=summary_pb2, tensor_pb2=tensor_pb2, tensor_shape_pb2=tensor_shape_pb2,
        versions_pb2=versions_pb2, hparams_api_pb2=hparams_api_pb2,
        hparams_metadata=hparams_metadata, hparams_plugin_data_pb2=hparams_plugin_data_pb2,
        text_plugin_data_pb2=text_plugin_data_pb2, layout_pb2=layout_pb2,
        pr_curve_plugin_data_pb2=pr_curve_plugin_data_pb2,
        projector_config_pb2=projector_config_pb2, EventFileWriter=EventFileWriter,
        RecordWriter=RecordWriter)

"""torchlike.profiler: where eager time goes, op by op (mirrors torch.profiler).

``profile`` records torchlike's dispatched ops (``aten::mm``...), the backward nodes the engine
runs, ``record_function`` ranges, optimizer steps and DataLoader batches, with host times,
shapes, memory, stacks and flops on request; ``key_averages().table()`` prints PyTorch's table
and ``export_chrome_trace`` writes a trace Perfetto opens.  Device activities add jax's own
device trace (NOTE [ device trace ] in profiler.py).
"""
from ..autograd.profiler import record_function as record_function
from ..autograd.profiler_util import DeviceType as DeviceType
from . import profiler as profiler
from .profiler import ProfilerAction as ProfilerAction
from .profiler import ProfilerActivity as ProfilerActivity
from .profiler import kineto_available as kineto_available
from .profiler import profile as profile
from .profiler import schedule as schedule
from .profiler import supported_activities as supported_activities
from .profiler import tensorboard_trace_handler as tensorboard_trace_handler

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]

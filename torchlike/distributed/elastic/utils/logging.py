"""Mirrors ``torch.distributed.elastic.utils.logging``: the launcher's loggers write to stderr
at the level ``LOGLEVEL`` names (WARNING by default), one record a line in the layout torchrun
prints::

    W1204 04:08:34.834000 11186 torchlike/distributed/elastic/multiprocessing/api.py:88] ...

(level letter, month and day, time, process id, file under the package root, line).
"""
import logging
import os
import time

__all__ = ["get_logger"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))


class _Formatter(logging.Formatter):
    def format(self, record):
        stamp = time.strftime("%m%d %H:%M:%S", time.localtime(record.created))
        micros = int((record.created % 1) * 1e6)
        where = os.path.relpath(record.pathname, _ROOT)
        line = (f"{record.levelname[0]}{stamp}.{micros:06d} {record.process} "
                f"{where}:{record.lineno}] {record.getMessage()}")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


_handler = logging.StreamHandler()
_handler.setFormatter(_Formatter())


def get_logger(name):
    """Mirrors ``torch.distributed.elastic.utils.logging.get_logger``: the logger ``name``,
    writing to stderr at the level of ``LOGLEVEL`` (default WARNING)."""
    logger = logging.getLogger(name)
    logger.setLevel(os.environ.get("LOGLEVEL", "WARNING"))
    if _handler not in logger.handlers:
        logger.addHandler(_handler)
        logger.propagate = False
    return logger

"""This session runs with CPU devices presented as GPUs (started by tests/test_devices.py)."""
import jax
import pytest

from torchlike._device import devices_of


@pytest.fixture(autouse=True, scope="session")
def _seven_gpus():
    assert len(jax.devices("cpu")) == 8, \
        "start with XLA_FLAGS=--xla_force_host_platform_device_count=8"
    assert len(devices_of("cuda")) == 7

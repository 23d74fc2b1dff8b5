"""Parity tests: torchlike._tensor_str.format_tensor against repr() of real PyTorch tensors."""

import math

import numpy as np
import pytest
import torch

import ml_dtypes  # noqa: E402  (jax's own dependency)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchlike import _tensor_str as ts  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
NP_DTYPES = [np.dtype(d) for d in ("bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "float32", "float64", "complex64", "complex128")]
NP_DTYPES.append(BF16)
INF, NAN = math.inf, math.nan


def to_torch(values):
    if values.dtype == BF16:
        return torch.from_numpy(values.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(values))


def shows_dtype(t):
    default = torch.get_default_dtype()
    complex_default = torch.complex128 if default == torch.float64 else torch.complex64
    return t.dtype not in (default, complex_default, torch.int64, torch.bool)


def ours(values, t, **kwargs):
    return ts.format_tensor(values, dtype_name=str(t.dtype), show_dtype=shows_dtype(t), **kwargs)


def check(values, requires_grad=False):
    t = to_torch(values)
    suffixes = ()
    if requires_grad and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_()
        suffixes = [("requires_grad", "True")]
    assert ours(values, t, suffixes=suffixes) == repr(t)


def set_both(**options):
    torch.set_printoptions(**options)
    ts.set_printoptions(**options)


@pytest.fixture(autouse=True)
def restore_defaults():
    yield
    set_both(profile="default")
    torch.set_default_dtype(torch.float32)


def arr(data, dtype):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(data, dtype=np.float64 if dtype == BF16 else None).astype(dtype)


# ------------------------------------------------------------------ table of fixed cases
CASES = [
    ([1.0, 2.0], "float32"),
    ([1.5, -2.25, 3.0], "float32"),
    (3.0, "float32"),
    (-0.0, "float32"),
    (7, "int64"),
    (True, "bool"),
    ([True, False], "bool"),
    ([], "float32"),
    ([], "int64"),
    ([], "bool"),
    ([], "complex64"),
    ([], "float16"),
    (np.zeros((0, 3)), "float32"),
    (np.zeros((2, 0, 3)), "int32"),
    ([1, 2], "int32"),
    ([-(2**63), 2**63 - 1, 0], "int64"),
    ([0, 255], "uint8"),
    ([-128, 5], "int8"),
    ([1e-8, 1.0], "float32"),
    ([1e12, 3.0], "float64"),
    ([1e9, 2e9], "float32"),
    ([1e8, 2.0], "float32"),
    ([123456.0, 1.0], "float64"),
    ([0.0001, 0.5], "float32"),
    ([0.00009, 0.5], "float32"),
    ([NAN, INF, -INF, 0.0], "float32"),
    ([0.0, NAN], "float32"),
    ([-0.0, 0.0, 1.0], "float32"),
    ([NAN, 1.5], "float32"),
    ([INF, 1e-6], "float64"),
    ([65504.0, 0.1], "float16"),
    ([1.0, 3.140625, -100.5], "bfloat16"),
    ([1 + 2j, 3 - 4.5j], "complex64"),
    ([-0.0 - 0.0j, complex(NAN, INF), 1e9 + 1e-9j], "complex128"),
    (1 - 1j, "complex64"),
    (np.arange(24.0).reshape(2, 3, 4) / 7, "float32"),
    (np.arange(120).reshape(2, 3, 4, 5) - 60, "int16"),
    (np.arange(30.0) * 1.1, "float32"),
    (np.arange(2000.0), "float32"),
    (np.arange(1001) * 10**9, "int64"),
    (np.arange(2000.0).reshape(40, 50) / 3, "float64"),
    (np.arange(4096).reshape(8, 8, 8, 8) % 7 == 0, "bool"),
    (np.linspace(-1e5, 1e-5, 1500).reshape(3, 500), "complex64"),
]


@pytest.mark.parametrize("data,dtype", CASES, ids=[f"{i}-{d}" for i, (_, d) in enumerate(CASES)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_table(data, dtype, requires_grad):
    check(arr(data, np.dtype(BF16 if dtype == "bfloat16" else dtype)), requires_grad)


OPTION_CASES = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=10),
    dict(threshold=5),
    dict(threshold=0),
    dict(edgeitems=1, threshold=10),
    dict(edgeitems=0),
    dict(edgeitems=0, threshold=5),
    dict(linewidth=20),
    dict(linewidth=3),
    dict(linewidth=200),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6, sci_mode=True),
]
OPTION_DATA = [
    arr(np.arange(60.0).reshape(3, 4, 5) / 3 - 7, np.dtype("float32")),
    arr(np.arange(1200).reshape(30, 40) * 1000003, np.dtype("int64")),
    arr([[1e-7, NAN], [3.0, -INF]], np.dtype("float64")),
    arr([0.0, -0.0, 0.0], np.dtype("float32")),
    arr([1.0, 2.0, 300.0], np.dtype("float16")),
    arr(np.arange(12).reshape(3, 4) * (1 + 2j), np.dtype("complex128")),
    arr(2.5, np.dtype("float32")),
    arr(np.zeros((0, 2)), np.dtype("float32")),
    arr(np.arange(10) % 3 == 0, np.dtype("bool")),
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=str)
@pytest.mark.parametrize("index", range(len(OPTION_DATA)))
def test_print_options(options, index):
    set_both(**options)
    check(OPTION_DATA[index], requires_grad=True)


def test_get_printoptions_tracks_torch():
    unknown_profile = dict(profile="bogus", precision=3)  # torch ignores the profile only
    for options in [{}, *OPTION_CASES, unknown_profile, dict(profile="default")]:
        set_both(**options)
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()


def test_grad_fn_suffix():
    for data, dtype in [([1.5, 2.0], "float32"), (np.arange(6.0).reshape(2, 3), "float16")]:
        values = arr(data, np.dtype(dtype))
        t = to_torch(values).requires_grad_()
        out = t * 2
        expected = ts.format_tensor(values * 2, dtype_name=str(t.dtype), show_dtype=shows_dtype(t),
                                    suffixes=[("grad_fn", "<MulBackward0>")])
        assert expected == repr(out)
        total = out.sum()
        grad_fn = [("grad_fn", "<SumBackward0>")]
        assert ours(np.asarray(total.detach().numpy()), total, suffixes=grad_fn) == repr(total)


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    for values in [arr([1.5, 2.0], np.dtype("float32")), arr([1.5, 2.0], np.dtype("float64")),
                   arr([1j], np.dtype("complex64")), arr([1j], np.dtype("complex128")),
                   arr([], np.dtype("float32")), arr([], np.dtype("float64"))]:
        check(values)


def test_device_comes_before_size_and_dtype(monkeypatch):
    # Pretend the default device is CUDA so that real CPU tensors print their device.
    monkeypatch.setattr(torch._C, "_get_default_device", lambda: "cuda")
    for values in [arr([1.0, 2.0], np.dtype("float16")), arr(np.zeros((0, 2)), np.dtype("int32")),
                   arr(np.arange(40.0).reshape(4, 10), np.dtype("float32"))]:
        t = to_torch(values).requires_grad_(values.dtype.kind == "f")
        suffixes = [("requires_grad", "True")] if t.requires_grad else ()
        for edgeitems in (3, 0):  # edgeitems=0 adds size= to non-empty tensors too
            set_both(linewidth=40, edgeitems=edgeitems)
            assert ours(values, t, suffixes=suffixes, device_str="cpu") == repr(t)


class Named(torch.Tensor):
    pass


def test_prefix_sets_indent():
    values = arr(np.arange(40.0).reshape(2, 2, 10) / 3, np.dtype("float32"))
    t = to_torch(values).as_subclass(Named)
    assert ours(values, t, prefix="Named(") == repr(t)


# ------------------------------------------------------------------ hypothesis-generated arrays
MAX_DIM = {0: 1, 1: 2000, 2: 50, 3: 16, 4: 9}
SPECIALS = np.array([NAN, INF, -INF, 0.0, -0.0])


def real_values(rng, size, low_exp, high_exp, integral, special_rate):
    data = rng.choice([-1.0, 1.0], size) * 10.0 ** rng.uniform(low_exp, high_exp, size)
    if integral:
        data = np.round(data)
    special = rng.random(size) < special_rate
    data[special] = rng.choice(SPECIALS, int(special.sum()))
    return data


@st.composite
def random_arrays(draw):
    dtype = draw(st.sampled_from(NP_DTYPES))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, MAX_DIM[ndim]))
                  for _ in range(ndim))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = math.prod(shape)
    if dtype == np.bool_:
        data = rng.random(size) < 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        high = draw(st.sampled_from([10, 1000, int(info.max)]))
        high = min(high, int(info.max))
        data = rng.integers(max(int(info.min), -high), high, size, dtype=dtype, endpoint=True)
    else:
        low_exp = draw(st.integers(-10, 12))
        params = (low_exp, low_exp + draw(st.integers(0, 8)), draw(st.booleans()),
                  draw(st.sampled_from([0.0, 0.0, 0.1, 0.5])))
        data = real_values(rng, size, *params)
        if dtype.kind == "c":
            data = data.astype(np.complex128)
            data.imag = real_values(rng, size, *params)
    return arr(np.reshape(data, shape), dtype)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=random_arrays(), requires_grad=st.booleans())
def test_random_arrays(values, requires_grad):
    check(values, requires_grad)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=random_arrays(),
       precision=st.integers(0, 8),
       threshold=st.sampled_from([0, 5, 50, 1000, math.inf]),
       edgeitems=st.integers(0, 4),
       linewidth=st.integers(10, 160),
       sci_mode=st.sampled_from([None, True, False]))
def test_random_arrays_with_options(values, precision, threshold, edgeitems, linewidth, sci_mode):
    if threshold == math.inf and values.size > 3000:
        threshold = 1000  # keep printing every element of a huge array out of the time budget
    try:
        set_both(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth, sci_mode=sci_mode)
        check(values, requires_grad=True)
    finally:
        set_both(profile="default")

"""torchlike.utils.data against real PyTorch: datasets, random_split, samplers, default_collate /
default_convert, DataLoader (arguments, batching, lengths, warnings) and worker processes.

Random orders are jax's, not torch's (NOTE [ random streams ]): for shuffling only the
properties are compared (permutation, coverage, shapes, lengths, determinism for a seed).
Worker tests start real 'spawn' processes (about a second or two each on a loaded 2-core
machine), so there are few of them; each runs under a deadline so that a hang fails the test
instead of stalling the suite.
"""
import collections
import contextlib
import functools
import gc
import inspect
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import torchlike as tl
import torchlike.utils.data as tld

# Spawned DataLoader workers import this module to unpickle the datasets defined in it; they
# never run the tests, and importing torch there would add about a second to every start.
# (A spawned child has its process name, e.g. 'SpawnProcess-1', before it unpickles anything.)
if multiprocessing.current_process().name == "MainProcess":
    import torch  # noqa: E402
    import torch.utils.data  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _keep_default_rng_state():
    """Loaders and samplers draw from the global generator; leave it as it was."""
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def libs():
    """(tensor library, its utils.data) for torch and for torchlike."""
    return [(torch, torch.utils.data), (tl, tld)]


def run(fn, T, D):
    """fn(T, D) -> ('ok', result, warnings) or ('raised', exception, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn(T, D))
        except Exception as e:       # noqa: BLE001 - the exception is the result compared
            out = ("raised", e)
    return out + ([str(w.message) for w in caught],)


def assert_same(got, ref, path="result"):
    """torchlike's ``got`` mirrors torch's ``ref``: container types and keys, tensor dtypes,
    shapes and values, and plain values."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(got, tl.Tensor), f"{path}: {type(got).__name__} is not a Tensor"
        assert str(got.dtype) == str(ref.dtype), f"{path}: {got.dtype} != {ref.dtype}"
        assert tuple(got.shape) == tuple(ref.shape), f"{path}: {got.shape} != {ref.shape}"
        np.testing.assert_array_equal(got.numpy(), ref.numpy(), err_msg=path)
    elif isinstance(ref, collections.abc.Mapping):
        assert type(got) is type(ref), f"{path}: {type(got)} != {type(ref)}"
        assert list(got) == list(ref), path
        for k in ref:
            assert_same(got[k], ref[k], f"{path}[{k!r}]")
    elif isinstance(ref, (list, tuple)):
        assert type(got) is type(ref), f"{path}: {type(got)} != {type(ref)}"
        assert len(got) == len(ref), path
        for i, (g, r) in enumerate(zip(got, ref)):
            assert_same(g, r, f"{path}[{i}]")
    else:
        assert type(got) is type(ref) and got == ref, f"{path}: {got!r} != {ref!r}"


def both(fn):
    """Run fn(T, D) with both libraries: same outcome, same warnings, and for an exception
    the same type and message."""
    (rk, ref, rw), (gk, got, gw) = [run(fn, T, D) for T, D in libs()]
    assert gk == rk, f"torch {rk} {ref!r}, torchlike {gk} {got!r}"
    if rk == "raised":
        assert type(got) is type(ref) and str(got) == str(ref), f"{got!r} != {ref!r}"
    else:
        assert_same(got, ref)
    assert gw == rw
    return ref, got


@contextlib.contextmanager
def deadline(seconds):
    """Fail (TimeoutError) instead of hanging when the block takes longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: the DataLoader hung")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


X = np.arange(24, dtype=np.float32).reshape(12, 2)
Y = np.arange(12, dtype=np.int64) % 3


def tensor_ds(T, D):
    return D.TensorDataset(T.from_numpy(X.copy()), T.from_numpy(Y.copy()))


# ------------------------------------------------------------------------------------------------
# datasets
# ------------------------------------------------------------------------------------------------

def test_tensor_dataset():
    both(lambda T, D: [tensor_ds(T, D)[i] for i in (0, 5, -1)] + [len(tensor_ds(T, D))])
    both(lambda T, D: D.TensorDataset(T.zeros(2), T.zeros(3)))


def test_stack_dataset():
    def make(T, D, named):
        a, b = T.arange(4), [f"s{i}" for i in range(4)]
        return D.StackDataset(x=a, y=b) if named else D.StackDataset(a, b)
    for named in (False, True):
        both(lambda T, D: [make(T, D, named)[i] for i in range(4)] + [len(make(T, D, named))])
        both(lambda T, D: make(T, D, named).__getitems__([3, 1]))
    both(lambda T, D: D.StackDataset())
    both(lambda T, D: D.StackDataset([1], a=[1]))
    both(lambda T, D: D.StackDataset([1], [1, 2]))
    both(lambda T, D: D.StackDataset(a=[1], b=[1, 2]))


def test_concat_dataset():
    def make(T, D):
        return D.ConcatDataset([D.TensorDataset(T.arange(3)), D.TensorDataset(T.arange(10, 12)),
                                D.TensorDataset(T.arange(20, 24))])
    both(lambda T, D: make(T, D).cumulative_sizes)
    both(lambda T, D: [make(T, D)[i] for i in (0, 2, 3, 4, 5, 8, -1, -9)])
    both(lambda T, D: make(T, D)[-10])
    both(lambda T, D: make(T, D)[9])
    both(lambda T, D: D.ConcatDataset([]))
    both(lambda T, D: make(T, D).cummulative_sizes)        # deprecated spelling, warns
    # Dataset + Dataset
    both(lambda T, D: [type(tensor_ds(T, D) + tensor_ds(T, D)).__name__,
                       len(tensor_ds(T, D) + tensor_ds(T, D)),
                       (tensor_ds(T, D) + tensor_ds(T, D))[13]])


class Count(tld.IterableDataset):
    """range(n) as an IterableDataset that also claims a length (``length``)."""

    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if self.length is None:
            raise TypeError(f"object of type '{type(self).__name__}' has no len()")
        return self.length


def test_chain_dataset_and_iterable_add():
    def make(T, D):
        class C(D.IterableDataset):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n))

            def __len__(self):
                return self.n
        return C
    both(lambda T, D: list(D.ChainDataset([make(T, D)(2), make(T, D)(3)])))
    both(lambda T, D: len(D.ChainDataset([make(T, D)(2), make(T, D)(3)])))
    both(lambda T, D: list(make(T, D)(2) + make(T, D)(1)))
    both(lambda T, D: type(make(T, D)(2) + make(T, D)(1)).__name__)
    both(lambda T, D: list(D.ChainDataset([[1]])))
    both(lambda T, D: D.ConcatDataset([make(T, D)(2)]))


def test_subset():
    both(lambda T, D: [D.Subset(tensor_ds(T, D), [5, 0, 7])[i] for i in range(3)])
    both(lambda T, D: D.Subset(tensor_ds(T, D), [5, 0, 7]).__getitems__([2, 0]))
    both(lambda T, D: D.Subset(list(range(10)), [4, 2])[[1, 0]])
    both(lambda T, D: len(D.Subset(tensor_ds(T, D), [5, 0, 7])))


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.3, 0.7]), (10, [0.33, 0.33, 0.34]), (11, [0.25] * 4),
    (3, [0.5, 0.5, 0.0]), (7, [1.0]), (5, [0.1, 0.1, 0.8]),
])
def test_random_split(n, lengths):
    both(lambda T, D: [len(s) for s in D.random_split(range(n), lengths)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # empty splits warn (checked above)
        splits = tld.random_split(range(n), lengths, generator=tl.Generator().manual_seed(3))
        again = tld.random_split(range(n), lengths, generator=tl.Generator().manual_seed(3))
    flat = [x for s in splits for x in s]
    assert sorted(flat) == list(range(n))                    # disjoint and covering
    assert [list(s) for s in again] == [list(s) for s in splits]


def test_random_split_errors():
    both(lambda T, D: D.random_split(range(10), [3, 3]))
    both(lambda T, D: D.random_split(range(3), [1.5, -0.5]))
    both(lambda T, D: D.random_split(range(10), [0.2, 0.3, 0.3]))


# ------------------------------------------------------------------------------------------------
# samplers
# ------------------------------------------------------------------------------------------------

def test_sequential_and_base_sampler():
    both(lambda T, D: list(D.SequentialSampler(range(7))) + [len(D.SequentialSampler(range(7)))])
    both(lambda T, D: list(D.Sampler()))
    both(lambda T, D: len(D.Sampler()))


def test_random_sampler():
    n = 9
    g = tl.Generator().manual_seed(0)
    perm = list(tld.RandomSampler(range(n), generator=g))
    assert sorted(perm) == list(range(n))
    assert list(tld.RandomSampler(range(n), generator=tl.Generator().manual_seed(0))) == perm
    assert list(tld.RandomSampler(range(n), generator=g)) != perm     # the generator moved on
    # without replacement, more samples than items: whole permutations, then part of one
    long = list(tld.RandomSampler(range(n), num_samples=22, generator=g))
    assert len(long) == 22
    assert sorted(long[:9]) == sorted(long[9:18]) == list(range(n))
    assert len(set(long[18:])) == 4
    drawn = list(tld.RandomSampler(range(n), replacement=True, num_samples=100, generator=g))
    assert len(drawn) == 100 and set(drawn) <= set(range(n)) and len(set(drawn)) > 1
    # without a generator each pass seeds a new one from the global RNG
    tl.manual_seed(5)
    a = list(tld.RandomSampler(range(n)))
    tl.manual_seed(5)
    assert list(tld.RandomSampler(range(n))) == a
    both(lambda T, D: len(D.RandomSampler(range(n), replacement=True, num_samples=30)))
    both(lambda T, D: D.RandomSampler(range(n), replacement=1))
    both(lambda T, D: D.RandomSampler(range(n), num_samples=0))
    both(lambda T, D: D.RandomSampler(range(n), num_samples=2.0))


def test_subset_random_sampler():
    idx = [7, 3, 11, 5]
    s = tld.SubsetRandomSampler(idx, generator=tl.Generator().manual_seed(1))
    assert sorted(s) == sorted(idx) and len(s) == 4


def test_weighted_random_sampler():
    w = [1.0, 0.0, 3.0, 4.0]
    n = 8000
    s = tld.WeightedRandomSampler(w, n, generator=tl.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=4)
    p = np.asarray(w) / sum(w)
    sigma = np.sqrt(n * p * (1 - p))
    assert counts[1] == 0
    assert np.all(np.abs(counts - n * p) <= 6 * sigma + 1e-9), counts
    distinct = list(tld.WeightedRandomSampler(w, 3, replacement=False,
                                              generator=tl.Generator().manual_seed(0)))
    assert sorted(distinct) == [0, 2, 3]
    both(lambda T, D: len(D.WeightedRandomSampler(w, 5)))
    both(lambda T, D: D.WeightedRandomSampler(w, 0))
    both(lambda T, D: D.WeightedRandomSampler(w, True))
    both(lambda T, D: D.WeightedRandomSampler(w, 2, replacement=1))
    both(lambda T, D: D.WeightedRandomSampler([w], 2))
    both(lambda T, D: list(D.WeightedRandomSampler(w, 5, replacement=False)))


@pytest.mark.parametrize("n", [0, 1, 7, 8])
def test_batch_sampler_matches_torch(n):
    for bs in (1, 3, 8):
        for drop_last in (False, True):
            both(lambda T, D: [list(D.BatchSampler(D.SequentialSampler(range(n)), bs,
                                                   drop_last)),
                               len(D.BatchSampler(range(n), bs, drop_last))])


def test_batch_sampler_errors():
    for bs, drop_last in ((0, False), (-1, False), (True, False), (2.0, False), (2, 1)):
        both(lambda T, D: D.BatchSampler(range(3), bs, drop_last))


@pytest.mark.parametrize("n", [7, 8, 10])
def test_distributed_sampler_unshuffled_matches_torch(n):
    for replicas in (1, 3, 4):
        for drop_last in (False, True):
            both(lambda T, D: [(list(s), len(s), s.total_size) for s in (
                D.DistributedSampler(range(n), num_replicas=replicas, rank=r, shuffle=False,
                                     drop_last=drop_last) for r in range(replicas))])


def test_distributed_sampler_shuffled():
    n, replicas = 10, 4
    for drop_last in (False, True):
        ref = [list(torch.utils.data.DistributedSampler(
            range(n), num_replicas=replicas, rank=r, drop_last=drop_last, seed=3))
            for r in range(replicas)]
        samplers = [tld.DistributedSampler(range(n), num_replicas=replicas, rank=r,
                                           drop_last=drop_last, seed=3) for r in range(replicas)]
        got = [list(s) for s in samplers]
        assert [len(g) for g in got] == [len(r) for r in ref]
        flat = [i for g in got for i in g]
        if drop_last:      # disjoint, n - n % replicas distinct indices
            assert len(set(flat)) == len(flat) == n - n % replicas
        else:              # everything covered; the padding repeats the head of the order
            assert set(flat) == set(range(n)) and len(flat) == 12
        # every rank took its share of one order: interleaving the ranks rebuilds it, and
        # without drop_last its tail repeats its head
        order = [got[k % replicas][k // replicas] for k in range(len(flat))]
        if drop_last:
            assert len(set(order)) == len(order)
        else:
            assert sorted(order[:n]) == list(range(n)) and order[n:] == order[:len(order) - n]
        assert [list(s) for s in samplers] == got           # same epoch: same order
        for s in samplers:
            s.set_epoch(1)
        assert [list(s) for s in samplers] != got
    both(lambda T, D: D.DistributedSampler(range(n), num_replicas=2, rank=2))
    both(lambda T, D: D.DistributedSampler(range(n), num_replicas=2, rank=-1))


# ------------------------------------------------------------------------------------------------
# default_collate / default_convert
# ------------------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")

COLLATE = [
    ("tensors", lambda T: [T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])]),
    ("int_tensors_0d", lambda T: [T.tensor(1), T.tensor(2)]),
    ("mixed_dtype_tensors", lambda T: [T.zeros(2, dtype=T.int32), T.ones(2)]),
    ("numpy_arrays", lambda T: [np.arange(3), np.ones(3)]),
    ("numpy_f32", lambda T: [np.float32(1.5), np.float32(2)]),
    ("numpy_i32", lambda T: [np.int32(1), np.int32(2)]),
    ("numpy_bool", lambda T: [np.bool_(True), np.bool_(False)]),
    ("numpy_0d", lambda T: [np.array(1.0), np.array(2.0)]),
    ("floats", lambda T: [1.0, 2]),
    ("ints", lambda T: [1, 2]),
    ("int_then_float", lambda T: [1, 2.0]),
    ("bools", lambda T: [True, False]),
    ("bool_then_int", lambda T: [True, 2]),
    ("strings", lambda T: ["a", "b"]),
    ("bytes", lambda T: [b"a", b"b"]),
    ("numpy_str_scalars", lambda T: [np.str_("a"), np.str_("b")]),
    ("tuples", lambda T: [(1, "a", 2.0), (2, "b", 3.0)]),
    ("lists", lambda T: [[1, 2.0], [3, 4.0]]),
    ("namedtuple", lambda T: [Point(1, T.zeros(2)), Point(2, T.ones(2))]),
    ("dict", lambda T: [{"a": 1, "b": [np.zeros(2), "x"]}, {"a": 2, "b": [np.ones(2), "y"]}]),
    ("ordered_dict", lambda T: [collections.OrderedDict(b=1, a=T.zeros(1)),
                                collections.OrderedDict(b=2, a=T.ones(1))]),
    ("defaultdict", lambda T: [collections.defaultdict(int, a=1),
                               collections.defaultdict(int, a=2)]),
    ("range", lambda T: [range(2), range(2)]),
    ("nested", lambda T: [{"p": Point([T.tensor(1)], (1.5,))}, {"p": Point([T.tensor(2)], (2.5,))}]),
    # errors
    ("unequal_lists", lambda T: [[1, 2], [3]]),
    ("none", lambda T: [None, None]),
    ("object", lambda T: [object(), object()]),
    ("complex", lambda T: [1 + 2j, 2j]),
    ("numpy_str_array", lambda T: [np.array(["a"]), np.array(["b"])]),
    ("numpy_object_array", lambda T: [np.array([None]), np.array([None])]),
    ("missing_key", lambda T: [{"a": 1}, {"b": 2}]),
    ("unequal_tensors", lambda T: [T.zeros(2), T.zeros(3)]),
    ("empty", lambda T: []),
]


@pytest.mark.parametrize("make", [pytest.param(m, id=name) for name, m in COLLATE])
def test_default_collate(make):
    both(lambda T, D: D.default_collate(make(T)))


def test_default_collate_keeps_extras_of_mutable_types():
    got = tld.default_collate([collections.defaultdict(list, a=1)] * 2)
    assert got.default_factory is list


CONVERT = [
    ("numpy_array", lambda T: np.array([1, 2])),
    ("numpy_scalar", lambda T: np.float32(1)),
    ("numpy_bool", lambda T: np.bool_(True)),
    ("numpy_str_array", lambda T: np.array(["a"])),
    ("numpy_str_scalar", lambda T: np.str_("x")),
    ("tuple", lambda T: (np.array([1]), 1, "a")),
    ("namedtuple", lambda T: Point(np.array([1]), 2)),
    ("dict", lambda T: {"a": np.array([1.0]), "b": [np.zeros(1), [np.ones(2)]]}),
    ("plain", lambda T: [1.5, "abc", b"x", None]),
    ("tensor", lambda T: T.ones(2)),
    ("range", lambda T: range(3)),
]


@pytest.mark.parametrize("make", [pytest.param(m, id=name) for name, m in CONVERT])
def test_default_convert(make):
    def go(T, D):
        out = D.default_convert(make(T))
        # numpy arrays that stay numpy (strings) are compared as lists
        return out.tolist() if isinstance(out, np.ndarray) else out
    both(go)


def test_custom_collate_fn_map():
    """collate() with an extended map, the documented way to extend default_collate."""
    from torchlike.utils.data._collate import collate, default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v
    table = {**default_collate_fn_map, Box: lambda batch, collate_fn_map: sum(b.v for b in batch)}
    assert collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=table)[0] == 4


# ------------------------------------------------------------------------------------------------
# DataLoader in the main process
# ------------------------------------------------------------------------------------------------

class Records:
    """A map-style dataset of dict samples; ``D`` is torch.utils.data or torchlike's."""

    def __init__(self, T, n=7):
        self.T, self.n = T, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": self.T.tensor([float(i), -float(i)]), "y": i, "name": f"r{i}",
                "arr": np.full(2, i, np.int32)}


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True),
                                                   (7, True), (None, False)])
def test_loader_batches_match_torch(batch_size, drop_last):
    both(lambda T, D: list(D.DataLoader(tensor_ds(T, D), batch_size=batch_size,
                                        drop_last=drop_last)))
    both(lambda T, D: list(D.DataLoader(Records(T), batch_size=batch_size, drop_last=drop_last)))
    both(lambda T, D: len(D.DataLoader(Records(T), batch_size=batch_size, drop_last=drop_last)))


def test_loader_samplers_and_collate_fn():
    both(lambda T, D: list(D.DataLoader(Records(T), sampler=[4, 1, 6], batch_size=2)))
    both(lambda T, D: list(D.DataLoader(Records(T), batch_sampler=[[0, 3], [5]])))
    both(lambda T, D: len(D.DataLoader(Records(T), batch_sampler=[[0, 3], [5]])))
    both(lambda T, D: list(D.DataLoader(range(5), batch_size=2,
                                        collate_fn=lambda b: [x * 10 for x in b])))
    both(lambda T, D: list(D.DataLoader(range(5), batch_size=None, collate_fn=str)))


def test_loader_shuffle():
    ds = tld.TensorDataset(tl.arange(20))
    orders = []
    for seed in (0, 0, 1):
        loader = tld.DataLoader(ds, batch_size=6, shuffle=True,
                                generator=tl.Generator().manual_seed(seed))
        batches = [b[0].tolist() for b in loader]
        assert [len(b) for b in batches] == [6, 6, 6, 2]
        order = sum(batches, [])
        assert sorted(order) == list(range(20))
        orders.append(order)
    assert orders[0] == orders[1] != orders[2]
    assert orders[0] != list(range(20))
    loader = tld.DataLoader(ds, batch_size=6, shuffle=True, drop_last=True)
    assert isinstance(loader.sampler, tld.RandomSampler) and len(loader) == 3
    assert [len(b[0]) for b in loader] == [6, 6, 6]
    epochs = [sum((b[0].tolist() for b in loader), []) for _ in range(2)]
    assert epochs[0] != epochs[1]                 # a new order every epoch


def test_loader_iterable_dataset():
    def make(T, D):
        class Stream(D.IterableDataset):
            def __iter__(self):
                return iter([{"v": i, "t": T.tensor(i)} for i in range(5)])
        return Stream()
    for bs, drop_last in ((2, False), (2, True), (None, False)):
        both(lambda T, D: list(D.DataLoader(make(T, D), batch_size=bs, drop_last=drop_last)))
    both(lambda T, D: len(D.DataLoader(make(T, D))))


def test_loader_iterable_len_and_warning():
    def make(T, D):
        class Stream(D.IterableDataset):
            def __iter__(self):
                return iter(range(5))

            def __len__(self):
                return 3
        return Stream()

    def read(T, D, **kw):
        loader = D.DataLoader(make(T, D), **kw)
        n = len(loader)
        # the warning's text names the dataset's repr; compare it with the address removed
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = list(loader)
        return n, batches, [str(w.message).split(" was reported")[1] for w in caught]
    for kw in ({}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}):
        both(functools.partial(read, **kw))


def test_loader_pin_memory_is_accepted():
    import jax
    if jax.default_backend() != "cpu":
        pytest.skip("torch's CPU build warns that there is no accelerator; jax has one")
    both(lambda T, D: list(D.DataLoader(range(2), pin_memory=True)))
    both(lambda T, D: list(D.DataLoader(range(2), pin_memory=True, pin_memory_device="cuda")))


def test_loader_attributes():
    def setter(attr, value):
        def fn(T, D):
            loader = D.DataLoader(range(4), batch_size=2, num_workers=1)
            setattr(loader, attr, value)
            return getattr(loader, attr)
        return fn
    for attr, value in (("batch_size", 3), ("sampler", None), ("drop_last", True),
                        ("dataset", []), ("persistent_workers", True), ("num_workers", 2)):
        both(setter(attr, value))
    both(lambda T, D: [D.DataLoader(range(4)).prefetch_factor,
                       D.DataLoader(range(4), num_workers=2).prefetch_factor,
                       type(D.DataLoader(range(4), batch_size=None).sampler).__name__,
                       D.DataLoader(range(4), batch_size=None).batch_sampler])
    assert tld.DataLoader(range(4), num_workers=1).multiprocessing_context is None
    ctx = tld.DataLoader(range(4), num_workers=1, multiprocessing_context="forkserver")
    assert ctx.multiprocessing_context.get_start_method() == "forkserver"
    assert tld.get_worker_info() is None


# ------------------------------------------------------------------------------------------------
# worker processes
# ------------------------------------------------------------------------------------------------

def _record_worker_state(worker_id):
    """worker_init_fn: what the worker's RNGs give first, kept for the samples to report."""
    global _WORKER_STATE
    info = tld.get_worker_info()
    _WORKER_STATE = json.dumps({
        "arg": worker_id, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
        "python": random.random(), "torchlike": tl.rand(2).tolist(),
        "numpy": float(np.random.random_sample()), "frozen": _is_frozen(info),
        "jax_platforms": os.environ.get("JAX_PLATFORMS"), "pid": os.getpid()})


def _is_frozen(info):
    try:
        info.id = 5
    except AttributeError:
        return True
    return False


_WORKER_STATE = None


class Computed(tld.Dataset):
    """Samples computed with torchlike ops (in the worker, when there are workers); worker 0
    is slow on the first batch so that later batches arrive before it."""

    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = tld.get_worker_info()
        if info is not None and info.id == 0 and i == 0:
            time.sleep(0.3)
        x = tl.tensor([float(i), 2.0 * i]) * 2 + tl.arange(3.0).sum()
        return {"x": x, "i": i, "name": f"s{i}",
                "worker": (_WORKER_STATE or "") if info is not None and info.dataset is self
                else ""}


def _strip_worker(batches):
    return [{k: v for k, v in b.items() if k != "worker"} for b in batches]


def _same_batches(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert list(g) == list(r)
        np.testing.assert_array_equal(g["x"].numpy(), r["x"].numpy())
        assert str(g["x"].dtype) == str(r["x"].dtype)
        assert g["i"].tolist() == r["i"].tolist() and g["name"] == r["name"]


def test_workers_match_single_process():
    """2 persistent workers: three epochs (the second broken off early) give exactly the
    batches of num_workers=0, in order; worker_init_fn, get_worker_info and the seeding
    (base seed drawn from the loader's generator, then base + worker id)."""
    ref = _strip_worker(list(tld.DataLoader(Computed(), batch_size=3)))
    loader = tld.DataLoader(Computed(), batch_size=3, num_workers=2, persistent_workers=True,
                            worker_init_fn=_record_worker_state,
                            generator=tl.Generator().manual_seed(11))
    with deadline(120):
        it = iter(loader)
        first = list(it)
        _same_batches(_strip_worker(first), ref)
        workers = list(it._workers)
        for b in iter(loader):            # broken off: leftovers must not leak into the next
            break
        third_it = iter(loader)
        assert third_it is it and it._workers == workers        # the same workers, reused
        _same_batches(_strip_worker(list(third_it)), ref)
        assert all(w.is_alive() for w in workers)
        del it, third_it, b, loader
        gc.collect()
        assert all(w.exitcode == 0 for w in workers)            # joined when the loader went

    states = {s["id"]: s for s in (json.loads(w) for b in first for w in b["worker"])}
    assert sorted(states) == [0, 1]
    base = states[0]["seed"]
    assert base == tl.empty((), dtype=tl.int64).random_(
        generator=tl.Generator().manual_seed(11)).item()
    from torch.utils.data._utils.worker import _generate_state
    for wid, s in states.items():
        assert s["arg"] == wid and s["num_workers"] == 2 and s["frozen"]
        assert s["seed"] == base + wid
        assert s["python"] == random.Random(s["seed"]).random()
        assert s["torchlike"] == tl.rand(2, generator=tl.Generator().manual_seed(s["seed"])) \
            .tolist()
        # numpy is seeded as torch seeds it (its own function is the oracle)
        np_state = np.random.RandomState(_generate_state(base, wid))
        assert s["numpy"] == np_state.random_sample()
        assert s["jax_platforms"] == (os.environ.get("JAX_PLATFORMS") or "cpu")
    assert states[0]["pid"] != states[1]["pid"] != os.getpid()
    assert tld.get_worker_info() is None


def test_workers_out_of_order_and_exhaustion():
    """in_order=False yields every batch once; a finished (non-persistent) iterator has
    joined its workers."""
    ref = _strip_worker(list(tld.DataLoader(Computed(8), batch_size=2)))
    loader = tld.DataLoader(Computed(8), batch_size=2, num_workers=2, in_order=False)
    with deadline(120):
        it = iter(loader)
        got = _strip_worker(list(it))
        assert all(w.exitcode == 0 for w in it._workers)
    got.sort(key=lambda b: b["i"][0].item())
    _same_batches(got, ref)


class Stream:
    """range(n) as a stream; with ``shard`` each worker reads only its own share."""

    def __init__(self, n, shard, worker_info):
        self.n, self.shard, self.worker_info = n, shard, worker_info

    def __iter__(self):
        info = self.worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class TLStream(Stream, tld.IterableDataset):
    pass


_TORCH_STREAM_SCRIPT = """
import json, torch
from torch.utils.data import ChainDataset, DataLoader, IterableDataset, get_worker_info
{stream}
class TorchStream(Stream, IterableDataset):
    pass
if __name__ == "__main__":
    ds = ChainDataset([TorchStream(7, True, get_worker_info), TorchStream(3, False, get_worker_info)])
    batches = list(DataLoader(ds, batch_size=2, num_workers=2))
    print(json.dumps([[b.tolist(), str(b.dtype)] for b in batches]))
"""


def test_iterable_dataset_workers_match_torch():
    """A sharded stream, then an unsharded one (read once per worker, as in torch): the same
    batches in the same order as torch's DataLoader gives, in each epoch of persistent workers.  torch runs in a fresh process,
    where its default 'fork' start is safe (this one runs jax's threads)."""
    script = _TORCH_STREAM_SCRIPT.format(stream=inspect.getsource(Stream))
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as torch_run:   # meanwhile, ours:
        ds = tld.ChainDataset([TLStream(7, True, tld.get_worker_info),
                               TLStream(3, False, tld.get_worker_info)])
        loader = tld.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
        with deadline(120):
            epochs = [list(loader) for _ in range(2)]    # the second restarts each stream
            del loader
        out, err = torch_run.communicate(timeout=120)
    assert torch_run.returncode == 0, err
    for got in epochs:
        assert [[b.tolist(), str(b.dtype)] for b in got] == json.loads(out)


def test_interpreter_exit_does_not_hang():
    """A script that leaves a persistent-worker iterator alive at exit still exits."""
    code = ("import torchlike as tl\n"
            "from torchlike.utils.data import DataLoader, TensorDataset\n"
            "loader = DataLoader(TensorDataset(tl.arange(8)), batch_size=2, num_workers=1,\n"
            "                    persistent_workers=True)\n"
            "it = iter(loader)\n"
            "print(next(it)[0].tolist(), flush=True)\n")
    root = Path(__file__).resolve().parent.parent
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[0, 1]"
    assert time.monotonic() - start < 60


def test_tensor_dataset_batches_as_default_collate_builds_them():
    """NOTE [ TensorDataset batches ]: the one-gather shortcut and the per-sample path agree
    with torch, including where the shortcut does not apply."""
    both(lambda T, D: list(D.DataLoader(D.TensorDataset(T.arange(6.0)), batch_size=4,
                                        sampler=[5, -1, 0, 2, 3])))
    both(lambda T, D: list(D.DataLoader(D.TensorDataset(T.arange(6.0)), sampler=[7])))
    both(lambda T, D: [type(b[0].grad_fn).__name__ for b in D.DataLoader(
        D.TensorDataset(T.arange(4.0, requires_grad=True)), batch_size=2)])
    both(lambda T, D: list(D.DataLoader(D.TensorDataset(T.arange(4)), batch_size=2,
                                        collate_fn=lambda b: [len(b), b[0][0]])))

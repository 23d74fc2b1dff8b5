"""Robustness of the op surface: careless and hostile inputs, each run in torch and in
torchlike, expecting the same values or the same exception type (spec tables:
docs/architecture.md §7.5).

- HOSTILE: one call per row.  ``V`` rows expect a value (and fail if torch raises), ``E`` rows
  an error of torch's type.  Sizes (NOTE [ size arguments ]), allocation limits, Python ints
  in tensor(), uint8 masks, index bounds, empty tensors, NaN and inf, int overflow, bools.
- GRADS: the same, plus the gradient of every input: clamp/clip at NaN bounds (NOTE [ clamp ]),
  the index writes at repeated positions (NOTE [ writes at repeated indices ]), uint8 masks.
- WARNS: the UserWarnings PyTorch gives on the way (uint8 masks, where's uint8 condition).
- from_numpy never shares the array's memory, aligned or not.
"""
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import both, run, same
from torchlike._ops import pointwise

nan, inf = math.nan, math.inf


def V(name, fn):
    return pytest.param(fn, False, id=name)


def E(name, fn):
    return pytest.param(fn, True, id=name)


def x6(T):
    return T.arange(6.)


def m23(T):
    return T.arange(6.).view(2, 3)


def i6(T):
    return T.arange(6)


def u8(T):
    return T.tensor([1, 0, 1, 0, 1, 0], dtype=T.uint8)


def bt(T):
    return T.tensor([True, False])


def setv(T, make, index, value):
    y = make(T)
    y[index] = value
    return y


HOSTILE = [
    # --- getitem / setitem ---
    E("x[6]", lambda T: x6(T)[6]),
    E("x[-7]", lambda T: x6(T)[-7]),
    E("x[t(6)]", lambda T: x6(T)[T.tensor(6)]),
    E("x[t([6])]", lambda T: x6(T)[T.tensor([6])]),
    E("x[t([-7])]", lambda T: x6(T)[T.tensor([-7])]),
    E("x[[0,6]]", lambda T: x6(T)[[0, 6]]),
    E("x[float idx]", lambda T: x6(T)[T.tensor([1.])]),
    E("x[int16 idx]", lambda T: x6(T)[T.tensor([1], dtype=T.int16)]),
    E("x[int8 idx]", lambda T: x6(T)[T.tensor([1], dtype=T.int8)]),
    V("x[int32 idx]", lambda T: x6(T)[T.tensor([1, -1], dtype=T.int32)]),
    E("x[short mask]", lambda T: x6(T)[T.tensor([True])]),
    E("x[1.5]", lambda T: x6(T)[1.5]),
    E("x['a']", lambda T: x6(T)['a']),
    V("x[None,...,None]", lambda T: x6(T)[None, ..., None]),
    V("x[...,...]", lambda T: x6(T)[..., ...]),
    E("x[0,0]", lambda T: x6(T)[0, 0]),
    V("m[0] = ones(1, 3)", lambda T: setv(T, lambda T: T.zeros(2, 3), 0, T.ones(1, 3))),
    V("m[0] = ones(1, 1, 3)", lambda T: setv(T, lambda T: T.zeros(2, 3), 0, T.ones(1, 1, 3))),
    V("m[:] = ones(1, 2, 3)", lambda T: setv(T, lambda T: T.zeros(2, 3), slice(None),
                                            T.ones(1, 2, 3))),
    E("m[0] = ones(2, 3)", lambda T: setv(T, lambda T: T.zeros(2, 3), 0, T.ones(2, 3))),
    E("x[::-1]", lambda T: x6(T)[::-1]),
    E("x[::0]", lambda T: x6(T)[::0]),
    V("x[10:20]", lambda T: x6(T)[10:20]),
    V("x[empty long]", lambda T: x6(T)[T.tensor([], dtype=T.int64)]),
    V("x[[]]", lambda T: x6(T)[[]]),
    E("x[empty mask]", lambda T: x6(T)[T.zeros(0, dtype=T.bool)]),
    V("x[t(True)]", lambda T: x6(T)[T.tensor(True)]),
    V("x[t(False)]", lambda T: x6(T)[T.tensor(False)]),
    V("x[u8]", lambda T: x6(T)[u8(T)]),
    V("x[u8 0d]", lambda T: x6(T)[T.tensor(3, dtype=T.uint8)]),
    V("x[u8 0d zero]", lambda T: x6(T)[T.tensor(0, dtype=T.uint8)]),
    V("m[u8 2d]", lambda T: m23(T)[T.tensor([[1, 0, 1], [0, 1, 0]], dtype=T.uint8)]),
    V("m[u8 rows, 1]", lambda T: m23(T)[T.tensor([0, 1], dtype=T.uint8), 1]),
    V("m[u8 rows, [1]]", lambda T: m23(T)[T.tensor([0, 1], dtype=T.uint8), [2]]),
    V("x[np u8]", lambda T: x6(T)[np.array([1, 0, 1, 0, 1, 0], dtype=np.uint8)]),
    E("x[u8 wrong shape]", lambda T: x6(T)[T.tensor([1, 0], dtype=T.uint8)]),
    V("m[list of lists]", lambda T: m23(T)[[[0, 1], [1, 0]]]),
    V("m[[0, slice]]", lambda T: m23(T)[[0, slice(None)]]),
    V("x[range]", lambda T: x6(T)[range(1, 3)]),
    V("x[np int8]", lambda T: x6(T)[np.array([1, 2], np.int8)]),
    V("x[[1.7, 0.2]]", lambda T: x6(T)[[1.7, 0.2]]),
    E("m[bcast mismatch]", lambda T: m23(T)[T.tensor([0, 1]), T.tensor([0, 1, 2])]),
    E("x[6]=1", lambda T: setv(T, x6, 6, 1.)),
    E("x[u8]=-1", lambda T: setv(T, x6, u8(T), -1.)),
    E("x[u8]=t(-1)", lambda T: setv(T, x6, u8(T), T.tensor(-1.))),
    V("x[u8]=vals", lambda T: setv(T, x6, u8(T), T.tensor([7., 8., 9.]))),
    V("x[bool]=vals", lambda T: setv(T, x6, u8(T).bool(), T.tensor([7., 8., 9.]))),
    V("x[u8 0d]=5", lambda T: setv(T, x6, T.tensor(1, dtype=T.uint8), 5.)),
    V("x[[0,0]]=vals", lambda T: setv(T, x6, [0, 0], T.tensor([1., 2.]))),
    E("x[t([0])]=2vals", lambda T: setv(T, x6, T.tensor([0]), T.tensor([1., 2.]))),
    E("x[:]=7 ones", lambda T: setv(T, x6, slice(None), T.ones(7))),
    E("x[0]=2vals", lambda T: setv(T, x6, 0, T.tensor([1., 2.]))),
    E("x[0]='a'", lambda T: setv(T, x6, 0, 'a')),
    E("i[0]=nan", lambda T: setv(T, i6, 0, nan)),
    V("i[0]=1.7", lambda T: setv(T, i6, 0, 1.7)),
    E("i[0]=2**70", lambda T: setv(T, i6, 0, 2 ** 70)),
    E("i[0]=2**63", lambda T: setv(T, i6, 0, 2 ** 63)),
    V("b[0]=2", lambda T: setv(T, bt, 0, 2)),
    V("u8[0]=-1", lambda T: setv(T, u8, 0, -1)),
    E("u8[0]=300", lambda T: setv(T, u8, 0, 300)),
    E("x[0]=complex", lambda T: setv(T, x6, 0, 1j)),
    E("x[i]=int tensor", lambda T: setv(T, x6, [1], T.tensor([5]))),
    # --- creation ---
    E("zeros(-1)", lambda T: T.zeros(-1)),
    E("zeros(2,-3)", lambda T: T.zeros(2, -3)),
    E("ones(-1)", lambda T: T.ones(-1)),
    E("empty((2,-1))", lambda T: T.empty((2, -1))),
    E("full((-1,),1.)", lambda T: T.full((-1,), 1.)),
    E("zeros(2.5)", lambda T: T.zeros(2.5)),
    E("zeros((2.5,))", lambda T: T.zeros((2.5,))),
    E("zeros(2, 2.5)", lambda T: T.zeros(2, 2.5)),
    E("zeros(2.5, 2)", lambda T: T.zeros(2.5, 2)),
    E("zeros(True)", lambda T: T.zeros(True)),
    V("ones(2, True)", lambda T: T.ones(2, True)),
    V("zeros(np.int64)", lambda T: T.zeros(np.int64(2), np.int32(3))),
    V("zeros(t(2))", lambda T: T.zeros(T.tensor(2))),
    V("zeros((t(2), 3))", lambda T: T.zeros((T.tensor(2), 3))),
    E("zeros(t(2.))", lambda T: T.zeros(T.tensor(2.))),
    E("zeros(t([2,3]))", lambda T: T.zeros(T.tensor([2, 3]))),
    E("zeros(np.float64)", lambda T: T.zeros(np.float64(2))),
    E("zeros('2')", lambda T: T.zeros('2')),
    E("zeros(None)", lambda T: T.zeros(None)),
    E("zeros()", lambda T: T.zeros()),
    V("zeros(size=)", lambda T: T.zeros(size=(2, 3))),
    E("zeros(size=2.5)", lambda T: T.zeros(size=(2.5,))),
    E("zeros(2, size=)", lambda T: T.zeros(2, size=(3,))),
    E("zeros(2**63)", lambda T: T.zeros(2 ** 63)),
    E("zeros(2**62)", lambda T: T.zeros(2 ** 62)),
    E("zeros(2**31,2**31)", lambda T: T.zeros(2 ** 31, 2 ** 31)),
    E("zeros(2**33,2**33,0)", lambda T: T.zeros(2 ** 33, 2 ** 33, 0)),
    E("full(2, 1.)", lambda T: T.full(2, 1.)),
    E("full((2.5,), 1.)", lambda T: T.full((2.5,), 1.)),
    V("full int 2.5", lambda T: T.full((2,), 2.5, dtype=T.int64)),
    E("full u8 300", lambda T: T.full((2,), 300, dtype=T.uint8)),
    V("full u8 -1", lambda T: T.full((2,), -1, dtype=T.uint8)),
    E("full u8 -256", lambda T: T.full((2,), -256, dtype=T.uint8)),
    V("full nan bool", lambda T: T.full((2,), nan, dtype=T.bool)),
    E("new_zeros(2.5)", lambda T: x6(T).new_zeros(2.5)),
    E("new_ones((2,-1))", lambda T: x6(T).new_ones((2, -1))),
    E("new_full(2,1)", lambda T: x6(T).new_full(2, 1.)),
    E("new_empty((2.0,))", lambda T: x6(T).new_empty((2.0,))),
    E("tensor ragged", lambda T: T.tensor([[1, 2], [3]])),
    V("tensor([])", lambda T: T.tensor([])),
    V("tensor([[]])", lambda T: T.tensor([[]])),
    E("tensor(None)", lambda T: T.tensor(None)),
    E("tensor('a')", lambda T: T.tensor('a')),
    E("tensor([1,'a'])", lambda T: T.tensor([1, 'a'])),
    E("tensor(2**63)", lambda T: T.tensor(2 ** 63)),
    E("tensor(2**64)", lambda T: T.tensor(2 ** 64)),
    E("tensor(-2**63-1)", lambda T: T.tensor(-2 ** 63 - 1)),
    E("tensor([1,2**64])", lambda T: T.tensor([1, 2 ** 64])),
    E("tensor([1,2**63])", lambda T: T.tensor([1, 2 ** 63])),
    V("tensor([2**64,1.5])", lambda T: T.tensor([2 ** 64, 1.5])),
    E("tensor([True,2**64])", lambda T: T.tensor([True, 2 ** 64])),
    V("tensor(2**64,float)", lambda T: T.tensor(2 ** 64, dtype=T.float32)),
    E("tensor(2**63,int64)", lambda T: T.tensor(2 ** 63, dtype=T.int64)),
    E("tensor(300,u8)", lambda T: T.tensor(300, dtype=T.uint8)),
    V("tensor(-1,u8)", lambda T: T.tensor(-1, dtype=T.uint8)),
    E("tensor(-256,u8)", lambda T: T.tensor([-256], dtype=T.uint8)),
    E("tensor(-129,i8)", lambda T: T.tensor([-129], dtype=T.int8)),
    E("tensor(2**31,i32)", lambda T: T.tensor([1, 2 ** 31], dtype=T.int32)),
    V("tensor(1.5,int64)", lambda T: T.tensor([1.5, -1.5], dtype=T.int64)),
    E("tensor(1e20,int64)", lambda T: T.tensor(1e20, dtype=T.int64)),
    E("tensor(300.,u8)", lambda T: T.tensor(300., dtype=T.uint8)),
    V("tensor(2**64, bool)", lambda T: T.tensor(2 ** 64, dtype=T.bool)),
    E("tensor(np.int64(300),u8)", lambda T: T.tensor(np.int64(300), dtype=T.uint8)),
    V("tensor(np arr 300, u8)", lambda T: T.tensor(np.array([300]), dtype=T.uint8)),
    V("tensor(True, float)", lambda T: T.tensor(True, dtype=T.float32)),
    E("arange step 0", lambda T: T.arange(0, 10, 0)),
    E("arange(10,0)", lambda T: T.arange(10, 0)),
    V("arange(0,1,.3)", lambda T: T.arange(0, 1, 0.3)),
    E("arange(nan)", lambda T: T.arange(nan)),
    E("arange(inf)", lambda T: T.arange(inf)),
    E("arange(-3)", lambda T: T.arange(-3)),
    E("arange(2**40)", lambda T: T.arange(2 ** 40)),
    E("linspace(0,1,-1)", lambda T: T.linspace(0, 1, -1)),
    V("linspace(0,1,0)", lambda T: T.linspace(0, 1, 0)),
    V("linspace(0,1,1)", lambda T: T.linspace(0, 1, 1)),
    E("linspace(0,1,2.5)", lambda T: T.linspace(0, 1, 2.5)),
    E("eye(-1)", lambda T: T.eye(-1)),
    E("eye(2,-1)", lambda T: T.eye(2, -1)),
    E("eye(2.5)", lambda T: T.eye(2.5)),
    E("empty(2**40)", lambda T: T.empty(2 ** 40)),
    E("ones(2**40,dtype=bool)", lambda T: T.ones(2 ** 40, dtype=T.bool)),
    E("zeros_like(list)", lambda T: T.zeros_like([1, 2])),
    # --- random (shapes / dtypes / errors only) ---
    E("rand(2.5)", lambda T: T.rand(2.5)),
    E("rand(-1)", lambda T: T.rand(-1)),
    E("randn((2,2.5))", lambda T: T.randn((2, 2.5))),
    V("randn(size=)", lambda T: T.randn(size=(2, 3)).shape),
    E("randint(5,(2.5,))", lambda T: T.randint(5, (2.5,))),
    E("randint(0,5,(2.5,))", lambda T: T.randint(0, 5, (2.5,))),
    E("randint(5,2)", lambda T: T.randint(5, 2)),
    E("randint(5,2,(3,))", lambda T: T.randint(5, 2, (3,))),
    E("randint(0,2**64,(2,))", lambda T: T.randint(0, 2 ** 64, (2,))),
    V("randint(5,(2,)).dtype", lambda T: T.randint(5, (2,)).dtype),
    E("randperm(-1)", lambda T: T.randperm(-1)),
    E("randperm(2.5)", lambda T: T.randperm(2.5)),
    E("rand(2,int64)", lambda T: T.rand(2, dtype=T.int64)),
    E("randn(2,bool)", lambda T: T.randn(2, dtype=T.bool)),
    E("normal(0,-1,(2,))", lambda T: T.normal(0., -1., (2,))),
    E("normal(0,1,(2.5,))", lambda T: T.normal(0., 1., (2.5,))),
    E("rand(2**40)", lambda T: T.rand(2 ** 40)),
    E("randperm(2**40)", lambda T: T.randperm(2 ** 40)),
    E("tril_indices(2**20, 2**20)", lambda T: T.tril_indices(2 ** 20, 2 ** 20)),
    E("multinomial neg", lambda T: T.multinomial(T.tensor([0.5, -0.1]), 1)),
    E("multinomial zero", lambda T: T.multinomial(T.tensor([0., 0.]), 1)),
    E("bernoulli p>1", lambda T: T.bernoulli(T.tensor([1.5]))),
    # --- shape ---
    E("view(-1,-1)", lambda T: x6(T).view(-1, -1)),
    E("view(-2)", lambda T: x6(T).view(-2)),
    E("view(2.0,3)", lambda T: x6(T).view(2.0, 3)),
    E("view((2,3.0))", lambda T: x6(T).view((2, 3.0))),
    E("view(True,6)", lambda T: x6(T).view(True, 6)),
    V("view(t(2),3)", lambda T: x6(T).view(T.tensor(2), 3)),
    V("view(np.int64)", lambda T: x6(T).view(np.int64(2), 3)),
    E("reshape(1.9,4)", lambda T: T.zeros(8).reshape(1.9, 4)),
    E("reshape((2.0,4))", lambda T: T.zeros(8).reshape((2.0, 4))),
    E("reshape(2.5)", lambda T: T.zeros(8).reshape(2.5)),
    E("reshape(3,3)", lambda T: T.zeros(8).reshape(3, 3)),
    E("reshape()", lambda T: T.zeros(8).reshape()),
    E("expand(2.0,3)", lambda T: T.zeros(1, 3).expand(2.0, 3)),
    E("expand((2.0,3))", lambda T: T.zeros(1, 3).expand((2.0, 3))),
    E("expand(-1,3) lead", lambda T: T.zeros(3).expand(-1, 3)),
    E("expand(2)", lambda T: T.zeros(2, 3).expand(2)),
    E("repeat(2.0,1)", lambda T: T.zeros(1, 3).repeat(2.0, 1)),
    E("repeat((2, 1.0))", lambda T: T.zeros(1, 3).repeat((2, 1.0))),
    E("repeat(-1, 1)", lambda T: T.zeros(1, 3).repeat(-1, 1)),
    E("tile((2.0,1))", lambda T: T.zeros(1, 3).tile((2.0, 1))),
    E("permute(1.0,0)", lambda T: m23(T).permute(1.0, 0)),
    E("permute((1, 0.0))", lambda T: m23(T).permute((1, 0.0))),
    E("permute(0,0)", lambda T: m23(T).permute(0, 0)),
    E("permute(0)", lambda T: m23(T).permute(0)),
    E("unflatten(1,(1.0,3))", lambda T: m23(T).unflatten(1, (1.0, 3))),
    E("unflatten(1,3)", lambda T: m23(T).unflatten(1, 3)),
    E("unflatten(1,(2,2))", lambda T: m23(T).unflatten(1, (2, 2))),
    E("broadcast_to((2.0,3))", lambda T: T.broadcast_to(T.zeros(3), (2.0, 3))),
    E("broadcast_to(x, 3)", lambda T: T.broadcast_to(T.zeros(1), 3)),
    E("split(2.5)", lambda T: T.ones(2, 4).split(2.5, 1)),
    E("split([1.5, 2.5])", lambda T: T.ones(2, 4).split([1.5, 2.5], 1)),
    E("chunk(2.5)", lambda T: T.ones(2, 4).chunk(2.5, 1)),
    V("chunk(np.int64(2))", lambda T: T.ones(2, 4).chunk(np.int64(2), 1)),
    E("unfold(1, 2.0, 1)", lambda T: T.ones(2, 4).unfold(1, 2.0, 1)),
    E("transpose(0., 1)", lambda T: T.ones(2, 4).transpose(0., 1)),
    E("transpose(True, 0)", lambda T: T.ones(2, 4).transpose(True, 0)),
    E("squeeze(1.0)", lambda T: T.ones(2, 1).squeeze(1.0)),
    V("sum(np.int64(1))", lambda T: T.ones(2, 4).sum(np.int64(1))),
    E("interpolate(size=6.9)", lambda T: T.nn.functional.interpolate(T.ones(1, 1, 3), size=6.9)),
    E("pixel_shuffle(2.5)", lambda T: T.nn.functional.pixel_shuffle(T.ones(1, 4, 2, 2), 2.5)),
    E("channel_shuffle(2.0)", lambda T: T.nn.functional.channel_shuffle(T.ones(1, 4, 2, 2),
                                                                       2.0)),
    E("one_hot(t, 5.7)", lambda T: T.nn.functional.one_hot(T.tensor([1]), 5.7)),
    V("x.broadcast_to(3)", lambda T: T.zeros(1).broadcast_to(3)),
    V("x.broadcast_to(3, 1)", lambda T: T.zeros(1).broadcast_to(3, 1)),
    E("x.broadcast_to(2.5)", lambda T: T.zeros(1).broadcast_to(2.5)),
    E("x.broadcast_to(size=3)", lambda T: T.zeros(1).broadcast_to(size=3)),
    V("x.broadcast_to(size=(3,))", lambda T: T.zeros(1).broadcast_to(size=(3,))),
    E("movedim(0.0,1)", lambda T: T.movedim(m23(T), 0.0, 1)),
    E("flip(0.0)", lambda T: m23(T).flip(0.0)),
    E("roll(1.5)", lambda T: x6(T).roll(1.5)),
    E("t() 3d", lambda T: T.zeros(1, 2, 3).t()),
    E("transpose(0,2)", lambda T: m23(T).transpose(0, 2)),
    E("squeeze(2)", lambda T: m23(T).squeeze(2)),
    E("unsqueeze(3)", lambda T: m23(T).unsqueeze(3)),
    E("unsqueeze(-4)", lambda T: m23(T).unsqueeze(-4)),
    E("flatten(1,0)", lambda T: m23(T).flatten(1, 0)),
    E("narrow oob", lambda T: x6(T).narrow(0, 4, 3)),
    E("narrow neg len", lambda T: x6(T).narrow(0, 1, -1)),
    E("split(0)", lambda T: x6(T).split(0)),
    E("chunk(0)", lambda T: x6(T).chunk(0)),
    E("chunk(-1)", lambda T: x6(T).chunk(-1)),
    E("unbind 0d", lambda T: T.tensor(1.).unbind()),
    E("select oob", lambda T: m23(T).select(1, 3)),
    E("diagonal same dims", lambda T: m23(T).diagonal(0, 0, 0)),
    V("view 0d->(1,1)", lambda T: T.tensor(1.).view(1, 1)),
    E("view empty (0,-1)", lambda T: T.zeros(0).view(0, -1)),
    E("reshape empty (-1,0)", lambda T: T.zeros(0, 3).reshape(-1, 0)),
    # --- pointwise / binary ---
    V("bool+bool", lambda T: bt(T) + bt(T)),
    E("bool-bool", lambda T: bt(T) - bt(T)),
    E("-bool", lambda T: -bt(T)),
    V("bool*bool", lambda T: bt(T) * bt(T)),
    V("bool/bool", lambda T: bt(T) / bt(T)),
    V("bool**2", lambda T: bt(T) ** 2),
    V("bool.sum", lambda T: bt(T).sum()),
    E("bool.mean", lambda T: bt(T).mean()),
    E("bool.abs", lambda T: bt(T).abs()),
    E("int//0", lambda T: T.tensor([5]) // 0),
    E("int%0", lambda T: T.tensor([5]) % 0),
    V("int/0", lambda T: T.tensor([5]) / 0),
    E("int fmod 0", lambda T: T.fmod(T.tensor([5]), 0)),
    E("int div floor 0", lambda T: T.tensor([5]).div(0, rounding_mode="floor")),
    E("int div trunc t0", lambda T: T.tensor([5]).div(T.tensor([0]), rounding_mode="trunc")),
    E("div bad mode", lambda T: x6(T).div(2, rounding_mode="bad")),
    V("int64 overflow mul", lambda T: T.tensor([2 ** 62]) * 4),
    V("int64 + 2**63", lambda T: T.tensor([1]) + 2 ** 63),
    V("int32 + 2**63", lambda T: T.tensor([1], dtype=T.int32) + 2 ** 63),
    V("int64 * (2**64-1)", lambda T: T.tensor([1]) * (2 ** 64 - 1)),
    V("float + 2**63", lambda T: T.tensor([1.]) + 2 ** 63),
    E("float + 2**70", lambda T: T.tensor([1.]) + 2 ** 70),
    E("int64 - (-2**63-1)", lambda T: T.tensor([1]) - (-2 ** 63 - 1)),
    E("int64 + 2**64", lambda T: T.tensor([1]) + 2 ** 64),
    V("int << 64", lambda T: T.tensor([1]) << 64),
    V("int << -1", lambda T: T.tensor([4]) << -1),
    E("int ** -1", lambda T: T.tensor([2]) ** -1),
    V("int ** t(-1)", lambda T: T.tensor([2]) ** T.tensor([-1])),
    V("0. ** -1", lambda T: T.tensor([0.]) ** -1),
    E("int & 1.5", lambda T: T.tensor([3]) & 1.5),
    E("float & 1", lambda T: x6(T) & 1),
    E("bitwise_not float", lambda T: T.bitwise_not(x6(T))),
    V("u8 - 2", lambda T: T.tensor([1], dtype=T.uint8) - 2),
    V("u8 + -2", lambda T: T.tensor([1], dtype=T.uint8) + (-2)),
    V("i8 + 200", lambda T: T.tensor([1], dtype=T.int8) + 200),
    V("i8 + 2**40", lambda T: T.tensor([1], dtype=T.int8) + 2 ** 40),
    V("abs(int8 -128)", lambda T: T.tensor([-128], dtype=T.int8).abs()),
    V("neg u8", lambda T: -T.tensor([1], dtype=T.uint8)),
    E("int add alpha float", lambda T: T.tensor([1]).add(T.tensor([1]), alpha=0.5)),
    E("add shape mismatch", lambda T: x6(T) + T.ones(4)),
    E("x + 'a'", lambda T: x6(T) + 'a'),
    E("x + None", lambda T: x6(T) + None),
    E("x + [1]", lambda T: x6(T) + [1.]),
    V("sqrt(-1)", lambda T: T.tensor([-1.]).sqrt()),
    V("log(0)", lambda T: T.tensor([0.]).log()),
    V("exp int", lambda T: i6(T).exp()),
    V("atan2 int", lambda T: T.atan2(i6(T), i6(T))),
    V("sign nan", lambda T: T.tensor([nan, -0., 0.]).sign()),
    V("round -1", lambda T: T.tensor([15., 25.]).round(decimals=-1)),
    V("round int", lambda T: i6(T).round()),
    E("round int dec", lambda T: i6(T).round(decimals=1)),
    V("nan_to_num", lambda T: T.tensor([nan, inf, -inf]).nan_to_num()),
    V("nan_to_num int", lambda T: i6(T).nan_to_num(nan=1.5)),
    V("logit nan", lambda T: T.tensor([nan, 2., -1.]).logit()),
    V("erfinv(2)", lambda T: T.tensor([2., 1., -1.]).erfinv()),
    V("lgamma(-1)", lambda T: T.tensor([-1., 0.]).lgamma()),
    E("lerp int", lambda T: T.lerp(i6(T), i6(T), 0.5)),
    E("addcdiv int", lambda T: T.addcdiv(i6(T), i6(T), i6(T))),
    E("clamp complex", lambda T: T.tensor([1j]).clamp(0., 1.)),
    E("clamp bool", lambda T: bt(T).clamp(min=True)),
    V("clamp bool int bounds", lambda T: bt(T).clamp(0, 1)),
    V("clamp bool float min", lambda T: bt(T).clamp(0.5)),
    V("clip bool", lambda T: T.clip(bt(T), 0, 1)),
    E("clamp_ bool int bounds", lambda T: bt(T).clamp_(0, 1)),
    E("clamp int32 max 2**40", lambda T: i6(T).int().clamp(max=2 ** 40)),
    E("clamp_min_ int8 300", lambda T: i6(T).to(T.int8).clamp_min_(300)),
    V("clamp uint8 min -1", lambda T: i6(T).to(T.uint8).clamp(min=-1)),
    E("clamp None None", lambda T: x6(T).clamp()),
    E("clamp t bcast mismatch", lambda T: x6(T).clamp(min=T.zeros(4))),
    V("clamp t 2d bcast", lambda T: x6(T).clamp(min=T.zeros(2, 1))),
    V("clamp int min t float", lambda T: i6(T).clamp(min=T.tensor(2.5))),
    V("clamp int max nan", lambda T: i6(T).clamp(max=nan)),
    E("clamp_(nan) int", lambda T: i6(T).clamp_(min=nan)),
    E("where float cond", lambda T: T.where(T.tensor([1., 0.]), 1., 0.)),
    E("where int cond", lambda T: T.where(T.tensor([1, 0]), 1., 0.)),
    V("where u8 cond", lambda T: T.where(T.tensor([1, 0], dtype=T.uint8), 1., 0.)),
    E("where shape mismatch", lambda T: T.where(bt(T), T.ones(3), 0.)),
    V("maximum nan", lambda T: T.maximum(T.tensor([nan, 1.]), T.tensor([1., nan]))),
    V("fmax nan", lambda T: T.fmax(T.tensor([nan, 1.]), T.tensor([1., nan]))),
    V("max bool", lambda T: bt(T).max()),
    V("eq nan", lambda T: T.tensor([nan]) == T.tensor([nan])),
    V("isclose nan", lambda T: T.isclose(T.tensor([nan]), T.tensor([nan]), equal_nan=True)),
    V("float to int overflow", lambda T: T.tensor([1e20, nan, inf]).to(T.int32).dtype),
    # --- reductions ---
    E("max empty", lambda T: T.zeros(0).max()),
    V("sum empty", lambda T: T.zeros(0).sum()),
    V("mean empty", lambda T: T.zeros(0).mean()),
    V("prod empty", lambda T: T.zeros(0).prod()),
    E("max dim empty", lambda T: T.zeros(0, 3).max(dim=0)),
    V("max dim1 of (0,3)", lambda T: tuple(T.zeros(0, 3).max(dim=1))),
    E("argmax empty", lambda T: T.zeros(0).argmax()),
    E("amax empty", lambda T: T.zeros(0).amax()),
    E("aminmax empty", lambda T: T.zeros(0).aminmax()),
    V("std 1 elem", lambda T: T.tensor([1.]).std()),
    V("var correction 2", lambda T: T.tensor([1., 2.]).var(correction=2)),
    E("sum dim 5", lambda T: x6(T).sum(dim=5)),
    E("sum dim (0,0)", lambda T: m23(T).sum(dim=(0, 0))),
    E("sum dim 1.5", lambda T: m23(T).sum(dim=1.5)),
    E("mean int", lambda T: i6(T).mean()),
    V("mean int dtype", lambda T: i6(T).mean(dtype=T.float64)),
    V("sum dtype int on float", lambda T: x6(T).sum(dtype=T.int64)),
    V("sum bool", lambda T: bt(T).sum()),
    V("logsumexp int", lambda T: i6(T).logsumexp(0)),
    V("median empty", lambda T: T.zeros(0).median()),
    E("mode empty", lambda T: T.zeros(0).mode()),
    E("quantile q>1", lambda T: x6(T).quantile(1.5)),
    E("quantile int", lambda T: i6(T).quantile(0.5)),
    E("quantile empty", lambda T: T.zeros(0).quantile(0.5)),
    E("norm int", lambda T: i6(T).norm()),
    E("cumsum dim 2", lambda T: x6(T).cumsum(2)),
    V("cumsum int", lambda T: T.tensor([2 ** 62, 2 ** 62]).cumsum(0)),
    V("all float", lambda T: x6(T).all()),
    V("any empty", lambda T: T.zeros(0).any()),
    V("max 0d dim 0", lambda T: tuple(T.tensor(3.).max(dim=0))),
    E("max 0d dim 1", lambda T: T.tensor(3.).max(dim=1)),
    V("sum 0d dim -1", lambda T: T.tensor(3.).sum(-1)),
    E("var int", lambda T: i6(T).var()),
    V("prod int overflow", lambda T: T.tensor([2 ** 40, 2 ** 40]).prod()),
    V("nansum int", lambda T: i6(T).nansum()),
    E("nanmean int", lambda T: i6(T).nanmean()),
    V("max nan", lambda T: T.tensor([1., nan, 3.]).max()),
    V("argmax nan", lambda T: T.tensor([1., nan, 3.]).argmax()),
    E("count_nonzero dims dup", lambda T: m23(T).count_nonzero(dim=(0, 0))),
    E("std_mean empty", lambda T: T.zeros(0).std_mean()),
    # --- sorting ---
    E("sort dim 2", lambda T: x6(T).sort(dim=2)),
    V("sort bool", lambda T: tuple(T.tensor([True, False, True]).sort())),
    V("sort nan", lambda T: tuple(T.tensor([3., nan, 1.]).sort())),
    E("topk k>n", lambda T: x6(T).topk(7)),
    E("topk k<0", lambda T: x6(T).topk(-1)),
    V("topk empty k0", lambda T: tuple(T.zeros(0).topk(0))),
    E("topk 1.5", lambda T: x6(T).topk(1.5)),
    E("kthvalue empty", lambda T: T.zeros(0).kthvalue(1)),
    E("kthvalue (2,0) dim1", lambda T: T.zeros(2, 0).kthvalue(1, dim=1)),
    V("kthvalue (0,2) dim1", lambda T: tuple(T.zeros(0, 2).kthvalue(1, dim=1))),
    E("kthvalue k>n", lambda T: x6(T).kthvalue(7)),
    E("kthvalue k=0", lambda T: x6(T).kthvalue(0)),
    E("kthvalue empty k=5", lambda T: T.zeros(0).kthvalue(5)),
    V("unique nan", lambda T: T.tensor([nan, nan, 1.]).unique()),
    V("searchsorted int into float", lambda T: T.searchsorted(x6(T), T.tensor([2, 3]))),
    E("searchsorted 2d/1d", lambda T: T.searchsorted(m23(T), T.tensor([2.]))),
    E("bucketize 2d boundaries", lambda T: T.bucketize(x6(T), m23(T))),
    E("histc min>max", lambda T: T.histc(x6(T), bins=3, min=5, max=1)),
    E("histc int", lambda T: T.histc(i6(T), bins=3)),
    E("histc bins 0", lambda T: T.histc(x6(T), bins=0)),
    E("bincount neg", lambda T: T.bincount(T.tensor([-1, 2]))),
    E("bincount float", lambda T: T.bincount(x6(T))),
    E("bincount 2d", lambda T: T.bincount(T.zeros(2, 2, dtype=T.int64))),
    E("bincount weights len", lambda T: T.bincount(T.tensor([1, 2]), weights=T.ones(3))),
    V("argsort stable", lambda T: T.tensor([2., 1., 2., 1.]).argsort(stable=True)),
    V("msort 0d", lambda T: T.tensor(2.).msort()),
    V("sort empty", lambda T: tuple(T.zeros(0).sort())),
    # --- gather / scatter / index_* ---
    E("gather oob", lambda T: x6(T).gather(0, T.tensor([6]))),
    E("gather neg", lambda T: x6(T).gather(0, T.tensor([-1]))),
    E("gather int16", lambda T: x6(T).gather(0, T.tensor([1], dtype=T.int16))),
    E("gather float idx", lambda T: x6(T).gather(0, T.tensor([1.]))),
    E("gather dim 1", lambda T: x6(T).gather(1, T.tensor([1]))),
    E("gather u8", lambda T: x6(T).gather(0, T.tensor([1], dtype=T.uint8))),
    E("scatter oob", lambda T: x6(T).scatter(0, T.tensor([6]), T.ones(1))),
    E("scatter neg", lambda T: x6(T).scatter(0, T.tensor([-1]), T.ones(1))),
    E("scatter dim 1", lambda T: x6(T).scatter(1, T.tensor([1]), T.ones(1))),
    E("scatter src dtype", lambda T: x6(T).scatter(0, T.tensor([1]), T.ones(1, dtype=T.float64))),
    V("scatter value int on float", lambda T: x6(T).scatter(0, T.tensor([1]), 7)),
    E("scatter reduce bad", lambda T: x6(T).scatter(0, T.tensor([1]), T.ones(1), reduce="max")),
    V("scatter_reduce bad", lambda T: x6(T).scatter_reduce(0, T.tensor([1]), T.ones(1), "max")),
    E("scatter_add neg", lambda T: x6(T).scatter_add(0, T.tensor([-1]), T.ones(1))),
    E("index_select 2d idx", lambda T: x6(T).index_select(0, T.zeros(1, 1, dtype=T.int64))),
    E("index_select float idx", lambda T: x6(T).index_select(0, T.tensor([1.]))),
    E("index_select u8", lambda T: x6(T).index_select(0, T.tensor([1], dtype=T.uint8))),
    E("index_select oob", lambda T: x6(T).index_select(0, T.tensor([6]))),
    E("index_select neg", lambda T: x6(T).index_select(0, T.tensor([-1]))),
    E("index_fill oob", lambda T: x6(T).index_fill(0, T.tensor([6]), 1.)),
    V("index_fill neg", lambda T: x6(T).index_fill(0, T.tensor([-1]), 1.)),
    E("index_copy oob", lambda T: x6(T).index_copy(0, T.tensor([6]), T.ones(1))),
    E("index_copy neg", lambda T: x6(T).index_copy(0, T.tensor([-1]), T.ones(1))),
    E("index_add oob", lambda T: x6(T).index_add(0, T.tensor([6]), T.ones(1))),
    E("index_add neg", lambda T: x6(T).index_add(0, T.tensor([-1]), T.ones(1))),
    E("index_add 2d oob", lambda T: m23(T).index_add(1, T.tensor([3]), T.ones(2, 1))),
    E("index_add 2d int32 oob",
      lambda T: m23(T).index_add(1, T.tensor([3], dtype=T.int32), T.ones(2, 1))),
    E("index_add_ oob", lambda T: x6(T).index_add_(0, T.tensor([6]), T.ones(1))),
    V("index_add alpha", lambda T: x6(T).index_add(0, T.tensor([1, 1]), T.ones(2), alpha=2.5)),
    E("masked_fill float mask", lambda T: x6(T).masked_fill(T.ones(6), 0.)),
    E("masked_fill u8 mask", lambda T: x6(T).masked_fill(u8(T), 0.)),
    E("masked_fill mask shape", lambda T: x6(T).masked_fill(T.ones(4, dtype=T.bool), 0.)),
    E("masked_fill 2-elem value", lambda T: x6(T).masked_fill(u8(T).bool(), T.ones(2))),
    V("masked_select bcast", lambda T: x6(T).masked_select(T.tensor([True]))),
    E("masked_select u8", lambda T: x6(T).masked_select(u8(T))),
    E("masked_scatter u8", lambda T: x6(T).masked_scatter(u8(T), T.ones(6))),
    E("masked_scatter short src", lambda T: x6(T).masked_scatter(u8(T).bool(), T.ones(2))),
    E("take oob", lambda T: x6(T).take(T.tensor([6]))),
    V("take neg", lambda T: x6(T).take(T.tensor([-6]))),
    E("put oob", lambda T: x6(T).put(T.tensor([6]), T.ones(1))),
    V("put neg", lambda T: x6(T).put(T.tensor([-1]), T.ones(1))),
    E("index_put oob", lambda T: x6(T).index_put((T.tensor([6]),), T.ones(1))),
    V("index_put u8 acc", lambda T: x6(T).index_put((u8(T),), T.tensor(1.), accumulate=True)),
    E("index_put u8", lambda T: x6(T).index_put((u8(T),), T.tensor(1.))),
    V("index_put u8 vals", lambda T: x6(T).index_put((u8(T),), T.tensor([1., 2., 3.]))),
    E("index_put dtype", lambda T: x6(T).index_put((T.tensor([1]),), T.ones(1, dtype=T.float64))),
    V("nonzero 0d", lambda T: T.tensor(0.).nonzero()),
    V("nonzero u8", lambda T: u8(T).nonzero()),
    V("argwhere", lambda T: m23(T).argwhere()),
]


@pytest.mark.parametrize("fn, raises", HOSTILE)
def test_hostile_inputs_behave_as_torch(fn, raises):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(fn, raises=raises)


# A Python number a fill writes: read as PyTorch reads a Scalar (an int from -2**63 up to 2**64),
# then fitted to the tensor's dtype, with PyTorch's messages.  The last field: which of fill_ and
# index_fill_ raise.  (Not compared: index_fill_ of uint64, which PyTorch's CPU build does not
# implement.)
BOTH, NONE, INDEX = {"fill_", "index_fill_"}, set(), {"index_fill_"}
FILLS = [("float32", 2 ** 70, BOTH), ("int64", 2 ** 70, BOTH), ("int64", 2 ** 63, BOTH),
         ("int64", 2 ** 64 - 1, BOTH), ("float32", 2 ** 64 - 1, NONE), ("float64", 2 ** 63, NONE),
         ("complex64", 2 ** 63, NONE), ("float32", -2 ** 63, NONE),
         ("float32", -2 ** 63 - 1, BOTH), ("uint8", -1, NONE), ("uint8", -300, BOTH),
         ("int8", 300, BOTH), ("int32", nan, BOTH), ("float32", nan, NONE),
         ("float32", 1e39, BOTH), ("float32", 2.5, NONE), ("float32", 1 + 2j, BOTH),
         ("float32", 1 + 0j, INDEX), ("bool", 1 + 2j, INDEX), ("complex64", 1 + 2j, NONE),
         ("int16", True, NONE), ("float16", 65504., NONE), ("float16", 65520., BOTH),
         ("float16", -70000, BOTH), ("float16", -inf, NONE), ("float16", 1 + 2j, BOTH),
         ("bfloat16", 1e38, NONE), ("bfloat16", 1e39, BOTH)]


@pytest.mark.parametrize("fill", ["fill_", "index_fill_"])
@pytest.mark.parametrize("dtype, value, raising", FILLS, ids=[f"{d}-{v}" for d, v, _ in FILLS])
def test_a_filled_number_is_read_as_torch_reads_it(fill, dtype, value, raising):
    def row(T):
        x = T.zeros(2, dtype=getattr(T, dtype))
        return x.fill_(value) if fill == "fill_" else x.index_fill_(0, T.tensor([0]), value)
    same(row, raises=fill in raising)


# float16 and bfloat16 take a finite number past their range nowhere but in setitem, which reads
# it as a double (and rounds it to inf)
HALF_WRITES = {
    "full": lambda T, dt, v: T.full((2,), v, dtype=dt),
    "masked_fill": lambda T, dt, v: T.zeros(2, dtype=dt).masked_fill(T.tensor([True, False]), v),
    "scatter": lambda T, dt, v: T.zeros(2, dtype=dt).scatter(0, T.tensor([0]), v),
    "clamp": lambda T, dt, v: T.zeros(2, dtype=dt).clamp(max=v),
    "setitem": lambda T, dt, v: _setitem(T.zeros(2, dtype=dt), 0, v),
    "setitem mask": lambda T, dt, v: _setitem(T.zeros(2, dtype=dt), T.tensor([True, False]), v)}


def _setitem(x, index, value):
    x[index] = value
    return x


@pytest.mark.parametrize("write, dtype, value", [
    (w, d, v) for w in HALF_WRITES for d, v in [("float16", 1e10), ("bfloat16", 1e39),
                                               ("float16", 1 + 2j)]])
def test_a_number_past_a_half_types_range(write, dtype, value):
    raises = not write.startswith("setitem") or isinstance(value, complex)
    same(lambda T: HALF_WRITES[write](T, getattr(T, dtype), value), raises=raises)


# --- gradients ------------------------------------------------------------------------------------

def grads(fn, *values):
    """A row: ``fn(T, *leaves)`` on float32 leaves made from ``values``; returns the output and
    every leaf's .grad after backward of (out * weights).sum() (distinct weights show which
    output each gradient came from)."""
    def row(T):
        xs = [T.tensor(v, requires_grad=True) for v in values]
        y = fn(T, *xs)
        (y * T.arange(1., y.numel() + 1).reshape(y.shape)).sum().backward()
        return (y, *[x.grad for x in xs])
    return row


X = [0.5, -1., 2., nan, 0., 1.]          # bounds 0 and 1 are hit exactly by the last two
LO = [nan, 0., nan, 0., 0., 0.5]
HI = [1., nan, 1., 1., 0., 1.]
XS = [[1., 2., 3.], [4., 5., 6.]]
SS = [[10., 20., 30.], [40., 50., 60.]]


def rep(T):   # repeats positions along dim 0
    return T.tensor([[1, 0, 1], [1, 0, 0]])


def rows(T):
    return T.tensor([0, 0])


GRADS = [
    # clamp / clip at NaN bounds, on the bounds, with min > max; scalar, tensor, in-place
    V("clamp(min=nan)", grads(lambda T, x: x.clamp(min=nan), X)),
    V("clamp(max=nan)", grads(lambda T, x: x.clamp(max=nan), X)),
    V("clamp(0, nan)", grads(lambda T, x: x.clamp(0., nan), X)),
    V("clamp(nan, 1)", grads(lambda T, x: x.clamp(nan, 1.), X)),
    V("clamp(0, 1)", grads(lambda T, x: x.clamp(0., 1.), X)),
    V("clamp(1, 0)", grads(lambda T, x: x.clamp(1., 0.), X)),
    V("clamp(-inf, inf)", grads(lambda T, x: x.clamp(-inf, inf), X)),
    V("clamp_min(nan)", grads(lambda T, x: x.clamp_min(nan), X)),
    V("clamp_max(nan)", grads(lambda T, x: T.clamp_max(x, nan), X)),
    V("clip(min=nan)", grads(lambda T, x: x.clip(min=nan), X)),
    V("torch.clip(max=nan)", grads(lambda T, x: T.clip(x, max=nan), X)),
    V("clamp_(min=nan)", grads(lambda T, x: (x * 1).clamp_(min=nan), X)),
    V("clip_(max=nan)", grads(lambda T, x: (x * 1).clip_(max=nan), X)),
    V("clamp_min_(nan)", grads(lambda T, x: (x * 1).clamp_min_(nan), X)),
    V("clamp_max_(nan)", grads(lambda T, x: (x * 1).clamp_max_(nan), X)),
    V("clamp(T min)", grads(lambda T, x, lo: x.clamp(min=lo), X, LO)),
    V("clamp(T max)", grads(lambda T, x, hi: x.clamp(max=hi), X, HI)),
    V("clamp(T, T)", grads(lambda T, x, lo, hi: x.clamp(lo, hi), X, LO, HI)),
    V("clamp(T, T) min>max", grads(lambda T, x, lo, hi: x.clamp(hi, lo), X, LO, HI)),
    V("clamp_min(T)", grads(lambda T, x, lo: x.clamp_min(lo), X, LO)),
    V("clamp_max(T)", grads(lambda T, x, hi: T.clamp_max(x, hi), X, HI)),
    V("clip(T, T)", grads(lambda T, x, lo, hi: T.clip(x, lo, hi), X, LO, HI)),
    V("clamp_(T, T)", grads(lambda T, x, lo, hi: (x * 1).clamp_(lo, hi), X, LO, HI)),
    V("clamp(0-dim nan)", grads(lambda T, x, lo: x.clamp(min=lo), X, nan)),
    # index writes where positions repeat: src's gradient is grad gathered at its position
    V("scatter", grads(lambda T, x, s: x.scatter(0, rep(T), s), XS, SS)),
    V("scatter_", grads(lambda T, x, s: (x * 1).scatter_(0, rep(T), s), XS, SS)),
    V("scatter value", grads(lambda T, x: x.scatter(0, rep(T), 7.), XS)),
    E("scatter reduce=add", grads(lambda T, x, s: x.scatter(0, rep(T), s, reduce="add"), XS, SS)),
    E("scatter_ reduce=multiply",
      grads(lambda T, x, s: (x * 1).scatter_(0, rep(T), s, reduce="multiply"), XS, SS)),
    V("scatter_add", grads(lambda T, x, s: x.scatter_add(0, rep(T), s), XS, SS)),
    V("scatter_reduce sum", grads(lambda T, x, s: x.scatter_reduce(0, rep(T), s, "sum"), XS, SS)),
    V("scatter_reduce prod",
      grads(lambda T, x, s: x.scatter_reduce(0, rep(T), s, "prod", include_self=False), XS, SS)),
    V("scatter_reduce mean", grads(lambda T, x, s: x.scatter_reduce(0, rep(T), s, "mean"), XS, SS)),
    V("scatter_reduce amax",
      grads(lambda T, x, s: x.scatter_reduce(0, rep(T), s, "amax", include_self=False), XS, SS)),
    V("scatter_reduce amin", grads(lambda T, x, s: x.scatter_reduce(0, rep(T), s, "amin"), XS, SS)),
    V("index_copy", grads(lambda T, x, s: x.index_copy(0, rows(T), s), XS, SS)),
    V("index_copy_ dim 1",
      grads(lambda T, x, s: (x * 1).index_copy_(1, T.tensor([2, 2, 0]), s), XS, SS)),
    V("index_put", grads(lambda T, x, s: x.index_put((rows(T),), s), XS, SS)),
    V("index_put 2 indices", grads(lambda T, x, s: x.index_put(
        (T.tensor([0, 0, 1]), T.tensor([1, 1, 2])), s[0]), XS, SS)),
    V("x[rows] = s", grads(lambda T, x, s: setv(T, lambda T: x * 1, rows(T), s), XS, SS)),
    V("x[:, cols] = s", grads(lambda T, x, s: setv(
        T, lambda T: x * 1, (slice(None), T.tensor([0, 0, 2])), s), XS, SS)),
    V("put", grads(lambda T, x, s: x.put(T.tensor([0, 0, 5, 5, 5, 1]), s.reshape(-1)), XS, SS)),
    V("put accumulate", grads(lambda T, x, s: x.put(
        T.tensor([0, 0, 5, 5, 5, 1]), s.reshape(-1), accumulate=True), XS, SS)),
    V("index_add", grads(lambda T, x, s: x.index_add(0, rows(T), s), XS, SS)),
    # uint8 masks
    V("x[u8]", grads(lambda T, x: x[u8(T)], X)),
    V("x[u8] = v", grads(lambda T, x, v: setv(T, lambda T: x * 1, u8(T), v), X, [7., 8., 9.])),
    V("index_put_ u8 accumulate",
      grads(lambda T, x: (x * 1).index_put_((u8(T),), T.tensor(1.), accumulate=True), X)),
    V("where(u8)", grads(lambda T, x: T.where(u8(T), x, -x), X)),
]


@pytest.mark.parametrize("fn, raises", GRADS)
def test_gradients_behave_as_torch(fn, raises):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(fn, raises=raises)


# --- warnings -------------------------------------------------------------------------------------

WARNS = [
    pytest.param(lambda T: x6(T)[u8(T)], id="x[u8]"),
    pytest.param(lambda T: x6(T)[np.array([1, 0, 1, 0, 1, 0], np.uint8)], id="x[np u8]"),
    pytest.param(lambda T: x6(T)[T.tensor(1, dtype=T.uint8)], id="x[u8 0-dim]"),
    pytest.param(lambda T: setv(T, x6, u8(T), T.tensor([7., 8., 9.])), id="x[u8] = values"),
    pytest.param(lambda T: setv(T, x6, u8(T), -1.), id="x[u8] = scalar"),
    pytest.param(lambda T: x6(T).index_put_((u8(T),), T.tensor(1.), accumulate=True),
                 id="index_put_ u8"),
    pytest.param(lambda T: m23(T)[[[0, 1], [1, 0]]], id="list as tuple"),
    pytest.param(lambda T: x6(T).masked_scatter(u8(T), x6(T)), id="masked_scatter(u8)"),
]


def _user_warnings(fn, T):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(fn, T)
    return [str(w.message).split(" (Triggered internally")[0] for w in caught
            if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("fn", WARNS)
def test_warnings_match_torch(fn):
    assert _user_warnings(fn, tl) == _user_warnings(fn, torch)


# PyTorch gives these once per process (TORCH_WARN_ONCE), so the oracle is a fresh torch
# process making each call twice.
ONCE = {"where(u8)": "T.where(T.tensor([1, 0], dtype=T.uint8), 1., 0.)",
        "scatter reduce=": "T.arange(6.).scatter(0, T.tensor([1]), T.ones(1), reduce='add')"}
_ONCE_IN_TORCH = """
import json, sys, warnings
import torch as T
out = {}
for name, code in json.loads(sys.stdin.read()).items():
    out[name] = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            eval(code)
        out[name].append([str(w.message).split(" (Triggered internally")[0] for w in caught
                          if issubclass(w.category, UserWarning)])
print(json.dumps(out))
"""


def test_once_per_process_warnings_match_a_fresh_torch(monkeypatch):
    ref = json.loads(subprocess.run([sys.executable, "-c", _ONCE_IN_TORCH], input=json.dumps(ONCE),
                                    capture_output=True, text=True, check=True).stdout)
    monkeypatch.setattr(pointwise, "_WARNED", set())
    for name, code in ONCE.items():
        got = [_user_warnings(lambda T: eval(code, {"T": T}), tl) for _ in range(2)]
        assert got == ref[name], name


# --- from_numpy -----------------------------------------------------------------------------------

def test_numpy_gives_a_writable_copy():
    """numpy() and np.asarray copy (XLA owns the buffer) into writable arrays: the usual
    ``a = t.numpy(); a *= 255`` works, and never changes the tensor."""
    t = tl.arange(3.)
    for a in (t.numpy(), np.asarray(t)):
        a *= 255
        np.testing.assert_array_equal(a, [0., 255., 510.])
    np.testing.assert_array_equal(t.numpy(), [0., 1., 2.])


def test_from_numpy_never_shares_memory():
    """A write to the array after from_numpy never shows in the tensor, and an in-place op on
    the tensor never shows in the array: at every alignment (jax aliases a 64-byte aligned
    buffer) and for fresh arrays of several dtypes."""
    buf = np.zeros(64 + 4 * 1000, np.uint8)
    aligned = set()
    for n in (1, 3, 16, 1000):
        for offset in range(0, 64, 4):
            a = buf[offset:offset + 4 * n].view(np.float32)
            a[:] = np.arange(n)
            t = tl.from_numpy(a)
            aligned.add(a.ctypes.data % 64 == 0)
            a[:] = -1
            np.testing.assert_array_equal(t.numpy(), np.arange(n, dtype=np.float32))
    assert aligned == {True, False}
    rng = np.random.default_rng(0)
    for i in range(60):
        a = rng.random(1 + i * 37).astype((np.float32, np.float64, np.int64)[i % 3])
        want = a.copy()
        t = tl.from_numpy(a)
        a += 5
        np.testing.assert_array_equal(t.numpy(), want)
        t.add_(1)
        np.testing.assert_array_equal(a, want + 5)


# clamp's bounds: each entry point reads a Python number as its own PyTorch kernel does, and a
# Tensor bound runs a kernel of the common dtype (NOTE [ clamp's bounds ] in
# torchlike/_ops/pointwise.py).  A complex bound made real tensors complex, a bool Tensor bound
# made a bool tensor int64, and an integral tensor's clamp_ named its dtype as Python does.
CLAMPS = {"clamp": lambda T, x, b: T.clamp(x, min=b), "clamp max": lambda T, x, b: T.clamp(x, max=b),
          "clamp both": lambda T, x, b: T.clamp(x, b, b), "clip": lambda T, x, b: x.clip(b),
          "clamp_": lambda T, x, b: x.clamp_(min=b), "clamp_min": lambda T, x, b: x.clamp_min(b),
          "clamp_max_": lambda T, x, b: x.clamp_max_(b)}
CLAMP_BOUNDS = {"complex": lambda T: 1 + 2j, "complex, real": lambda T: complex(1, 0),
                "float": lambda T: 1.5, "int": lambda T: 1, "bool": lambda T: True,
                "complex tensor": lambda T: T.tensor(1 + 2j), "float tensor": lambda T: T.tensor(1.5),
                "bool tensor": lambda T: T.tensor(True)}
_ALL, _CASTS = set(CLAMPS), {"clamp_", "clamp_max_"}
# input dtype -> bound -> the entry points that raise
CLAMP_RAISES = {
    "float32": {"complex": _ALL, "complex, real": {"clamp_min", "clamp_max_"},
                "complex tensor": _ALL},
    "int64": {"complex": _ALL, "complex, real": _ALL, "float": _CASTS, "complex tensor": _ALL,
              "float tensor": _CASTS},
    "bool": {"complex": _ALL, "complex, real": _ALL, "float": _CASTS, "int": _CASTS,
             "bool": _ALL, "complex tensor": _ALL, "float tensor": _CASTS,
             "bool tensor": {"clamp both"}}}


@pytest.mark.parametrize("entry", CLAMPS)
@pytest.mark.parametrize("dtype, bound", [(d, b) for d in CLAMP_RAISES for b in CLAMP_BOUNDS])
def test_clamp_reads_its_bounds_as_torch_does(entry, dtype, bound):
    def row(T):
        x = T.tensor([0.5, 2.0, -3.0]).to(getattr(T, dtype))
        return CLAMPS[entry](T, x, CLAMP_BOUNDS[bound](T))
    same(row, raises=entry in CLAMP_RAISES[dtype].get(bound, ()))

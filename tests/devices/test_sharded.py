"""DeviceMesh, DTensor and FSDP2's fully_shard over the session's 8 CPU devices (one process
holds the whole mesh: NOTE [ a mesh in one process ] in torchlike/distributed/device_mesh.py).

Oracles: PyTorch's own DeviceMesh / DTensor / fully_shard over a fake process group of 8 ranks
(seen from rank 0: names, shapes, placements, errors); the definitions of the moves (numpy
slices, sums); and a model trained on one device, which fully_shard must equal."""
import collections
import copy
import functools
import pickle
import re

import jax
import numpy as np
import pytest
import torch
import torch.distributed as tdist
import torch.distributed.fsdp as tfsdp
import torch.distributed.tensor as tdt

import torchlike as tl
from torchlike import _lazy, nn
from torchlike.distributed.checkpoint.state_dict import (
    StateDictOptions, get_model_state_dict, get_optimizer_state_dict, set_model_state_dict,
    set_optimizer_state_dict)
from torchlike.distributed.device_mesh import DeviceMesh, init_device_mesh
from torchlike.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from torchlike.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torchlike.nn import functional as F

N = 8


@pytest.fixture(scope="module")
def torch_mesh():
    """PyTorch's mesh constructor over a fake world of 8 ranks (this process is rank 0; the
    world ends with this file's tests)."""
    from torch.distributed.device_mesh import init_device_mesh as torch_init
    from torch.testing._internal.distributed.fake_pg import FakeStore
    assert not tdist.is_initialized()
    tdist.init_process_group("fake", store=FakeStore(), rank=0, world_size=N)
    yield torch_init
    tdist.destroy_process_group()


def _theirs(placements):
    """PyTorch's placements for torchlike's."""
    return [tdt.Shard(p.dim) if isinstance(p, Shard) else tdt.Replicate() for p in placements]


def _laid_out(t, mesh, *spec):
    """Whether ``t``'s array is laid out over ``mesh``'s devices by PartitionSpec(*spec)."""
    want = jax.sharding.NamedSharding(mesh._jax_mesh, jax.sharding.PartitionSpec(*spec))
    return t._value().sharding.is_equivalent_to(want, t.ndim)


def _raised(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 -- the type and message are what is compared
        return type(e), str(e)
    return None


def test_mesh_api_matches_torch(torch_mesh):
    for shape, names in [((8,), None), ((2, 4), ("dp", "tp")), ((2, 2, 2), ("a", "b", "c"))]:
        ours, theirs = init_device_mesh("cpu", shape, mesh_dim_names=names), \
            torch_mesh("cpu", shape, mesh_dim_names=names)
        assert repr(ours) == repr(theirs)
        assert (ours.ndim, ours.shape, ours.size(), ours.mesh_dim_names, ours.device_type) == \
            (theirs.ndim, theirs.shape, theirs.size(), theirs.mesh_dim_names,
             theirs.device_type)
        assert ours.mesh.tolist() == theirs.mesh.tolist()
        assert ours.get_coordinate() == theirs.get_coordinate()
        assert [ours.size(i) for i in range(ours.ndim)] == \
            [theirs.size(i) for i in range(theirs.ndim)]
        for dim in range(ours.ndim):
            assert ours.get_local_rank(dim) == theirs.get_local_rank(dim)
        subsets = [(n,) for n in names or ()] + ([names[1:]] if names else [])
        for sub in subsets:
            assert repr(ours[sub]) == repr(theirs[sub])
            assert ours[sub].mesh.tolist() == theirs[sub].mesh.tolist()
            assert ours[sub]._jax_mesh.devices.shape == tuple(ours[sub].shape)
    m2, t2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp")), \
        torch_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    m1, t1 = init_device_mesh("cpu", (8,)), torch_mesh("cpu", (8,))
    assert m2["tp"].get_local_rank() == t2["tp"].get_local_rank()
    assert m2.get_local_rank("tp") == t2.get_local_rank("tp")
    for call in [lambda m, m1, init: m.get_local_rank(), lambda m, m1, init: m["xx"],
                 lambda m, m1, init: m["tp", "dp"],
                 lambda m, m1, init: m1["a"],
                 lambda m, m1, init: init("cpu", (2, 4), mesh_dim_names=("a",)),
                 lambda m, m1, init: init("cpu", (2, 4), mesh_dim_names=("a", "a")),
                 lambda m, m1, init: init("cpu:0", (8,)),
                 lambda m, m1, init: init("cpu", (16,))]:
        assert _raised(lambda: call(m2, m1, init_device_mesh)) == \
            _raised(lambda: call(t2, t1, torch_mesh))
    # the mesh is jax's: its devices are this process's CPU devices, laid out row-major
    assert [d.id for d in m2._jax_mesh.devices.flat] == list(range(8))
    assert m2._jax_mesh.axis_names == ("dp", "tp")
    assert m1 == init_device_mesh("cpu", (8,)) and hash(m1) == hash(init_device_mesh("cpu", (8,)))
    assert DeviceMesh("cpu", [[0, 1], [2, 3]]).shape == (2, 2)


def test_mesh_of_presented_gpus():
    """cuda names the seven CPU devices presented as GPUs (NOTE [ devices ]): a mesh takes the
    first ones, and may not be larger than there are."""
    mesh = init_device_mesh("cuda", (4,))
    d = distribute_tensor(tl.ones(8, 2), mesh, [Shard(0)])
    assert d.device == tl.device("cuda:0")
    assert d._value().sharding.device_set == {tl._device.to_jax_device(f"cuda:{i}")
                                              for i in range(4)}
    with pytest.raises(RuntimeError, match="Mesh should not be bigger than default world size "
                                           "7, but found 8 ranks!"):
        init_device_mesh("cuda", (8,))


def _shards(d):
    """{device id: numpy values} of every shard of ``d``'s array."""
    return {s.device.id: np.asarray(s.data) for s in d._value().addressable_shards}


@pytest.mark.parametrize("placements, spec", [
    ([Shard(0)], ("dp",)), ([Shard(1)], (None, "dp")), ([Shard(-1)], (None, "dp")),
    ([Replicate()], ()),
])
def test_distribute_tensor_really_shards(torch_mesh, placements, spec):
    mesh, tmesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",)), \
        torch_mesh("cpu", (8,), mesh_dim_names=("dp",))
    values = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    d = distribute_tensor(tl.tensor(values), mesh, placements)
    td = tdt.distribute_tensor(torch.tensor(values), tmesh, _theirs(placements))
    assert isinstance(d, DTensor) and repr(d.placements) == repr(td.placements)
    assert tuple(d.shape) == tuple(td.shape) and d.to_local().shape == td.to_local().shape
    assert repr(d.placements) == repr(td.placements)
    assert _laid_out(d, mesh, *spec) and len(d._value().sharding.device_set) == 8
    # each device holds its piece: rank r's chunk, as PyTorch lays them out
    for rank, piece in _shards(d).items():
        expect = values if not spec else np.split(values, 8, axis=len(spec) - 1)[rank]
        np.testing.assert_array_equal(piece, expect)
    np.testing.assert_array_equal(d.to_local().numpy(), _shards(d)[0])
    np.testing.assert_array_equal(d.full_tensor().numpy(), values)


def test_two_dim_mesh_placements(torch_mesh):
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    tmesh = torch_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    values = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    for placements in ([Shard(0), Shard(1)], [Replicate(), Shard(1)], [Shard(0), Shard(0)]):
        d = distribute_tensor(tl.tensor(values), mesh, placements)
        td = tdt.distribute_tensor(torch.tensor(values), tmesh, _theirs(placements))
        assert d.to_local().shape == td.to_local().shape
        np.testing.assert_array_equal(d.full_tensor().numpy(), values)
        assert repr(d).startswith("DTensor(local_tensor=tensor(") and \
            repr(d).endswith(f"device_mesh={tmesh}, placements={td.placements})")
    d = distribute_tensor(tl.tensor(values), mesh, [Shard(0), Shard(1)])
    assert _laid_out(d, mesh, "dp", "tp")
    np.testing.assert_array_equal(d.to_local().numpy(), values[:4, :2])   # rank 0's block
    again = pickle.loads(pickle.dumps(d))   # a mesh pickles by its layout
    assert again.device_mesh == mesh and again.placements == d.placements
    assert _laid_out(again, mesh, "dp", "tp")
    np.testing.assert_array_equal(again.full_tensor().numpy(), values)
    assert np.asarray(d._value().addressable_shards[0].data).shape == (4, 2)


def test_placement_errors_match_torch(torch_mesh):
    mesh, tmesh = init_device_mesh("cpu", (8,)), torch_mesh("cpu", (8,))
    values = np.ones((8, 4), np.float32)
    for placements in ([Shard(0), Shard(1)], [Shard(2)]):
        assert _raised(lambda: distribute_tensor(tl.tensor(values), mesh, placements)) == \
            _raised(lambda: tdt.distribute_tensor(torch.tensor(values), tmesh,
                                                  _theirs(placements)))
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got -3"):   # torch: its pad
        distribute_tensor(tl.tensor(values), mesh, [Shard(-3)])
    # torchlike's shards are equal (NOTE [ DTensor as a global array ])
    with pytest.raises(ValueError, match=r"Shard\(0\) splits dimension 0 of size 3 into 8"):
        distribute_tensor(tl.ones(3, 4), mesh, [Shard(0)])
    with pytest.raises(RuntimeError, match="No device mesh is currently active!"):
        distribute_tensor(tl.ones(8))
    with mesh:
        assert distribute_tensor(tl.ones(8)).device_mesh is mesh
    assert (str(Shard(1)), str(Replicate()), Shard(0) == Shard(0), Shard(0) == Shard(1)) == \
        (str(tdt.Shard(1)), str(tdt.Replicate()),
         True, False)


def test_redistribute_and_gradients_follow_the_definitions():
    """Values survive every move; gradients take the input's layout again, are zero outside
    to_local's shard and sum over from_local's repeats."""
    mesh = init_device_mesh("cpu", (8,))
    values = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    w = tl.tensor(values, requires_grad=True)
    d = distribute_tensor(w, mesh, [Shard(0)])
    assert d.is_leaf and d.requires_grad and d.grad_fn is None   # as PyTorch's
    moved = d.redistribute(mesh, [Shard(1)])
    assert _laid_out(moved, mesh, None, "dim_0")
    assert type(moved.grad_fn).__name__ == "RedistributeBackward"
    full = moved.redistribute(mesh, [Replicate()]).full_tensor()
    assert type(full).__name__ == "Tensor" and type(full.grad_fn).__name__ == \
        "_ToTorchTensorBackward"
    np.testing.assert_array_equal(full.detach().numpy(), values)
    weights = np.arange(16, dtype=np.float32)
    ((full * tl.tensor(weights)).sum() + (d.to_local() ** 2).sum()).backward()
    expect = np.broadcast_to(weights, (8, 16)).copy()
    expect[:1] += 2 * values[:1]   # to_local is rank 0's row
    assert isinstance(d.grad, DTensor) and d.grad.placements == (Shard(0),)
    assert _laid_out(d.grad, mesh, "dim_0")
    np.testing.assert_allclose(d.grad.full_tensor().numpy(), expect, rtol=1e-6)
    assert w.grad is None   # distribute_tensor makes a leaf, as PyTorch's

    local = tl.tensor(values[:2], requires_grad=True)
    g = DTensor.from_local(local, mesh, [Shard(0)])
    assert tuple(g.shape) == (16, 16) and type(g.grad_fn).__name__ == "_FromTorchTensorBackward"
    np.testing.assert_array_equal(g.full_tensor().detach().numpy(), np.tile(values[:2], (8, 1)))
    (g.full_tensor() * tl.arange(16.0)[:, None]).sum().backward()
    rows = np.arange(16, dtype=np.float32).reshape(8, 2).sum(0)[:, None]
    np.testing.assert_allclose(local.grad.numpy(), np.broadcast_to(rows, (2, 16)))


# --- fully_shard ------------------------------------------------------------------------------

def _mlp():
    tl.manual_seed(0)   # 4.weight (3, 8) and 4.bias do not divide by 8: kept whole
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU(),
                         nn.Linear(8, 3))


def _sharded(mesh):
    model = _mlp()
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


OPTIMIZERS = {"SGD": lambda ps: tl.optim.SGD(ps, lr=0.1, momentum=0.9),
              "Adam": lambda ps: tl.optim.Adam(ps, lr=1e-2)}


def _train(model, opt, x, y, steps, compiled):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = tl.compile(step) if compiled else step
    return [run(x, y).item() for _ in range(steps)], run


def _batch(mesh):
    tl.manual_seed(1)
    x, y = tl.randn(32, 16), tl.randint(0, 3, (32,))
    return x, y, distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(y, mesh, [Shard(0)])


def test_fully_shard_structure_matches_torch(torch_mesh):
    from torch.distributed.fsdp import fully_shard as torch_fully_shard
    mesh, tmesh = init_device_mesh("cpu", (8,)), torch_mesh("cpu", (8,))
    model = _sharded(mesh)
    theirs = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                 torch.nn.Linear(32, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3))
    for layer in theirs:
        if isinstance(layer, torch.nn.Linear):
            torch_fully_shard(layer, mesh=tmesh)
    torch_fully_shard(theirs, mesh=tmesh)
    assert [type(m).__name__ for m in model.modules()] == \
        [type(m).__name__ for m in theirs.modules()]
    assert isinstance(model, FSDPModule) and isinstance(model, nn.Sequential)
    ours, torch_params = dict(model.named_parameters()), dict(theirs.named_parameters())
    assert list(ours) == list(torch_params)
    for name, p in ours.items():
        assert isinstance(p, DTensor) and isinstance(p, nn.Parameter) and p.requires_grad
        assert tuple(p.shape) == tuple(torch_params[name].shape)
        if name.startswith("4."):   # 3 rows over 8 devices: PyTorch pads, torchlike keeps whole
            assert p.placements == (Replicate(),)
        else:
            assert repr(p.placements) == repr(torch_params[name].placements)
            assert p.to_local().shape == torch_params[name].to_local().shape
            assert len(_shards(p)) == 8 and all(s.shape[0] == p.shape[0] // 8
                                                for s in _shards(p).values())
    sd, tsd = model.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd) and all(isinstance(v, DTensor) for v in sd.values())
    assert repr(model) == repr(theirs)

    model[0].unshard(async_op=True).wait()   # it holds them gathered until reshard()
    gathered = model[0].weight
    assert type(gathered) is tl.Tensor and _laid_out(gathered, mesh)
    np.testing.assert_array_equal(gathered.detach().numpy(), ours["0.weight"].full_tensor()
                                  .detach().numpy())
    model[0].reshard()
    assert model[0].weight is ours["0.weight"]

    tied = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))   # a shared parameter stays one
    tied[1].weight = tied[0].weight
    fully_shard(tied, mesh=mesh)
    assert tied[1].weight is tied[0].weight and len(list(tied.parameters())) == 3

    with pytest.raises(AssertionError, match="Please init the 2D mesh for HSDP with "
                                             "mesh_dim_names specified"):
        fully_shard(nn.Linear(4, 8), mesh=init_device_mesh("cpu", (2, 4)))
    names = ("replicate", "shard")   # HSDP
    hybrid, thybrid = init_device_mesh("cpu", (2, 4), mesh_dim_names=names), \
        torch_mesh("cpu", (2, 4), mesh_dim_names=names)
    one, tone = fully_shard(nn.Linear(4, 8), mesh=hybrid), \
        torch_fully_shard(torch.nn.Linear(4, 8), mesh=thybrid)
    assert repr(one.weight.placements) == repr(tone.weight.placements)
    assert one.weight.to_local().shape == tone.weight.to_local().shape
    assert _laid_out(one.weight, hybrid, "shard")


STEPS = 3
_COMPILED = {}   # optimizer name -> (model, compiled step, batch): shared with the HLO test


@functools.lru_cache(maxsize=None)
def _one_device(name):
    """Losses, parameters and last gradients of the MLP trained eagerly on one device."""
    x, y, _, _ = _batch(init_device_mesh("cpu", (8,)))
    ref = _mlp()
    losses, _ = _train(ref, OPTIMIZERS[name](ref.parameters()), x, y, STEPS, compiled=False)
    return losses, {n: (p.detach().numpy(), p.grad.numpy()) for n, p in ref.named_parameters()}


@pytest.mark.parametrize("mode", ["eager", "compiled", "lazy"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_fully_shard_trains_as_one_device(name, mode, monkeypatch):
    """Eagerly, compiled, and with lazy mode on (NOTE [ lazy segments ] in torchlike/_lazy.py),
    whose segments run on one device, so that ops on sharded arrays run as eagerly."""
    if mode == "lazy":
        monkeypatch.setattr(_lazy, "fuse_after", 1)   # a repeated segment runs as a program
        monkeypatch.setattr(_lazy, "buy_after", 0)
        _lazy.enable()
    try:
        _trains_as_one_device(name, mode == "compiled")
    finally:
        _lazy.enable(False)


def _trains_as_one_device(name, compiled):
    mesh = init_device_mesh("cpu", (8,))
    x, y, xd, yd = _batch(mesh)
    model = _sharded(mesh)
    opt = OPTIMIZERS[name](model.parameters())
    expect, ref = _one_device(name)
    # the root lays a batch on one device over the mesh itself (SGD's), or is given it there
    got, step = _train(model, opt, x if name == "SGD" else xd, yd, STEPS, compiled)
    if compiled:
        _COMPILED[name] = (model, step, (x if name == "SGD" else xd, yd))
    np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-6)
    for n, b in model.named_parameters():
        assert isinstance(b, DTensor)
        np.testing.assert_allclose(b.full_tensor().detach().numpy(), ref[n][0], rtol=1e-6,
                                   atol=1e-6, err_msg=n)
        # still sharded, and so are its gradient and state
        assert _laid_out(b, mesh, *(() if b.placements == (Replicate(),) else ("dim_0",)))
        assert isinstance(b.grad, DTensor) and b.grad._value().sharding.is_equivalent_to(
            b._value().sharding, b.ndim)
        for v in opt.state[b].values():
            if v.shape == b.shape:
                assert v._value().sharding.is_equivalent_to(b._value().sharding, b.ndim)
        np.testing.assert_allclose(b.grad.full_tensor().numpy(), ref[n][1], rtol=1e-5,
                                   atol=1e-6, err_msg=n)
    opt.zero_grad(set_to_none=False)   # zeros in place keep the gradients' layout
    for b in model.parameters():
        assert b.grad._value().sharding.is_equivalent_to(b._value().sharding, b.ndim)
        assert not b.grad.full_tensor().numpy().any()


def test_mixed_precision_policy_computes_in_param_dtype():
    """param_dtype: the gathered parameters, inputs and so the computation are bfloat16;
    reduce_dtype float32: the gradients reach the float32 shards as the definition's (a
    float32 layer computing with bfloat16 copies of its parameters) do, to bfloat16's
    rounding; output_dtype: the outputs' dtype."""
    mesh = init_device_mesh("cpu", (8,))
    x, _, _, _ = _batch(mesh)
    policy = MixedPrecisionPolicy(param_dtype=tl.bfloat16, reduce_dtype=tl.float32,
                                  output_dtype=tl.float32)
    assert repr(policy) == repr(tfsdp.MixedPrecisionPolicy(
        param_dtype=torch.bfloat16, reduce_dtype=torch.float32, output_dtype=torch.float32))
    tl.manual_seed(0)
    ref = nn.Linear(16, 32)
    model = fully_shard(copy.deepcopy(ref), mesh=mesh, mp_policy=policy)
    out = model(x)
    assert out.dtype == tl.float32 and model.weight.dtype == tl.float32
    (out ** 2).mean().backward()
    (F.linear(x.bfloat16(), ref.weight.bfloat16(), ref.bias.bfloat16()).float() ** 2).mean() \
        .backward()
    for (n, a), b in zip(ref.named_parameters(), model.parameters()):
        assert b.grad.dtype == tl.float32 and _laid_out(b.grad, mesh, "dim_0")
        np.testing.assert_allclose(b.grad.full_tensor().numpy(), a.grad.numpy(), rtol=2e-2,
                                   atol=2e-3, err_msg=n)


def collectives(step, *args, **kwargs):
    """The collectives of the program ``torchlike.compile`` runs for ``step`` (already compiled:
    called twice): a Counter of the HLO op names (all-gather, reduce-scatter, all-reduce, ...)
    in the compiled program's text, and that text.  Runs one more step (the program is lowered
    from that call's own arguments)."""
    (program,) = step._programs.values()
    run, text = program.fn, []

    def lowering(*a):
        text.append(run.lower(*a).compile().as_text())
        return run(*a)
    program.fn = lowering
    try:
        step(*args, **kwargs)
    finally:
        program.fn = run
    ops = re.findall(r"= [^=]*? (all-gather|reduce-scatter|all-reduce|collective-permute|"
                     r"all-to-all)(?:-start)?\(", text[0])
    return collections.Counter(ops), text[0]


def test_compiled_step_gathers_parameters_and_reduces_gradients():
    """One SPMD program: the sharded parameters are all-gathered (each once: XLA keeps the
    gathered values for backward) and their gradients reduced across the mesh (XLA's CPU
    pipeline combines the gradients' reductions into one all-reduce whose result each device
    slices to its shard, where PyTorch reduce-scatters)."""
    if "SGD" not in _COMPILED:   # run alone: train as the test above does
        test_fully_shard_trains_as_one_device("SGD", compiled=True)
    model, step, batch = _COMPILED["SGD"]
    count, text = collectives(step, *batch)
    assert len(step._programs) == 1 and count["all-gather"] >= 4
    sharded = [p for p in model.parameters() if p.placements == (Shard(0),)]
    shapes = {",".join(map(str, p.shape)) for p in sharded}
    gathered = set(re.findall(r"= f32\[([\d,]+)\]\{[\d,]*\} all-gather\(", text))
    assert shapes <= gathered and len(sharded) == 4
    # every sharded gradient leaves a collective that reduces it across the mesh
    reduced = " ".join(re.findall(r"= (.*?) (?:reduce-scatter|all-reduce)(?:-start)?\(", text))
    assert all(f"f32[{s}]" in reduced for s in shapes), reduced


def test_state_dict_round_trips():
    """Full and sharded state dicts load into sharded and unsharded models, and training on
    from a loaded checkpoint equals training on uninterrupted."""
    mesh = init_device_mesh("cpu", (8,))
    x, y, xd, yd = _batch(mesh)
    model = _sharded(mesh)
    opt = tl.optim.Adam(model.parameters(), lr=1e-2)
    _train(model, opt, x, yd, 2, compiled=False)
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    assert all(type(v).__name__ == "Tensor" and v.device == tl.device("cpu")
               for v in full.values())
    sharded = get_model_state_dict(model)
    assert all(isinstance(v, DTensor) for v in sharded.values())
    optim_full = get_optimizer_state_dict(model, opt,
                                          options=StateDictOptions(full_state_dict=True))
    assert set(optim_full["state"]) == set(full)

    copied = copy.deepcopy(model)   # a copy is sharded alike
    for (k, p), q in zip(model.named_parameters(), copied.parameters()):
        assert isinstance(q, DTensor) and q.placements == p.placements and q is not p
        np.testing.assert_array_equal(q.full_tensor().detach().numpy(), full[k].numpy())
    opt.zero_grad(set_to_none=False)   # zeros in place keep the gradients' layout
    assert all(_laid_out(p.grad, mesh, "dim_0") and not p.grad.full_tensor().numpy().any()
               for p in model.parameters() if p.placements == (Shard(0),))

    plain = _mlp()   # a full state dict loads into an unsharded model
    assert plain.load_state_dict(full) is not None
    for k, v in plain.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), full[k].numpy())

    for source in (full, sharded):   # and either form into a freshly sharded one
        again = _sharded(mesh)
        keys = set_model_state_dict(again, source,
                                    options=StateDictOptions(full_state_dict=source is full))
        assert keys.missing_keys == [] and keys.unexpected_keys == []
        for k, p in again.named_parameters():
            assert isinstance(p, DTensor) and len(p._value().sharding.device_set) == 8
            np.testing.assert_array_equal(p.full_tensor().detach().numpy(), full[k].numpy())

    resumed = _sharded(mesh)   # by the full dicts of checkpoint.state_dict
    resumed_opt = tl.optim.Adam(resumed.parameters(), lr=1e-2)
    set_model_state_dict(resumed, full, options=StateDictOptions(full_state_dict=True))
    set_optimizer_state_dict(resumed, resumed_opt, optim_full,
                             options=StateDictOptions(full_state_dict=True))
    again = _sharded(mesh)   # by Module's and Optimizer's own state dicts
    again.load_state_dict(sharded)
    again_opt = tl.optim.Adam(again.parameters(), lr=1e-2)
    again_opt.load_state_dict(opt.state_dict())
    assert all(_laid_out(v, mesh, "dim_0") for p in again.parameters()
               if p.placements == (Shard(0),) for v in again_opt.state[p].values() if v.ndim)
    expect, _ = _train(model, opt, x, yd, 2, compiled=False)
    for m, o in ((resumed, resumed_opt), (again, again_opt)):
        got, _ = _train(m, o, x, yd, 2, compiled=False)
        np.testing.assert_allclose(got, expect, rtol=1e-6)

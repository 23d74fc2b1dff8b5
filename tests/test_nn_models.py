"""Whole models against real PyTorch: PyTorch checkpoints of a small ResNet-style CNN and of a
Transformer encoder load into the same models written against torchlike and give the same
outputs and gradients; Grad-CAM through module hooks gives PyTorch's heatmap.

Each model is written once as a function of the library ``T`` (torch or torchlike).
"""
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import assert_same

RNG = np.random.default_rng(0)


def resnet(T):
    nn, F = T.nn, T.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return F.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self, classes=5):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False),
                                      nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2))
            self.layer1 = Block(4, 4, 1)
            self.layer2 = Block(4, 8, 2)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.dropout = nn.Dropout(0.0)
            self.fc = nn.Linear(8, classes)

        def forward(self, x):
            x = self.layer2(self.layer1(self.stem(x)))
            return self.fc(self.dropout(self.pool(x).flatten(1)))

    return ResNet()


def encoder(T):
    nn = T.nn

    class TextClassifier(nn.Module):
        def __init__(self, vocab=11, d=8, classes=3):
            super().__init__()
            self.embed = nn.Embedding(vocab, d, padding_idx=0)
            self.pos = nn.Parameter(T.zeros(1, 6, d))
            layer = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
            self.head = nn.Linear(d, classes)

        def forward(self, tokens):
            pad = tokens == 0
            h = self.encoder(self.embed(tokens) + self.pos[:, :tokens.shape[1]],
                             src_key_padding_mask=pad)
            return self.head(h.mean(1))

    return TextClassifier()


def _torch_checkpoint(model, inputs, tmp_path):
    """Train ``model`` (torch) for two SGD steps so BatchNorm statistics and weights move, then
    save its state_dict with torch.save and read it back with torchlike.load."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(inputs).square().mean().backward()
        opt.step()
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    return tl.load(path)


@pytest.mark.parametrize("build,make_input", [
    (resnet, lambda T, v: T.tensor(v)),
    (encoder, lambda T, v: T.tensor(v)),
], ids=["resnet", "transformer-encoder"])
def test_torch_checkpoint_loads_and_matches(build, make_input, tmp_path):
    if build is resnet:
        values = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    else:
        values = RNG.integers(1, 11, (2, 6))
        values[1, 4:] = 0   # padding at the end of the second sequence
    torch.manual_seed(0)
    t_model = build(torch)
    state = _torch_checkpoint(t_model, make_input(torch, values), tmp_path)
    l_model = build(tl)
    assert list(state) == list(l_model.state_dict())
    result = l_model.load_state_dict(state)
    assert repr(result) == "<All keys matched successfully>"
    for train in (False, True):
        results = []
        for T, model in ((torch, t_model), (tl, l_model)):
            model.train(train)
            model.zero_grad()
            out = model(make_input(T, values))
            out.square().sum().backward()
            results.append({"out": out,
                            "grads": {n: p.grad for n, p in model.named_parameters()},
                            "buffers": dict(model.named_buffers())})
        # float32 rounding accumulates through every layer of a whole model and its backward
        assert_same(*results, path=f"train={train}", rtol=1e-4, atol=1e-5)


def small_cnn(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4))


@pytest.mark.parametrize("via", ["full_backward_hook", "tensor_hook"])
def test_grad_cam_matches_pytorch(via):
    """Grad-CAM: keep the last conv layer's activations (forward hook) and their gradients
    (full backward hook, or a tensor hook registered in the forward hook); the heatmap is
    relu(sum_c mean_hw(grad) * activation)."""
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)

    def heatmap(T):
        T.manual_seed(0)
        model = small_cnn(T)
        if T is tl:
            model.load_state_dict({k: tl.tensor(v.numpy())
                                   for k, v in small_cnn_state().items()})
        store = {}
        target = model[2]

        def keep_activation(module, args, out):
            store["act"] = out.detach()
            if via == "tensor_hook":
                out.register_hook(lambda g: store.__setitem__("grad", g))

        handles = [target.register_forward_hook(keep_activation)]
        if via == "full_backward_hook":
            handles.append(target.register_full_backward_hook(
                lambda module, gin, gout: store.__setitem__("grad", gout[0])))
        scores = model(T.tensor(x))
        scores[0, scores[0].argmax()].backward()
        for h in handles:
            h.remove()
        weights = store["grad"].mean(dim=(2, 3), keepdim=True)
        cam = T.nn.functional.relu((weights * store["act"]).sum(1))
        return cam / cam.max()

    ref, got = heatmap(torch), heatmap(tl)
    assert_same(ref, got, rtol=1e-4, atol=1e-6)   # float32 through a whole model and back


def small_cnn_state():
    torch.manual_seed(0)
    return small_cnn(torch).state_dict()

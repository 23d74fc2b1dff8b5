"""The projector's files for ``SummaryWriter.add_embedding`` (mirrors
``torch.utils.tensorboard._embedding``): in ``<log_dir>/<step:05d>/<tag>/`` the vectors
(``tensors.tsv``), the labels (``metadata.tsv``) and the thumbnails (``sprite.png``), and in
``<log_dir>/projector_config.pbtxt`` the list of embeddings.  Local directories only."""
import math
import os

import numpy as np

from ._convert_np import make_np
from ._png import encode_png
from ._utils import make_grid


def make_tsv(metadata, save_path, metadata_header=None):
    """``metadata.tsv``: one label a line, or with ``metadata_header`` a header line and one
    tab-separated row of columns per point."""
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf_8"))


def make_sprite(label_img, save_path):
    """``sprite.png``: the (N, C, H, W) thumbnails in [0, 1] on a square grid of
    ceil(sqrt(N)) a side, as torch lays it out."""
    images = make_np(label_img)
    side = math.ceil(images.shape[0] ** 0.5)
    grid = make_grid(images, ncols=side).transpose(1, 2, 0)
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0]] = grid
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(encode_png(np.uint8((square * 255).clip(0, 255))))


def make_mat(mat, save_path):
    """``tensors.tsv``: one point a line, its coordinates tab-separated."""
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(v.item()) for v in row) + "\n").encode("utf_8"))


def get_embedding_info(pb, metadata, label_img, subdir, global_step, tag):
    """The projector config's ``EmbeddingInfo`` of one embedding."""
    info = pb.projector_config_pb2.EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = os.path.join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info

"""Image layout helpers (mirrors ``torch.utils.tensorboard._utils``): any ``dataformats`` to
(H, W, C), a batch to a grid, matplotlib figures to pixels."""
import numpy as np


def figure_to_image(figures, close=True):
    """Mirrors ``torch.utils.tensorboard._utils.figure_to_image``: matplotlib figure(s) rendered
    by the Agg backend as uint8 RGB arrays.

    Args:
        figures: a ``matplotlib.figure.Figure`` or a list of them.
        close: close each figure once drawn.

    Returns:
        numpy.ndarray: (3, H, W) for one figure, (N, 3, H, W) for a list.
    """
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        width, height = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def _prepare_video(video):
    """(B, T, C, H, W) clips as (T, rows*H, cols*W, C) frames: the batch padded with black
    clips to a power of two and laid out on a grid of 2**((log2 B) // 2) rows (as torch)."""
    b, t, c, h, w = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if b & (b - 1):   # not a power of two
        video = np.concatenate([video, np.zeros((2 ** b.bit_length() - b, t, c, h, w))])
    rows = 2 ** ((b.bit_length() - 1) // 2)
    cols = video.shape[0] // rows
    video = video.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(t, rows * h, cols * w, c)


def make_grid(images, ncols=8):
    """(N, C, H, W) with C 1 or 3 as one (3, rows*H, cols*W) grid, ``ncols`` images a row
    (mirrors ``torch.utils.tensorboard._utils.make_grid``; grey images become RGB)."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, ncols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """A numpy image in ``input_format`` (letters N, C, H, W in any order: "NCHW", "HWC",
    "HW", "WH", ...) as (H, W, C): a batch becomes a grid, one channel or none becomes RGB
    (mirrors ``torch.utils.tensorboard._utils.convert_to_HWC``)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError("You can not use the same dimension shorthand twice. "
                             f"input_format: {input_format}")
    if tensor.ndim != len(input_format):
        raise AssertionError("size of input tensor and input format are different. "
                             f"tensor shape: {tensor.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    hw = tensor.transpose([input_format.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)

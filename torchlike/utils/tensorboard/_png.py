"""PNG encoding of 8-bit images for ``add_image`` (NOTE [ PNG without Pillow ]).

NOTE [ PNG without Pillow ]
torch encodes images with Pillow, which torchlike does not depend on (it comes with matplotlib,
an optional extra).  An 8-bit PNG without interlacing is three chunks -- IHDR (size, bit depth,
colour type), IDAT (the zlib-compressed rows, each led by its filter byte) and IEND -- each framed
by its length and a CRC-32, which the standard library's ``zlib`` and ``struct`` write.  So
torchlike always writes its own PNG, whether or not Pillow is installed: one code path, the same
bytes on every machine.  The pixels are the ones Pillow writes (filter 0 on every row; Pillow may
choose other filters, so the files' bytes differ, not their pixels), and the colour types are
those Pillow picks for 1 to 4 channels: grey, grey with alpha, RGB, RGBA.  Pillow is used only
where torch needs it for more than encoding -- drawing ``add_image_with_boxes``' boxes and
labels, and resampling by its ``rescale`` -- and the pixels it returns are encoded here too.
"""
import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}   # channels -> PNG colour type


def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(image):
    """The PNG file of ``image``, a uint8 array of shape (H, W, C) with C in 1..4."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    height, width, channels = image.shape
    if channels not in _COLOUR_TYPE:
        raise TypeError(f"Cannot handle this data type: (1, 1, {channels}), |u1")
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPE[channels], 0, 0, 0)
    rows = np.zeros((height, 1 + width * channels), np.uint8)   # filter byte 0: none
    rows[:, 1:] = image.reshape(height, width * channels)
    return (_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _chunk(b"IEND", b""))

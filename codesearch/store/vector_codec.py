"""How the catalog keeps a vector: int8 components and one float32 scale (388 bytes for 384
dimensions, against 1,536 as float32).

The embedding cache exists so that a vector is never computed twice (a moved chunk, a rebuilt
vector store); a quarter of the size keeps it from being the largest part of the catalog. The
scale is the largest component's magnitude, so each component is off by at most scale/254:
for the unit vectors of a sentence model, a cosine of 0.9999 or better with the original (the
int8 model itself is further from the full-precision one than that).
"""

from __future__ import annotations

import numpy as np

SCALE_BYTES = 4


def pack(vector: np.ndarray) -> bytes:
    """A float vector as its int8 components after a float32 scale."""
    values = np.asarray(vector, dtype=np.float32)
    scale = float(np.abs(values).max()) if values.size else 0.0
    if scale == 0.0:
        return np.float32(0.0).tobytes() + np.zeros(values.size, dtype=np.int8).tobytes()
    steps = np.clip(np.rint(values / scale * 127.0), -127, 127).astype(np.int8)
    return np.float32(scale).tobytes() + steps.tobytes()


def unpack(data: bytes) -> np.ndarray:
    """The float32 vector `pack` stored (within scale/254 per component)."""
    scale = np.frombuffer(data[:SCALE_BYTES], dtype=np.float32)[0]
    return np.frombuffer(data[SCALE_BYTES:], dtype=np.int8).astype(np.float32) * (scale / 127.0)


def from_float32(data: bytes) -> bytes:
    """A vector stored as raw float32 bytes (catalogs of format 1) in this form."""
    return pack(np.frombuffer(data, dtype=np.float32))

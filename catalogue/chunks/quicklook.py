"""Drawing a quicklook as PNG with Pillow: a plane on a colour map with its colour bar,
a line for a 1-D array, or a placeholder that says why there is no picture.

Values are mapped between their 2nd and 98th percentiles (one outlier does not wash the
picture out) on viridis (perceptually uniform, readable in grey and by most colour-blind
readers); fill values and NaN are transparent. The picture is enlarged by whole pixels
(nearest neighbour) to at least :data:`MIN_SIDE`, so small arrays are not stamps.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

__all__ = ["line_png", "placeholder_png", "plane_png"]

#: viridis at 0, 1/8, ..., 1 (matplotlib's table, sampled); interpolated to 256 entries.
_VIRIDIS = np.array([
    (68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
    (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)], dtype=float)
LUT = np.stack([np.interp(np.linspace(0, 1, 256), np.linspace(0, 1, len(_VIRIDIS)), _VIRIDIS[:, c])
                for c in range(3)], axis=1).astype(np.uint8)
MIN_SIDE = 256
BACKGROUND = (255, 255, 255, 255)
INK = (33, 37, 41, 255)


def _valid(values: np.ndarray, fill: Any) -> np.ndarray:
    data = values.astype(float, copy=False)
    mask = np.isfinite(data)
    if fill is not None:
        try:
            fill_value = float(fill)
        except (TypeError, ValueError):
            fill_value = math.nan
        if math.isfinite(fill_value):
            mask &= data != fill_value
    return mask


def _number(value: float) -> str:
    return f"{value:.4g}"


def _png(image: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def plane_png(values: np.ndarray, *, fill: Any, title: str, units: str | None) -> bytes:
    """A 2-D array on viridis with a colour bar; a placeholder when no value is valid."""
    from PIL import Image, ImageDraw

    if values.dtype.kind not in "biuf":
        return placeholder_png(f"{title}: {values.dtype} values have no colour scale")
    mask = _valid(values, fill)
    if not mask.any():
        return placeholder_png(f"{title}: every value read is the fill value or NaN")
    data = values.astype(float)
    low, high = np.percentile(data[mask], [2, 98])
    if not high > low:
        low, high = float(data[mask].min()), float(data[mask].max())
    span = (high - low) or 1.0
    scaled = np.where(mask, (data - low) / span * 255, 0.0)
    index = np.clip(scaled.round(), 0, 255).astype(np.uint8)
    rgba = np.zeros((*data.shape, 4), dtype=np.uint8)
    rgba[..., :3] = LUT[index]
    rgba[..., 3] = np.where(mask, 255, 0)
    picture = Image.fromarray(rgba, "RGBA")
    factor = max(1, math.ceil(MIN_SIDE / max(data.shape)))
    if factor > 1:
        picture = picture.resize((data.shape[1] * factor, data.shape[0] * factor), Image.Resampling.NEAREST)
    width = max(picture.width, MIN_SIDE)
    canvas = Image.new("RGBA", (width + 16, picture.height + 70), BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    draw.text((8, 4), title, fill=INK)
    canvas.paste(picture, (8, 20))  # alpha and all: fill values stay transparent
    bar_top = 20 + picture.height + 10
    gradient = Image.fromarray(np.repeat(LUT[np.newaxis, :, :], 12, axis=0), "RGB").resize((width, 12))
    canvas.paste(gradient, (8, bar_top))
    draw.text((8, bar_top + 16), _number(low), fill=INK)
    right = f"{_number(high)}{' ' + units if units else ''}"
    draw.text((8 + width - draw.textlength(right), bar_top + 16), right, fill=INK)
    return _png(canvas)


def line_png(values: np.ndarray, *, fill: Any, title: str, units: str | None) -> bytes:
    """A 1-D array as a line (gaps where values are fill or NaN), with its range."""
    from PIL import Image, ImageDraw

    if values.dtype.kind not in "biufM":
        return placeholder_png(f"{title}: {values.dtype} values cannot be plotted")
    data = values.astype("datetime64[s]").astype(float) if values.dtype.kind == "M" else values.astype(float)
    mask = _valid(data, fill)
    if not mask.any():
        return placeholder_png(f"{title}: every value read is the fill value or NaN")
    width, height, top = 480, 120, 20
    low, high = float(data[mask].min()), float(data[mask].max())
    span = (high - low) or 1.0
    canvas = Image.new("RGBA", (width + 16, height + top + 24), BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    draw.text((8, 4), title, fill=INK)
    draw.rectangle((8, top, 8 + width, top + height), outline=(206, 212, 218, 255))
    xs = np.linspace(8, 8 + width, len(data)) if len(data) > 1 else np.array([8 + width / 2])
    ys = top + height - (data - low) / span * height
    run: list[tuple[float, float]] = []
    colour = (*(int(c) for c in LUT[64]), 255)
    for x, y, ok in zip(xs, ys, mask, strict=True):
        if ok:
            run.append((float(x), float(y)))
        if (not ok or x == xs[-1]) and run:
            if len(run) > 1:
                draw.line(run, fill=colour, width=2)
            else:
                draw.ellipse((run[0][0] - 1, run[0][1] - 1, run[0][0] + 1, run[0][1] + 1), fill=colour)
            run = []
    label = f"{_number(low)} .. {_number(high)}{' ' + units if units else ''}"
    draw.text((8, top + height + 6), label, fill=INK)
    return _png(canvas)


def placeholder_png(reason: str) -> bytes:
    """A grey card saying why there is no picture (never an error page)."""
    from PIL import Image, ImageDraw

    text = reason if len(reason) <= 90 else reason[:87] + "..."
    canvas = Image.new("RGBA", (max(320, 7 * len(text) + 24), 60), (241, 243, 245, 255))
    draw = ImageDraw.Draw(canvas)
    draw.text((12, 12), "No preview", fill=INK)
    draw.text((12, 32), text, fill=(73, 80, 87, 255))
    return _png(canvas)

"""Image validation: what an image really is, read from its bytes with Pillow (spec §9.5).

Only still PNG, JPEG and WebP images are accepted; a declared type must match the bytes; the
configured size limits hold. Everything is checked before anything is stored.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Any

from PIL import Image, UnidentifiedImageError

from .types import NOT_SET, ImageInputLimitConfig, ImageMimeType, coerce_enum

_FORMATS = {"PNG": ImageMimeType.PNG, "JPEG": ImageMimeType.JPEG, "WEBP": ImageMimeType.WEBP}


@dataclass(frozen=True)
class CheckedImage:
    data: bytes
    mime_type: ImageMimeType
    width: int
    height: int


def check_image(data: Any, mime_type: Any = NOT_SET, limits: ImageInputLimitConfig | None = None) -> CheckedImage:
    """Validate raw image bytes; ValueError says what is wrong. `mime_type` omitted: detected."""
    limits = limits or ImageInputLimitConfig()
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise ValueError(f"image must be bytes, not {type(data).__name__}")
    if not data:
        raise ValueError("image is empty")
    if len(data) > limits.max_raw_image_bytes:
        raise ValueError(f"image is {len(data)} bytes; the limit is {limits.max_raw_image_bytes}")
    declared = None if mime_type is NOT_SET or mime_type is None else coerce_enum(ImageMimeType, mime_type, "mime_type")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                detected = _FORMATS.get(image.format)
                if detected is None:
                    raise ValueError(f"unsupported image format {image.format}; use PNG, JPEG or WebP")
                width, height = image.size
                if width * height > limits.max_image_pixels:
                    raise ValueError(f"image is {width}x{height} pixels; the limit is {limits.max_image_pixels} pixels")
                if getattr(image, "is_animated", False) and getattr(image, "n_frames", 1) > 1:
                    raise ValueError(f"animated {image.format} images are not supported")
            with Image.open(io.BytesIO(data)) as image:
                image.load()  # decoding is what finds a truncated or damaged image
    except UnidentifiedImageError:
        raise ValueError("image is not a readable image (PNG, JPEG or WebP)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise ValueError(f"image is not a readable image: {error}") from None
    except (OSError, SyntaxError) as error:
        raise ValueError(f"damaged image: {error}") from None
    if declared is not None and declared is not detected:
        raise ValueError(f"mime_type says {declared.value} but the bytes are {detected.value}")
    return CheckedImage(data, detected, width, height)


def stored_image_size(data: bytes) -> tuple[int, int] | None:
    """A stored image's width and height, read from its header (nothing is decoded), or None when
    its bytes are not an image Pillow can read. What is added is checked (check_image), but a store
    may hold bytes that were not: written below the engine's checks, or imported before an import
    checked images. Pages show such an image as one that cannot be shown instead of failing."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        return None

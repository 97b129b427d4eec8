"""The demo world's images, drawn with Pillow so that no binary file is committed and the same
seed always writes the same bytes: a photo a user sends in a message, and a map kept as an image
record of a thread."""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageDraw


@dataclass(frozen=True)
class DemoImage:
    thread_slug: str
    description: str
    in_message: str | None  # the text of the user message that carries it; None: a standalone image

    def png(self) -> bytes:
        image = DRAWINGS[self.thread_slug]()
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
        return buffer.getvalue()


def tomato_leaves() -> Image.Image:
    """Green leaves with yellow spots on a terracotta background."""
    image = Image.new("RGB", (480, 320), (196, 112, 74))
    draw = ImageDraw.Draw(image)
    for x, y, w, h in ((60, 40, 200, 120), (220, 120, 220, 130), (80, 170, 180, 110)):
        draw.ellipse((x, y, x + w, y + h), fill=(58, 128, 52), outline=(30, 80, 28), width=3)
        draw.line((x + 10, y + h // 2, x + w - 10, y + h // 2), fill=(30, 80, 28), width=2)
        for i in range(5):
            cx, cy = x + 30 + i * (w - 60) // 4, y + h // 2 + (-1) ** i * h // 5
            draw.ellipse((cx - 7, cy - 7, cx + 7, cy + 7), fill=(222, 196, 60))
    return image


def alfama_map() -> Image.Image:
    """A sketch of a walk through Alfama: streets, the river, three stops."""
    image = Image.new("RGB", (480, 320), (246, 241, 226))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 250, 480, 320), fill=(120, 170, 210))
    for street in (((20, 60), (200, 90), (300, 40), (460, 70)), ((40, 200), (180, 150), (320, 190), (450, 160))):
        draw.line(street, fill=(150, 140, 120), width=6, joint="curve")
    route = ((60, 190), (150, 120), (260, 80), (380, 130))
    draw.line(route, fill=(200, 60, 50), width=4)
    for x, y in route[1:]:
        draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=(200, 60, 50), outline=(255, 255, 255), width=2)
    draw.text((20, 270), "Alfama walk: Se - Miradouro - Castelo", fill=(255, 255, 255))
    return image


DRAWINGS = {"balcony-vegetable-garden": tomato_leaves, "lisbon-long-weekend": alfama_map}

DEMO_IMAGES = (
    DemoImage(
        "balcony-vegetable-garden",
        "Tomato leaves with small yellow spots, photographed on the balcony",
        in_message="Here's a photo of the tomato leaves: some have small yellow spots. Should I worry?",
    ),
    DemoImage("lisbon-long-weekend", "Hand-drawn map of the Alfama walk: Sé, the miradouro, the castle", None),
)

"""A figure leaving the process: saved as PNG and SVG files, or shown on the report's page as
a PNG with its alt text and caption (figure_words.py says them; figures.py draws the figure).
"""

import base64
import io
from pathlib import Path

import matplotlib as mpl
from matplotlib.figure import Figure

from .figure_words import alt_text, caption_text


class FigureImage:
    """A figure as the page shows it: a PNG with its alt text and its caption (the output's
    metadata, which the report template writes into the img tag and a <figcaption> under it);
    plain text: the alt text. caption: what the figure shows, its first sentence computed from
    the data by the study; by default the figure's title and note (caption_text)."""

    def __init__(self, fig: Figure, alt: str | None = None, caption: str | None = None):
        self.fig, self.alt = fig, alt or alt_text(fig)
        self.caption = caption or caption_text(fig)

    def _repr_mimebundle_(self, include=None, exclude=None):
        buffer = io.BytesIO()
        # As the inline backend draws it: the figure's own dpi, cropped to what is drawn.
        self.fig.savefig(buffer, format="png", bbox_inches="tight")
        png = base64.b64encode(buffer.getvalue()).decode("ascii")
        metadata = {"alt": self.alt, "caption": self.caption}
        return {"image/png": png, "text/plain": self.alt}, {"image/png": metadata}


def save_figure(fig: Figure, out_dir: str | Path, name: str) -> list[Path]:
    """Write fig as out_dir/name.png (150 dpi) and .svg; return both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.svg"]
    fig.savefig(paths[0], dpi=150)
    # No date and no random ids in the SVG: an unchanged figure is an unchanged file.
    with mpl.rc_context({"svg.hashsalt": name}):
        fig.savefig(paths[1], metadata={"Date": None})
    return paths

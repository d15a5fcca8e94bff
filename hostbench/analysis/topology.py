"""Pictures of each hosting mode's topology: which processes a request passes through.

Drawn by code (matplotlib only), top to bottom: the client, then each process
as a box, hops as labelled arrows. Windows modes show the kernel-mode http.sys
in a shaded band. Used by the notebooks beside the results, not by the harness.
"""

import textwrap

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..catalog import MODES, Mode, Node, mode_label
from ..errors import BadInput
from .figure_words import set_finding

FILL = {"client": "#eeeeee", "process": "#cfe2f3", "kernel": "#f9cb9c", "external": "#d9ead3"}
FONT_PT = 10  # box titles; details and hop labels are one point smaller

# Geometry in inches (the Axes are drawn 1:1), so text and boxes keep their
# proportions whatever the number of panels.
WIDTH = 2.6  # one panel
BOX_WIDTH = 2.1
BOX_X = 1.4  # box centre; the left margin holds the kernel/user mode labels
LINE = 0.19
PAD = 0.09
STEP = 1.2  # between node centres
MARGIN = 0.45  # from the panel's top edge to the first node centre
TITLE = 0.4  # above each panel, for the mode name on one line
TITLE_LINE = 0.17  # each more line of a long mode name
TITLE_CHARS = 26  # a line of a panel's title, bold at FONT_PT, within its WIDTH


def _topology(mode: str) -> Mode:
    try:
        return MODES[mode]
    except KeyError:
        raise BadInput(f"unknown hosting mode {mode!r}; allowed: {', '.join(MODES)}") from None


def panel_title(mode: str) -> str:
    """The mode's name as its panel's title, wrapped to the panel's width (a TLS mode's name,
    "Kestrel + nginx (TLS at nginx, keep-alive)", is wider than one panel)."""
    return textwrap.fill(mode_label(mode), TITLE_CHARS, break_on_hyphens=False)


def _title_height(modes: list[str]) -> float:
    lines = max(panel_title(m).count("\n") for m in modes)
    return TITLE + lines * TITLE_LINE


def _panel_height(levels: int) -> float:
    return 2 * MARGIN + (levels - 1) * STEP


def _box_height(node: Node) -> float:
    lines = 1 + node.detail.count("\n") + 1
    return lines * LINE + 2 * PAD


def draw_topology(mode: str, ax: Axes | None = None) -> Axes:
    """Draw `mode`'s topology into `ax` (a new figure when None) and return the Axes."""
    topology = _topology(mode)
    levels = len(topology.nodes)
    if ax is None:
        title = _title_height([mode])
        fig = Figure(figsize=(WIDTH, _panel_height(levels) + title))
        ax = fig.subplots()
        fig.subplots_adjust(left=0, right=1, bottom=0, top=1 - title / fig.get_figheight())
    _draw(topology, mode, ax, levels)
    return ax


def _draw(topology: Mode, mode: str, ax: Axes, levels: int):
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(-_panel_height(levels), 0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(panel_title(mode), fontsize=FONT_PT, fontweight="bold")

    centres = [-(MARGIN + i * STEP) for i in range(len(topology.nodes))]
    for i, (node, y) in enumerate(zip(topology.nodes, centres, strict=True)):
        if node.kind == "kernel":
            _kernel_band(ax, y)
            if i + 1 < len(centres):
                _side_label(ax, centres[i + 1], "user mode", "#555555")
        _box(ax, node, y)

    for i, label in enumerate(topology.hops):
        start = centres[i] - _box_height(topology.nodes[i]) / 2
        end = centres[i + 1] + _box_height(topology.nodes[i + 1]) / 2
        ax.annotate(
            "",
            xy=(BOX_X, end),
            xytext=(BOX_X, start),
            arrowprops=dict(arrowstyle="-|>", color="#333333", lw=1.3, shrinkA=0, shrinkB=0),
        )
        ax.text(
            BOX_X,
            (start + end) / 2,
            label,
            ha="center",
            va="center",
            fontsize=FONT_PT - 1,
            style="italic",
            linespacing=1.1,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"),
        )


def _box(ax: Axes, node: Node, y: float):
    height = _box_height(node)
    ax.add_patch(
        FancyBboxPatch(
            (BOX_X - BOX_WIDTH / 2, y - height / 2),
            BOX_WIDTH,
            height,
            boxstyle="round,pad=0,rounding_size=0.08",
            fc=FILL[node.kind],
            ec="#333333",
            lw=1.2,
            # The client is the load tool, not part of the system under test.
            ls="--" if node.kind == "client" else "-",
        )
    )
    top = y + height / 2 - PAD
    ax.text(BOX_X, top, node.title, ha="center", va="top", fontsize=FONT_PT, fontweight="bold")
    ax.text(
        BOX_X,
        top - LINE,
        node.detail,
        ha="center",
        va="top",
        fontsize=FONT_PT - 1,
        linespacing=1.15,
    )


def _kernel_band(ax: Axes, y: float):
    """Shade the kernel-mode strip around a node (hops into and out of it cross its edges)."""
    half = STEP / 2
    ax.axhspan(y - half, y + half, color="#fff2cc", zorder=0)
    for edge in (y - half, y + half):
        ax.axhline(edge, color="#999999", lw=0.8, ls=":", zorder=0)
    _side_label(ax, y, "kernel mode", "#7f6000")


def _side_label(ax: Axes, y: float, text: str, color: str):
    ax.text(0.12, y, text, rotation=90, ha="center", va="center", fontsize=FONT_PT - 1, color=color)


def topology_figure(modes: list[str]) -> Figure:
    """One small panel per mode, side by side (wrapped after five panels), same scale."""
    if not modes:
        raise BadInput(f"no hosting modes given; allowed: {', '.join(MODES)}")
    topologies = [_topology(mode) for mode in modes]
    levels = max(len(t.nodes) for t in topologies)
    cols = min(len(modes), 5)
    rows = -(-len(modes) // cols)
    panel, title = _panel_height(levels), _title_height(modes)
    height = (panel + title) * rows
    fig = Figure(figsize=(WIDTH * cols, height))
    axes = fig.subplots(rows, cols, squeeze=False)
    # Panels exactly WIDTH x panel inches, so the drawing is 1:1 (tight_layout would shrink it).
    fig.subplots_adjust(
        left=0, right=1, bottom=0, top=1 - title / height, wspace=0, hspace=title / panel
    )
    for ax, mode, topology in zip(axes.flat, modes, topologies, strict=False):
        _draw(topology, mode, ax, levels)
    for ax in axes.flat[len(modes) :]:
        ax.set_axis_off()
    return set_finding(fig, _finding(modes, topologies))


def _finding(modes: list[str], topologies: list[Mode]) -> str:
    """How many processes each drawn mode puts a request through, after the client."""
    counts = [
        f"{mode_label(mode)} {sum(n.kind == 'process' for n in t.nodes)}"
        for mode, t in zip(modes, topologies, strict=True)
    ]
    return "Processes a request passes through after the client: " + ", ".join(counts)


NOTE_WIDTH = 1.9  # inches right of a panel for the notes beside its boxes


def path_figure(mode: str, notes: list[str] | None = None, title: str = "") -> Figure:
    """One mode's path, with a note beside each box (e.g. the CPU it spends per request):
    notes[i] belongs to the mode's nodes[i]; "" or a missing note leaves a box bare."""
    topology = _topology(mode)
    notes = list(notes or [])
    if len(notes) > len(topology.nodes):
        raise BadInput(f"{len(notes)} notes for the {len(topology.nodes)} boxes of {mode!r}")
    levels = len(topology.nodes)
    width = WIDTH + (NOTE_WIDTH if any(notes) else 0.0)
    height = _panel_height(levels) + TITLE
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, WIDTH / width, 1 - TITLE / height))
    _draw(topology, mode, ax, levels)
    if title:
        ax.set_title(title, fontsize=FONT_PT, fontweight="bold")
    for i, note in enumerate(notes):
        if note:
            ax.annotate(note, (BOX_X + BOX_WIDTH / 2, -(MARGIN + i * STEP)), xytext=(6, 0),
                        textcoords="offset points", va="center", ha="left", fontsize=FONT_PT - 1,
                        annotation_clip=False)  # fmt: skip
    return fig

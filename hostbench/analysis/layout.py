"""Where a figure's words land: a legend below the figure in as many columns as fit its width,
and which words a figure draws outside its canvas (the saved PNG cuts them off).

A saved figure is its canvas (figure_output.save_figure writes it at its size): a legend of three
long columns wider than the figure loses its first and last words at both sides, as
jcsi2018's relative chart did. Every study's legend below a figure goes through legend_below;
the tests check every figure's words with outside_canvas.
"""

import textwrap
import weakref

from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text

# A legend this much narrower than the figure at least: room for the canvas' own margin.
_MARGIN = 0.98
# The legends legend_below drew: a figure's note goes over its legend, not under it.
_BELOW: "weakref.WeakSet[Legend]" = weakref.WeakSet()
_NOTE_STYLE = {"fontsize": 9, "color": "0.3"}


def footnote(fig: Figure, text: str) -> None:
    """A note under the figure, at the right (the figure's supxlabel: captions read it), or,
    where a legend lies below the figure, as that legend's heading: constrained layout
    puts the two in the same bottom margin, where they overlap."""
    if text:
        fig.supxlabel(text, x=0.99, ha="right", **_NOTE_STYLE)
        _note_over_legend(fig)


def _note_over_legend(fig: Figure) -> None:
    below = [legend for legend in fig.legends if legend in _BELOW]
    note = fig.get_supxlabel()
    if not below or not note:
        return
    for text in fig.texts:  # the supxlabel stays for the caption, neither shown nor laid out
        if text.get_text() == note:
            text.set_visible(False)
            text.set_in_layout(False)
    legend = below[0]
    legend.set_title(note, prop={"size": _NOTE_STYLE["fontsize"]})
    legend.get_title().set_color(_NOTE_STYLE["color"])
    chars = max(len(line) for line in note.splitlines())
    while not _fits(fig, legend) and chars > _SHORTEST:  # a note wider than the figure wraps
        chars -= 4
        lines = [textwrap.fill(line, chars) for line in note.splitlines()]
        legend.set_title("\n".join(lines), prop={"size": _NOTE_STYLE["fontsize"]})
        legend.get_title().set_color(_NOTE_STYLE["color"])


def legend_below(fig: Figure, handles, labels=None, *, ncols: int, **kwargs) -> Legend:
    """fig.legend below the axes (constrained layout makes room for it), in at most `ncols`
    columns: the most that fit the figure's width, their labels as they are or else wrapped
    onto two or more lines (down to _SHORTEST characters a line), before fewer columns are
    tried. kwargs go to fig.legend."""
    handles = list(handles)
    labels = [h.get_label() for h in handles] if labels is None else [str(t) for t in labels]
    widest = max((len(label) for label in labels), default=0)
    for columns in range(max(1, min(ncols, len(handles))), 0, -1):
        for chars in [widest, *range(min(widest - 1, 60), _SHORTEST - 1, -2)]:
            shown = [textwrap.fill(label, chars) for label in labels] if chars < widest else labels
            legend = fig.legend(handles, shown, loc="outside lower center", ncols=columns, **kwargs)
            if _fits(fig, legend) or (columns == 1 and chars <= _SHORTEST):
                _BELOW.add(legend)
                _note_over_legend(fig)
                return legend
            legend.remove()
    legend = fig.legend(handles, labels, loc="outside lower center", ncols=1, **kwargs)
    _BELOW.add(legend)
    _note_over_legend(fig)
    return legend


# A legend's label is wrapped to no fewer characters a line than this: narrower reads badly.
_SHORTEST = 24


def _fits(fig: Figure, legend: Legend) -> bool:
    return legend.get_window_extent().width <= _MARGIN * fig.bbox.width


def outside_canvas(fig: Figure) -> list[str]:
    """The words a figure draws beyond its canvas, as laid out when saved: each visible text
    and each legend whose extent crosses an edge, by its text ("legend: ..." for a legend)."""
    fig.draw_without_rendering()  # lays out constrained figures as a save does
    canvas = fig.bbox
    legends = fig.findobj(Legend)
    # A legend's own texts are checked as a whole, by its extent; a tick's label only where
    # the tick is drawn (inside its axis' view: matplotlib keeps the others, undrawn).
    skip = {id(t) for legend in legends for t in legend.findobj(Text)}
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low <= tick.get_loc() <= high or not ax.get_visible():
                    skip |= {id(tick.label1), id(tick.label2)}
    out = []
    for artist in [*legends, *fig.findobj(Text)]:
        if id(artist) in skip or not artist.get_visible():
            continue
        if isinstance(artist, Text) and not artist.get_text().strip():
            continue
        box = artist.get_window_extent()
        if (box.x0 < canvas.x0 - 0.5 or box.x1 > canvas.x1 + 0.5
                or box.y0 < canvas.y0 - 0.5 or box.y1 > canvas.y1 + 0.5):  # fmt: skip
            if isinstance(artist, Legend):
                words = " | ".join(t.get_text() for t in artist.get_texts())
                out.append(f"legend: {words}")
            else:
                out.append(artist.get_text())
    return out

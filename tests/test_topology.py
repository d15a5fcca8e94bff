"""Topology pictures: every mode draws, names its processes, and its text is readable."""

import itertools

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import FancyBboxPatch

from hostbench.analysis.figure_words import caption_text
from hostbench.analysis.topology import draw_topology, topology_figure
from hostbench.catalog import MODES as TOPOLOGIES
from hostbench.catalog import mode_label
from hostbench.errors import BadInput
from hostbench.programs import programs_of

# No display needed; switching is allowed while no figure is open.
matplotlib.use("Agg")

ALL_MODES = list(TOPOLOGIES)

# What a picture names beyond its programs: the server inside the app, the kernel's driver,
# IIS's processes, the user's own server. Any other mode (a proxy in front of the app, as a
# new proxy's mode is) names the client and what it launches (expected).
NAMED = {
    "kestrel": ["client", "TestApp", "Kestrel"],
    "kestrel-twin": ["client", "TestApp", "Kestrel"],
    "httpsys": ["client", "http.sys", "TestApp"],
    "iis-inprocess": ["client", "http.sys", "w3wp.exe"],
    "iis-outofprocess": ["client", "http.sys", "w3wp.exe", "dotnet"],
    "external": ["client", "your server"],
    "kestrel-mvccore": ["client", "TestApp", "AddMvcCore"],
    "kestrel-minimal": ["client", "TestApp", "minimal API"],
    "iris-mvc": ["client", "goserver", "Iris"],
    "iris": ["client", "goserver", "Iris"],
    "go-nethttp": ["client", "goserver", "net/http"],
}


def expected(mode: str) -> list[str]:
    """The processes (or driver) the mode's picture must name."""
    if mode in NAMED:
        return NAMED[mode]
    return ["client", *(p.tool for p in reversed(programs_of(TOPOLOGIES[mode])))]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_text()]


def test_every_declared_mode_has_expectations():
    assert set(NAMED) <= set(ALL_MODES)
    assert expected("nginx") == ["client", "nginx", "TestApp"]
    assert expected("yarp") == ["client", "YarpProxy", "TestApp"]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_mode_draws_labelled_boxes(mode):
    ax = draw_topology(mode)
    texts = _texts(ax)
    for name in expected(mode):
        assert any(name in t for t in texts), f"{name} missing from {texts}"
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    assert len(boxes) == len(TOPOLOGIES[mode].nodes)
    # The names used on every other figure, wrapped to the panel's width.
    assert " ".join(ax.get_title().split()) == mode_label(mode)


def test_each_panels_title_stays_within_its_panel():
    fig = topology_figure(ALL_MODES[:5] + ["nginx-keepalive-tls", "caddy-tls", "nginx-tls"])
    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:
        if ax.get_title():
            title, panel = ax.title.get_window_extent(renderer), ax.get_window_extent(renderer)
            assert panel.x0 <= title.x0 and title.x1 <= panel.x1, ax.get_title()
            assert title.y0 >= panel.y1 - 1  # above its drawing, not over it


@pytest.mark.parametrize("mode", ["nginx", "nginx-keepalive", "nginx-uds", "caddy", "yarp"])
def test_proxy_hop_says_how_it_connects(mode):
    hop = " ".join(_texts(draw_topology(mode))).replace("\n", " ")
    expected = {
        "nginx": "new connection per request",
        "nginx-keepalive": "pooled keep-alive",
        "nginx-uds": "Unix domain socket, new connection per request",
        "caddy": "keep-alive",
        "yarp": "keep-alive",
    }[mode]
    assert expected in hop


def test_kernel_mode_shown_only_for_http_sys():
    for mode in ALL_MODES:
        has_kernel = "kernel mode" in _texts(draw_topology(mode))
        assert has_kernel == (mode in ("httpsys", "iis-inprocess", "iis-outofprocess"))


def test_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    assert draw_topology("nginx", ax) is ax
    assert fig.axes == [ax]


def test_unknown_mode_is_one_line_listing_allowed():
    with pytest.raises(BadInput) as err:
        draw_topology("apache")
    message = str(err.value)
    assert "\n" not in message
    assert "apache" in message
    assert all(mode in message for mode in ALL_MODES)


def test_figure_has_a_panel_per_mode():
    fig = topology_figure(["kestrel", "nginx", "caddy"])
    drawn = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in drawn] == [
        "Kestrel",
        "Kestrel + nginx (TCP)",
        "Kestrel + Caddy (TCP)",
    ]
    # The caption counts the processes each panel draws after the client.
    assert caption_text(fig).startswith(
        "Processes a request passes through after the client: Kestrel 1, "
        "Kestrel + nginx (TCP) 2, Kestrel + Caddy (TCP) 2. "
    )


def test_figure_refuses_unknown_or_no_modes():
    with pytest.raises(BadInput):
        topology_figure(["kestrel", "nope"])
    with pytest.raises(BadInput):
        topology_figure([])


def test_text_is_readable_and_never_overlaps():
    fig = topology_figure(ALL_MODES)
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_text()] + [ax.title]
        boxes = [t.get_window_extent(renderer) for t in texts]
        for text, box in zip(texts, boxes, strict=True):
            assert text.get_fontsize() >= 9, text.get_text()
            assert figure_box.x0 <= box.x0 and box.x1 <= figure_box.x1, text.get_text()
            assert figure_box.y0 <= box.y0 and box.y1 <= figure_box.y1, text.get_text()
        for (a, box_a), (b, box_b) in itertools.combinations(zip(texts, boxes, strict=True), 2):
            assert not box_a.overlaps(box_b), f"{a.get_text()!r} overlaps {b.get_text()!r}"
        # Box titles and details stay inside their boxes.
        for patch in ax.patches:
            if isinstance(patch, FancyBboxPatch):
                outline = patch.get_window_extent(renderer)
                inside = [b for b in boxes if outline.contains(*b.get_points().mean(axis=0))]
                assert inside, "a box without text"
                for box in inside:
                    assert outline.x0 <= box.x0 and box.x1 <= outline.x1
                    assert outline.y0 <= box.y0 and box.y1 <= outline.y1


def test_a_path_with_a_note_beside_each_box():
    from hostbench.analysis.topology import path_figure

    fig = path_figure("nginx", ["load tool 20 µs", "", "app 90 µs"], title="one request")
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    texts = _texts(ax)
    assert "load tool 20 µs" in texts and "app 90 µs" in texts and "one request" == ax.get_title()
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    for text in ax.texts:  # every note lies inside the figure, right of the boxes
        extent = text.get_window_extent(renderer)
        assert figure_box.x0 <= extent.x0 and extent.x1 <= figure_box.x1 + 1, text.get_text()
    assert fig.get_figwidth() > path_figure("nginx").get_figwidth()  # room for the notes
    with pytest.raises(BadInput, match="4 notes for the 3 boxes of 'nginx'"):
        path_figure("nginx", ["a", "b", "c", "d"])

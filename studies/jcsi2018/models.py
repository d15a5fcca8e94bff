"""The JCSI 2018 paper's four hosting models, and which of our modes stands for each.

The models themselves are hosting modes of the catalog (same ids, labels, colours);
what is the paper's alone lives here: its order, its figure of each, its baseline,
what stands in for a Windows-only model on Linux, and how each of our modes relates
to the paper's ("same", "analog", "cheaper-hop analog").
"""

from dataclasses import dataclass

from hostbench.catalog import MODES


@dataclass(frozen=True)
class PaperModel:
    id: str  # a catalog mode id
    figure: str  # the paper's chart of it
    linux_analog: str  # what stands in for it on Linux


# In the paper's own order (section 3).
PAPER_MODELS: dict[str, PaperModel] = {
    m.id: m
    for m in (
        PaperModel("iis-outofprocess", "Fig. 4",
                   "nginx with an upstream keep-alive pool, forwarding as ANCM does "
                   "(docs/hosting-modes.md); nginx without one, caddy and yarp as "
                   "sensitivity rows"),
        PaperModel("iis-inprocess", "Fig. 7",
                   "none; nginx over a Unix socket is the cheaper-hop analog "
                   "(still two processes)"),
        PaperModel("kestrel", "Fig. 5", "the same"),
        PaperModel("httpsys", "Fig. 6", "none: Windows only"),
    )
}  # fmt: skip
# The paper's baseline: 100% on its Fig. 9.
PAPER_BASELINE = "iis-outofprocess"
# The paper's four scenarios (its section 2.2), in its order.
PAPER_SCENARIOS = ("html", "text", "json", "xml")

# Our mode -> (the paper's model it is, stands for, or resembles; how).
STANDS_FOR: dict[str, tuple[str, str]] = {
    "kestrel": ("kestrel", "same"),
    "httpsys": ("httpsys", "same"),
    "iis-inprocess": ("iis-inprocess", "same"),
    "iis-outofprocess": ("iis-outofprocess", "same"),
    "nginx-keepalive": ("iis-outofprocess", "analog by mechanism"),
    "nginx": ("iis-outofprocess", "analog"),
    "caddy": ("iis-outofprocess", "analog"),
    "nginx-uds": ("iis-inprocess", "cheaper-hop analog"),
}


def paper_model(mode: str) -> str | None:
    """The paper's model `mode` is or stands for; None: not one of the paper's."""
    return STANDS_FOR.get(mode, (None, ""))[0]


def role(mode: str) -> str:
    return STANDS_FOR.get(mode, (None, ""))[1]


def is_analog(mode: str) -> bool:
    """Whether a mode stands for the paper's baseline, Kestrel behind IIS out-of-process: the
    catalog says so, or it is a reverse proxy in front of Kestrel over a TCP hop (our
    nginx-keepalive addition too; not nginx over a Unix socket, the cheaper-hop analog)."""
    m = MODES[mode]
    return paper_model(mode) == PAPER_BASELINE or (m.launch == "proxy" and not m.unix_socket)

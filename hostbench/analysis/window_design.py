"""How a run's compared modes shared the machine's time, in words read from its params: back
to back (each mode's windows in turn, seconds apart, as the articles ran them) or interleaved
(the compared modes share each window in slices of `interleave_slice_s`; docs/method.md,
"Interleaved windows").

The differences table, a study's method, the sub-studies' comparisons and the generated pages
all say it through here, and ask it here (interleaved, slice_s, alike) rather than reading a
params key, so what a page says of a run's design follows its params.json.
"""

from collections.abc import Mapping

from ..params import StudyParams

BACK_TO_BACK = "back to back"
INTERLEAVED = "interleaved"


def slice_s(params: StudyParams | Mapping) -> float | None:
    """The slice the compared modes of a run share each window in; None: back to back.
    `params`: a run's params, or its params.json as read."""
    if isinstance(params, Mapping):
        return params.get("interleave_slice_s")
    return params.interleave_slice_s


def interleaved(params: StudyParams | Mapping) -> bool:
    """Whether a run's compared modes share each window (else: back to back)."""
    return slice_s(params) is not None


def alike(one: StudyParams | Mapping, other: StudyParams | Mapping) -> bool:
    """Whether two runs laid their windows out alike (both back to back, or interleaved in
    slices of one length)."""
    return slice_s(one) == slice_s(other)


def kind(params: StudyParams | Mapping) -> str:
    """BACK_TO_BACK or INTERLEAVED."""
    return INTERLEAVED if interleaved(params) else BACK_TO_BACK


def _compared(params: StudyParams) -> tuple[str, str]:
    """What a window compares, plural and singular: one mode's variants or runtimes, or the
    modes."""
    if len(params.modes) == 1 and params.variants:
        return "variants", "variant"
    if len(params.modes) == 1 and params.runtime_comparison:
        return "runtimes", "runtime"
    if len(params.modes) == 1 and params.runtime_variants:
        return "runtime variants", "runtime variant"
    return "modes", "mode"


def in_words(params: StudyParams) -> str:
    """ "interleaved: the compared modes share each window in slices of 0.25 s (each mode gets
    15 s in all)", or "back to back: the compared modes' windows one after another, seconds
    apart" (variants for modes when the run compares one mode's variants)."""
    many, one = _compared(params)
    if not interleaved(params):
        return f"{BACK_TO_BACK}: the compared {many}' windows one after another, seconds apart"
    return (
        f"{INTERLEAVED}: the compared {many} share each window in slices of "
        f"{slice_s(params):g} s (each {one} gets {params.duration_s:g} s in all)"
    )


def alternating_runs(seconds: float, slice_s: float, one: str, many: str, flag: str = "") -> str:
    """What each of the compared got of a timed tool that cannot switch target within a run
    (measure/alternate.py): "10 s per server in each window, in 1 s runs alternating between
    the servers"; `flag`, the tool's option for a run's length, follows "runs"."""
    return (f"{seconds:g} s per {one} in each window, in {slice_s:g} s runs{flag} alternating "
            f"between the {many}")  # fmt: skip


def short(params: StudyParams) -> str:
    """ "back to back", or "interleaved in slices of 0.25 s"."""
    if not interleaved(params):
        return BACK_TO_BACK
    return f"{INTERLEAVED} in slices of {slice_s(params):g} s"


def change(main: StudyParams, sub: StudyParams, subject: str = "Its") -> str:
    """What a sub-study's design changed against its main study's, in one sentence: "Its
    windows ran back to back, the main study's interleaved in slices of 0.25 s: ..."
    (`subject` names the sub-study); empty when both ran their windows the same way."""
    if alike(main, sub):
        return ""
    return (
        f"{subject} windows ran {short(sub)}, the main study's {short(main)}: a ratio's move "
        "between the two may come from the design as well as from the factor."
    )

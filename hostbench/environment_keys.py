"""environment.json's keys that only some runs record, each declared once with its meaning (as
pyperf declares its metadata keys): harness/environment.py records them (run_dependent), and
docs/results.md lists them (markdown). What every run records is `python -m hostbench env`'s."""

OPENSSL = "openssl"
RUNTIME_VARIANTS = "runtime_variants"
RUN_DEPENDENT_KEYS = {
    OPENSSL: "`openssl version` on this machine, where a mode of the run is on TLS: the "
             "library Kestrel's HTTPS (through .NET) and nginx's TLS use, and what made each "
             "launch's certificate.",
    RUNTIME_VARIANTS: "Where the run has runtime variants (params key runtime_variants), each "
                      "by name with what its declaration holds (`build`: jit or aot, `app`, "
                      "`runtime`, `gc` and the `gc_env` that asks for it) and its published "
                      "executable as it was when the run began (`executable`, `size_bytes`, "
                      "`mtime`, UTC, and `sha256`, its first 16 hex digits; a JIT build's "
                      "`assembly`, its code, the same); its path followed by `: not built` "
                      "where it was not yet published.",
}  # fmt: skip


def markdown() -> str:
    """docs/results.md's section on RUN_DEPENDENT_KEYS."""
    lines = [
        "## environment.json: what only some runs record",
        "",
        "Beside the machine and the versions every run records (`python -m hostbench env`), a",
        "run records these keys only where it needs them:",
        "",
        "| key | meaning |",
        "|---|---|",
        *(f"| `{key}` | {meaning} |" for key, meaning in RUN_DEPENDENT_KEYS.items()),
    ]
    return "\n".join(lines) + "\n"

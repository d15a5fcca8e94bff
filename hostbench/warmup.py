"""What a steady warm-up is: the rule the harness applies before each measured window
(hostbench.harness.measure.run) and the analysis describes in words (a study's method section).

Below both, so the analysis reads it without importing the harness.
"""

WINDOW_S = 1.0  # warm-up throughput is read from the app's counter once per window
STEADY_WINDOWS = 3  # steady: this many consecutive windows agree within the tolerance
# ...and in each of them the .NET JIT compiled at most this many methods. While tiered
# compilation recompiles the hot methods (the first 5-10 s under load here, 400-1300 methods
# a second), the rate can hold still for 3 s and then double; once done, a few dozen a second.
JIT_SETTLED_METHODS = 50

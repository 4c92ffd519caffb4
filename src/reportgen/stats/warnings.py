"""Every warning a statistical result can carry about degenerate data, in one place:
the same situation is worded the same way whichever method met it."""

MIN_UNITS = 10  # fewer units than this and a percentile bootstrap interval is too narrow

# Rates and their differences.
NO_RATE_DATA = "no observations: the rate is undefined and the interval is all of [0, 1]"
ONE_SIDE_EMPTY = "one side has no observations: the difference is undefined"
ZERO_MARGIN = "a margin of the table is zero: the test has no information (p = 1)"
EMPTY_WINDOW = "a window has no calls of the service or the reference"

# Paired differences.
NO_PAIRS = "no pairs: the mean difference is undefined"
ONE_PAIR_T = ("one pair: the t interval is that pair's difference, with zero width (the spread of the "
              "differences is unknown), and says nothing about uncertainty; the t test is undefined")
ALL_TIES = ("all differences are equal: the t interval has zero width and says nothing about "
            "uncertainty; the t test is undefined")
# Two independent samples of scores.
FEW_SCORES = "fewer than two scores on one side: the spread is unknown, so no interval or test can be computed"
ALL_TIES_WELCH = ("every score is equal within each service: the interval has zero width and says nothing "
                  "about uncertainty; the t test is undefined")

NO_DISCORDANT = "no discordant pairs: the test has no information (p = 1)"

# Resampling.
NO_DATA = "no observations: the difference is undefined"
ONE_PAIR = ("one pair: every resample is that pair, so the interval has zero width and says "
            "nothing about uncertainty")
ONE_CLUSTER = ("one cluster: every resample is that cluster, so the interval has zero width and "
               "says nothing about uncertainty")
ONE_TASK = ("one task: resampling cannot show how results vary between tasks; the interval "
            "reflects repetitions only and is too narrow for claims about tasks in general")
ZERO_WIDTH = ("every resample gave the same value: the interval has zero width and says "
              "nothing about uncertainty")
FEW_UNITS = ("only {n} {unit}: percentile bootstrap intervals are too narrow with fewer than "
             f"{MIN_UNITS}; prefer a t interval")
NOT_FINITE = ("the statistic was not finite on {k} of {resamples} resamples: the interval is "
              "undefined")

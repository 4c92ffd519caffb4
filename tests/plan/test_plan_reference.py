"""A reference value of exact McNemar power from another implementation, beside the
published values in test_plan_power (Cohen 1992, G*Power 3)."""

from __future__ import annotations

from reportgen.plan import mcnemar_power


def test_exact_mcnemar_power_matches_the_mess_package() -> None:
    # The MESS R package (Ekstrøm), its test of power_mcnemar_test headed "Produces validated
    # results": power_mcnemar_test(144, paid = 0.25, psi = 45/25, method = "exact",
    # alternative = "one.sided", sig.level = 0.025) rounds to 0.80. In our terms: 144 pairs,
    # discordant probabilities 0.25 and 0.45 (discordant rate 0.70, effect 0.20). The exact
    # two-sided test at 0.05 rejects the same upper tail as the one-sided one at 0.025; its
    # lower tail adds 3e-7 here.
    power = mcnemar_power(144, 0.70, 0.20, 0.05)
    assert round(power, 2) == 0.80
    assert 0.795 <= power < 0.805

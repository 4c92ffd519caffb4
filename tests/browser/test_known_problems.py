"""Problems in the site's own templates that these checks found, one test each.

Each is a strict xfail: it fails as expected while the problem is there. Once the template
is fixed the test passes, which fails the run with XPASS(strict): delete the problem's entry
in pagecheck.KNOWN_PROBLEMS, and the other tests check that page in full again.
"""

from __future__ import annotations

import pytest

import pagecheck


def problems_of(check: str, request) -> list[str]:
    if check == "browser":
        visits = request.getfixturevalue("site_visits")
        bases = [request.getfixturevalue("served_url"), request.getfixturevalue("file_url")]
        return [p for base in bases for v in visits(base) for p in v.problems]
    if check == "server":
        served = request.getfixturevalue("served")
        request.getfixturevalue("site_visits")(served.url)  # the pages must have been asked for
        return served.errors()
    if check == "vnu":
        return request.getfixturevalue("vnu_problems")
    if check == "axe":
        results = request.getfixturevalue("axe_results")
        return [p for page in request.getfixturevalue("main_pages").values()
                for p in pagecheck.axe_problems(page, results(page))]
    if check == "layout":
        layout = request.getfixturevalue("layout")
        return [p for kind in pagecheck.SCREENSHOT_PAGES for size in pagecheck.VIEWPORTS
                for p in layout(kind, size)]
    raise AssertionError(f"unknown check {check!r}")


@pytest.mark.parametrize("problem", [
    pytest.param(k, id=k.id, marks=pytest.mark.xfail(strict=True, reason=k.reason))
    for k in pagecheck.KNOWN_PROBLEMS])
def test_known_site_problem_is_fixed(problem, request):
    found = [p for check in problem.checks for p in problems_of(check, request)
             if problem.matches(p)]
    assert found == [], f"{problem.id}: {problem.reason}\n" + "\n".join(found)

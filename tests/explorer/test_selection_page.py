"""The selection page (:func:`rlsi.explorer.selection_page`): its data from a SelectionResult, text kept as text,
and the page in headless Chromium (skips, saying why, where Chromium or chromedriver is missing)."""

import math

from browser import chromium, open_page, problems

from rlsi.explorer import selection_page
from rlsi.explorer.page import script_json
from rlsi.selection import SelectionResult
from rlsi.selection.result import COLUMNS

HOSTILE = "</script><img src=x onerror=alert(1)> & “rule”"


def _result(rule="the smallest K whose completion score is within one standard error of the best"):
    rows = []
    for n, (k, lam, score) in enumerate([(5, 0.1, 0.10), (5, 0.05, 0.12), (10, 0.1, 0.19), (10, 0.05, 0.20),
                                         (20, 0.1, 0.18), (20, 0.05, 0.17)]):
        rows.append({"n_components": k, "lambda1": lam, "completion": score, "completion_se": 0.01,
                     "npmi": math.nan if n == 0 else 0.3 + 0.01 * n, "stability": 0.7 + 0.04 * n,
                     "terms_per_topic": 40.0 / (n + 1), "empty_topics": n % 2, "n_iter": 5 + n, "seconds": 0.5,
                     "started_from": None if n == 0 else n - 1})
    return SelectionResult(rows, 2, rule, {"stability_threshold": 0.8, "n_train": 400, "n_held_out": 100,
                                           "n_terms": 300, "seeds": [1, 2]}, 3.2)


def test_the_page_data_is_the_result():
    result = _result()
    page = selection_page(result)
    data = page.data
    assert [c[0] for c in data["columns"]] == [key for key, _, _ in COLUMNS]
    assert data["recommended"] == 2 and data["best"] == {"n_components": 10, "lambda1": 0.1}
    assert data["rows"][0][[c[0] for c in data["columns"]].index("npmi")] is None  # NaN as null
    assert data["rule"] == result.rule and data["stability_threshold"] == 0.8
    assert "seeds" not in data["settings"]  # lists stay out of the facts line
    assert script_json(data) in page.html  # the numbers reach the page only as escaped JSON


def test_a_rule_with_markup_stays_text():
    page = selection_page(_result(HOSTILE))
    assert HOSTILE not in page.html and "\\u003c/script\\u003e" in page.html


def test_the_page_shows_the_recommended_row_in_a_browser(tmp_path):
    path = selection_page(_result(HOSTILE)).save(tmp_path / "selection.html")
    with chromium(offline=True) as driver:
        driver.get("about:blank")  # the browser's own start (its new-tab page) ends here: not the page's requests
        problems(driver)
        open_page(driver, path)
        assert problems(driver) == ([], [])
        rows = driver.find_elements("css selector", "#table-body tr")
        assert len(rows) == 6
        chosen = driver.find_elements("css selector", "#table-body tr.recommended")
        assert len(chosen) == 1 and chosen[0].get_attribute("data-row") == "2"
        cells = [td.text for td in chosen[0].find_elements("tag name", "td")]
        assert cells[:3] == ["10", "0.1", "0.1900"]
        assert driver.find_element("id", "rule").text == f"K=10, λ1=0.1: {HOSTILE}."  # shown as text
        assert not driver.find_elements("css selector", "#rule img")
        panels = driver.find_elements("css selector", "#panels svg.chart")
        assert [p.get_attribute("data-column") for p in panels] == ["completion", "npmi", "stability",
                                                                   "terms_per_topic"]
        for panel in panels:
            assert len(panel.find_elements("css selector", "path[data-point='recommended']")) == 1
            assert len(panel.find_elements("css selector", "circle[data-row]")) >= 5
        rows[4].click()  # another point: ringed on the panels, the recommended one still marked
        assert driver.find_element("css selector", "#table-body tr.current").get_attribute("data-row") == "4"
        assert len(driver.find_elements("css selector", "#panels [data-point='picked']")) == 4
        assert len(driver.find_elements("css selector", "#panels [data-point='recommended']")) == 4
        assert problems(driver) == ([], [])

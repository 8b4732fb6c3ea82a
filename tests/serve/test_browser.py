"""The search page in a real browser: ``rlsi serve`` without a folder (the demo a fresh install serves:
the MED abstracts and 20 topics of batch RLSI) runs on 127.0.0.1, headless Chromium (selenium +
chromedriver) loads the page, types queries, moves the α slider, finds a document added through the API,
and opens the topic explorer.

One server and one browser serve the module. The screenshot ``serve.png`` (the README's picture) is kept in
``$RLSI_TEST_ARTIFACTS`` (:mod:`browser`); the tests skip, saying why, where Chromium, chromedriver, selenium
or the serve extra is missing.
"""

import json
import time
import urllib.request

import pytest
from browser import artifacts_dir, chromium, problems
from serve.serve_helpers import PATIENCE, ServerProcess

pytest.importorskip("uvicorn", reason="the serve extra is not installed (pip install '.[test]')")


@pytest.fixture(scope="module")
def browser():
    with chromium(offline=False) as driver:
        yield driver


@pytest.fixture(scope="module")
def server():
    with ServerProcess() as process:  # the demo: no folder
        yield process
        process.stop()


def _wait(predicate, what):
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def _open(driver, url):
    driver.get(url)
    _wait(lambda: driver.find_element("tag name", "body").get_attribute("data-ready") == "1", "the page's script")


def _search(driver, query):
    box = driver.find_element("id", "q")
    box.clear()
    box.send_keys(query)
    return _results(driver, query)


def _results(driver, query):
    results = driver.find_element("id", "results")
    _wait(lambda: results.get_attribute("data-state") == "done" and results.get_attribute("data-query") == query
          and driver.execute_script("return window.fetchesInFlight === undefined"), f"the results of {query!r}")
    return [li.get_attribute("data-id") for li in driver.find_elements("css selector", "#results li.hit")]


def _post(server, docs):
    request = urllib.request.Request(server.url + "documents", data=json.dumps(docs).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=PATIENCE) as answer:
        return json.loads(answer.read())


def test_typing_a_query_shows_results_with_topic_bars(browser, server, tmp_path_factory):
    problems(browser)
    _open(browser, server.url)
    assert browser.find_element("id", "facts").text.startswith("1,033 documents · generation 1 · model version 1")
    assert browser.find_element("id", "explore").is_displayed()
    hits = _search(browser, "blood glucose insulin")
    assert len(hits) == 10
    first = browser.find_element("css selector", "#results li.hit")
    assert first.find_element("css selector", ".title").text and first.find_element("css selector", ".snippet").text
    bars = first.find_elements("css selector", ".topic .bar")
    assert bars and all(b.size["width"] > 0 for b in bars)
    labels = [e.text for e in first.find_elements("css selector", ".topic .label")]
    assert all(label.startswith("T") and " · " in label for label in labels)
    assert "10 results for “blood glucose insulin”" in browser.find_element("id", "status").text
    assert "q=blood+glucose+insulin" in browser.current_url  # a link to share
    errors, requests = problems(browser, allowed=(server.url,))
    assert errors == [] and requests == []
    browser.set_window_size(1280, 900)
    try:  # the README's picture
        shot = artifacts_dir(tmp_path_factory) / "serve.png"
        browser.save_screenshot(str(shot))
    finally:
        browser.set_window_size(1280, 800)
    assert 10_000 < shot.stat().st_size < 300_000


def test_the_alpha_slider_moves_between_bm25_and_topics(browser, server):
    from selenium.webdriver.common.keys import Keys

    _open(browser, server.url + "?q=kidney+failure")
    _results(browser, "kidney failure")
    slider = browser.find_element("id", "alpha")
    with urllib.request.urlopen(server.url + "health", timeout=PATIENCE) as answer:
        assert float(slider.get_attribute("value")) == json.loads(answer.read())["alpha"]  # the index's α
    rankings = {}
    for key, alpha in ((Keys.HOME, "0.00"), (Keys.END, "1.00")):
        slider.send_keys(key)
        _wait(lambda: f"(α = {alpha})" in browser.find_element("id", "status").text, f"the results at α = {alpha}")
        rankings[alpha] = _results(browser, "kidney failure")
        assert browser.find_element("id", "alpha-value").text == alpha
    assert rankings["0.00"] != rankings["1.00"]
    metas = [e.text for e in browser.find_elements("css selector", "#results .meta")]
    assert metas and all("· BM25 " in m and "· topics " in m for m in metas)


def test_a_document_added_through_the_api_is_found(browser, server):
    answer = _post(server, [{"id": "new-1", "title": "Zyxoglobin in <b>plasma</b>",
                             "text": "Zyxoglobin, a plasma protein, binds glucose."}])
    assert answer["added"] == 1
    _open(browser, server.url)
    assert _search(browser, "zyxoglobin") == ["new-1"]
    first = browser.find_element("css selector", "#results li.hit")
    assert first.find_element("css selector", ".title").text == "Zyxoglobin in <b>plasma</b>"  # text, not HTML
    assert not browser.find_elements("css selector", "#results b")
    assert f"generation {answer['generation']}" in browser.find_element("id", "facts").text
    assert "new-1" in _search(browser, "plasma glucose protein")


def test_bad_input_is_shown_in_one_line_and_the_explorer_is_one_click_away(browser, server):
    _open(browser, server.url)
    box = browser.find_element("id", "q")
    box.clear()
    box.send_keys("a" * 1001)  # maxlength stops the box at 1000
    assert len(box.get_attribute("value")) == 1000
    browser.find_element("id", "explore").click()
    _wait(lambda: browser.find_element("tag name", "body").get_attribute("data-ready") == "1", "the explorer")
    assert browser.current_url == server.url + "explore"
    assert len(browser.find_elements("css selector", "#map circle.bubble")) == 20

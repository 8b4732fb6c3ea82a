"""The explorer and the tracking page in a real browser: headless Chromium (selenium + chromedriver) opens
the files from disk with the network off, and the tests act as a reader does.

One browser serves the whole module. The screenshots ``explorer.png`` and ``tracking.png`` are kept in
``$RLSI_TEST_ARTIFACTS`` (default: the ``artifacts`` folder of pytest's temporary directory, which also
gets ``explorer_phone.png``); ``RLSI_TEST_ARTIFACTS=docs/images`` refreshes the README's pictures. The
tests skip, saying why, where Chromium, chromedriver or selenium is missing.
"""


import numpy as np
import pytest
import scipy.sparse as sp
from browser import artifacts_dir, chromium, open_page, problems


@pytest.fixture(scope="module")
def browser():
    with chromium(offline=True) as driver:
        yield driver


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    return artifacts_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def scratch_artifacts(tmp_path_factory):
    return artifacts_dir(tmp_path_factory, scratch=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The explorer of batch RLSI on the MED abstracts shipped with rlsi, a page of hostile text, and a
    tracking page of a small dated stream."""
    from explorer._models import fit_kind, themed_docs

    from rlsi import BatchRLSI, TfidfVectorizer
    from rlsi.datasets import load_demo_corpus
    from rlsi.explorer import explore, tracking_page
    root = tmp_path_factory.mktemp("pages")
    corpus = load_demo_corpus()
    vec = TfidfVectorizer(stemmer="english", min_df=2)
    X = vec.fit_transform(corpus.texts)
    model = BatchRLSI(12, lambda1=0.1, lambda2=1.0, max_iter=30, tol=1e-3, random_state=0).fit(X)
    med = explore(model, vectorizer=vec, X=X, docs=corpus, title="rlsi topics: MED abstracts, batch RLSI")
    med.save(root / "med.html")

    docs = themed_docs()
    hostile = TfidfVectorizer().fit(d["title"] + "\n" + d["text"] for d in docs)
    Xh = hostile.transform(d["title"] + "\n" + d["text"] for d in docs)
    nmf = fit_kind("NMF", Xh, None, None)
    nmf.topic_names_ = ["<b>named</b>"] + [None] * (nmf.components_.shape[0] - 1)  # as seed words name topics
    names = hostile.get_feature_names_out().astype(object)
    names[int(np.argmax(nmf.components_[0]))] = "<img src=x onerror=alert(1)>"
    for d in docs:
        d["title"] = "</script><script>alert(2)</script>"
    explore(nmf, feature_names=names, X=Xh, docs=docs).save(root / "hostile.html")

    timeline = planted_timeline()
    timeline.names = ["named"] + [None] * (timeline.n_components - 1)  # as seed words name topics
    tracking_page(timeline, title="Topic tracking: a new theme from 2000-05").save(root / "tracking.html")
    return {"root": root, "med": med, "model": model, "timeline": timeline}


THEMES = ["apple banana cherry mango pear plum grape lemon melon peach fig lime",
          "engine wheel brake motor tyre gear diesel clutch piston axle valve pump",
          "guitar drum melody violin piano chorus rhythm tempo opera cello flute harp",
          "rocket orbit launch moon comet probe lander module booster crater mars planet"]


def planted_timeline(n_months=8, per_month=60, start=4, p_new=0.4, seed=0):
    """A stream of three themes, a fourth from month ``start`` on, tracked by OnlineRLSI whose spare (dead)
    topic takes the new theme (``reseed_dead``): the timeline of tests/tracking, with words."""
    import warnings

    from rlsi import BatchRLSI
    from rlsi.models import OnlineRLSI
    from rlsi.tracking import segments, track

    rng = np.random.default_rng(seed)
    w = 12
    rows, cols, vals, labels = [], [], [], []
    for d in range(n_months * per_month):
        month = d // per_month
        themes = [3] if month >= start and rng.random() < p_new else rng.choice(3, size=rng.integers(1, 3),
                                                                                replace=False)
        for t in themes:
            rows += [d] * 6
            cols += list(t * w + rng.choice(w, size=6, replace=False))
            vals += list(rng.uniform(0.5, 1.5, 6))
        labels.append(f"2000-{month + 1:02d}")
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_months * per_month, 4 * w))
    names = " ".join(THEMES).split()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = BatchRLSI(3, lambda1=10, max_iter=30, random_state=seed).fit(X[:start * per_month]).components_
    init = sp.vstack([base, sp.csr_matrix((1, X.shape[1]))], format="csr")
    model = OnlineRLSI(4, lambda1=10, rho=1.0, n_inner=2, topic_init=init, reseed_dead=True, random_state=seed)
    return track(model, ((X[a:b], s) for a, b, s in segments(X.shape[0], 20, labels=labels)), feature_names=names)


_open = open_page


def _problems(driver):
    """Console errors and network requests (other than the file itself) since the last call."""
    return problems(driver)


def _bar_terms(driver, side="pos"):
    rows = driver.find_elements("css selector", "#bars-body tr[data-term]")
    return [r.get_attribute("data-term") for r in rows
            if bool(r.find_elements("css selector", f"span.bar.{side}"))]


def _topic(driver):
    return int(driver.find_element("id", "bars").get_attribute("data-topic"))


def test_the_explorer_opens_offline_with_no_console_error(browser, pages, artifacts):
    _problems(browser)
    _open(browser, pages["root"] / "med.html")
    errors, requests = _problems(browser)
    assert errors == [] and requests == []
    assert len(browser.find_elements("css selector", "#map circle.bubble")) == 12
    assert "BatchRLSI · 12 topics" in browser.find_element("id", "facts").text
    assert _topic(browser) == 0 and len(_bar_terms(browser)) >= 5
    assert len(browser.find_elements("css selector", "#topics-body tr")) == 12
    assert browser.execute_script("return document.getElementById('docmap').width") > 0
    try:  # the README's picture: the map and both ends of T1
        browser.set_window_size(1280, 900)
        browser.save_screenshot(str(artifacts / "explorer.png"))
    finally:
        browser.set_window_size(1280, 800)
    assert (artifacts / "explorer.png").stat().st_size > 10_000


def test_clicking_a_bubble_changes_the_bars(browser, pages):
    from selenium.webdriver.common.action_chains import ActionChains

    _open(browser, pages["root"] / "med.html")
    before = _bar_terms(browser)
    # a bubble whose centre no other bubble covers: the one a reader can click
    target = browser.execute_script("""
        for (const c of document.querySelectorAll('#map circle.bubble')) {
          if (c.dataset.topic === '0') continue;
          const r = c.getBoundingClientRect();
          if (document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === c) return c;
        }
        return null;""")
    assert target is not None
    k = int(target.get_attribute("data-topic"))
    ActionChains(browser).move_to_element(target).click().perform()
    assert _topic(browser) == k and _bar_terms(browser) != before
    assert browser.find_element("id", "topic-h").text.startswith(f"T{k + 1}:")
    assert browser.find_element("id", "topic-select").get_attribute("value") == str(k)
    assert browser.find_element("css selector", "#topics-body tr.current").get_attribute("data-topic") == str(k)


def test_typing_a_term_shows_its_row(browser, pages):
    _open(browser, pages["root"] / "med.html")
    term = _bar_terms(browser)[1]
    box = browser.find_element("id", "term-input")
    box.clear()
    box.send_keys(term)
    rows = browser.find_elements("css selector", "#lookup tr[data-topic]")
    assert rows and all(r.get_attribute("data-term") == term for r in rows)
    assert "0" in [r.get_attribute("data-topic") for r in rows]  # it is a top term of T1
    assert browser.find_element("css selector", "#bars-body tr.hit").get_attribute("data-term") == term
    rows[-1].click()  # a row selects its topic
    assert _topic(browser) == int(rows[-1].get_attribute("data-topic"))
    box.clear()
    box.send_keys(term[:2])
    assert browser.find_elements("css selector", "#suggest button")  # close matches to choose from


def test_moving_the_slider_reorders_terms_as_the_library_ranks_them(browser, pages):
    from selenium.webdriver.common.keys import Keys

    from rlsi.explorer.terms import rank

    _open(browser, pages["root"] / "med.html")
    data = pages["med"].data
    k = max(range(12), key=lambda t: data["topics"]["counts"][t][0])  # the topic with most positive terms
    browser.execute_script("const s = document.getElementById('topic-select'); s.value = arguments[0];"
                           "s.dispatchEvent(new Event('change'));", str(k))
    by_weight = _bar_terms(browser)
    browser.find_element("id", "lambda").send_keys(Keys.HOME)  # lam = 0: by exclusivity
    assert browser.find_element("id", "lambda-out").text == "0.0"
    by_exclusivity = _bar_terms(browser)
    assert by_exclusivity != by_weight and len(by_exclusivity) == len(by_weight)
    # the same order as rlsi.explorer.terms.rank over the page's data
    flat = data["topics"]["entries"][k]
    entries = [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3) if flat[i + 1] > 0]
    t, w, e = (np.array(x) for x in zip(*entries))
    for step, shown in ((0, by_exclusivity), (10, by_weight)):
        order = rank(w, e, t, data["topics"]["scale"][k][0], step / 10, data["topics"]["quota"][k][0])
        assert [data["terms"]["names"][t[j]] for j in order] == shown
    browser.find_element("id", "lambda").send_keys(Keys.END)
    assert _bar_terms(browser) == by_weight


def test_keyboard_and_a_phone_sized_screen(browser, pages, scratch_artifacts):
    from selenium.webdriver.common.keys import Keys

    _open(browser, pages["root"] / "med.html")
    browser.find_element("id", "map").send_keys(Keys.ARROW_RIGHT)
    assert _topic(browser) == 1
    try:
        browser.set_window_size(390, 844)
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] + 1, width  # nothing wider than the screen
        browser.save_screenshot(str(scratch_artifacts / "explorer_phone.png"))
    finally:
        browser.set_window_size(1280, 800)


def test_text_from_models_and_corpora_is_shown_as_text(browser, pages):
    from selenium.common.exceptions import NoAlertPresentException

    _problems(browser)
    _open(browser, pages["root"] / "hostile.html")
    assert _bar_terms(browser)[0] == "<img src=x onerror=alert(1)>"
    assert browser.find_element("id", "topic-h").text.startswith("T1 [<b>named</b>]: ")
    titles = browser.find_elements("css selector", "#ends .doc-title")
    assert titles and titles[0].text == "</script><script>alert(2)</script>"
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    assert _problems(browser) == ([], [])
    assert not browser.find_elements("css selector", "main img")


def test_the_tracking_page_draws_its_timeline(browser, pages, artifacts):
    from selenium.webdriver.support.ui import Select

    _problems(browser)
    _open(browser, pages["root"] / "tracking.html")
    assert _problems(browser) == ([], [])
    K = pages["timeline"].n_components
    lines = browser.find_elements("css selector", "#timeline path.topic-line")
    assert len(lines) >= K and all(len(p.get_attribute("d")) > 10 for p in lines)
    assert browser.find_elements("css selector", "#timeline [data-event='born']")
    assert len(browser.find_elements("css selector", "#periods-body tr")) == 8
    new = int(np.argmax(pages["timeline"].share_fraction()[-1]))  # the topic that took the new theme
    browser.find_element("css selector", f"#legend button[data-topic='{new}']").click()
    assert browser.find_element("id", "topic-h").text.startswith(f"T{new + 1}")
    legend = [browser.find_element("css selector", f"#legend button[data-topic='{k}']").text for k in (0, 1)]
    assert legend[0].startswith("T1 [named] ") and legend[1].startswith("T2 ") and "[" not in legend[1]
    drift = [r.find_elements("tag name", "td")[3].text for r in browser.find_elements("css selector", "#periods-body tr")]
    assert drift[0] == "—" and any(d not in ("—", "") for d in drift)
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(artifacts / "tracking.png"))
    Select(browser.find_element("id", "mode")).select_by_value("stacked")
    assert len(browser.find_elements("css selector", "#timeline path.topic-area")) == K
    assert _problems(browser) == ([], [])
    try:
        browser.set_window_size(390, 844)
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] + 1, width
    finally:
        browser.set_window_size(1280, 800)


def test_a_sparse_topic_matrix_page_opens(browser, tmp_path):
    from rlsi.explorer import explore

    C = sp.random(60, 3000, density=0.01, random_state=1, format="csr")
    C.data -= 0.4
    C = sp.diags(np.where(np.arange(60) == 5, 0.0, 1.0)) @ C

    class Model:  # 60 topics without documents, one of them dead
        components_ = C.tocsr()

    explore(Model(), feature_names=[f"t{j}" for j in range(3000)]).save(tmp_path / "sparse.html")
    _problems(browser)
    _open(browser, tmp_path / "sparse.html")
    assert _problems(browser) == ([], [])
    assert "T6" in browser.find_element("id", "summary").text  # the dead topic is named
    assert browser.find_element("id", "docmap-panel").value_of_css_property("display") == "none"

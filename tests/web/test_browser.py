"""The web view in a real headless Chromium (the distribution's ``chromium`` and
``chromium-driver``), driven by selenium: the index, a search, a memory with three versions,
the review queue and a browser sign-in, with the DOM checked for script from content. Saves
the memory page's screenshot in the test's temporary folder; with ``UPDATE_SCREENSHOT=1``
it replaces docs/ui-memory.png (shown in README.md) instead."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import serve_http
from tests.web.conftest import TOKEN

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _chromium() -> tuple[str, str] | None:
    browser = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                                "/usr/bin/chromium") if p and Path(p).exists()), None)
    driver = next((p for p in (shutil.which("chromedriver"), "/usr/bin/chromedriver")
                   if p and Path(p).exists()), None)
    return (browser, driver) if browser and driver else None


@pytest.fixture
def browser() -> Iterator[object]:
    found = _chromium()
    if found is None:
        pytest.skip("no chromium and chromedriver found (apt-get install chromium "
                    "chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _assert_dom_inert(driver) -> None:
    from selenium.webdriver.common.by import By

    assert driver.find_elements(By.TAG_NAME, "script") == []
    for el in driver.find_elements(By.CSS_SELECTOR, "[href], [src]"):
        for attr in ("href", "src"):
            value = (el.get_attribute(attr) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:")), value
    # the script in content did not run (it would have set the title)
    assert driver.title != "owned"


def test_index_search_memory_and_review_in_chromium(store, browser, tmp_path):
    from selenium.webdriver.common.by import By

    with serve_http(store.path) as base:
        browser.get(base + "/ui/")
        assert browser.title == "Newest memories · ynm" or "Index" in browser.title
        summaries = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "a.summary")]
        assert len(summaries) == 7 and summaries[0] == "Filler note number 4 about the cache."
        _assert_dom_inert(browser)

        box = browser.find_element(By.NAME, "q")
        box.send_keys("smoke tests deploy")
        box.submit()
        assert "/ui/search?q=smoke+tests+deploy" in browser.current_url
        first = browser.find_element(By.CSS_SELECTOR, "li.hit a.summary")
        assert first.text == "Run the smoke tests before a deploy."
        assert browser.find_elements(By.CSS_SELECTOR, "table.explain")

        browser.get(f"{base}/ui/m/{store.memory_id}")
        ops = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "li.version .op")]
        assert ops == ["create", "supersede", "annotate"]
        text = browser.find_element(By.TAG_NAME, "main").text
        assert "<script>document.title='owned'</script>" in text  # shown as text
        assert "[click me](javascript:alert(1))" in text           # left as source, no link
        assert [a.get_attribute("href") for a in browser.find_elements(
            By.CSS_SELECTOR, ".content a")] == ["https://example.com/run"]
        _assert_dom_inert(browser)
        shot = (DOCS if os.environ.get("UPDATE_SCREENSHOT") == "1" else tmp_path) \
            / "ui-memory.png"
        assert browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000

        # follow the link from the other memory's page back here
        browser.get(f"{base}/ui/m/{store.other_id}")
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.wait import WebDriverWait

        link = browser.find_element(By.CSS_SELECTOR,
                                    f'ul.links a[href="/ui/m/{store.memory_id}"]')
        link.click()
        WebDriverWait(browser, 10).until(expected_conditions.staleness_of(link))
        assert browser.current_url.endswith(f"/ui/m/{store.memory_id}")

        browser.get(base + "/ui/review")
        items = browser.find_elements(By.CSS_SELECTOR, "ul.review-queue li.memory")
        assert len(items) == 1
        assert items[0].find_element(By.CSS_SELECTOR, "p.why").text == "possible duplicate"
        _assert_dom_inert(browser)


def test_sign_in_once_in_chromium(store, browser):
    from selenium.webdriver.common.by import By

    with serve_http(store.path, "--token", TOKEN) as base:
        browser.get(base + "/ui/review")
        assert browser.find_elements(By.NAME, "token")
        assert "possible duplicate" not in browser.page_source
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.wait import WebDriverWait

        browser.find_element(By.NAME, "token").send_keys(TOKEN)
        button = browser.find_element(By.CSS_SELECTOR, "form.login button")
        button.click()
        # the form posts and the page is replaced: wait for that, not for the first element
        # of whichever page is there at the moment
        WebDriverWait(browser, 10).until(expected_conditions.staleness_of(button))
        assert browser.current_url == base + "/ui/review"
        assert "possible duplicate" in browser.find_element(By.TAG_NAME, "main").text
        cookie = browser.get_cookie("ynm_ui")
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert TOKEN not in cookie["value"]
        browser.get(base + "/ui/")  # the cookie lets every page in, once
        assert len(browser.find_elements(By.CSS_SELECTOR, "a.summary")) == 7

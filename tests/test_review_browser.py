"""`jobdedup review` in a real browser: Chromium (Debian's /usr/bin/chromium) driven by Playwright.

On the bundled test ads with a dedup run in a temporary folder: filter the groups, open a group,
label three pairs with the keyboard (with a `b` back), reload and find the answers in the CSV,
label a sample of accepted pairs and compare the page's precision estimate with
`models.metrics.estimated_precision` on the same labels; screenshots of the group view and the
overlap page go to docs/images/. A second page checks that ad text holding a script stays inert.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jobdedup.models.metrics import estimated_precision
from tests.conftest import DATA, ROOT, run_cli
from tests.test_review import small_output

CHROMIUM = Path("/usr/bin/chromium")
IMAGES = ROOT / "docs" / "images"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium: apt-get install chromium"),
]


def start_review(ads: Path, out: Path, labels: Path) -> tuple[subprocess.Popen[str], str]:
    """`jobdedup review` in its own process, and the URL it printed."""
    command = [sys.executable, "-m", "jobdedup.pipeline.cli", "review", "--ads", str(ads), "--out", str(out)]
    process = subprocess.Popen(
        [*command, "--labels", str(labels), "--quiet"], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"open (http://\S+)", line)
        if found:
            return process, found.group(1)
    process.wait(10)
    raise AssertionError(f"jobdedup review did not start (exit {process.returncode})")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def dedup_output(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review") / "out"
    done = run_cli("dedup", "--ads", DATA / "test_ads.parquet", "--out", out, "--quiet", timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def test_filter_open_label_reload_estimate_and_screenshots(browser, dedup_output, tmp_path):
    labels = tmp_path / "labels.csv"
    server, url = start_review(DATA / "test_ads.parquet", dedup_output, labels)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(url)
        page.wait_for_selector("#groups-table tbody tr")
        # Filter: groups of 4+ ads with a linkedin ad.
        page.fill("#filter-min_size", "4")
        page.select_option("#filter-source", "linkedin")
        page.click("#filter-apply")
        page.wait_for_function("() => (document.body.dataset.rendered || '').includes('min_size=4')")
        rows = page.locator("#groups-table tbody tr")
        assert rows.count() >= 1
        for k in range(rows.count()):
            cells = rows.nth(k).locator("td")
            assert int(cells.nth(0).inner_text()) >= 4
            assert "linkedin" in cells.nth(3).inner_text().split(" · ")
        # Open the largest group; screenshot it.
        page.click("#groups-table .group-link >> nth=0")
        page.wait_for_selector("#members-table")
        assert page.locator("#pairs-table tbody tr").count() >= 3
        IMAGES.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(IMAGES / "review_group.png"), full_page=True)
        pairs = [page.locator("#pairs-table tbody tr .pair-link").nth(k).inner_text() for k in range(3)]
        # Label three pairs with the keyboard: y, n, back, n again (replaces), y.
        page.click("#label-group")
        for key, shown in (("y", 2), ("n", 3), ("b", 2), ("n", 3), ("y", 4)):
            page.wait_for_selector("#fields-table")
            page.keyboard.press(key)
            page.wait_for_function(
                f"() => document.getElementById('progress') && "
                f"document.getElementById('progress').textContent.startsWith('pair {shown} of')"
            )
        page.reload()
        page.wait_for_selector("#progress")
        assert page.inner_text("#progress").startswith("pair 4 of")  # the list survives a reload
        written = pd.read_csv(labels, dtype=str, keep_default_na=False)
        assert len(written) == 3
        got = {frozenset((a, b)): label for a, b, label in written[["ad_id_a", "ad_id_b", "label"]].values}
        for text, label in zip(pairs, ("1", "0", "1")):
            a, b = text.split(" ~ ")
            assert got[frozenset((a, b))] == label
        # Precision live: a uniform sample of accepted pairs, answered y, n, y.
        page.goto(url + "#/sample/accepted")
        page.wait_for_function("() => document.body.dataset.rendered === '#/sample/accepted'")
        for n, key in enumerate("yny", start=1):
            page.wait_for_selector("#fields-table")
            page.keyboard.press(key)
            page.wait_for_function(f"() => document.getElementById('estimate-n')?.textContent === '{n}'")
        written = pd.read_csv(labels, dtype=str, keep_default_na=False)
        accepted = written[written["sample"] == "accepted"]
        assert len(accepted) == 3
        expected = estimated_precision(accepted["label"].astype(int).to_numpy())
        assert page.inner_text("#estimate-value") == f"{expected['precision']:.3f}"
        assert page.inner_text("#estimate-low") == f"{expected['low']:.3f}"
        assert page.inner_text("#estimate-high") == f"{expected['high']:.3f}"
        # Where the duplicates come from.
        page.goto(url + "#/overlap")
        page.wait_for_function("() => document.body.dataset.rendered === '#/overlap'")
        page.wait_for_selector("#overlap-matrix tbody tr")
        assert page.locator("#rates-table tbody tr").count() == len(
            page.locator("#overlap-matrix tbody tr").all()
        )
        page.screenshot(path=str(IMAGES / "review_overlap.png"), full_page=True)
        assert dialogs == []
    finally:
        server.terminate()
        server.wait(10)


def test_ad_text_holding_script_renders_inert(browser, test_ads, tmp_path):
    ads, pairs, groups = small_output(test_ads)
    out = tmp_path / "out"
    out.mkdir()
    pairs.to_parquet(out / "pairs.parquet")
    groups.to_parquet(out / "groups.parquet")
    ads.to_parquet(tmp_path / "ads.parquet")
    server, url = start_review(tmp_path / "ads.parquet", out, tmp_path / "labels.csv")
    try:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(url + "#/group/g00")
        page.wait_for_selector("#members-table")
        assert "Chef <b onmouseover=alert(1)>de partie</b>" in page.inner_text("#members-table")
        page.hover("#members-table tbody tr >> nth=0")
        page.click("#label-group")
        page.wait_for_selector("#texts")
        assert "<b onmouseover=alert(1)>" in page.inner_text("#fields-table")
        assert page.locator("#main script, #main img, #fields-table b, #texts b").count() == 0
        assert page.evaluate("() => window.pwned") is None
        assert dialogs == []
        page.keyboard.press("y")
        page.wait_for_function("() => document.getElementById('progress').textContent.startsWith('pair 2')")
        assert np.isin(["1"], pd.read_csv(tmp_path / "labels.csv", dtype=str)["label"]).all()
    finally:
        server.terminate()
        server.wait(10)

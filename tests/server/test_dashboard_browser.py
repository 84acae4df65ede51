"""The dashboard at ``/ui`` in a real browser: Playwright driving Debian's Chromium against a real
``memlane serve`` process on loopback, with data added through the REST API and the real model.

Each page is checked for what it shows (text, visible elements) and its screenshot for content
(not a blank page). ``MEMLANE_UI_SHOTS=DIR`` keeps the screenshots for a person to look at.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from support.serve_process import ServeProcess

sync_api = pytest.importorskip("playwright.sync_api", reason="needs the dev extra (playwright)")
CHROMIUM = os.environ.get("MEMLANE_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no Chromium found: `make install` installs Debian's chromium where apt-get is available "
                "(or set MEMLANE_TEST_CHROMIUM to a Chromium binary)", allow_module_level=True)

XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
WAIT = 60_000  # ms; generous on a shared machine, nothing here asserts on time


@dataclass
class Site:
    url: str
    admin: str  # admin key of tenant acme
    member: str  # non-admin key of tenant acme
    rival: str  # admin key of tenant rival
    pizza: str  # the id of a memory that was invalidated (superseded)
    lisbon: str
    rival_memory: str

    def api(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=120)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    home = tmp_path_factory.mktemp("dashboard-home")
    with ServeProcess(home, config={"enable_graph": True}) as server:
        admin, member = server.create_key("acme", admin=True), server.create_key("acme")
        rival = server.create_key("rival", admin=True)
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin}"}, timeout=120) as api:
            def add(messages, **body):
                answer = api.post("/memories", json={"messages": messages, **body})
                assert answer.status_code == 200, answer.text
                return answer.json()

            first = add("I love cheese pizza. I live in Lisbon.", user_id="alice")
            ids = {r["memory"]: r["id"] for r in first["results"]}
            add("I don't like cheese pizza anymore.", user_id="alice")
            add([{"role": "user", "content": XSS}], user_id="alice", infer=False)
            add([{"role": "user", "content": "Prefers short answers"}], user_id="bob", agent_id="coach", run_id="r1",
                infer=False)
            assert api.post("/collections", json={"name": "manuals", "metadata": {"team": "ops"}}).status_code == 201
            page = {"name": "pumps", "collection_name": "manuals",
                    "text": "The pump must be primed before start. Check the valve pressure weekly."}
            assert api.post("/documents/upsert", json=page).status_code == 200
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {rival}"}, timeout=120) as api:
            other = api.post("/memories", json={"messages": "I live in Tokyo.", "user_id": "alice"}).json()
        yield Site(url=server.url, admin=admin, member=member, rival=rival, pizza=ids["User loves cheese pizza"],
                   lisbon=ids["User lives in Lisbon"], rival_memory=other["results"][0]["id"])


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    page.requested = []  # every URL the page asked for
    page.on("request", lambda request: page.requested.append(request.url))
    page.console_errors = []
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    yield page
    context.close()


def sign_in(page, site: Site, key: str) -> None:
    page.goto(site.url + "/ui")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("tenant ", exact=False).first.wait_for()


def visit(page, site: Site, fragment: str, heading: str) -> None:
    """Go to a view and wait until it is painted (a view paints its heading with its content)."""
    page.goto(site.url + "/ui" + fragment)
    sync_api.expect(page.locator("main h1")).to_have_text(heading)


def shot(page, name: str) -> None:
    """The screenshot is a page with content: many colours, not one blank background."""
    from PIL import Image

    png = page.screenshot(full_page=True)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20, f"the screenshot of {name} is (nearly) blank"
    keep = os.environ.get("MEMLANE_UI_SHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, f"{name}.png"), "wb") as out:
            out.write(png)


def main_text(page) -> str:
    return page.locator("main").inner_text()


def test_sign_in_asks_for_a_key_and_refuses_a_wrong_one(page, site):
    page.goto(site.url + "/ui")
    assert page.get_by_role("heading", name="Sign in").is_visible()
    page.get_by_label("API key").fill("ml_not-a-key")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("alert").wait_for()
    assert "Invalid API key" in page.get_by_role("alert").inner_text()
    assert not page.locator("#nav").is_visible()
    shot(page, "sign-in-refused")


def test_overview_lists_users_agents_and_runs_with_counts(page, site):
    sign_in(page, site, site.admin)
    page.get_by_role("heading", name="Users").wait_for()
    assert page.locator("#who").inner_text() == "tenant acme · admin key"
    rows = {row.locator("td").first.inner_text(): row.locator("td").all_inner_texts()
            for row in page.locator("table").first.locator("tbody tr").all()}
    assert rows["alice"][1:4] == ["4", "3", "3"]  # 4 memories, one invalidated, 3 messages
    assert rows["bob"][1:4] == ["1", "1", "1"]
    text = main_text(page)
    assert "coach" in text and "r1" in text and "Tenant acme" in text
    assert site.admin not in page.url and all(site.admin not in url for url in page.requested)
    assert page.evaluate("sessionStorage.getItem('memlane.key')") == site.admin
    shot(page, "overview")


@pytest.mark.parametrize(("mode", "stages"), [
    ("vector", []),
    ("hybrid", ["vector", "keyword"]),
    ("rerank", ["vector", "keyword", "rerank"]),
])
def test_search_shows_each_stage_with_scores_and_timings(page, site, mode, stages):
    sign_in(page, site, site.admin)
    visit(page, site, f"#/memories?user_id=alice&q=where+does+she+live&mode={mode}", "Search")
    page.locator("main table").last.wait_for()
    first = page.locator("main table").last.locator("tbody tr").first.locator("td").all_inner_texts()
    assert first[0] == "User lives in Lisbon"
    score, vector = float(first[3]), float(first[4])
    assert 0 < vector <= 1 and score != 0
    if not stages:
        assert "vector search only" in main_text(page)
        assert first[5] == first[6] == ""  # no keyword or rerank score
    else:
        names = [cells[0] for cells in (row.locator("td").all_inner_texts()
                                         for row in page.locator("section.stages tbody tr").all())]
        assert [n for n in names if not n.startswith("↳")] == stages
        for row in page.locator("section.stages tbody tr").all():
            cells = row.locator("td").all_inner_texts()
            if cells[0] == "rerank":  # no reranker chosen (retrieval.reranker): skipped, the reason shown
                assert cells[1] == "skipped" and "retrieval.reranker" in cells[3]
            else:
                assert cells[1] == "ran" and float(cells[2]) >= 0
        assert "server total" in main_text(page)
        assert first[6] == ""  # no rerank score: the rerank was skipped
    shot(page, f"search-{mode}")


def test_memories_filters_invalidated_and_as_of(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, "#/memories?user_id=alice", "Memories")
    page.locator("main table").wait_for()
    shown = page.locator("main table tbody tr td:first-child").all_inner_texts()
    assert "User lives in Lisbon" in shown and "User loves cheese pizza" not in shown
    page.get_by_label("invalidated too").check()
    page.get_by_role("button", name="Show").click()
    page.get_by_text("User loves cheese pizza").wait_for()
    assert "invalidated" in page.get_by_role("row").filter(has_text="User loves cheese pizza").inner_text()
    page.get_by_label("text contains").fill("pizza")
    page.get_by_role("button", name="Show").click()
    sync_api.expect(page.locator("main tbody tr")).to_have_count(2)
    assert "Lisbon" not in main_text(page)
    shot(page, "memories-filtered")
    page.get_by_label("as of").fill("not a time")
    page.get_by_role("button", name="Show").click()
    page.get_by_role("alert").wait_for()
    assert "422" in page.get_by_role("alert").inner_text() and "as_of" in page.get_by_role("alert").inner_text()


def test_history_timeline_shows_invalidation_and_superseded_by(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, f"#/memory/{site.pizza}", "Memory")
    page.locator("ol.timeline").wait_for()
    badges = page.locator("ol.timeline .badge").all_inner_texts()
    assert badges == ["ADD", "INVALIDATED", "SUPERSEDED"]
    assert "contradicted by: User doesn't like cheese pizza anymore" in page.locator("ol.timeline").inner_text()
    card = page.locator("section.card")
    assert "superseded by" in card.inner_text() and card.locator(".badge.gone").is_visible()
    with site.api(site.admin) as api:
        added = api.get(f"/memories/{site.pizza}/history").json()[0]["created_at"]
    assert page.locator("ol.timeline li").first.locator(".when").inner_text().startswith(added[:19].replace("T", " "))
    shot(page, "history")

    page.get_by_label("time").fill(added)  # the moment it was added: valid then, not yet contradicted
    page.locator("form.asof").get_by_role("button", name="Show").click()
    page.get_by_text("it read:").wait_for()
    assert "User loves cheese pizza" in page.locator(".asof-result").inner_text()
    page.get_by_label("time").fill("2001-01-01T00:00:00Z")
    page.locator("form.asof").get_by_role("button", name="Show").click()
    page.get_by_text("was not valid").wait_for()

    page.locator("ol.timeline").get_by_role("link").last.click()  # superseded by -> the new memory
    sync_api.expect(page.locator("section.card .text")).to_have_text("User doesn't like cheese pizza anymore")
    assert page.locator("ol.timeline .badge").all_inner_texts() == ["ADD"]


def test_edit_and_delete_with_confirmation(page, site):
    with site.api(site.admin) as api:
        made = api.post("/memories", json={"messages": [{"role": "user", "content": "Owns a red bicycle"}],
                                           "user_id": "carol", "infer": False}).json()["results"][0]["id"]
    sign_in(page, site, site.admin)
    visit(page, site, f"#/memory/{made}", "Memory")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("text").fill("Owns a blue bicycle")
    page.get_by_label("metadata (JSON)").fill('{"colour": "blue"}')
    page.get_by_role("button", name="Save").click()
    page.get_by_text("Owns a blue bicycle").first.wait_for()
    assert page.locator("ol.timeline .badge").all_inner_texts() == ["ADD", "UPDATE"]
    assert "Owns a red bicycle" in page.locator("ol.timeline del").inner_text()
    assert '{"colour":"blue"}' in page.locator("section.card").inner_text()
    shot(page, "edited")

    page.get_by_role("button", name="Delete").click()
    dialog = page.locator("dialog#confirm")
    assert dialog.is_visible() and "Owns a blue bicycle" in dialog.inner_text()
    shot(page, "delete-confirm")
    dialog.get_by_role("button", name="Cancel").click()
    assert not dialog.is_visible()
    with site.api(site.admin) as api:
        assert api.get(f"/memories/{made}").status_code == 200  # cancel deleted nothing

    page.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete").click()
    page.get_by_text("This memory was deleted; its history is kept.").wait_for()
    assert page.locator("ol.timeline .badge").all_inner_texts() == ["ADD", "UPDATE", "DELETE"]
    with site.api(site.admin) as api:
        assert api.get(f"/memories/{made}").status_code == 404


def test_a_list_cut_at_its_limit_says_so(page, site):
    with site.api(site.admin) as api:
        many = [{"role": "user", "content": f"Note number {i}"} for i in range(201)]
        assert api.post("/memories", json={"messages": many, "user_id": "many", "infer": False}).status_code == 200
    sign_in(page, site, site.admin)
    visit(page, site, "#/memories?user_id=many", "Memories")
    count = page.locator("main p.muted")
    count.filter(has_text="memories").wait_for()  # the list is read after the heading is drawn ("Loading…" first)
    assert count.inner_text() == "200 memories — the newest 200 only; narrow the filters to see the rest"
    assert page.locator("main tbody tr").count() == 200
    assert page.locator("main tbody tr td:first-child").first.inner_text() == "Note number 200"
    # narrowed: notes 20 and 200. Only the fragment changes, so the heading is already "Memories": wait
    # for the list itself to be painted again (reading it at once raced the new view on a loaded machine)
    visit(page, site, "#/memories?user_id=many&text=number+20", "Memories")
    sync_api.expect(count).to_have_text("2 memories")
    sync_api.expect(page.locator("main tbody tr")).to_have_count(2)


def test_bad_metadata_in_the_edit_form_is_named_and_nothing_changes(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, f"#/memory/{site.lisbon}", "Memory")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("metadata (JSON)").fill("{not json")
    page.get_by_role("button", name="Save").click()
    assert "metadata is not JSON" in page.get_by_role("alert").inner_text()
    with site.api(site.admin) as api:
        assert api.get(f"/memories/{site.lisbon}").json()["memory"] == "User lives in Lisbon"


def test_message_log_shows_why_an_add_stored_nothing(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, "#/messages?user_id=dora", "Messages")
    page.get_by_label("messages", exact=True).fill("hello! what's the weather like?\nI work as a nurse")
    page.get_by_role("button", name="Add").click()
    page.locator(".add-result table").wait_for()
    outcome = page.locator(".add-result").inner_text()
    assert "ADD" in outcome and "User works as a nurse" in outcome and "skipped:" in outcome
    log = {row.locator("td").nth(3).inner_text(): row.locator("td").all_inner_texts()[4:]
           for row in page.locator("main > table tbody tr").all()}
    assert log["I work as a nurse"] == ["User works as a nurse", ""]  # formed a memory, skipped nothing
    formed, why = log["hello! what's the weather like?"]
    assert formed == "" and "question" in why
    page.reload()  # the memories a message formed come from the store: still there on a fresh load
    page.get_by_role("link", name="User works as a nurse").wait_for()
    shot(page, "messages")


def test_graph_shows_the_relations_of_a_user(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, "#/graph?user_id=alice", "Graph")
    page.locator("main table").wait_for()
    rows = [row.locator("td").all_inner_texts()[:3] for row in page.locator("main tbody tr").all()]
    assert ["alice", "lives_in", "Lisbon"] in rows and ["alice", "loves", "cheese pizza"] in rows
    shot(page, "graph")


def test_documents_collections_and_search(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, "#/documents", "Documents")
    page.get_by_role("link", name="manuals").click()
    page.get_by_role("heading", name="Documents of manuals").wait_for()
    assert "pumps" in main_text(page) and '{"team":"ops"}' in main_text(page)
    page.get_by_label("query").fill("valve pressure")
    page.get_by_role("button", name="Search").click()
    page.get_by_text("Check the valve pressure weekly.").wait_for()
    hit = page.locator("main table").last.locator("tbody tr").first.locator("td").all_inner_texts()
    assert hit[:3] == ["pumps", "manuals", "1"] and float(hit[3]) > float(hit[4]) > 0
    shot(page, "documents")


def test_a_memory_that_looks_like_markup_is_shown_as_text(page, site):
    sign_in(page, site, site.admin)
    visit(page, site, "#/memories?user_id=alice", "Memories")
    page.get_by_text(XSS).wait_for()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main img").count() == 0 and page.locator("main script").count() == 0
    visit(page, site, "#/messages?user_id=alice", "Messages")
    page.get_by_role("link", name=XSS).wait_for()  # the memory the message formed, linked by its text
    assert XSS in page.locator("main > table tbody td:nth-child(4)").all_inner_texts()  # the message as sent
    assert page.evaluate("window.__pwned") is None and page.locator("main img").count() == 0
    shot(page, "markup-as-text")


def test_tenants_never_see_each_other(page, site):
    sign_in(page, site, site.rival)
    page.get_by_role("heading", name="Users").wait_for()
    assert page.locator("#who").inner_text() == "tenant rival · admin key"
    users = page.locator("table").first.locator("tbody tr td:first-child").all_inner_texts()
    assert users == ["alice"] and "bob" not in main_text(page)
    visit(page, site, "#/memories?user_id=alice", "Memories")
    page.locator("main table").wait_for()
    assert page.locator("main tbody td:first-child").all_inner_texts() == ["User lives in Tokyo"]
    visit(page, site, f"#/memory/{site.lisbon}", "Memory")  # acme's memory id, asked with rival's key
    page.get_by_text("No memory with id").wait_for()
    visit(page, site, "#/documents", "Documents")
    page.get_by_text("No collections yet.").wait_for()
    shot(page, "rival")


def test_a_member_key_sees_its_tenant_but_not_the_user_list(page, site):
    sign_in(page, site, site.member)
    page.get_by_text("not an admin key").wait_for()
    assert page.locator("#who").inner_text() == "tenant acme"
    page.get_by_label("user").fill("alice")
    page.get_by_role("button", name="Show").click()
    page.get_by_text("User lives in Lisbon").wait_for()
    shot(page, "member")


def test_sign_out_forgets_the_key_and_a_revoked_key_returns_to_sign_in(page, site):
    sign_in(page, site, site.admin)
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    assert page.evaluate("sessionStorage.getItem('memlane.key')") is None
    for arrive in (lambda: page.goto(site.url + "/ui#/memories?user_id=alice"), page.reload):
        page.evaluate("sessionStorage.setItem('memlane.key', 'ml_revoked-or-wrong')")
        arrive()  # an API call answered 401 / a fresh load with a stored key that no longer works
        page.get_by_role("alert").wait_for()
        assert "Invalid API key" in page.get_by_role("alert").inner_text()
        assert page.get_by_role("heading", name="Sign in").is_visible() and not page.locator("#nav").is_visible()
        assert page.evaluate("sessionStorage.getItem('memlane.key')") is None


CHINESE = "我住在杭州，每天早上喝龙井茶"


def _cjk_families() -> list[str]:
    """The CJK faces the dashboard's font stack names (app.css, --cjk)."""
    from importlib import resources

    css = (resources.files("memlane.server.ui") / "assets" / "app.css").read_text(encoding="utf-8")
    stack = css.split("--cjk:", 1)[1].split(";", 1)[0]
    return [name.strip().strip('"') for name in stack.split(",")]


def test_a_chinese_memory_is_drawn_as_text_not_empty_boxes(page, site):
    if shutil.which("fc-list") and not subprocess.run(["fc-list", ":lang=zh"], capture_output=True,
                                                       text=True).stdout.strip():
        pytest.skip("no Chinese font for Chromium here: `make chromium` installs Debian's fonts-noto-cjk")
    with site.api(site.admin) as api:
        made = api.post("/memories", json={"messages": CHINESE, "user_id": "mei", "infer": False}).json()
    sign_in(page, site, site.admin)
    visit(page, site, f"#/memory/{made['results'][0]['id']}", "Memory")
    text = page.locator("section.card .text")
    sync_api.expect(text).to_have_text(CHINESE)

    # which fonts drew the text (Chromium's own account): a CJK face of the stack drew every Han character
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "section.card .text"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    drawn = {font["familyName"]: font["glyphCount"] for font in fonts}
    han = sum(1 for ch in CHINESE if "\u4e00" <= ch <= "\u9fff")
    assert sum(count for family, count in drawn.items() if family in _cjk_families()) >= han, drawn

    # and the pixels say so too: drawn as glyphs, different characters look different; as empty boxes
    # (the missing-glyph shape) the text would look the same as one character repeated
    glyphs = text.screenshot()
    page.evaluate("t => { document.querySelector('section.card .text').textContent = t }", "杭" * len(CHINESE))
    assert text.screenshot() != glyphs
    page.evaluate("t => { document.querySelector('section.card .text').textContent = t }", CHINESE)
    shot(page, "chinese-memory")

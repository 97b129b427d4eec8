"""The link graph in a real browser: the demo world's graph is drawn, a click opens the side
panel, a double-click adds a memory's neighbours, and graphs of 2,000 and 10,000 memories are
drawn (the time to first draw is printed, not judged: the machine is noisy)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from tests.web.world import build_link_graph

CSP = "default-src 'self'; img-src 'self' data: blob:"


@pytest.fixture
def demo(agent_memory):
    """The demo world: its memories linked by every built-in relation type."""
    call_command("seed_demo", "--seed=1", "--end-date=2026-11-20")
    return agent_memory


def open_graph(page: Page, query: str, timeout: float = 30_000) -> None:
    page.goto(f"/graph/?{query}")
    expect(page.locator("#graph")).to_have_attribute("data-drawn", "true", timeout=timeout)


def node_on_screen(page: Page, index: int | str = 0) -> tuple[float, float, str]:
    """Where the index-th node (or the node of that id) is drawn, in page coordinates, and its id."""
    return tuple(
        page.evaluate(
            """(index) => {
                const cy = window.oamGraph.cy;
                const node = typeof index === "string" ? cy.getElementById(index) : cy.nodes()[index];
                const at = node.renderedPosition();
                const box = document.getElementById("graph").getBoundingClientRect();
                return [box.x + at.x, box.y + at.y, node.id()];
            }""",
            index,
        )
    )


def timings(page: Page) -> str:
    """When the page started the graph, had its data, had built it and had drawn it (ms after navigation)."""
    marks = page.evaluate(
        "['start', 'fetched', 'built', 'drawn']"
        ".map((name) => performance.getEntriesByName(`oam-graph-${name}`)[0].startTime)"
    )
    return ", ".join(
        f"{name} {moment:,.0f}" for name, moment in zip(("script", "data", "built", "drawn"), marks, strict=True)
    )


def test_the_demo_graph_is_drawn_and_a_click_opens_the_side_panel(logged_in_page: Page, demo):
    page = logged_in_page
    violations = []
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))

    def with_csp(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": CSP})

    page.route(re.compile(r".*/graph/.*"), with_csp)
    open_graph(page, "user_id=alice")

    graph = demo.memory_graph(user_id="alice")
    assert page.locator("#graph canvas").count() > 0
    expect(page.locator("#graph-status")).to_have_text(
        re.compile(rf"^{len(graph.nodes)} memories · {len(graph.edges)} links")
    )
    expect(page.get_by_role("link", name="alice")).to_have_attribute("href", "/users/alice/")
    x, y, memory_id = node_on_screen(page)
    page.mouse.click(x, y)
    content = demo.get_memory(memory_id).content
    expect(page.locator("#graph-panel")).to_contain_text(content[:60])
    expect(page.locator("#graph-panel").get_by_role("link", name="Memory page")).to_be_visible()
    assert violations == []


def test_a_double_click_adds_the_neighbours_of_a_memory(logged_in_page: Page, demo):
    page = logged_in_page
    centre = next(edge.source_record_id for edge in demo.memory_graph(user_id="alice").edges)
    neighbours = demo.memory_graph(memory_id=centre, hops=1).nodes
    open_graph(page, f"memory_id={centre}&hops=0")
    expect(page.locator("#graph")).to_have_attribute("data-nodes", "1")

    x, y, memory_id = node_on_screen(page)
    assert memory_id == centre
    page.mouse.dblclick(x, y)

    expect(page.locator("#graph")).to_have_attribute("data-nodes", str(len(neighbours)))
    expect(page.locator("#graph-status")).to_contain_text("added")


def test_a_supersedes_link_made_from_the_graph_retires_its_target_until_deleted(logged_in_page: Page, demo):
    page = logged_in_page
    valid = [node for node in demo.memory_graph(user_id="alice").nodes if node.status.value == "valid"]
    source = valid[0]
    linked = {
        end
        for link in demo.list_relations(record_id=source.id)
        for end in (link.source_record_id, link.target_record_id)
    }
    target = next(node for node in valid[1:] if node.id not in linked)
    open_graph(page, f"memory_id={source.id}&hops=0")
    x, y, _ = node_on_screen(page, source.id)
    page.mouse.click(x, y)

    page.locator("#graph-panel").get_by_role("link", name="Add a link").click()
    page.get_by_label("Target memory").fill(target.id)
    page.get_by_label("Relation").fill("supersedes")
    page.get_by_role("button", name="Review the link").click()
    expect(page.get_by_role("status")).to_contain_text(f"{target.content[:40]}")
    expect(page.get_by_role("status")).to_contain_text("will become invalid")
    page.get_by_role("button", name="Create the link").click()

    expect(page.get_by_text("Linked the memories.")).to_be_visible()
    assert demo.get_memory(target.id).status.value == "invalid"

    open_graph(page, f"memory_id={source.id}&hops=1")
    x, y, _ = node_on_screen(page, source.id)
    page.mouse.click(x, y)
    page.locator("#graph-panel").get_by_role(
        "link", name=f"Delete the supersedes link with “{target.content[:30]}"
    ).click()
    expect(page.get_by_text("will become valid again")).to_be_visible()
    page.get_by_role("button", name="Delete the link").click()

    expect(page.get_by_text("Deleted the link.")).to_be_visible()
    assert demo.get_memory(target.id).status.value == "valid"


def test_find_goes_to_a_memory_by_its_text(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "user_id=alice")
    node = demo.memory_graph(user_id="alice").nodes[0]

    page.get_by_label("Find a memory in the graph").fill(node.content[:25])
    page.get_by_label("Find a memory in the graph").press("Enter")

    expect(page.locator("#graph-status")).to_contain_text("Match 1 of")
    expect(page.locator("#graph-panel")).to_contain_text(node.content[:25])


@pytest.mark.parametrize("color_scheme", ["dark"])
def test_the_png_export_downloads_an_image(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "user_id=alice")

    with page.expect_download() as download:
        page.get_by_role("button", name="PNG").click()

    assert download.value.suggested_filename == "link-graph.png"
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("nodes", "links"), [(2_000, 5_000), (10_000, 25_000)])
def test_a_large_graph_is_drawn(logged_in_page: Page, agent_memory, nodes, links):
    page = logged_in_page
    build_link_graph(agent_memory, nodes, links, user_id="graph-user")

    open_graph(page, f"user_id=graph-user&max_nodes={nodes}", timeout=120_000)

    drawn = int(page.locator("#graph").get_attribute("data-nodes"))
    assert drawn > nodes * 0.95  # the few memories that drew no link are no nodes
    print(f"\nlink graph, {drawn:,} nodes / {links:,} links, ms after navigation: {timings(page)}")


def test_the_keyboard_steps_through_memories_adds_neighbours_pans_and_zooms(logged_in_page: Page, demo):
    page = logged_in_page
    centre = next(edge.source_record_id for edge in demo.memory_graph(user_id="alice").edges)
    neighbours = demo.memory_graph(memory_id=centre, hops=1).nodes
    open_graph(page, f"memory_id={centre}&hops=0")
    viewport = "() => [window.oamGraph.cy.zoom(), window.oamGraph.cy.pan().x, window.oamGraph.cy.pan().y]"

    page.keyboard.press("Tab")  # from the page's start, until the graph has focus
    for _ in range(60):
        if page.evaluate("document.activeElement.id") == "graph":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "graph"

    page.keyboard.press("n")
    expect(page.locator("#graph-status")).to_contain_text("Memory 1 of 1")
    expect(page.locator("#graph-panel")).to_contain_text(demo.get_memory(centre).content[:40])
    page.locator("#graph").focus()
    page.keyboard.press("e")
    expect(page.locator("#graph")).to_have_attribute("data-nodes", str(len(neighbours)))

    page.wait_for_function("() => !window.oamGraph.cy.animated()")  # the step's centring done
    zoom, x, y = page.evaluate(viewport)
    page.keyboard.press("+")
    page.wait_for_function(f"() => window.oamGraph.cy.zoom() > {zoom * 1.4} && !window.oamGraph.cy.animated()")
    zoom, x, y = page.evaluate(viewport)
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(viewport)[1] == pytest.approx(x + 80)
    page.keyboard.press("ArrowUp")
    assert page.evaluate(viewport)[2] == pytest.approx(y + 80)
    page.keyboard.press("n")
    expect(page.locator("#graph-status")).to_contain_text(f"Memory 2 of {len(neighbours)}")


def test_the_png_holds_every_label_and_no_selection_ring(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "user_id=alice")
    page.locator("#graph").focus()
    page.keyboard.press("n")  # a memory selected: its ring is for the screen, not the picture
    page.evaluate(
        """() => {
            const cy = window.oamGraph.cy;
            const png = cy.png.bind(cy);
            cy.png = (options) => {
                window.exported = {
                    labelled: cy.elements(".labelled").length,
                    all: cy.elements().length,
                    selected: cy.elements(":selected").length,
                    full: options.full,
                };
                return png(options);
            };
        }"""
    )

    with page.expect_download() as download:
        page.get_by_role("button", name="PNG").click()

    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    exported = page.evaluate("window.exported")
    assert exported["labelled"] == exported["all"] and exported["selected"] == 0 and exported["full"] is True
    assert page.evaluate("window.oamGraph.cy.elements(':selected').length") == 1  # the screen as it was


@pytest.mark.parametrize("context_options", [{"java_script_enabled": False}])
def test_without_javascript_the_graph_page_leads_to_its_tables(logged_in_page: Page, demo):
    page = logged_in_page
    page.goto("/graph/?user_id=alice")

    expect(page.locator("#graph-toolbar")).to_be_hidden()  # find, zoom and PNG need JavaScript
    expect(page.get_by_text("Loading the graph")).to_be_hidden()
    page.get_by_role("link", name="Show the graph as tables").click()

    expect(page.get_by_role("heading", name="Links")).to_be_visible()
    expect(page.get_by_role("link", name="Draw it")).to_be_hidden()


@pytest.mark.parametrize("context_options", [{"viewport": {"width": 390, "height": 844}, "has_touch": True}])
def test_on_a_phone_a_tapped_memory_is_scrolled_to_and_read_out(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "user_id=alice")

    x, y, memory_id = node_on_screen(page)
    page.mouse.click(x, y)

    heading = page.locator("#graph-record-heading")
    expect(heading).to_be_focused()
    expect(heading).to_be_in_viewport()
    expect(page.locator("#graph-panel")).to_contain_text(demo.get_memory(memory_id).content[:40])


# --- where the graph opens --------------------------------------------------------------------


def test_without_a_scope_the_graph_opens_on_the_most_linked_user(logged_in_page: Page, demo):
    page = logged_in_page
    busiest = demo.linked_owners("user", limit=1)[0]
    agent = demo.linked_owners("agent", limit=1)[0]

    page.goto("/graph/")
    expect(page.locator("#graph")).to_have_attribute("data-drawn", "true", timeout=30_000)

    expect(page.locator("#graph-start")).to_contain_text(f"Showing {busiest.owner_id}, the user with the most links")
    expect(page.locator("#graph")).to_have_attribute(
        "data-nodes", str(len(demo.memory_graph(user_id=busiest.owner_id).nodes))
    )
    page.locator("#graph-start").get_by_role("link", name=agent.owner_id, exact=True).click()
    expect(page).to_have_url(re.compile(rf"/graph/\?agent_id={agent.owner_id}$"))
    expect(page.locator("#graph")).to_have_attribute("data-drawn", "true", timeout=30_000)
    expect(page.locator("#graph-start")).to_have_count(0)  # a scope asked for is just drawn


def test_a_scope_with_nothing_linked_says_so_instead_of_an_empty_canvas(logged_in_page: Page, demo):
    page = logged_in_page
    page.goto("/graph/?user_id=nobody")

    expect(page.locator("#graph-empty")).to_be_visible(timeout=30_000)
    expect(page.locator("#graph-empty")).to_contain_text("No memory of this user is linked to another")
    expect(page.locator("#graph")).to_be_hidden()
    page.get_by_role("link", name="Start from the most linked").click()
    expect(page.locator("#graph-start")).to_be_visible()


@pytest.mark.parametrize("context_options", [{"java_script_enabled": False}])
def test_without_javascript_the_graph_without_a_scope_leads_to_the_most_linked_users_tables(logged_in_page: Page, demo):
    page = logged_in_page
    busiest = demo.linked_owners("user", limit=1)[0]
    page.goto("/graph/")

    expect(page.locator("#graph-start")).to_contain_text(f"Showing {busiest.owner_id}")
    page.get_by_role("link", name="Show the graph as tables").click()

    expect(page).to_have_url(re.compile(rf"user_id={busiest.owner_id}"))
    expect(page.get_by_role("heading", name="Links")).to_be_visible()


# --- labels -------------------------------------------------------------------------------------

# The labels drawn, as Cytoscape draws them: each one's outline (turned along its link for a
# relation; Cytoscape's label hit test uses the same), checked against its bounding box, and the
# pairs that overlap (a relation with a relation or a memory's label or a memory; two memories'
# labels). A label counts as drawn when its element is visible with a label and opaque text.
LABELS = """() => {
    const cy = window.oamGraph.cy;
    const renderer = cy.renderer();
    const drawn = (e) => e.visible() && e.pstyle("label").strValue !== "" && e.pstyle("text-opacity").value > 0;
    const corners = (b) => [{x: b.x1, y: b.y1}, {x: b.x2, y: b.y1}, {x: b.x2, y: b.y2}, {x: b.x1, y: b.y2}];
    const overlap = (a, b) => {
        for (const shape of [a, b]) for (let i = 0; i < shape.length; i++) {
            const p = shape[i], q = shape[(i + 1) % shape.length];
            const axis = {x: p.y - q.y, y: q.x - p.x};
            const span = (points) => {
                const values = points.map((t) => t.x * axis.x + t.y * axis.y);
                return [Math.min(...values), Math.max(...values)];
            };
            const [a1, a2] = span(a), [b1, b2] = span(b);
            if (a2 <= b1 || b2 <= a1) return false;
        }
        return true;
    };
    const labels = cy.elements().filter(drawn).map((e) => {
        const outline = renderer.getLabelHitPolygon(e, null, 0);
        const box = e.boundingBox({includeNodes: false, includeEdges: false, includeOverlays: false});
        const xs = outline.map((p) => p.x), ys = outline.map((p) => p.y);
        const fits = Math.min(...xs) >= box.x1 - 1 && Math.max(...xs) <= box.x2 + 1
            && Math.min(...ys) >= box.y1 - 1 && Math.max(...ys) <= box.y2 + 1;
        return {id: e.id(), edge: e.isEdge(), text: e.pstyle("label").strValue, outline, fits};
    });
    const body = (n) => corners(n.boundingBox({includeLabels: false, includeOverlays: false}));
    const bodies = cy.nodes().map((n) => ({id: n.id(), outline: body(n)}));
    const clashes = [];
    for (let i = 0; i < labels.length; i++) {
        for (let j = i + 1; j < labels.length; j++) {
            if (overlap(labels[i].outline, labels[j].outline)) clashes.push([labels[i].text, labels[j].text]);
        }
        for (const body of bodies) {
            const own = body.id === labels[i].id;
            if (!own && overlap(labels[i].outline, body.outline)) clashes.push([labels[i].text, body.id]);
        }
    }
    return {
        edges: cy.edges().length,
        nodes: cy.nodes().length,
        edgeLabels: labels.filter((l) => l.edge).length,
        nodeLabels: labels.filter((l) => !l.edge).length,
        outlinesFit: labels.every((l) => l.fits),
        clashes,
    };
}"""


def labels_drawn(page: Page) -> dict:
    """The labels once placed for the view (graph.js marks the canvas when it has placed them)."""
    page.wait_for_function("() => window.oamGraph && !window.oamGraph.cy.animated()")
    page.wait_for_function("() => document.getElementById('graph').dataset.crowded !== undefined")
    page.wait_for_timeout(300)  # a relabel after the last viewport change (120 ms)
    return page.evaluate(LABELS)


@pytest.mark.parametrize(
    "context_options",
    [{"viewport": {"width": 1400, "height": 900}}, {"viewport": {"width": 390, "height": 844}}],
    ids=["1400px", "390px"],
)
@pytest.mark.parametrize("scope", ["user_id=alice", "agent_id=atlas"])
def test_no_label_drawn_overlaps_another_or_a_memory_at_the_first_zoom(
    logged_in_page: Page, demo, scope, context_options
):
    page = logged_in_page
    open_graph(page, scope)

    drawn = labels_drawn(page)

    assert drawn["outlinesFit"]  # the outlines compared are the labels' as drawn
    assert drawn["clashes"] == []
    assert drawn["nodeLabels"] >= drawn["nodes"] / 3  # most memories are named at once
    if context_options["viewport"]["width"] == 1400:
        assert drawn["edgeLabels"] >= 1  # and relations shown where there is room


def test_zooming_in_shows_more_relations_with_no_overlap(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "agent_id=atlas")
    before = labels_drawn(page)
    assert before["edgeLabels"] < before["edges"]

    page.locator("#graph").focus()
    page.keyboard.press("+")
    page.keyboard.press("+")
    after = labels_drawn(page)

    assert after["edgeLabels"] > before["edgeLabels"]  # labels keep their size on screen: more have room
    assert after["clashes"] == []


@pytest.mark.parametrize("context_options", [{"viewport": {"width": 390, "height": 844}}])
def test_pointing_at_a_link_shows_its_relation_and_its_memories(logged_in_page: Page, demo):
    page = logged_in_page
    open_graph(page, "agent_id=atlas")
    labels_drawn(page)
    hidden = page.evaluate(
        """() => {
            const cy = window.oamGraph.cy;
            const edge = cy.edges().filter((e) => e.pstyle("label").strValue === "")[0];
            const at = edge.renderedMidpoint();
            const box = document.getElementById("graph").getBoundingClientRect();
            return {id: edge.id(), relation: edge.data("relation_type"), x: box.x + at.x, y: box.y + at.y};
        }"""
    )
    label_of = f"""() => {{
        const edge = window.oamGraph.cy.getElementById({hidden["id"]!r});
        return [edge.pstyle("label").strValue, ...edge.connectedNodes().map((n) => n.pstyle("label").strValue)];
    }}"""

    page.mouse.move(hidden["x"], hidden["y"])

    page.wait_for_function(f"() => ({label_of})()[0] !== ''")
    relation, *ends = page.evaluate(label_of)
    assert relation == hidden["relation"]
    assert all(ends)  # both its memories named
    page.mouse.move(1, 1)  # off the canvas: back as placed
    page.wait_for_function(f"() => ({label_of})()[0] === ''")

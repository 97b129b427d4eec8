// The link graph (/graph/): draws /graph/data/ with Cytoscape.js, at the positions the server
// laid out (memory/queries/graph_layout.py), so nothing freezes the page to lay it out.
//
// Why Cytoscape.js: timed in headless Chromium (software rendering, no GPU) against sigma.js
// with graphology on the same 2,000-node / 5,000-edge graph: first draw 1.5 s (sigma 0.5 s), but
// pan and zoom at 60 frames a second (17 ms frames, no long task) where sigma's WebGL, rendered
// in software, took 240 ms a frame; at 10,000 nodes 5 s to draw and still 18 ms frames (sigma
// 2 s, then about 1 s a frame). Its own force layouts froze the page for 79 s at 2,000 nodes,
// hence the server's layout. README, "The link graph", has the figures.
//
// Everything the page needs comes from data-* attributes of #graph and from the JSON endpoint:
// no inline script or style (Content Security Policy 'self').
(function () {
  "use strict";
  const container = document.getElementById("graph");
  if (!container || typeof cytoscape !== "function") return;

  const TYPES = ["fact", "preference", "guideline", "memory"];
  const SCOPES = ["user_id", "agent_id", "thread_id", "memory_id", "hops", "max_nodes"];
  const status = document.getElementById("graph-status");
  const errorBox = document.getElementById("graph-error");
  const toolbar = document.getElementById("graph-toolbar");
  const panel = document.getElementById("graph-panel");
  const dataUrl = container.dataset.url;
  let cy = null;

  performance.mark("oam-graph-start");

  // The URL converter's escapes for ids (memory/web/converters.py), then percent-encoding.
  function idSegment(id) {
    const escaped = id === "." || id === ".." ? "~2E".repeat(id.length) : id.replace(/~/g, "~7E").replace(/\//g, "~2F");
    return encodeURIComponent(escaped);
  }
  const panelUrl = (id) => container.dataset.panelUrl.replace("__ID__", idSegment(id));
  const count = (n, one, many) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

  function say(text) {
    status.textContent = text;
  }

  function showErrors(payload) {
    const lines = [];
    for (const [field, messages] of Object.entries((payload && payload.errors) || {})) {
      for (const message of messages) lines.push(field === "__all__" ? message : `${field}: ${message}`);
    }
    errorBox.textContent = lines.join(" ") || "The graph could not be loaded.";
    errorBox.hidden = false;
  }

  async function fetchGraph(url) {
    const response = await fetch(url, { credentials: "same-origin" });  // as the page's preload asks for it
    let payload = null;
    try {
      payload = await response.json();
    } catch (error) {
      payload = null;
    }
    if (!response.ok || !payload || !payload.nodes) {
      showErrors(payload);
      throw new Error(`graph data: HTTP ${response.status}`);
    }
    return payload;
  }

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function styles() {
    const label = css("--oam-graph-label");
    const edge = css("--oam-graph-edge");
    const background = css("--bs-body-bg");
    return [
      {
        selector: "node",
        style: {
          width: "data(size)",
          height: "data(size)",
          "background-color": css("--oam-graph-memory"),
        },
      },
      ...TYPES.map((type) => {
        const colour = css(`--oam-graph-${type}`);
        return { selector: `node.t-${type}`, style: { "background-color": colour, "border-color": colour } };
      }),
      {
        selector: "edge",
        style: {
          width: 1,
          "curve-style": "straight",
          "line-color": edge,
          "target-arrow-color": edge,
          "target-arrow-shape": "triangle",
          "arrow-scale": 0.7,
        },
      },
      // Labels only on what is in view once zoomed in (see relabel): readable, and cheap.
      {
        selector: "node.labelled",
        style: {
          label: "data(label)",
          "font-size": 7,
          color: label,
          "text-valign": "bottom",
          "text-margin-y": 2,
          "text-max-width": 110,
          "text-wrap": "ellipsis",
        },
      },
      // Invalid: faded, in a dashed ring of its type's colour (the legend shows one), its label
      // muted but readable in both themes (a faded label was not, in the dark one).
      {
        selector: "node.invalid",
        style: {
          "background-opacity": 0.35,
          "border-width": 1.5,
          "border-style": "dashed",
          color: css("--oam-graph-label-invalid"),
        },
      },
      {
        selector: "edge.labelled",
        style: {
          label: "data(relation_type)",
          "font-size": 6,
          color: label,
          "text-rotation": "autorotate",
          "text-background-color": background,
          "text-background-opacity": 0.85,
          "text-background-padding": 1,
        },
      },
      { selector: "node.found", style: { "border-width": 3, "border-style": "solid", "border-color": css("--oam-graph-found") } },
      { selector: "node:selected", style: { "border-width": 3, "border-style": "solid", "border-color": css("--bs-emphasis-color") } },
      { selector: "edge:selected", style: { "line-color": css("--bs-emphasis-color"), "target-arrow-color": css("--bs-emphasis-color") } },
    ];
  }

  const MAX_START_ZOOM = 1.5;
  const MAX_SPREAD = 4;
  // A small graph is spread out rather than zoomed in (which would blow its labels up): its
  // positions are scaled so that, at MAX_START_ZOOM, it fills the canvas with its labels.
  let spread = 1;
  const sizeOf = (degree) => Math.min(10 + 5 * Math.sqrt(degree), 48);
  // What a label takes around its node, in the graph's units (the node.labelled style): up to
  // its text-max-width across, centred, and a line of font-size 7 under the node.
  const LABEL_WIDTH = 110;
  const LABEL_DEPTH = 12;
  const FIT_PADDING = 16;

  function nodeElement(node, dx = 0, dy = 0) {
    return {
      group: "nodes",
      data: {
        id: node.id,
        label: node.content.length > 40 ? node.content.slice(0, 39) + "…" : node.content,
        content: node.content,
        memory_type: node.memory_type,
        status: node.status,
        search: `${node.content} ${node.id}`.toLowerCase(),
        size: sizeOf(node.degree),
      },
      position: { x: node.x * spread + dx, y: node.y * spread + dy },
      classes: `t-${node.memory_type}${node.status === "invalid" ? " invalid" : ""}`,
    };
  }

  function edgeElement(edge) {
    return {
      group: "edges",
      data: { id: `e:${edge.id}`, source: edge.source, target: edge.target, relation_type: edge.relation_type },
    };
  }

  function describe() {
    say(`${count(cy.nodes().length, "memory", "memories")} · ${count(cy.edges().length, "link", "links")}`);
    container.dataset.nodes = String(cy.nodes().length);
    container.dataset.edges = String(cy.edges().length);
  }

  function showTruncation(data) {
    const box = document.getElementById("graph-truncated");
    if (!data.truncated) return;
    document.getElementById("graph-truncated-text").textContent =
      `Showing ${count(data.nodes.length, "memory", "memories")} of ${data.total_nodes.toLocaleString("en")} ` +
      `(${(data.total_nodes - data.nodes.length).toLocaleString("en")} left out) and ` +
      `${data.edges.length.toLocaleString("en")} of ${count(data.total_edges, "link", "links")}: the most linked.`;
    box.hidden = false;
  }

  // The relation filter has a box for each built-in type (and each type asked for); the types of
  // the links drawn get one too, so that a store's custom types can be picked (the engine has no
  // list of them). A copy of the last box, renamed.
  function offerRelationTypes(edges) {
    const boxes = [...document.querySelectorAll('input[type="checkbox"][name="relation_type"]')];
    if (!boxes.length) return;
    const offered = new Set(boxes.map((box) => box.value));
    let last = boxes[boxes.length - 1].closest(".form-check");
    for (const edge of edges) {
      if (offered.has(edge.relation_type)) continue;
      offered.add(edge.relation_type);
      const copy = last.cloneNode(true);
      const box = copy.querySelector("input");
      const label = copy.querySelector("label");
      box.value = edge.relation_type;
      box.checked = false;
      box.id = `graph-relation-${offered.size}`;
      label.htmlFor = box.id;
      label.textContent = edge.relation_type;
      last.after(copy);
      last = copy;
    }
  }

  function spreadFor(nodes, ideal) {
    if (!nodes.length) return 1;
    const xs = nodes.map((node) => node.x);
    const ys = nodes.map((node) => node.y);
    const width = Math.max(Math.max(...xs) - Math.min(...xs), ideal);
    const height = Math.max(Math.max(...ys) - Math.min(...ys), ideal);
    const across = (container.clientWidth - 2 * FIT_PADDING) / MAX_START_ZOOM - LABEL_WIDTH;
    const down = (container.clientHeight - 2 * FIT_PADDING) / MAX_START_ZOOM - LABEL_DEPTH - sizeOf(0);
    return Math.min(Math.max(Math.min(across / width, down / height), 1), MAX_SPREAD);
  }

  // The whole graph in view, its labels included: a graph small enough to be labelled is fitted
  // with its labels on (relabel then keeps or drops them for the zoom it gets), so that none is
  // cut at the canvas's edge. Never zoomed in past MAX_START_ZOOM (a lone node would fill it).
  function fitViewport() {
    const nodes = cy.nodes();
    if (nodes.length <= MAX_LABELLED) nodes.addClass("labelled");
    const box = cy.elements().boundingBox();
    const zoom = Math.min(
      Math.max(
        Math.min((container.clientWidth - 2 * FIT_PADDING) / box.w, (container.clientHeight - 2 * FIT_PADDING) / box.h),
        cy.minZoom(),
      ),
      MAX_START_ZOOM,
    );
    const pan = {
      x: container.clientWidth / 2 - (zoom * (box.x1 + box.x2)) / 2,
      y: container.clientHeight / 2 - (zoom * (box.y1 + box.y2)) / 2,
    };
    return { zoom, pan };
  }

  function fit() {
    cy.animate(fitViewport(), { duration: 200 });
  }

  function draw(data) {
    performance.mark("oam-graph-fetched");
    spread = spreadFor(data.nodes, data.ideal_length);
    const elements = data.nodes.map((node) => nodeElement(node));
    for (const edge of data.edges) elements.push(edgeElement(edge));
    cy = cytoscape({
      container,
      elements,
      style: styles(),
      layout: { name: "preset", fit: false },
      minZoom: 0.02,
      maxZoom: 6,
      pixelRatio: 1,
      boxSelectionEnabled: false,
    });
    if (data.nodes.length) cy.viewport(fitViewport());
    performance.mark("oam-graph-built");
    window.oamGraph = { cy, expand, find };
    const drawn = () => {
      performance.mark("oam-graph-drawn");
      container.dataset.drawn = "true";
      container.classList.remove("oam-graph-busy");
    };
    if (data.nodes.length) cy.one("render", () => requestAnimationFrame(drawn));
    else drawn();
    describe();
    if (!data.nodes.length) say("No linked memories here.");
    showTruncation(data);
    offerRelationTypes(data.edges);
    cy.on("viewport", relabelSoon);
    relabel();
    cy.on("tap", "node", (event) => {
      container.focus({ preventScroll: true });  // so that the keys go on from here
      openPanel(event.target.id(), true);
    });
    cy.on("dbltap", "node", (event) => expand(event.target.id()));
    new MutationObserver(() => cy.style(styles())).observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-bs-theme"],
    });
  }

  // Labels: computing them for thousands of elements costs the first draw most of a second and
  // would be unreadable anyway; zoomed in, the nodes in view (a few hundred at most) get theirs,
  // and their links the relation.
  const LABEL_ZOOM = 1.2;
  const MAX_LABELLED = 400;
  function relabel() {
    const labelled = cy.elements(".labelled");
    if (cy.zoom() < LABEL_ZOOM) {
      labelled.removeClass("labelled");
      return;
    }
    const view = cy.extent();
    const inView = cy.nodes().filter((node) => {
      const at = node.position();
      return at.x >= view.x1 && at.x <= view.x2 && at.y >= view.y1 && at.y <= view.y2;
    });
    if (inView.length > MAX_LABELLED) {
      labelled.removeClass("labelled");
      return;
    }
    const wanted = inView.union(inView.connectedEdges());
    labelled.difference(wanted).removeClass("labelled");
    wanted.addClass("labelled");
  }
  let relabelTimer = 0;
  function relabelSoon() {
    clearTimeout(relabelTimer);
    relabelTimer = setTimeout(relabel, 120);
  }

  // Below the canvas (a narrow screen, graph.css), a record opened by a tap would load out of
  // sight: it is scrolled to and its heading focused, so that a screen reader reads it out.
  const panelBelow = window.matchMedia("(max-width: 991.98px)");
  function openPanel(id, reveal = false) {
    if (!window.htmx) return;
    window.htmx.ajax("GET", panelUrl(id), { target: "#graph-panel", swap: "innerHTML" }).then(() => {
      if (!reveal || !panelBelow.matches) return;
      panel.scrollIntoView({ block: "start" });
      document.getElementById("graph-record-heading")?.focus({ preventScroll: true });
    });
  }

  // Double-click: the node's neighbours (one hop, the same filters), placed as the server laid
  // them out around it (every layout has the same link length), shifted onto where it is now.
  async function expand(id) {
    const [path, query] = dataUrl.split("?");
    const params = new URLSearchParams(query || "");
    for (const name of SCOPES) params.delete(name);
    params.set("memory_id", id);
    params.set("hops", "1");
    container.classList.add("oam-graph-busy");
    let data;
    try {
      data = await fetchGraph(`${path}?${params}`);
    } finally {
      container.classList.remove("oam-graph-busy");
    }
    const centre = data.nodes.find((node) => node.id === id);
    const here = cy.getElementById(id);
    if (!centre || here.empty()) return 0;
    const dx = here.position("x") - centre.x * spread;
    const dy = here.position("y") - centre.y * spread;
    const added = [];
    for (const node of data.nodes) if (cy.getElementById(node.id).empty()) added.push(nodeElement(node, dx, dy));
    for (const edge of data.edges) if (cy.getElementById(`e:${edge.id}`).empty()) added.push(edgeElement(edge));
    const elements = cy.add(added);
    elements.connectedNodes().union(here).forEach((node) => node.data("size", sizeOf(node.degree(false))));
    describe();
    offerRelationTypes(data.edges);
    relabelSoon();
    const fresh = elements.nodes().length;
    say(`${status.textContent} · ${fresh ? `added ${count(fresh, "neighbour", "neighbours")}` : "no new neighbours"}`);
    return fresh;
  }

  // A memory brought forward (by find, or stepped to with N and P): selected, centred, zoomed
  // in enough for labels, its record in the side panel.
  function goTo(node) {
    cy.elements(":selected").unselect();
    node.select();
    cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.6) }, { duration: 250 });
    openPanel(node.id());
  }

  // Find: every node whose content or id holds the text is ringed; Enter goes to the next one.
  let matches = null;
  let matchIndex = -1;
  let lastQuery = "";
  function find(text) {
    const query = text.trim().toLowerCase();
    if (!cy) return 0;
    if (query !== lastQuery) {
      cy.nodes(".found").removeClass("found");
      matches = query ? cy.nodes().filter((node) => node.data("search").includes(query)) : cy.collection();
      matches.addClass("found");
      matchIndex = -1;
      lastQuery = query;
    }
    if (!matches.length) {
      say(query ? `No memory here matches “${text.trim()}”.` : "Type some text to find.");
      return 0;
    }
    matchIndex = (matchIndex + 1) % matches.length;
    const node = matches[matchIndex];
    goTo(node);
    say(`Match ${matchIndex + 1} of ${matches.length}: ${node.data("label")}`);
    return matches.length;
  }

  // N and P: the next or previous memory, from the one selected, in the order the graph came in
  // (as the tables list it: the centre first, then the most linked); neighbours added come last.
  function step(by) {
    const nodes = cy.nodes().toArray();
    if (!nodes.length) return;
    const at = nodes.findIndex((node) => node.selected());
    const next = at < 0 ? (by > 0 ? 0 : nodes.length - 1) : (at + by + nodes.length) % nodes.length;
    goTo(nodes[next]);
    say(`Memory ${next + 1} of ${nodes.length}: ${nodes[next].data("label")}`);
  }

  function expandSelected() {
    const node = cy.nodes(":selected")[0];
    if (node) expand(node.id());
    else say("Select a memory first: N and P step through them.");
  }

  const middle = () => ({ x: container.clientWidth / 2, y: container.clientHeight / 2 });
  function zoomBy(factor) {
    cy.animate({ zoom: { level: cy.zoom() * factor, renderedPosition: middle() } }, { duration: 150 });
  }

  // The PNG is the whole graph with every label drawn (the screen labels only what is in view,
  // zoomed in), without the selection and find rings; then the screen is put back as it was.
  function exportPng() {
    const selected = cy.elements(":selected");
    const found = cy.nodes(".found");
    const labelled = cy.elements(".labelled");
    selected.unselect();
    found.removeClass("found");
    cy.elements().addClass("labelled");
    let blob;
    try {
      blob = cy.png({ output: "blob", full: true, scale: 2, maxWidth: 6000, maxHeight: 6000, bg: css("--bs-body-bg") });
    } finally {
      cy.elements().difference(labelled).removeClass("labelled");
      found.addClass("found");
      selected.select();
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "link-graph.png";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  // The keys, while the graph has focus (the page's legend lists them). With Ctrl, Alt or Cmd
  // they are the browser's (Ctrl + zooms the page).
  const PAN_STEP = 80;
  const KEYS = {
    ArrowLeft: () => cy.panBy({ x: PAN_STEP, y: 0 }),
    ArrowRight: () => cy.panBy({ x: -PAN_STEP, y: 0 }),
    ArrowUp: () => cy.panBy({ x: 0, y: PAN_STEP }),
    ArrowDown: () => cy.panBy({ x: 0, y: -PAN_STEP }),
    "+": () => zoomBy(1.5),
    "=": () => zoomBy(1.5),
    "-": () => zoomBy(1 / 1.5),
    "0": fit,
    n: () => step(1),
    p: () => step(-1),
    e: expandSelected,
    Enter: expandSelected,
  };
  container.addEventListener("keydown", (event) => {
    if (!cy || event.ctrlKey || event.altKey || event.metaKey) return;
    const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });

  toolbar.addEventListener("click", (event) => {
    const button = event.target.closest("[data-graph-action]");
    if (!button || !cy) return;
    const action = button.dataset.graphAction;
    if (action === "fit") fit();
    else if (action === "zoom-in") zoomBy(1.5);
    else if (action === "zoom-out") zoomBy(1 / 1.5);
    else if (action === "export") exportPng();
  });
  document.getElementById("graph-find").addEventListener("submit", (event) => {
    event.preventDefault();
    find(document.getElementById("graph-find-text").value);
  });

  container.classList.add("oam-graph-busy");
  fetchGraph(dataUrl)
    .then(draw)
    .catch((error) => {
      say("The graph could not be loaded.");
      container.classList.remove("oam-graph-busy");
      console.error(error);
    });
})();

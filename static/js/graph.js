// The link graph (/graph/): draws /graph/data/ with Cytoscape.js, at the positions the server
// laid out (memory/graph_layout.py), so nothing freezes the page to lay it out.
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
  const dataUrl = container.dataset.url;
  let cy = null;

  toolbar.hidden = false;
  performance.mark("oam-graph-start");

  // The URL converter's escapes for ids (memory/converters.py), then percent-encoding.
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
      ...TYPES.map((type) => ({ selector: `node.t-${type}`, style: { "background-color": css(`--oam-graph-${type}`) } })),
      { selector: "node.invalid", style: { opacity: 0.35 } },
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
      { selector: "node.found", style: { "border-width": 3, "border-color": css("--oam-graph-found") } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": css("--bs-emphasis-color"), opacity: 1 } },
      { selector: "edge:selected", style: { "line-color": css("--bs-emphasis-color"), "target-arrow-color": css("--bs-emphasis-color") } },
    ];
  }

  const MAX_START_ZOOM = 1.5;
  const MAX_SPREAD = 4;
  // A small graph is spread out rather than zoomed in (which would blow its labels up): its
  // positions are scaled so that, at MAX_START_ZOOM, it fills the canvas.
  let spread = 1;
  const sizeOf = (degree) => Math.min(10 + 5 * Math.sqrt(degree), 48);

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

  function spreadFor(nodes, ideal) {
    if (!nodes.length) return 1;
    const xs = nodes.map((node) => node.x);
    const ys = nodes.map((node) => node.y);
    const width = Math.max(Math.max(...xs) - Math.min(...xs), ideal) * MAX_START_ZOOM;
    const height = Math.max(Math.max(...ys) - Math.min(...ys), ideal) * MAX_START_ZOOM;
    const room = Math.min((container.clientWidth - 120) / width, (container.clientHeight - 80) / height);
    return Math.min(Math.max(room, 1), MAX_SPREAD);
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
      layout: { name: "preset", fit: true, padding: 24 },
      minZoom: 0.02,
      maxZoom: 6,
      pixelRatio: 1,
      boxSelectionEnabled: false,
    });
    if (cy.zoom() > MAX_START_ZOOM) cy.zoom({ level: MAX_START_ZOOM, renderedPosition: middle() });  // a small graph
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
    cy.on("viewport", relabelSoon);
    relabelSoon();
    cy.on("tap", "node", (event) => openPanel(event.target.id()));
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

  function openPanel(id) {
    if (window.htmx) window.htmx.ajax("GET", panelUrl(id), { target: "#graph-panel", swap: "innerHTML" });
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
    relabelSoon();
    const fresh = elements.nodes().length;
    say(`${status.textContent} · ${fresh ? `added ${count(fresh, "neighbour", "neighbours")}` : "no new neighbours"}`);
    return fresh;
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
    cy.elements(":selected").unselect();
    node.select();
    cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.6) }, { duration: 250 });
    openPanel(node.id());
    say(`Match ${matchIndex + 1} of ${matches.length}: ${node.data("label")}`);
    return matches.length;
  }

  const middle = () => ({ x: container.clientWidth / 2, y: container.clientHeight / 2 });
  function zoomBy(factor) {
    cy.animate({ zoom: { level: cy.zoom() * factor, renderedPosition: middle() } }, { duration: 150 });
  }

  function exportPng() {
    const blob = cy.png({ output: "blob", full: true, scale: 2, maxWidth: 6000, maxHeight: 6000, bg: css("--bs-body-bg") });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "link-graph.png";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  toolbar.addEventListener("click", (event) => {
    const button = event.target.closest("[data-graph-action]");
    if (!button || !cy) return;
    const action = button.dataset.graphAction;
    if (action === "fit") cy.animate({ fit: { padding: 24 } }, { duration: 200 });
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

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

  // Labels keep one size on screen whatever the zoom, as a map's do (the canvas's units shrink
  // as it zooms in, so the label sizes below are divided by the zoom): zoomed in, the memories
  // spread apart under labels of the same size, and more of them have room. Set by sizeLabels.
  // In CSS pixels; a memory's label at most 130 wide, and about a third of a phone's canvas.
  const LABEL = {
    node: 11,
    edge: 10,
    width: Math.round(Math.min(130, Math.max(90, container.clientWidth / 3.5))),
    margin: 3,
    padding: 2,
  };
  let labelZoom = 1;
  const onScreen = (pixels) => () => pixels / labelZoom;

  function styles() {
    const label = css("--oam-graph-label");
    const edge = css("--oam-graph-edge");
    const background = css("--bs-body-bg");
    const nodeLabel = {
      label: "data(label)",
      "font-size": onScreen(LABEL.node),
      color: label,
      "text-valign": "bottom",
      "text-margin-y": onScreen(LABEL.margin),
      "text-max-width": onScreen(LABEL.width),
      "text-wrap": "ellipsis",
      "text-background-color": background,
      "text-background-opacity": 0.7,
      "text-background-padding": onScreen(1),
      "text-events": "yes",
    };
    const edgeLabel = {
      label: "data(relation_type)",
      "font-size": onScreen(LABEL.edge),
      color: label,
      "text-rotation": "autorotate",
      "text-background-color": background,
      "text-background-opacity": 0.9,
      "text-background-padding": onScreen(LABEL.padding),
      "text-events": "yes",
    };
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
      // Labels on what is in view (see relabel), except those that would overlap another label
      // or a memory ("crowded", see declutter); the one pointed at, or selected, always shows its
      // own, its links' and its neighbours', on top.
      { selector: "node.labelled", style: nodeLabel },
      { selector: "edge.labelled", style: edgeLabel },
      { selector: ".labelled.crowded", style: { label: "", "text-events": "no" } },
      // Above everything else, the relations above the memories' labels.
      {
        selector: "node.hovered, node.picked",
        style: {
          ...nodeLabel,
          "z-compound-depth": "top",
          "z-index-compare": "manual",
          "z-index": 10,
          "text-background-opacity": 1,
          "text-events": "no",  // a label shown over others takes no click meant for what is under it
        },
      },
      {
        selector: "edge.hovered, edge.picked",
        style: { ...edgeLabel, "z-compound-depth": "top", "z-index": 20, "text-background-opacity": 1, "text-events": "no" },
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
      { selector: "edge.hovered", style: { "line-color": label, "target-arrow-color": label } },
      { selector: "node.found", style: { "border-width": 3, "border-style": "solid", "border-color": css("--oam-graph-found") } },
      { selector: "node:selected", style: { "border-width": 3, "border-style": "solid", "border-color": css("--bs-emphasis-color") } },
      { selector: "edge:selected", style: { "line-color": css("--bs-emphasis-color"), "target-arrow-color": css("--bs-emphasis-color") } },
    ];
  }

  const MAX_START_ZOOM = 1.5;
  const MAX_SPREAD = 4;
  // A small graph is spread out rather than zoomed in: its positions are scaled so that, at
  // MAX_START_ZOOM, it fills the canvas with its labels, each axis on its own (up to three times
  // the other's), so that a tall phone's canvas is filled as well as a wide one.
  let spread = { x: 1, y: 1 };
  const sizeOf = (degree) => Math.min(10 + 5 * Math.sqrt(degree), 48);
  // What a node's label takes beside and under it, on screen (the node.labelled style).
  const LABEL_ACROSS = LABEL.width;
  const LABEL_DOWN = LABEL.margin + LABEL.node * 1.4;
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
      position: { x: node.x * spread.x + dx, y: node.y * spread.y + dy },
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
    if (!nodes.length) return { x: 1, y: 1 };
    const xs = nodes.map((node) => node.x);
    const ys = nodes.map((node) => node.y);
    const width = Math.max(Math.max(...xs) - Math.min(...xs), ideal);
    const height = Math.max(Math.max(...ys) - Math.min(...ys), ideal);
    const across = (container.clientWidth - 2 * FIT_PADDING - LABEL_ACROSS) / MAX_START_ZOOM;
    const down = (container.clientHeight - 2 * FIT_PADDING - LABEL_DOWN) / MAX_START_ZOOM - sizeOf(0);
    // The spread that fills the canvas the least, as for both axes; the other axis spread further
    // to fill its side too (a tall phone's, a wide screen's), up to three times as far.
    const bounded = (value) => Math.min(Math.max(value, 1), MAX_SPREAD);
    const both = bounded(Math.min(across / width, down / height));
    const taller = Math.min(Math.max(across / width / (down / height), 1 / 3), 3);
    const further = (ratio) => Math.max(both, Math.min(both * ratio, MAX_SPREAD));
    return { x: further(taller), y: further(1 / taller) };
  }

  // The whole graph in view, room left for the labels (a fixed size on screen) beside and under
  // its memories, so that none is cut at the canvas's edge. Never zoomed in past MAX_START_ZOOM
  // (a lone node would fill it).
  function fitViewport() {
    const box = cy.nodes().boundingBox(BODY_BOX);
    const zoom = Math.min(
      Math.max(
        Math.min(
          (container.clientWidth - 2 * FIT_PADDING - LABEL_ACROSS) / box.w,
          (container.clientHeight - 2 * FIT_PADDING - LABEL_DOWN) / box.h,
        ),
        cy.minZoom(),
      ),
      MAX_START_ZOOM,
    );
    const pan = {
      x: container.clientWidth / 2 - (zoom * (box.x1 + box.x2)) / 2,
      y: (container.clientHeight - LABEL_DOWN) / 2 - (zoom * (box.y1 + box.y2)) / 2,
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
    if (!data.nodes.length) {
      // Nothing to draw: the page says so, and where to start, instead of an empty canvas.
      say("No linked memories here.");
      container.hidden = true;
      document.getElementById("graph-empty").hidden = false;
    }
    showTruncation(data);
    offerRelationTypes(data.edges);
    cy.on("viewport", relabelSoon);
    relabel();
    // Pointed at: a memory shows its label, its links' relations and its neighbours' labels; a
    // link its relation and its two memories'. Selected, the same until something else is.
    const around = (element) => (element.isNode() ? element.closedNeighborhood() : element.union(element.connectedNodes()));
    cy.on("mouseover", "node, edge", (event) => around(event.target).addClass("hovered"));
    cy.on("mouseout", "node, edge", (event) => around(event.target).removeClass("hovered"));
    cy.on("select", "node, edge", (event) => around(event.target).addClass("picked"));
    cy.on("unselect", "node, edge", () => {
      const kept = cy.collection(cy.elements(":selected").map(around));
      cy.elements(".picked").difference(kept).removeClass("picked");
    });
    container.addEventListener("mouseleave", () => cy.elements(".hovered").removeClass("hovered"));
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
  // would be unreadable anyway; the nodes in view (a few hundred at most) get theirs, and their
  // links the relation, sized for the zoom, then decluttered.
  const MAX_LABELLED = 400;
  const MAX_RELATIONS = 300;
  function relabel() {
    const labelled = cy.elements(".labelled");
    const view = cy.extent();
    const within = (margin) => (node) => {
      const at = node.position();
      return at.x >= view.x1 - margin && at.x <= view.x2 + margin && at.y >= view.y1 - margin && at.y <= view.y2 + margin;
    };
    const inView = cy.nodes().filter(within(0));
    if (inView.length > MAX_LABELLED) {
      labelled.removeClass("labelled crowded");
      return;
    }
    // Relations only among a few hundred links in view: past that there is no room for them anyway,
    // and measuring them all would make every move of the view slow.
    let links = inView.connectedEdges().filter((edge) => {
      const at = edge.midpoint();
      return at.x >= view.x1 && at.x <= view.x2 && at.y >= view.y1 && at.y <= view.y2;
    });
    if (links.length > MAX_RELATIONS) links = cy.collection();
    const wanted = inView.union(links);
    cy.batch(() => {
      labelled.difference(wanted).removeClass("labelled crowded");
      wanted.addClass("labelled").removeClass("crowded");
      sizeLabels(cy.zoom());
    });
    // Memories just past the canvas's edge show part of their body: labels keep off it too.
    declutter(inView, links, cy.nodes().filter(within(sizeOf(Infinity) / 2)));
  }

  // The labels' size in the graph's units for a zoom (the style's functions read labelZoom).
  function sizeLabels(zoom) {
    labelZoom = zoom;
    cy.elements(".labelled, .hovered, .picked").updateStyle();
  }

  // A label is drawn only where it overlaps no other label drawn and no memory but its own, as a
  // map places its labels. The memories' labels first (the selected one's, then the most linked),
  // each under its memory, or above it, right of it or left of it, whichever is free, keeping
  // clear of the middles of the links where it can (their relations go there); then the links'
  // relations (the selection's, then those of the most linked memories), each at the middle of
  // its link or, when that is taken, a little towards either end. A label with no room (or that
  // the canvas's edge would cut) waits for the pointer, the selection or a closer zoom. Labels
  // are compared as drawn, turned along their links (Cytoscape's own label outline, which its hit
  // test uses); memories by their box.
  const BODY_BOX = { includeNodes: true, includeEdges: false, includeLabels: false, includeOverlays: false, includeUnderlays: false };
  const LABEL_BOX = { includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false, includeUnderlays: false };
  const ALONG = [0, 0.15, -0.15, 0.3, -0.3];
  const SIDE_STYLES = "text-valign text-halign text-margin-x text-margin-y";
  const SIDES = [
    null,  // under it: the style's own
    (m) => ({ "text-valign": "top", "text-halign": "center", "text-margin-x": 0, "text-margin-y": -m }),
    (m) => ({ "text-valign": "center", "text-halign": "right", "text-margin-x": m, "text-margin-y": 0 }),
    (m) => ({ "text-valign": "center", "text-halign": "left", "text-margin-x": -m, "text-margin-y": 0 }),
  ];

  function corners(box) {
    return [
      { x: box.x1, y: box.y1 },
      { x: box.x2, y: box.y1 },
      { x: box.x2, y: box.y2 },
      { x: box.x1, y: box.y2 },
    ];
  }

  // The outline of an element's label as drawn, in the graph's units (four corners).
  function labelOutline(element) {
    const renderer = cy.renderer();
    const outline = renderer && renderer.getLabelHitPolygon ? renderer.getLabelHitPolygon(element, null, 0) : null;
    return outline && outline.length >= 3 ? outline : corners(element.boundingBox(LABEL_BOX));
  }

  function extent(points) {
    const xs = points.map((point) => point.x);
    const ys = points.map((point) => point.y);
    return { x1: Math.min(...xs), y1: Math.min(...ys), x2: Math.max(...xs), y2: Math.max(...ys) };
  }

  // Whether two convex outlines overlap (separating axes), `gap` apart counting as overlapping.
  function overlap(a, b, gap) {
    for (const shape of [a, b]) {
      for (let i = 0; i < shape.length; i++) {
        const p = shape[i];
        const q = shape[(i + 1) % shape.length];
        const length = Math.hypot(q.x - p.x, q.y - p.y);
        if (!length) continue;
        const axis = { x: (p.y - q.y) / length, y: (q.x - p.x) / length };
        const span = (points) => {
          const values = points.map((point) => point.x * axis.x + point.y * axis.y);
          return [Math.min(...values), Math.max(...values)];
        };
        const [aLow, aHigh] = span(a);
        const [bLow, bHigh] = span(b);
        if (aHigh + gap <= bLow || bHigh + gap <= aLow) return false;
      }
    }
    return true;
  }

  // Outlines placed, found by the cells of a grid they cover. Each has an owner: a memory's id for
  // its body, "label:" and an id for a label.
  function plane(cell) {
    const grid = new Map();
    const cells = (box, visit) => {
      for (let i = Math.floor(box.x1 / cell); i <= Math.floor(box.x2 / cell); i++) {
        for (let j = Math.floor(box.y1 / cell); j <= Math.floor(box.y2 / cell); j++) visit(`${i},${j}`);
      }
    };
    return {
      put(outline, owner) {
        const entry = { outline, owner };
        cells(extent(outline), (key) => (grid.get(key) || grid.set(key, []).get(key)).push(entry));
      },
      // Whether an outline is at least `gap` clear of every one placed but those owned by `own`.
      free(outline, gap, own = null) {
        const box = extent(outline);
        let clear = true;
        cells({ x1: box.x1 - gap, y1: box.y1 - gap, x2: box.x2 + gap, y2: box.y2 + gap }, (key) => {
          for (const entry of grid.get(key) || []) {
            if (clear && entry.owner !== own && overlap(outline, entry.outline, gap)) clear = false;
          }
        });
        return clear;
      },
    };
  }

  // Where a memory's label would be on each side, from where it is under it (the style's own
  // place, measured): the same box, as far from the memory's body, above it, right or left of it.
  function sideBoxes(node, under) {
    const body = node.boundingBox(BODY_BOX);
    const label = extent(under);
    const away = label.y1 - body.y2;
    const width = label.x2 - label.x1;
    const height = label.y2 - label.y1;
    const middle = (body.y1 + body.y2) / 2;
    return [
      label,
      { x1: label.x1, y1: body.y1 - away - height, x2: label.x2, y2: body.y1 - away },
      { x1: body.x2 + away, y1: middle - height / 2, x2: body.x2 + away + width, y2: middle + height / 2 },
      { x1: body.x1 - away - width, y1: middle - height / 2, x2: body.x1 - away, y2: middle + height / 2 },
    ];
  }

  function declutter(nodes, edges, near) {
    const zoom = cy.zoom();
    const gap = LABEL.padding / zoom;
    const placed = plane(100 / zoom);  // memories and the labels drawn
    const middles = plane(100 / zoom);  // where the links' relations would go
    const view = cy.extent();
    const inside = (outline) => {
      const box = extent(outline);
      return box.x1 >= view.x1 && box.x2 <= view.x2 && box.y1 >= view.y1 && box.y2 <= view.y2;
    };
    const crowded = [];
    const first = (element) => (element.selected() || element.hasClass("picked") ? 0 : 1);
    const linked = (node) => node.degree(false);
    cy.batch(() => {
      cy.nodes(".sided").removeStyle(SIDE_STYLES).removeClass("sided");
      cy.edges(".moved").removeStyle("text-margin-x text-margin-y").removeClass("moved");
    });
    near.forEach((node) => placed.put(corners(node.boundingBox(BODY_BOX)), node.id()));
    edges.forEach((edge) => middles.put(labelOutline(edge), edge.id()));
    nodes
      .toArray()
      .sort((a, b) => first(a) - first(b) || linked(b) - linked(a))
      .forEach((node) => {
        const boxes = sideBoxes(node, labelOutline(node)).map(corners);
        const usable = boxes.map((box) => inside(box) && placed.free(box, gap, node.id()));
        let side = usable.findIndex((ok, at) => ok && middles.free(boxes[at], 0));
        if (side < 0) side = usable.indexOf(true);
        if (side < 0) {
          crowded.push(node);
          return;
        }
        let outline = boxes[side];
        if (side > 0) {
          node.style(SIDES[side](LABEL.margin / zoom)).addClass("sided");
          outline = labelOutline(node);  // as drawn, in case it is not quite where it was reckoned
          if (!inside(outline) || !placed.free(outline, gap, node.id())) {
            node.removeStyle(SIDE_STYLES).removeClass("sided");
            crowded.push(node);
            return;
          }
        }
        placed.put(outline, `label:${node.id()}`);
      });
    const weight = (edge) => linked(edge.source()) + linked(edge.target());
    edges
      .toArray()
      .sort((a, b) => first(a) - first(b) || weight(b) - weight(a))
      .forEach((edge) => {
        const outline = labelOutline(edge);
        const from = edge.source().position();
        const to = edge.target().position();
        for (const along of ALONG) {
          const dx = along * (to.x - from.x);
          const dy = along * (to.y - from.y);
          const moved = outline.map((point) => ({ x: point.x + dx, y: point.y + dy }));
          if (!inside(moved) || !placed.free(moved, gap)) continue;
          if (along) edge.style({ "text-margin-x": dx, "text-margin-y": dy }).addClass("moved");
          placed.put(moved, `label:${edge.id()}`);
          return;
        }
        crowded.push(edge);
      });
    cy.collection(crowded).addClass("crowded");
    container.dataset.crowded = String(crowded.length);
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
    const dx = here.position("x") - centre.x * spread.x;
    const dy = here.position("y") - centre.y * spread.y;
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

  // The PNG is the whole graph with every label drawn (the screen labels only what is in view
  // and has room), at the size they have on screen at a small graph's first zoom, without the
  // selection and find rings; then the screen is put back as it was.
  function exportPng() {
    const selected = cy.elements(":selected");
    const found = cy.nodes(".found");
    const hovered = cy.elements(".hovered");
    selected.unselect();
    found.removeClass("found");
    hovered.removeClass("hovered");
    cy.elements().addClass("labelled").removeClass("crowded");
    sizeLabels(MAX_START_ZOOM);
    let blob;
    try {
      blob = cy.png({ output: "blob", full: true, scale: 2, maxWidth: 6000, maxHeight: 6000, bg: css("--bs-body-bg") });
    } finally {
      cy.elements().removeClass("labelled");
      found.addClass("found");
      selected.select();
      relabel();
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

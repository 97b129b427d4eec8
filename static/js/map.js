// The embedding map (templates/people/map.html): rectangle selection over the server-drawn SVG.
// Dragging across the map selects the memories in the rectangle (Shift adds to the selection);
// the selection is the ticked boxes of the list below it, a form to the bulk actions page (a POST
// for curators, a GET for viewers), and the page without JavaScript works by ticking the boxes by
// hand. "Bulk actions for the selected" sends the ticked ids as one field, one id a line (ids hold
// no line breaks): a box each would be a field each, and Django reads at most 1,000 fields of a
// request, where the map selects up to 10,000. A click that did not drag still opens the memory.
// Hovering or focusing a point shows its label beside it at once (type, status and content, from
// the point's <title>, which becomes the link's aria-label so that the browser's own slower
// tooltip does not show a second copy).
(function () {
  "use strict";

  const DRAG_THRESHOLD = 4; // screen pixels before a press becomes a rectangle

  function init() {
    const svg = document.getElementById("map");
    const form = document.getElementById("map-selection");
    if (!svg || !form) return;
    const lasso = document.getElementById("map-lasso");
    const count = document.getElementById("map-count");
    const bulk = document.getElementById("map-bulk");
    const clear = document.getElementById("map-clear");
    const figure = document.getElementById("map-figure");
    const label = document.getElementById("map-label");
    const boxes = new Map();
    form.querySelectorAll('input[name="ids"]').forEach((box) => boxes.set(box.value, box));
    const points = Array.from(svg.querySelectorAll(".oam-map-point")).map((link) => {
      const circle = link.querySelector("circle");
      const title = link.querySelector("title");
      if (title) {
        link.setAttribute("aria-label", title.textContent);
        title.remove();
      }
      return {
        link: link,
        id: link.dataset.id,
        x: parseFloat(circle.getAttribute("cx")),
        y: parseFloat(circle.getAttribute("cy")),
      };
    });

    function refresh() {
      let selected = 0;
      points.forEach((point) => {
        const box = boxes.get(point.id);
        const on = Boolean(box && box.checked);
        point.link.classList.toggle("oam-map-selected", on);
        if (on) selected += 1;
      });
      count.textContent = selected + " selected";
      bulk.disabled = selected === 0;
      clear.disabled = selected === 0;
    }

    function select(ids, add) {
      boxes.forEach((box, id) => {
        if (!add) box.checked = false;
        if (ids.has(id)) box.checked = true;
      });
      refresh();
    }

    function toMap(event) {
      const matrix = svg.getScreenCTM();
      const point = new DOMPoint(event.clientX, event.clientY);
      return matrix ? point.matrixTransform(matrix.inverse()) : point;
    }

    // "fact, valid: Alice is vegetarian." -> the kind above, the content below.
    function showLabel(link) {
      if (!label || !figure) return;
      const text = link.getAttribute("aria-label") || "";
      const split = text.indexOf(": ");
      label.firstElementChild.textContent = split >= 0 ? text.slice(0, split) : "";
      label.lastElementChild.textContent = split >= 0 ? text.slice(split + 2) : text;
      label.hidden = false;
      const area = figure.getBoundingClientRect();
      const dot = link.querySelector("circle").getBoundingClientRect();
      const gap = 8;
      let left = dot.right - area.left + gap;
      let top = dot.top - area.top - label.offsetHeight - gap / 2;
      if (left + label.offsetWidth > area.width) left = Math.max(0, dot.left - area.left - label.offsetWidth - gap);
      if (top < 0) top = dot.bottom - area.top + gap / 2;
      label.style.left = left + "px";
      label.style.top = top + "px";
    }
    function hideLabel() {
      if (label) label.hidden = true;
    }
    svg.addEventListener("pointerover", (event) => {
      const link = event.target.closest(".oam-map-point");
      if (link && !(press && press.dragging)) showLabel(link);
    });
    svg.addEventListener("pointerout", (event) => {
      const link = event.target.closest(".oam-map-point");
      if (link && !link.contains(event.relatedTarget)) hideLabel();
    });
    svg.addEventListener("focusin", (event) => {
      const link = event.target.closest(".oam-map-point");
      if (link) showLabel(link);
    });
    svg.addEventListener("focusout", hideLabel);

    let press = null; // {start (map units), screenX, screenY, dragging, add}
    let swallowClick = false;

    svg.addEventListener("dragstart", (event) => event.preventDefault()); // links are not dragged away
    svg.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      press = { start: toMap(event), screenX: event.clientX, screenY: event.clientY, dragging: false, add: event.shiftKey };
      if (!event.target.closest(".oam-map-point")) event.preventDefault(); // no text selection
    });
    svg.addEventListener("pointermove", (event) => {
      if (!press) return;
      if (!press.dragging) {
        const moved = Math.hypot(event.clientX - press.screenX, event.clientY - press.screenY);
        if (moved < DRAG_THRESHOLD) return;
        press.dragging = true;
        hideLabel();
        svg.setPointerCapture(event.pointerId);
        svg.classList.add("oam-map-selecting");
        lasso.setAttribute("visibility", "visible");
      }
      const here = toMap(event);
      lasso.setAttribute("x", Math.min(press.start.x, here.x));
      lasso.setAttribute("y", Math.min(press.start.y, here.y));
      lasso.setAttribute("width", Math.abs(here.x - press.start.x));
      lasso.setAttribute("height", Math.abs(here.y - press.start.y));
    });
    function finish(event) {
      if (!press) return;
      const done = press;
      press = null;
      if (!done.dragging) return;
      const here = toMap(event);
      const [left, right] = [Math.min(done.start.x, here.x), Math.max(done.start.x, here.x)];
      const [top, bottom] = [Math.min(done.start.y, here.y), Math.max(done.start.y, here.y)];
      const inside = new Set(
        points.filter((p) => p.x >= left && p.x <= right && p.y >= top && p.y <= bottom).map((p) => p.id),
      );
      select(inside, done.add);
      lasso.setAttribute("visibility", "hidden");
      svg.classList.remove("oam-map-selecting");
      swallowClick = true; // the click that ends a drag opens nothing
      setTimeout(() => { swallowClick = false; }, 0);
    }
    svg.addEventListener("pointerup", finish);
    svg.addEventListener("pointercancel", (event) => {
      press = null;
      lasso.setAttribute("visibility", "hidden");
      svg.classList.remove("oam-map-selecting");
    });
    svg.addEventListener("click", (event) => {
      if (swallowClick) {
        event.preventDefault();
        event.stopPropagation();
        swallowClick = false;
      }
    }, true);

    form.addEventListener("submit", () => {
      const ticked = [];
      boxes.forEach((box, id) => {
        if (box.checked) ticked.push(id);
        box.disabled = true; // not sent one by one
      });
      const joined = document.createElement("input");
      joined.type = "hidden";
      joined.name = "ids";
      joined.value = ticked.join("\n");
      joined.dataset.mapJoined = "";
      form.append(joined);
    });
    window.addEventListener("pageshow", () => { // back from the bulk page: the boxes as they were
      form.querySelectorAll("input[data-map-joined]").forEach((input) => input.remove());
      boxes.forEach((box) => { box.disabled = false; });
      refresh();
    });
    form.addEventListener("change", refresh);
    clear.addEventListener("click", () => select(new Set(), false));
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      hideLabel();
      if (!clear.disabled) select(new Set(), false);
    });
    refresh(); // boxes the browser kept ticked (back button) show on the map too
    svg.dataset.ready = "true"; // the selection works from here on (browser tests wait for it)
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// Keyboard shortcuts, on every page (the "?" dialog, templates/partials/shortcuts.html, lists them):
//   /        focus the page's search or filter box: the input marked data-shortcut="search", else
//            the top bar's search, else the first text field of the page's filter form
//   j / k    move the current row down / up the page's main list (the element marked
//            data-shortcut-list: its rows are its elements marked data-shortcut-item, else the rows
//            of the table in it, else its children)
//   Enter    open the current row: its link marked data-shortcut="open", else its first link
//            with no data-shortcut role
//   e        edit: the current row's link marked data-shortcut="edit", else the edit page its row
//            names in data-edit-href (a listing marks its rows so for curators), or without a
//            current row the page's own (a record page's Edit button); for a viewer (the body is
//            marked data-read-only) with nothing to edit, a short notice that they can only read
//   x        toggle the current row's checkbox (name="ids", or marked data-shortcut="select")
//   ?        show the shortcuts
// None fires while typing in a field, with Ctrl, Alt or Cmd held, while a dialog is open, or
// for a key a widget with keys of its own already used (the graph calls preventDefault).
// Everything here is a convenience: each page works with the mouse, the Tab key and no script.
(function () {
  const LIST = "[data-shortcut-list]";
  const CURRENT = "oam-current";
  // Inputs where a letter is not typed: keys still work with one of these focused.
  const NOT_TYPED = new Set(["checkbox", "radio", "button", "submit", "reset", "image", "file", "color", "range"]);

  function isTyping(element) {
    if (element.isContentEditable || element.closest("textarea, select")) return true;
    return element.tagName === "INPUT" && !NOT_TYPED.has(element.type);
  }

  // Enter already does something on these (follows the link, presses the button, opens the folded part).
  function handlesEnter(element) {
    return Boolean(element.closest("a[href], button, summary, [role=button], [role=application]"));
  }

  function unfold(element) {
    const folded = element.closest("details:not([open])");
    if (folded) folded.open = true;
  }

  function visible(element) {
    return element.getClientRects().length > 0;
  }

  function list() {
    return [...document.querySelectorAll(LIST)].find((candidate) => rowsOf(candidate).length > 0) || null;
  }

  // A list's rows: its elements marked data-shortcut-item, else the rows of the table it holds
  // (a listing marks its results, which htmx replaces), else its children (a <tbody>).
  function rowsOf(container) {
    let rows = container.querySelectorAll("[data-shortcut-item]");
    if (!rows.length) rows = container.querySelectorAll("tbody > tr");
    if (!rows.length) rows = container.children;
    return [...rows];
  }

  function items(container) {
    return rowsOf(container).filter(visible);
  }

  function current() {
    const row = document.querySelector(`.${CURRENT}`);
    return row && row.closest(LIST) ? row : null;  // gone with the list htmx replaced: none
  }

  function mainLink(row) {
    return row.querySelector('[data-shortcut="open"]') || row.querySelector("a[href]:not([data-shortcut])");
  }

  // Makes `row` the current one; `focus` also moves the keyboard focus to its main link (or to the
  // row itself when it has none), so that a screen reader reads where the highlight went.
  function setCurrent(row, focus) {
    const previous = current();
    if (previous && previous !== row) {
      previous.classList.remove(CURRENT);
      previous.removeAttribute("aria-current");
    }
    row.classList.add(CURRENT);
    row.setAttribute("aria-current", "true");
    if (!focus) return;
    let target = mainLink(row);
    if (!target) {
      row.tabIndex = -1;
      target = row;
    }
    target.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    const container = list();
    if (!container) return false;
    unfold(container);  // a list folded away (the embedding map's)
    const rows = items(container);
    if (!rows.length) return false;
    const index = rows.indexOf(current());
    const next = index < 0 ? 0 : Math.min(Math.max(index + step, 0), rows.length - 1);
    setCurrent(rows[next], true);
    return true;
  }

  function searchField() {
    return (
      document.querySelector('[data-shortcut="search"]') ||
      document.getElementById("global-search") ||
      document.querySelector(
        "form.oam-filters input:not([type]), form.oam-filters input[type=text], form.oam-filters input[type=search]"
      )
    );
  }

  // The top bar's search says "( / )" in its placeholder: on a page where "/" goes to the page's
  // own filter box, say it there instead (and to assistive technology, with aria-keyshortcuts).
  function announceSearchKey() {
    const field = searchField();
    const global = document.getElementById("global-search");
    if (!field) return;
    field.setAttribute("aria-keyshortcuts", "/");
    if (!global || field === global) return;
    global.placeholder = global.placeholder.replace(/\s*\(\s*\/\s*\)\s*$/, "");
    if (!field.placeholder) field.placeholder = "Press / to type here";
  }

  function focusSearch() {
    const field = searchField();
    if (!field) return false;
    unfold(field);  // a narrow screen's folded filter panel
    field.focus();
    if (typeof field.select === "function") field.select();
    return true;
  }

  function edit() {
    const row = current();
    const link = row
      ? row.querySelector('[data-shortcut="edit"]')
      : [...document.querySelectorAll('[data-shortcut="edit"]')].find((candidate) => !candidate.closest(LIST));
    if (link) {
      link.click();  // an htmx link (a message's inline edit) handles its own click
      return true;
    }
    if (row && row.dataset.editHref) {
      window.location.assign(row.dataset.editHref);
      return true;
    }
    if (!document.body.hasAttribute("data-read-only")) return false;
    notify("You can only read here: editing needs a curator's account.");
    return true;
  }

  // A short notice at the bottom of the window, gone after 4 s. Its live region is on the page
  // from the start (empty and hidden), so that a screen reader reads the text put in it.
  const notice = document.createElement("div");
  notice.className = "oam-notice alert alert-secondary shadow-sm py-2 px-3 mb-0 small";
  notice.setAttribute("role", "status");
  notice.hidden = true;
  document.body.append(notice);
  let noticeTimer = 0;
  function notify(text) {
    notice.textContent = text;
    notice.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => {
      notice.hidden = true;
      notice.textContent = "";
    }, 4000);
  }

  function toggleSelected() {
    const row = current();
    const box = row && row.querySelector('input[type=checkbox][name=ids], input[type=checkbox][data-shortcut="select"]');
    if (!box || box.disabled) return false;
    box.click();  // toggles it and fires input and change, as a click of the mouse does
    return true;
  }

  function open() {
    const row = current();
    const link = row && mainLink(row);
    if (!link) return false;
    link.click();
    return true;
  }

  function showShortcuts() {
    const dialog = document.getElementById("keyboard-shortcuts");
    if (!dialog || dialog.open) return false;
    dialog.showModal();
    return true;
  }

  const KEYS = {
    "/": focusSearch,
    j: () => move(1),
    k: () => move(-1),
    e: edit,
    x: toggleSelected,
    "?": showShortcuts,
  };

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.altKey || event.metaKey) return;
    const target = event.target instanceof Element ? event.target : document.body;
    if (isTyping(target) || document.querySelector("dialog[open]")) return;
    let action = KEYS[event.key];
    if (event.key === "Enter") action = handlesEnter(target) ? null : open;
    if (action && action()) event.preventDefault();
  });

  // Tabbing to a row's link, or clicking in a row, makes it the current row, so that j and k go
  // on from where the user is.
  document.addEventListener("focusin", (event) => {
    const container = event.target instanceof Element && event.target.closest(LIST);
    const row = container && items(container).find((item) => item.contains(event.target));
    if (row) setCurrent(row, false);
  });

  announceSearchKey();
  // htmx swaps only the results, never the filter form: nothing to announce again after a swap.

  document.addEventListener("click", (event) => {
    const opener = event.target.closest("[data-shortcuts-open]");
    if (opener) showShortcuts();
  });
})();

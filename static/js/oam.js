// Small enhancements; every page works without them (the keyboard shortcuts are in shortcuts.js).
// - Buttons with data-copy copy their value to the clipboard (data-copy-select: what to select
//   when the clipboard is out of reach).

// Without the clipboard (a page served over plain HTTP from another machine), a button with
// data-copy-select selects the element it names instead, for Ctrl+C.
function selectForCopy(button) {
  const target = button.dataset.copySelect && document.querySelector(button.dataset.copySelect);
  if (target) window.getSelection().selectAllChildren(target);
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  if (!navigator.clipboard) {
    selectForCopy(button);
    return;
  }
  navigator.clipboard.writeText(button.dataset.copy).then(() => {
    const label = button.getAttribute("aria-label");
    button.setAttribute("aria-label", "Copied");
    button.classList.add("copied");
    setTimeout(() => {
      button.setAttribute("aria-label", label);
      button.classList.remove("copied");
    }, 1200);
  }, () => selectForCopy(button));
});

// On a narrow screen a form panel (a listing's filters, the search's parameters) starts folded,
// so the results come first, unless the page marks it data-keep-open (filters in force, nothing
// searched yet). Without JavaScript it stays open, and its summary folds it.
const narrow = window.matchMedia("(max-width: 991.98px)");
for (const panel of document.querySelectorAll("details.oam-filter-panel")) {
  if (narrow.matches && !panel.hasAttribute("data-keep-open")) panel.open = false;
  narrow.addEventListener("change", () => { if (!narrow.matches) panel.open = true; });  // wide: no summary to open it
}

// An htmx GET form leaves out its empty fields, so the URL it pushes holds what was asked,
// not every parameter the form has ("?q=tea&user_id=alice", not "...&strategy=&max_results=").
document.addEventListener("htmx:configRequest", (event) => {
  if (event.detail.verb !== "get") return;
  const parameters = event.detail.parameters;
  for (const name of [...parameters.keys()]) {
    if (parameters.getAll(name).every((value) => value === "")) parameters.delete(name);
  }
});

// The account menu (a <details>) closes as a menu does: on a click elsewhere, and on Escape (focus
// goes back to its summary).
const account = document.querySelector("details.oam-account");
if (account) {
  document.addEventListener("click", (event) => { if (!account.contains(event.target)) account.open = false; });
  account.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !account.open) return;
    account.open = false;
    account.querySelector("summary").focus();
  });
}

// Bulk actions; every part works without this script, which only makes it quicker to use.
// - In a listing, the "select all on this page" box ticks every row's box (and shows as mixed
//   when some are ticked), and the bar says how many are selected.
// - On the bulk page, only the fields the chosen action needs are shown.
function bulkRows(table) {
  return [...table.querySelectorAll("tbody input[type=checkbox][name=ids]")];
}

function syncBulkBar(table) {
  const rows = bulkRows(table);
  const ticked = rows.filter((box) => box.checked).length;
  const all = table.querySelector("input[data-bulk-all]");
  if (all) {
    all.checked = rows.length > 0 && ticked === rows.length;
    all.indeterminate = ticked > 0 && ticked < rows.length;
  }
  const count = document.querySelector("[data-bulk-count]");
  if (count) count.textContent = ticked ? `${ticked} selected` : "";
}

document.addEventListener("change", (event) => {
  const box = event.target;
  const table = box.closest && box.closest("table[data-bulk-table]");
  if (!table) return;
  if (box.matches("input[data-bulk-all]")) {
    for (const row of bulkRows(table)) row.checked = box.checked;
  }
  syncBulkBar(table);
});

function showBulkFields(select) {
  for (const group of document.querySelectorAll("[data-bulk-for]")) {
    group.hidden = !group.dataset.bulkFor.split(" ").includes(select.value);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const select = document.querySelector("#bulk-chooser select[name=action]");
  if (!select) return;
  showBulkFields(select);
  select.addEventListener("change", () => showBulkFields(select));
});

// Without this script, the page's ids go along for "select all on this page"; with it, the
// ticked rows say it all, so the form posts only them.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.id !== "bulk-form") return;
  for (const input of form.querySelectorAll("input[name=page_ids], input[name=whole_page]")) input.disabled = true;
});

window.addEventListener("pageshow", () => {
  for (const input of document.querySelectorAll("#bulk-form input:disabled")) input.disabled = false;
});

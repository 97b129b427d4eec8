// The "follow the system" theme: pick light or dark from the OS, and follow it when it changes.
// Loaded in <head> before the stylesheets so the page never flashes in the wrong theme. Without
// JavaScript the explicit light and dark choices still work (they are rendered by the server).
(function () {
  const root = document.documentElement;
  root.classList.add("js");  // what only works with JavaScript is shown under html.js (oam.css: .oam-js-only)
  if (root.dataset.oamTheme !== "auto") return;
  const dark = window.matchMedia("(prefers-color-scheme: dark)");
  const apply = () => root.setAttribute("data-bs-theme", dark.matches ? "dark" : "light");
  apply();
  dark.addEventListener("change", apply);
})();

// Small enhancements for the console's pages. Everything works without them.
// Kept in a static file: the pages carry no inline script (a CSP will forbid it).
(function () {
  "use strict";

  // "Tick every letter on this page" toggles the row checkboxes of its form.
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-check-page]")) return;
    var form = box.closest("form");
    if (!form) return;
    form.querySelectorAll('input[type="checkbox"][name="ids"]').forEach(function (row) {
      row.checked = box.checked;
    });
  });
})();
